"""Inside one attention layer and the embeddings: the mixin :class:`PredictorInternals` of :class:`model.Predictor`
(queries, keys, values and scores of one layer; the embedding norms), dispatched to the backend's
``attention_internals`` / ``embedding_norms``. Uses the predictor's ``model``, ``encode``, ``device``, ``config``,
``check_head_mask``, ``masked`` and ``forward_lock``.
"""

from __future__ import annotations

import numpy as np
import torch

from model.records.internals import AttentionInternals, EmbeddingNorms
from model.text.segments import one_text_inputs


class PredictorInternals:
    """:meth:`attention_internals` and :meth:`embedding_norms`; mixed into :class:`model.Predictor`."""

    @torch.inference_mode()
    def attention_internals(self, text: str, layer: int, head_mask=None, text_pair: str | None = None
                            ) -> AttentionInternals:
        """Queries, keys, values, pre-softmax scores and head outputs of one layer for ``text``.

        Dispatches to the backend: ``self.model.attention_internals(input_ids, mask, layer)`` (the bundled
        :class:`~model.core.encoder.TransformerClassifier`; another backend supplies the same method and,
        where its scores carry extra terms, says so in ``extra_score_terms``). ``softmax(scores)`` equals
        ``predict(text).attention[layer]``. Computed for one layer only (512 tokens x d_model floats, not
        all layers at once).

        Args:
            text: the review (tokenized exactly as :meth:`predict` does).
            layer: 0-based layer; negative counts from the last.
            head_mask: optional (L, H) head mask, as in :meth:`predict` (the layers below see the masked model).
            text_pair: the second text of a sentence pair (its segment ids reach the model), as in :meth:`predict`.

        Returns:
            :class:`model.records.internals.AttentionInternals` (read-only float32 arrays).

        Raises:
            ValueError: bad text (see :func:`~model.text.inputs.check_text`) or head mask; PairNotSupported: a pair on a
                model that reads single texts. IndexError: ``layer`` out of range.
        """
        n_layers = self.config.n_layers
        if not -n_layers <= layer < n_layers:
            raise IndexError(f"layer {layer} out of range for {n_layers} layers")
        layer %= n_layers
        enc = self.encode(text, text_pair)
        ids, mask, types = one_text_inputs(self, enc)  # (1, T) each
        checked = self.check_head_mask(head_mask)
        with self.masked(checked):
            parts = self.model.attention_internals(ids, mask, layer, **types)

        def arr(name: str, batched: bool = True) -> np.ndarray | None:
            t = parts.get(name)
            return None if t is None else (t[0] if batched else t).float().cpu().numpy().astype(np.float32)

        return AttentionInternals(
            tokens=tuple(enc.tokens), layer=layer, extra_score_terms=parts.get("extra_score_terms"),
            **{n: arr(n) for n in ("queries", "keys", "values", "scores", "head_outputs", "inputs", "attention_output",
                                   "position_scores")},
            output_weight=arr("output_weight", False), output_bias=arr("output_bias", False),
            score_scale=parts.get("score_scale"), head_scale=None if checked is None else checked[layer].copy(),
        )

    @torch.inference_mode()
    def embedding_norms(self, text: str, text_pair: str | None = None) -> EmbeddingNorms:
        """Per-position ||PE(pos)|| and ||token embedding x sqrt(d_model)|| of ``text`` (or of the pair ``text``,
        ``text_pair``, tokenized as :meth:`predict` does; dispatches to ``self.model.embedding_norms``, like
        :meth:`attention_internals`).

        Raises:
            ValueError: bad text (see :func:`~model.text.inputs.check_text`); PairNotSupported: see :meth:`predict`.
        """
        enc = self.encode(text, text_pair)
        ids = torch.from_numpy(enc.ids).unsqueeze(0).to(self.device)  # (1, T)
        with self.forward_lock:
            pe, tok = self.model.embedding_norms(ids)
        return EmbeddingNorms(tuple(enc.tokens), pe[0].float().cpu().numpy(), tok[0].float().cpu().numpy())
