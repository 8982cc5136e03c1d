"""The computing side of Compare (issue 9; model B's pins, issue 44): :class:`SideRequest` (one text to compare and the
model that reads it), :class:`Comparer` (the comparison of two sides, with its per-text cache) and :func:`compare_job`,
the job that runs it on the "compare" thread. :mod:`desktop_app.workers.compare` holds the controller on the GUI thread
and says what is compared.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from dataclasses import dataclass, replace

import numpy as np

from ..compare_records import CompareResult, CompareSide, align_words, focus_class, text_words, word_sums
from desktop_app.workers.attention_flow import mask_key
from .handle import one_line
from .jobs import JobContext, JobStopped

log = logging.getLogger(__name__)

DEFAULT_METHOD = "decompx"  # the explanation compared by default ...
FALLBACK_METHOD = "grad_x_input"  # ... and the one used where DecompX does not cover the model
FLOW_METHOD = "alti"  # the attention flow compared beside it
CACHE_SIZE = 16  # per-text results kept on the worker


@dataclass(frozen=True)
class SideRequest:
    """One text to compare.

    Attributes:
        text: the text. head_mask: float32 (L, H) or None, the mask it is analysed with.
        prediction: its ``model.Prediction`` under ``head_mask`` when known (a pin's), else None (computed).
        text_pair: a sentence pair's second text, or None (the words compared are the first text's; the second
            text's tokens count as special tokens there).
        predictor: the model that reads this side (model B's Predictor for a pin of the second model, issue 44), or
            None: the job's predictor.
        name: what the side is called in the view ("" : "pinned" or "current").
    """

    text: str
    head_mask: np.ndarray | None
    prediction: object = None
    text_pair: str | None = None
    predictor: object = None
    name: str = ""

    @property
    def pair(self) -> dict:
        """``{"text_pair": ...}`` for a pair, else ``{}`` (keyword arguments of the Predictor's calls)."""
        return {} if self.text_pair is None else {"text_pair": self.text_pair}


def compare_job(ctx: JobContext, comparer: Comparer, predictor, pinned: SideRequest, current: SideRequest,
                method: str, auto: bool = False, target: int = -1) -> CompareResult:
    """The job: ``comparer.compare`` on the jobs' thread (see :meth:`Comparer.compare`)."""
    return comparer.compare(ctx, predictor, pinned, current, method, auto, target)


class Comparer:
    """Computes :class:`~desktop_app.compare_records.CompareResult` records, keeping the per-text results (used on the
    compare thread only).

    Attributes:
        cache: (text, mask, method, target, second text, the model: its id and folder, so that a model B loaded later at
            the same address is not served another's results) -> (CompareSide, note), the last :data:`CACHE_SIZE`.
    """

    def __init__(self) -> None:
        self.cache: OrderedDict[tuple, tuple] = OrderedDict()
        self._cache_owner = None

    def compare(self, ctx: JobContext, predictor, pinned: SideRequest, current: SideRequest, method: str,
                auto: bool = False, target: int = -1) -> CompareResult:
        """Compare ``pinned`` with ``current`` by ``method`` (a ``model.explain`` id). ``auto``: the method is the
        default, not the user's choice: DecompX only where :func:`model.explain.cost.estimate_seconds` puts both texts
        under :data:`model.explain.cost.COMPARE_DECOMPX_S`, else :data:`FALLBACK_METHOD` (the result's note says so).
        ``target``: the class both texts explain (the state's "Explain class" pick; -1: the focus class). ``ctx``:
        the job's :class:`~desktop_app.workers.jobs.JobContext` (its checks stop an explanation between its steps; its
        progress says what runs, for methods estimated to take over :data:`model.explain.cost.SLOW_S`).

        Raises:
            :class:`~desktop_app.workers.jobs.JobStopped`: cancelled, or a newer request made it stale.
            ValueError: a model without a classification head; or what the Predictor raises.
        """
        from model.explain import METHOD_TITLES, SIGNED_METHODS
        from model.explain.cost import COMPARE_DECOMPX_S, estimate_seconds

        p = predictor
        if self._cache_owner is not p:
            self.cache.clear()
            self._cache_owner = p
        labels = tuple(p.labels)
        if not labels:
            raise ValueError("comparing needs a model with a classification head")
        cur_pred = current.prediction if current.prediction is not None else \
            p.predict(current.text, head_mask=current.head_mask, **current.pair)
        target = target if 0 <= target < len(labels) else focus_class(labels, cur_pred.probabilities)
        notes: list[str] = []
        if auto and method == "decompx":
            preds = [cur_pred] if pinned.prediction is None else [cur_pred, pinned.prediction]
            est = sum(estimate_seconds(method, p.config, q.document.num_tokens) for q in preds)
            if est >= COMPARE_DECOMPX_S:
                notes.append(f"{METHOD_TITLES[method]} would take about {est:.0f} s on these texts (estimated); "
                             f"showing {METHOD_TITLES[FALLBACK_METHOD]}. Choose {METHOD_TITLES[method]} above to "
                             "compute it")
                method = FALLBACK_METHOD
        try:
            a = self._side(ctx, pinned.predictor or p, pinned, method, target)
            b = self._side(ctx, p, replace(current, prediction=cur_pred), method, target)
        except NotImplementedError as exc:  # DecompX (a flow method) does not cover this architecture
            if method == FALLBACK_METHOD:
                raise
            notes.append(f"{METHOD_TITLES.get(method, method)} does not cover this model ({one_line(exc)}); "
                         f"showing {METHOD_TITLES[FALLBACK_METHOD]}")
            method = FALLBACK_METHOD
            a = self._side(ctx, pinned.predictor or p, pinned, method, target)
            b = self._side(ctx, p, replace(current, prediction=cur_pred), method, target)
        notes += [n for n in dict.fromkeys((a[1], b[1])) if n]
        return CompareResult(a[0], b[0], align_words(a[0].words.words, b[0].words.words), method,
                             METHOD_TITLES.get(method, method), method in SIGNED_METHODS, target, tuple(notes),
                             (pinned.name or "pinned", current.name or "current"))

    def _side(self, ctx: JobContext, p, side: SideRequest, method: str, target: int) -> tuple[CompareSide, str]:
        """(CompareSide, note about the flow or "") of one text, from the cache or computed."""
        key = (side.text, mask_key(side.head_mask), method, target, side.text_pair, id(p), str(p.model_dir))
        if key in self.cache:
            self.cache.move_to_end(key)
            return self.cache[key]
        ctx.check()
        from model.explain import METHOD_TITLES, ExplanationCancelled
        from model.explain.cost import SLOW_S, estimate_seconds

        pred = side.prediction if side.prediction is not None else \
            p.predict(side.text, head_mask=side.head_mask, **side.pair)
        doc = pred.document  # a long review is compared whole, whatever window the attention views show
        offsets = doc.offsets if doc.segment_ids is None else \
            np.where(np.asarray(doc.segment_ids)[:, None] == 1, 0, doc.offsets)  # the first text's words only
        words = text_words(side.text, offsets)
        report = None
        if estimate_seconds(method, p.config, doc.num_tokens) > SLOW_S:
            title = METHOD_TITLES.get(method, method)
            report = lambda done, total: ctx.report(  # noqa: E731
                f"Comparing: {title} of {doc.num_tokens} tokens, {done}/{total}\u2026")
        try:
            expl = p.explain(side.text, method, target=target, head_mask=side.head_mask, **side.pair,
                             should_stop=ctx.should_stop, progress=report)
        except ExplanationCancelled as exc:
            raise JobStopped from exc
        if len(expl.scores) != doc.num_tokens:
            raise ValueError(f"{method} gave {len(expl.scores)} scores for {doc.num_tokens} tokens")
        flow, note = None, ""
        ctx.check()
        try:
            importance = (p.explain(side.text, FLOW_METHOD, head_mask=side.head_mask).scores if pred.num_windows > 1
                          else p.attention_flow(side.text, FLOW_METHOD, head_mask=side.head_mask,
                                                **side.pair).importance)
            flow = word_sums(importance, words.token_word, len(words.words))
        except NotImplementedError as exc:  # FlowNotSupported: ALTI does not cover this architecture
            note = f"ALTI cannot be shown: {one_line(exc)}"
        mask = None if side.head_mask is None else np.array(side.head_mask, dtype=np.float32)
        out = (CompareSide(side.text, tuple(pred.labels), np.array(pred.probabilities, dtype=np.float32), words,
                           word_sums(expl.scores, words.token_word, len(words.words)), flow, mask), note)
        self.cache[key] = out
        while len(self.cache) > CACHE_SIZE:
            self.cache.popitem(last=False)
        return out
