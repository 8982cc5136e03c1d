"""A Hugging Face encoder behind the interface of :class:`~model.core.encoder.TransformerClassifier`.

:class:`HFEncoder` wraps a ``transformers`` model (with or without a sequence-classification head) so that
:class:`model.Predictor`, the explanation methods of :mod:`model.explain` and the faithfulness metrics run on it
unchanged: ``forward(ids, mask, need_weights)``, ``embed`` (the input word embeddings, which the model's own
embedding layer then adds positions, token types and LayerNorm to), ``encode`` / ``encode_with_maps`` (from
embedded inputs to logits, keeping the attention tensors in the autograd graph) and ``config`` (a
:class:`HFModelSummary` with the field names of :class:`~model.core.config.EncoderConfig`).

The model runs with the eager attention implementation whenever attention is asked for, so ``output_attentions``
gives every layer's attention probabilities (float32, rows summing to 1), exactly what ``transformers`` itself
returns; passes that need no attention maps (batch scoring, gradient x input, integrated gradients, faithfulness)
switch to the fused SDPA implementation where the family has one (about twice as fast on a CPU; same outputs up
to float rounding). Callers serialise forward passes per model (``Predictor.forward_lock``), so the switch is safe.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from model.records.prediction import NoPositionalMatrix

FAMILY_NAMES: dict[str, str] = {
    "bert": "BERT", "distilbert": "DistilBERT", "roberta": "RoBERTa", "xlm-roberta": "XLM-RoBERTa",
    "camembert": "CamemBERT", "albert": "ALBERT", "electra": "ELECTRA", "deberta": "DeBERTa",
    "deberta-v2": "DeBERTa-v2/v3",
}
"""Supported ``model_type`` values and their display names (MiniLM-style models are ``bert``)."""

ROBERTA_LIKE = ("roberta", "xlm-roberta", "camembert")
"""Families whose position ids start at ``pad_token_id + 1``."""


@dataclass(frozen=True)
class HFModelSummary:
    """What the app needs to know about a Hugging Face encoder; field names as in ``EncoderConfig``.

    Attributes:
        family: display name, e.g. "BERT", "DeBERTa-v2/v3".
        model_type: the config's ``model_type``.
        n_layers: L; n_heads: H; d_model: hidden width.
        max_len: most tokens per input, special tokens included.
        vocab_size: embedding rows.
        pad_id: padding id; cls_id: the first special token (``[CLS]`` or ``<s>``).
        pooling: always ``"cls"`` (the heads of these families read the first token).
        labels: class names from ``id2label``; empty without a classification head.
        pe_kind: positional-encoding kind, e.g. "learned absolute (512 positions)".
        pe_base: 0.0 (no sinusoidal base).
        has_head: whether the folder has a sequence-classification head.
        load_note: what loading noticed but allowed, for the status bar (e.g. extra weights not used), or "".
        problem_type: the config's ``problem_type`` (None when absent): with C it decides the task
            (:func:`model.tasks.task.task_from_config`).
        token_types: the model adds a token-type (segment) embedding (``type_vocab_size`` >= 2) and its tokenizer
            gives ``token_type_ids`` (they are in its ``model_input_names``), as ``transformers`` would feed them.
    """

    family: str
    model_type: str
    n_layers: int
    n_heads: int
    d_model: int
    max_len: int
    vocab_size: int
    pad_id: int
    cls_id: int
    pooling: str
    labels: tuple[str, ...]
    pe_kind: str
    pe_base: float = 0.0
    has_head: bool = True
    load_note: str = ""
    problem_type: str | None = None
    token_types: bool = False

    @property
    def num_classes(self) -> int:
        """C, the number of classes (0 in attention-only mode)."""
        return len(self.labels)


def position_offset(model_type: str, pad_id: int) -> int:
    """Row of the position-embedding matrix used for position 0 (``pad_id + 1`` for RoBERTa-like models)."""
    return pad_id + 1 if model_type in ROBERTA_LIKE else 0


def positional_kind(hf_config) -> str:
    """Human-readable positional-encoding kind of a ``transformers`` config."""
    mt = hf_config.model_type
    if mt.startswith("deberta") and not getattr(hf_config, "position_biased_input", True):
        return "relative (DeBERTa disentangled attention)"
    if mt == "distilbert" and getattr(hf_config, "sinusoidal_pos_embds", False):
        return f"sinusoidal, fixed ({hf_config.max_position_embeddings} positions)"
    return f"learned absolute ({hf_config.max_position_embeddings} positions)"


class HFEncoder(nn.Module):
    """A ``transformers`` encoder with the interface of ``TransformerClassifier`` (see the module docstring).

    Args:
        hf_model: an ``AutoModel`` or ``AutoModelForSequenceClassification`` loaded with eager attention.
        summary: its :class:`HFModelSummary`.
    """

    stateful_passes = True
    """A forward pass may switch the model's attention implementation (eager for maps, else SDPA), so passes of
    several threads take turns (``Predictor.forward_lock``)."""

    def __init__(self, hf_model: nn.Module, summary: HFModelSummary) -> None:
        super().__init__()
        self.hf = hf_model
        self.config = summary
        self._impl = "eager"
        self._fast = "sdpa" if getattr(hf_model, "_supports_sdpa", False) else "eager"
        forward_params = inspect.signature(hf_model.forward).parameters
        self.uses_token_types = summary.token_types and "token_type_ids" in forward_params
        """Whether the model adds a token-type (segment) embedding: ``token_type_ids`` are passed on only then (a
        pair on RoBERTa or DistilBERT is told apart by its separators alone)."""

    def _types(self, token_type_ids: torch.Tensor | None) -> dict:
        """``{"token_type_ids": ...}`` for the ``transformers`` call when the model uses token types, else {}."""
        return {"token_type_ids": token_type_ids} if token_type_ids is not None and self.uses_token_types else {}

    def _use(self, need_weights: bool) -> None:
        """Eager attention when the maps are needed, else the fused implementation (see the module docstring)."""
        want = "eager" if need_weights else self._fast
        if want != self._impl:
            try:
                self.hf.set_attn_implementation(want)
            except (ValueError, AttributeError, ImportError):  # not supported by this family / transformers
                self._fast = want = "eager"
                self.hf.set_attn_implementation(want)
            self._impl = want

    def embed(self, input_ids: torch.Tensor) -> torch.Tensor:
        """The input word embeddings: int64 (B, T) -> (B, T, E) (E: embedding width, d_model or smaller).

        Raises:
            ValueError: if T exceeds ``config.max_len``.
        """
        if input_ids.size(1) > self.config.max_len:
            raise ValueError(f"input has {input_ids.size(1)} tokens; the model takes at most {self.config.max_len}")
        self._check_ids(input_ids)
        return self.hf.get_input_embeddings()(input_ids)

    def _check_ids(self, input_ids: torch.Tensor) -> None:
        """Raise ValueError for a token id outside the embedding table (a tokenizer that does not fit the weights)."""
        rows = self.hf.get_input_embeddings().num_embeddings
        if input_ids.numel() and (int(input_ids.max()) >= rows or int(input_ids.min()) < 0):
            raise ValueError(f"the tokenizer gave token id {int(input_ids.max())}, but the model's embedding table has "
                             f"{rows} rows: the tokenizer does not belong to this model")

    def _logits(self, out, batch: int, like: torch.Tensor) -> torch.Tensor:
        if self.config.has_head:
            return out.logits  # (B, C)
        return like.new_zeros((batch, 0), dtype=torch.float32)

    def encode_with_maps(
        self, x: torch.Tensor, attention_mask: torch.Tensor, need_weights: bool = False,
        token_type_ids: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """From word embeddings (B, T, E) and a bool (B, T) mask to ``(logits (B, C), [p_attn (B, H, T, T)] * L)``.

        The maps (only when ``need_weights``) are the tensors the logits were computed from (autograd reaches
        them). C is 0 without a classification head. ``token_type_ids``: int64 (B, T) segment ids of a sentence
        pair (the model's embedding layer adds their embedding; ignored by a model without token types).
        """
        self._use(need_weights)
        out = self.hf(inputs_embeds=x, attention_mask=attention_mask.long(), output_attentions=need_weights,
                      **self._types(token_type_ids))
        return self._logits(out, x.shape[0], x), list(out.attentions) if need_weights else []

    def encode(
        self, x: torch.Tensor, attention_mask: torch.Tensor, need_weights: bool = False,
        token_type_ids: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """:meth:`encode_with_maps` with the maps stacked: ``(logits (B, C), attentions (B, L, H, T, T) or None)``."""
        logits, maps = self.encode_with_maps(x, attention_mask, need_weights, token_type_ids)
        return logits, torch.stack(maps, dim=1) if need_weights else None

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None, need_weights: bool = False,
        token_type_ids: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Token ids int64 (B, T) (+ bool mask, default ``ids != pad_id``) -> ``(logits (B, C), attentions)``.

        attentions: float32 (B, L, H, T, T) when ``need_weights`` (``transformers``' own ``output_attentions``),
        else None. ``token_type_ids``: int64 (B, T) segment ids of sentence pairs, or None (all 0).
        """
        if attention_mask is None:
            attention_mask = input_ids != self.config.pad_id
        self._check_ids(input_ids)
        self._use(need_weights)
        out = self.hf(input_ids=input_ids, attention_mask=attention_mask.long(), output_attentions=need_weights,
                      **self._types(token_type_ids))
        attn = torch.stack(out.attentions, dim=1) if need_weights else None
        return self._logits(out, input_ids.shape[0], input_ids), attn

    def positional_matrix(self, num_positions: int) -> np.ndarray | NoPositionalMatrix:
        """The position-embedding rows the model adds for positions 0..P-1, or why there are none.

        Returns:
            float32 [P, E] (a copy), or :class:`~model.records.prediction.NoPositionalMatrix` for relative-position models.

        Raises:
            ValueError: if ``num_positions`` < 0 or exceeds the model's ``max_len``.
        """
        if num_positions < 0:
            raise ValueError(f"num_positions must be >= 0, got {num_positions}")
        cfg = self.config
        if cfg.pe_kind.startswith("relative"):
            return NoPositionalMatrix(cfg.pe_kind, (
                f"{cfg.family} adds no positional matrix to its token embeddings: each attention score gets a "
                "term computed from the relative distance between the query and the key (disentangled attention, "
                "He et al. 2021), so there is no per-position vector to plot."))
        if num_positions > cfg.max_len:
            raise ValueError(f"the model has learned positions 0..{cfg.max_len - 1} only, not {num_positions}")
        table = self.hf.base_model.embeddings.position_embeddings.weight  # (max_positions, E)
        start = position_offset(cfg.model_type, cfg.pad_id)
        return table[start : start + num_positions].detach().float().cpu().numpy().copy()

    def attention_internals(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, layer: int,
                            token_type_ids: torch.Tensor | None = None) -> dict:
        """One layer's queries, keys, values and scores (see :func:`model.hf.projections.hf_attention_internals`)."""
        from .projections import hf_attention_internals

        return hf_attention_internals(self, input_ids, attention_mask, layer, token_type_ids)

    def embedding_norms(self, input_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-position position- and token-embedding norms, float32 (B, T) each (see :mod:`model.hf.projections`)."""
        from .projections import hf_embedding_norms

        return hf_embedding_norms(self, input_ids)

    def flow_taps(self):
        """The modules the attention-flow methods read (see :func:`model.hf.flow_taps.flow_taps`).

        Raises:
            model.records.flow.FlowNotSupported: a family not covered.
        """
        from .flow_taps import flow_taps

        return flow_taps(self)

    def output_projections(self) -> list[nn.Module]:
        """Each layer's attention output projection, for head masks (see :func:`model.hf.flow_taps.output_projections`)."""
        from .flow_taps import output_projections

        return output_projections(self)
