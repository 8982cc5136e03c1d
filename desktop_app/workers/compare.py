"""The comparison of a pinned analysis with the current one, computed off the GUI thread.

A job of :mod:`desktop_app.workers.jobs`: :func:`compare_job` runs on the "compare" thread (nice +10) of the
:class:`CompareController`'s :class:`~desktop_app.workers.jobs.Jobs`, on the one shared predictor. For each of the two texts it computes the prediction (the pin's is reused), one explanation
method's token scores (``Predictor.explain``, both texts explaining the same class,
:func:`desktop_app.compare_records.focus_class`) and the ALTI aggregated importance (``Predictor.attention_flow``),
sums them into words and aligns the two word sequences (:func:`desktop_app.compare_records.align_words`); the
answer is one immutable :class:`~desktop_app.compare_records.CompareResult`. Per-text results are cached
(:class:`Comparer`, used on that thread only), so switching pins or re-analysing an unchanged text costs nothing.

:class:`CompareController`, on the GUI thread, asks again whenever the pins, the current prediction, the chosen
method or the head mask change. Latest request wins: stale requests are skipped (and a running explanation stops
between its steps), stale answers dropped. A running comparison can be cancelled
(:meth:`CompareController.cancel`, the view's Cancel button): its generation becomes stale, DecompX and integrated
gradients stop at their next check (a layer, a batch), and the view says so until the user asks again
(:meth:`CompareController.retry`) or the pin, text, method or head mask change.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from dataclasses import dataclass, replace

import numpy as np
from PySide6.QtCore import QObject, Signal

from ..compare_records import CompareResult, CompareSide, align_words, focus_class, text_words, word_sums
from desktop_app.workers.attention_flow import mask_key
from .handle import EXPLANATION_NICE, one_line
from .jobs import JobContext, Jobs, JobStopped
from .state_protocol import CompareState

log = logging.getLogger(__name__)

DEFAULT_METHOD = "decompx"  # the explanation compared by default ...
FALLBACK_METHOD = "grad_x_input"  # ... and the one used where DecompX does not cover the model
FLOW_METHOD = "alti"  # the attention flow compared beside it
IDLE, RUNNING, CANCELLED = "", "running", "cancelled"  # what the controller is doing (:attr:`CompareController.activity`)
CANCELLED_MESSAGE = "Comparison cancelled. Press \u201cCompare again\u201d to run it (or change the pin, text or method)."
CACHE_SIZE = 16  # per-text results kept on the worker


def method_choices() -> list[tuple[str, str]]:
    """(id, title) of every explanation method, in the registry's display order (imports :mod:`model.explain`)."""
    from model.explain import EXPLANATION_METHODS, METHOD_TITLES

    return [(m, METHOD_TITLES[m]) for m in EXPLANATION_METHODS]


@dataclass(frozen=True)
class SideRequest:
    """One text to compare.

    Attributes:
        text: the text. head_mask: float32 (L, H) or None, the mask it is analysed with.
        prediction: its ``model.Prediction`` under ``head_mask`` when known (a pin's), else None (computed).
        text_pair: a sentence pair's second text, or None (the words compared are the first text's; the second
            text's tokens count as special tokens there).
    """

    text: str
    head_mask: np.ndarray | None
    prediction: object = None
    text_pair: str | None = None

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
        cache: (text, mask, method, target, second text) -> (CompareSide, note), the last :data:`CACHE_SIZE`.
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
            a = self._side(ctx, p, pinned, method, target)
            b = self._side(ctx, p, replace(current, prediction=cur_pred), method, target)
        except NotImplementedError as exc:  # DecompX (a flow method) does not cover this architecture
            if method == FALLBACK_METHOD:
                raise
            notes.append(f"{METHOD_TITLES.get(method, method)} does not cover this model ({one_line(exc)}); "
                         f"showing {METHOD_TITLES[FALLBACK_METHOD]}")
            method = FALLBACK_METHOD
            a = self._side(ctx, p, pinned, method, target)
            b = self._side(ctx, p, replace(current, prediction=cur_pred), method, target)
        notes += [n for n in dict.fromkeys((a[1], b[1])) if n]
        return CompareResult(a[0], b[0], align_words(a[0].words.words, b[0].words.words), method,
                             METHOD_TITLES.get(method, method), method in SIGNED_METHODS, target, tuple(notes))

    def _side(self, ctx: JobContext, p, side: SideRequest, method: str, target: int) -> tuple[CompareSide, str]:
        """(CompareSide, note about the flow or "") of one text, from the cache or computed."""
        key = (side.text, mask_key(side.head_mask), method, target, side.text_pair)
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


class CompareController(QObject):
    """GUI-thread side: keeps the comparison of the chosen pin with the current analysis up to date.

    Recomputes (on :class:`CompareWorker`) when the pins, the current prediction, the head mask, the chosen pin or the
    chosen method change; answers through :attr:`result` and :attr:`status`. Heads switched on or off make the
    current side computed under the new mask at once (its prediction too), before the window's new analysis arrives.

    Args:
        state: the explorer state, as :class:`~desktop_app.workers.state_protocol.CompareState` (read: pins,
            prediction, head_mask, task; never written).

    Attributes:
        method: the chosen explanation method (a ``model.explain`` id; default :data:`DEFAULT_METHOD`).
        pin_index: the chosen pin, an index into ``state.pins`` (-1: the newest; reset to it when the pins change).
        latest: the :class:`~desktop_app.compare_records.CompareResult` on display, or None.
        message: the status line on display ("" when the result is current).
        activity: :data:`RUNNING` while a comparison is under way, :data:`CANCELLED` after :meth:`cancel` (until the
            next request), else :data:`IDLE` ("").

    Signals:
        result(object): a new CompareResult, or None (nothing to compare, the comparison failed or was cancelled).
        status(str): what is going on ("Computing ...", why nothing is compared, a failure); "" with a fresh result.
        activity_changed(str): :attr:`activity` changed (the view shows Cancel while running, Compare again after).
    """

    result = Signal(object)
    status = Signal(str)
    activity_changed = Signal(str)

    def __init__(self, state: CompareState, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.predictor = None
        self.method = DEFAULT_METHOD
        self.method_chosen = False  # the user picked the method (else the default, DecompX where it is quick)
        self._views: list = []  # the connected views (:meth:`connect_view`)
        self.pin_index = -1
        self.latest: CompareResult | None = None
        self.message = ""
        self.activity = IDLE
        self._asked: tuple | None = None  # the key of the request under way or answered
        self._mask_pending = False  # the head mask changed since the current prediction was made
        self.handle = Jobs("compare", EXPLANATION_NICE, parent=self)
        self.comparer = Comparer()  # its cache lives on (and is used by) the compare thread only
        state.events.pins.connect(self._on_pins)
        state.events.prediction.connect(self._on_prediction)
        state.events.head_mask.connect(self._on_head_mask)
        state.task.target_changed.connect(lambda _k: self.refresh())

    def connect_view(self, view) -> None:
        """Wire a Compare view (:class:`desktop_app.views.compare_view.CompareView`): its method list and choices
        (``set_methods``, ``method_chosen(str)``, ``pin_chosen(int)``, ``cancel_requested()``, ``retry_requested()``)
        and this controller's answers (``set_result``, ``set_status``, ``set_activity``). The method list is filled when the first model has loaded
        (:meth:`set_predictor`): the registry imports torch, which the window must not wait for (issue 34)."""
        self._views.append(view)
        view.method_chosen.connect(self.set_method)
        view.pin_chosen.connect(self.set_pin_index)
        self.result.connect(view.set_result)
        self.status.connect(view.set_status)
        view.cancel_requested.connect(self.cancel)
        view.retry_requested.connect(self.retry)
        self.activity_changed.connect(view.set_activity)
        view.set_status(self.message)
        view.set_activity(self.activity)

    def set_predictor(self, predictor) -> None:
        """Use ``predictor`` (a newly loaded ``model.Predictor``) and compare again."""
        self.predictor = predictor
        self._asked = None
        for view in self._views:
            if view.method_combo.count() == 0:
                view.set_methods(method_choices(), self.method)
        self.refresh()

    def set_method(self, method: str) -> None:
        """Compare by explanation ``method`` (a ``model.explain`` id; an unknown one fails with a message)."""
        if method and (method != self.method or not self.method_chosen):
            self.method, self.method_chosen = str(method), True
            self._asked = None
            self.refresh()

    def set_pin_index(self, index: int) -> None:
        """Compare with pin ``index`` of ``state.pins`` (-1: the newest)."""
        if int(index) != self.pin_index:
            self.pin_index = int(index)
            self.refresh()

    def pin(self):
        """The chosen :class:`~desktop_app.records.Pin` (the newest when the index is out of range), or None."""
        pins = self.state.pins
        if not pins:
            return None
        return pins[self.pin_index] if -len(pins) <= self.pin_index < len(pins) else pins[-1]

    def key(self) -> tuple | None:
        """What the comparison shown now must be of: (pin text, pin mask, current text, current mask, method, whether
        the user chose the method, the class, the two second texts), or None with no pin or no current prediction."""
        pin, pred = self.pin(), self.state.prediction
        if pin is None or pred is None:
            return None
        # a long review is compared whole, whatever window the attention views show
        return pin.text, mask_key(pin.head_mask), pred.document.text, mask_key(self.state.head_mask), self.method, \
            self.method_chosen, self.target(), pin.prediction.text_pair, pred.text_pair

    def target(self) -> int:
        """The class both sides explain: the state's "Explain class" when the user picked one, else -1 (the focus
        class, :func:`desktop_app.compare_records.focus_class`)."""
        task = self.state.task
        return -1 if task.following else task.target

    def refresh(self) -> int:
        """Ask for the comparison the state needs now (nothing when it is shown or under way); returns the newest
        generation."""
        key = self.key()
        if key is None:
            self._asked = None
            generation = self.handle.next_generation()
            self._show(None, "Pin an analysis (Pin, Ctrl+Shift+P) to compare it with the current one"
                       if not self.state.pins else "Analyse a text to compare it with the pin")
            self._set_activity(IDLE)
            return generation
        if self.predictor is None:
            self._show(self.latest, "Loading model\u2026")
            self._set_activity(IDLE)
            return self.handle.generation
        if key == self._asked:
            return self.handle.generation
        self._asked = key
        generation = self.handle.next_generation()
        pin, pred = self.pin(), self.state.prediction
        old = self.latest  # kept while computing only when it is of the same two texts (another method or mask)
        same = old is not None and (old.pinned.text, old.current.text) == (pin.text, pred.document.text)
        self._show(old if same else None, "Comparing\u2026")
        self._set_activity(RUNNING)
        return self.handle.run(compare_job, self.comparer, self.predictor,
                               SideRequest(pin.text, pin.head_mask, pin.prediction, pin.prediction.text_pair),
                               SideRequest(pred.document.text, self.state.head_mask,
                                           None if self._mask_pending else pred,
                                           pred.text_pair),
                               self.method, not self.method_chosen, self.target(), generation=generation,
                               on_result=self._on_result, on_progress=self._on_progress, on_error=self._on_failed)

    def cancel(self) -> None:
        """Stop the running comparison (nothing when none runs): its generation becomes stale, so the worker stops at
        its next check (between DecompX's layers, integrated gradients' batches, the two texts) and its answer is
        dropped; the GUI never waits for it. The view shows no result and :data:`CANCELLED_MESSAGE` until
        :meth:`retry` or a new request (another pin, text, method or head mask)."""
        if self.activity != RUNNING:
            return
        self.handle.next_generation()
        self._show(None, CANCELLED_MESSAGE)
        self._set_activity(CANCELLED)

    def retry(self) -> int:
        """Run the comparison the state needs now again, even when it is the one cancelled; returns the generation."""
        self._asked = None
        return self.refresh()

    def shutdown(self) -> None:
        """Stop the worker thread."""
        self.handle.shutdown()

    def _set_activity(self, activity: str) -> None:
        if activity != self.activity:
            self.activity = activity
            self.activity_changed.emit(activity)

    def _show(self, result, message: str) -> None:
        if result is not self.latest:
            self.latest = result
            self.result.emit(result)
        if message != self.message:
            self.message = message
            self.status.emit(message)

    def _on_pins(self, _pins) -> None:
        self.pin_index = -1
        self.refresh()

    def _on_prediction(self, _pred) -> None:
        self._mask_pending = False
        self.refresh()

    def _on_head_mask(self, _mask) -> None:
        self._mask_pending = self.state.prediction is not None
        self.refresh()

    def _on_result(self, result) -> None:
        self._show(result, "")
        self._set_activity(IDLE)

    def _on_progress(self, message: str) -> None:
        self._show(self.latest, message)

    def _on_failed(self, exc: Exception) -> None:
        log.info("comparison failed: %s", one_line(exc))
        self._show(None, f"Comparison failed: {one_line(exc)}")
        self._set_activity(IDLE)
