"""The comparison of a pinned analysis with the current one, computed off the GUI thread.

A job of :mod:`desktop_app.workers.jobs`: :func:`compare_job` runs on the "compare" thread (nice +10) of the
:class:`CompareController`'s :class:`~desktop_app.workers.jobs.Jobs`, on the one shared predictor. For each of the two texts it computes the prediction (the pin's is reused), one explanation
method's token scores (``Predictor.explain``, both texts explaining the same class,
:func:`desktop_app.compare_records.focus_class`) and the ALTI aggregated importance (``Predictor.attention_flow``),
sums them into words and aligns the two word sequences (:func:`desktop_app.compare_records.align_words`); the
answer is one immutable :class:`~desktop_app.compare_records.CompareResult`. Per-text results are cached
(:class:`~desktop_app.workers.comparer.Comparer`, used on that thread only), so switching pins or re-analysing an
unchanged text costs nothing. A pin of model B (issue 44, :attr:`desktop_app.records.Pin.of_model_b`) reads the
current text with the second model: the view then shows the two models' importances of one text side by side.

:class:`CompareController`, on the GUI thread, asks again whenever the pins, the current prediction, the chosen
method or the head mask change. Latest request wins: stale requests are skipped (and a running explanation stops
between its steps), stale answers dropped. A running comparison can be cancelled
(:meth:`CompareController.cancel`, the view's Cancel button): its generation becomes stale, DecompX and integrated
gradients stop at their next check (a layer, a batch), and the view says so until the user asks again
(:meth:`CompareController.retry`) or the pin, text, method or head mask change.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject, Signal

from ..compare_records import CompareResult
from desktop_app.workers.attention_flow import mask_key
from .comparer import (  # noqa: F401 - the comparison's computing side, re-exported
    DEFAULT_METHOD,
    FALLBACK_METHOD,
    FLOW_METHOD,
    Comparer,
    SideRequest,
    compare_job,
)
from .handle import EXPLANATION_NICE, one_line
from .state_protocol import CompareState
from .jobs import Jobs

log = logging.getLogger(__name__)

IDLE, RUNNING, CANCELLED = "", "running", "cancelled"  # what the controller is doing (:attr:`CompareController.activity`)
CANCELLED_MESSAGE = "Comparison cancelled. Press \u201cCompare again\u201d to run it (or change the pin, text or method)."


def method_choices() -> list[tuple[str, str]]:
    """(id, title) of every explanation method, in the registry's display order (imports :mod:`model.explain`)."""
    from model.explain import EXPLANATION_METHODS, METHOD_TITLES

    return [(m, METHOD_TITLES[m]) for m in EXPLANATION_METHODS]


class CompareController(QObject):
    """GUI-thread side: keeps the comparison of the chosen pin with the current analysis up to date.

    Recomputes (a job on its :class:`~desktop_app.workers.jobs.Jobs`, thread "compare") when the pins, the current
    prediction, the head mask, the chosen pin or the chosen method change; answers through :attr:`result` and
    :attr:`status`. Heads switched on or off make the current side computed under the new mask at once (its
    prediction too), before the window's new analysis arrives.

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
        self.second = None  # model B's Predictor (issue 44), which a pin of model B reads the text with
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

    def set_second(self, predictor) -> None:
        """Model B's ``model.Predictor`` (None: no second model): pins of model B read their text with it
        (:attr:`desktop_app.records.Pin.of_model_b`); compare again."""
        self.second = predictor
        self._asked = None
        self.refresh()

    def _pinned_side(self, pin) -> SideRequest:
        """The :class:`SideRequest` of ``pin``: its text, mask, prediction and second text, read by model B for a
        pin of model B."""
        if pin.of_model_b:
            return SideRequest(pin.text, None, None, pin.text_pair, predictor=self.second, name="model B")
        return SideRequest(pin.text, pin.head_mask, pin.prediction, pin.text_pair)

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
            self.method_chosen, self.target(), pin.text_pair, pred.text_pair, pin.model, id(self.second)

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
        if self.pin().of_model_b and self.second is None:
            self._asked = None
            self._show(None, "This pin reads the text with model B, which is not open: Model > Compare with a "
                       "second model\u2026")
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
                               self._pinned_side(pin),
                               SideRequest(pred.document.text, self.state.head_mask,
                                           None if self._mask_pending else pred, pred.text_pair,
                                           name="model A" if pin.of_model_b else ""),
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
