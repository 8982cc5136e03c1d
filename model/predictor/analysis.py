"""The analysis half of :class:`model.Predictor`: attention flow, prediction by layer and the head mask.

:class:`PredictorAnalysis` is a mixin of :class:`model.Predictor` (it uses the predictor's ``model``, ``encode``,
``device``, ``labels``, ``config``, ``forward_lock`` and ``require_head``); the computations live in
:mod:`model.explain.value_flow`, :mod:`model.explain.decompx` and :mod:`model.explain.heads`, the record in
:mod:`model.records.flow`.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, ExitStack

import numpy as np
import torch

from model.records.flow import AttentionFlow, check_flow_method
from model.text.segments import one_text_inputs
from model.text.document_windows import check_policy


class PredictorAnalysis:
    """Attention flow (:meth:`attention_flow`), prediction by layer (:meth:`layer_predictions`) and head masks
    (:meth:`check_head_mask`, :meth:`masked`); mixed into :class:`model.Predictor`."""

    def check_head_mask(self, head_mask) -> np.ndarray | None:
        """A validated head mask (see :func:`model.explain.heads.check_head_mask`): None for None or all ones.

        Raises:
            ValueError: not numeric, not (L, H), or a value outside [0, 1].
        """
        from model.explain.heads import check_head_mask

        return check_head_mask(head_mask, self.config.n_layers, self.config.n_heads)

    def masked(self, head_mask: np.ndarray | None, model=None) -> AbstractContextManager:
        """``forward_lock`` held and ``head_mask`` (validated, or None) applied to ``model`` (default :attr:`model`)
        inside the ``with`` block (Michel et al. 2019: head h's context vector times M[l, h] before the output
        projection)."""
        from model.explain.heads import head_mask_hooks

        stack = ExitStack()
        stack.enter_context(self.forward_lock)
        stack.enter_context(head_mask_hooks(self.model if model is None else model, head_mask, self.config.n_heads))
        return stack

    def attention_flow(self, text: str, method: str = "value_norm", head_mask=None, long_text: str | None = None,
                       window: int = 0, text_pair: str | None = None, target: int | None = None) -> AttentionFlow:
        """What flows through the attention layers of ``text``: value-weighted norms, ALTI or DecompX.

        Flows stay per window: a text longer than the model's maximum length gives the flow of its window ``window``
        (policy ``long_text="windows"``, the default: ``predict(text).window_text(window)``) or of its head+tail cut.

        Args:
            text: the review (tokenized exactly as :meth:`predict` does).
            method: one of :data:`model.records.flow.FLOW_METHODS`: ``"value_norm"`` (Kobayashi et al. 2020),
                ``"alti"`` (Ferrando et al. 2022), ``"decompx"`` (Modarressi et al. 2023); see :mod:`model.records.flow`.
            head_mask: optional (L, H) head mask (1 keeps, 0 removes a head), as in :meth:`predict`.
            text_pair: the second text of a sentence pair (cut as :meth:`predict` cuts it, never in windows).
            target: ``decompx``: the class its ``importance`` is for (default the predicted one, ``argmax(logits)``;
                multi-label: that label's logit; regression: 0, the value); the record says which.

        Returns:
            :class:`model.records.flow.AttentionFlow` (read-only float32 arrays).

        Raises:
            ValueError: unknown method (the message names the methods), bad text, head mask or target;
                NoClassificationHead (a ValueError) for ``decompx`` without a classification head; PairNotSupported
                for a pair on a model that reads single texts.
            model.records.flow.FlowNotSupported: (a NotImplementedError) the method does not cover this architecture (a
                pre-LN encoder for ALTI/DecompX, DeBERTa v1); the message says what is covered.
        """
        from model.explain.value_flow import compute_flow

        check_flow_method(method)
        if text_pair is None and check_policy(long_text) == "windows" and self.encode(text).truncated:
            text = self.predict(text, head_mask=head_mask).window_text(window)
        if method == "decompx":
            self.require_head("DecompX")
        self.check_target(target)
        mask = self.check_head_mask(head_mask)
        enc = self.encode(text, text_pair)
        ids, att, types = one_text_inputs(self, enc)
        out = compute_flow(self.model, ids, att, method, mask, lock=self.forward_lock, types=types, target=target,
                           kind=self.task.type)
        tokens = enc.tokens
        if target is None:
            target = int(torch.as_tensor(out["logits"]).argmax()) if len(out["logits"]) else -1

        def arr(name: str) -> np.ndarray | None:
            v = out.get(name)
            return None if v is None else np.ascontiguousarray(torch.as_tensor(v).float().cpu().numpy(), np.float32)

        return AttentionFlow(
            method=method, tokens=tuple(tokens), matrices=arr("matrices"), aggregated=arr("aggregated"),
            importance=arr("importance"), logits=arr("logits"), labels=tuple(self.labels), pooling=out["pooling"],
            summed=arr("summed"), value_norms=arr("value_norms"), contributions=arr("contributions"),
            head_mask=None if mask is None else mask.copy(), elapsed_s=out["elapsed_s"], target=target,
            task=self.task.kind, segment_ids=enc.segment_ids)

    def check_target(self, target: int | None) -> None:
        """Raise ValueError unless ``target`` is None or a class index in [0, C)."""
        C = len(self.labels)
        if target is not None and not 0 <= int(target) < C:
            raise ValueError(f"target must be a class index in [0, {C}), got {target}")

    def layer_predictions(self, text: str, head_mask=None, text_pair: str | None = None,
                          target: int | None = None) -> np.ndarray:
        """What the model would say if it stopped after each layer (a "logit lens" for encoders).

        The embedding output (the first layer's input) and each layer's output go through the model's own
        classification read-out (pooling and head; see :func:`model.explain.value_flow.layer_logits`), read as
        :attr:`task` reads the logits (:func:`model.tasks.readout.outputs`).

        Args:
            text: the review. head_mask: optional (L, H) head mask, as in :meth:`predict`.
            text_pair: the second text of a sentence pair, as in :meth:`predict`.
            target: the class the caller follows (validated; its curve is column ``target``), or None.

        Returns:
            float32 (L + 1, C), read-only: softmax probabilities (single-label), sigmoids (multi-label) or the
            predicted value (regression, C = 1); row 0: after the embeddings, row l: after layer l. The last
            row equals ``predict(text, head_mask=head_mask).probabilities`` (regression: ``.logits``).

        Raises:
            ValueError: bad text, head mask or target; NoClassificationHead in attention-only mode;
                PairNotSupported for a pair on a model that reads single texts.
        """
        from model.explain.value_flow import layer_logits
        from model.tasks.readout import outputs

        self.require_head("prediction by layer")
        self.check_target(target)
        mask = self.check_head_mask(head_mask)
        ids, att, types = one_text_inputs(self, self.encode(text, text_pair))
        with self.masked(mask):
            logits = layer_logits(self.model, ids, att, types)  # (L + 1, C)
        probs = outputs(logits.float(), self.task.type).cpu().numpy().astype(np.float32)
        probs.setflags(write=False)
        return probs

    def explain(self, text: str, method: str, target: int | None = None, long_text: str | None = None,
                text_pair: str | None = None, **kwargs):
        """Token importance for ``text`` by one method; see :func:`model.explain.explain`.

        A text longer than the model's maximum length (policy ``long_text="windows"``, the default) is explained
        window by window for the document's class and the scores merged into one per document token
        (:func:`model.predictor.long_text.explain_document`; rule: :func:`model.text.document_windows.merge_token_scores`).

        Args:
            text: the review.
            method: one of :data:`model.explain.EXPLANATION_METHODS`.
            target: class index to explain (default: the predicted class, ``Prediction.label_index``; multi-label:
                the chosen label's logit; regression: 0, the output value).
            long_text: ``"windows"`` or ``"head_tail"``, as in :meth:`predict`.
            text_pair: the second text of a sentence pair (the scores cover both texts' tokens, the segment ids
                reach every forward pass), as in :meth:`predict`.
            **kwargs: ``layer``, ``n_steps``, ``progress``, ``should_stop``,
                ``prediction``, ``seed``, ``internal_batch_size``, ``head_mask`` (explain the model with those heads
                switched off; see :meth:`predict`).

        Returns:
            :class:`model.explain.Explanation` with float32 [T] scores, aligned with ``predict(text).tokens``.

        Raises:
            ValueError: bad text, method, target, layer or policy; NoClassificationHead in attention-only mode;
                PairNotSupported for a pair on a model that reads single texts.
            model.explain.ExplanationCancelled: ``should_stop()`` returned True.
        """
        from model.explain import explain

        self.require_head("explaining a prediction")
        if kwargs.get("head_mask") is not None:
            kwargs["head_mask"] = self.check_head_mask(kwargs["head_mask"])
        if text_pair is not None:
            self.encode(text, text_pair)  # checks both texts; a pair is cut, never read in windows
            return explain(self, text, method, target=target, text_pair=text_pair, **kwargs)
        pred = self._document(text, long_text, kwargs.get("prediction"), kwargs.get("head_mask"))
        if pred is None and kwargs.get("prediction") is None and self.encode(text).truncated:  # head+tail, as asked
            kwargs["prediction"] = self.predict(text, head_mask=kwargs.get("head_mask"), long_text="head_tail")
        if pred is not None:
            from model.predictor.long_text import explain_document

            kwargs.pop("prediction", None)
            return explain_document(self, text, method, pred, target, **kwargs)
        return explain(self, text, method, target=target, **kwargs)

    def faithfulness(self, text: str, explanation, head_mask=None, long_text: str | None = None,
                     text_pair: str | None = None, **kwargs):
        """ERASER comprehensiveness/sufficiency AOPC of an explanation; see :func:`model.explain.erasure.faithfulness`.
        ``head_mask``: measure the model with those heads switched off (as in :meth:`predict`). A long text (policy
        ``"windows"``) is measured window by window (:func:`model.predictor.long_text.faithfulness_document`). ``text_pair``:
        the second text of the explained pair (each kept token keeps its segment id). The measured class is the
        explanation's target, read as :attr:`task` reads it (probability, sigmoid, or the regression value).

        Returns:
            :class:`model.explain.Faithfulness`.

        Raises:
            ValueError: bad text or an explanation of another length; NoClassificationHead in attention-only mode.
        """
        from model.explain.erasure import faithfulness

        self.require_head("measuring faithfulness")
        mask = self.check_head_mask(head_mask)
        pred = self._document(text, long_text, None, mask) if text_pair is None else None
        if text_pair is not None:
            kwargs["text_pair"] = self.check_pair(text_pair)
        with self.masked(mask):
            if pred is not None:
                from model.predictor.long_text import faithfulness_document

                return faithfulness_document(self, text, explanation, pred, **kwargs)
            return faithfulness(self, text, explanation, **kwargs)

    def _document(self, text: str, long_text: str | None, prediction, head_mask):
        """The whole-document prediction of ``text`` when the windows policy reads it in several windows, else None."""
        if check_policy(long_text) != "windows" or not self.encode(text).truncated:
            return None
        pred = prediction if prediction is not None else self.predict(text, head_mask=head_mask)
        return pred if pred.num_windows > 1 else None
