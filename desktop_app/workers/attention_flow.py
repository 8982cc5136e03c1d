"""The attention flow of the current text (value norms or ALTI), computed off the GUI thread.

A job of :mod:`desktop_app.workers.jobs`: :func:`flow_job` runs :meth:`model.Predictor.attention_flow` on the
"attention-flow" thread of the :class:`FlowController`'s :class:`~desktop_app.workers.jobs.Jobs`. The controller, on
the GUI thread, asks for the flow of (current text, the state's "Show" choice, the head mask) whenever one of them
changes and the choice is a flow, and hands the :class:`model.records.flow.AttentionFlow` to the explorer state (as
:class:`~desktop_app.workers.state_protocol.FlowState`). Latest request wins: stale requests are skipped and stale
results kept in the cache only. The last few flows are kept, so switching the selector back and forth redraws at
once without computing again. A method the model does not support (:class:`model.records.flow.FlowNotSupported`) becomes the state's
``flow_note``, shown by the views in place of a picture.
"""

from __future__ import annotations

import logging
from collections import OrderedDict

from PySide6.QtCore import QObject, Signal

from desktop_app.records import SHOW_ATTENTION, SHOW_TITLES
from desktop_app.workers.handle import INTERNALS_NICE, one_line
from desktop_app.workers.jobs import JobContext, Jobs
from desktop_app.workers.state_protocol import FlowState

log = logging.getLogger(__name__)

CACHE_SIZE = 6  # flows kept (text, method, head mask); one 512-token value-norm flow of a 6 x 12 model is ~75 MB


def mask_key(mask) -> bytes | None:
    """A hashable key of a head mask (None: every head on)."""
    return None if mask is None else mask.tobytes() + bytes(str(mask.shape), "ascii")


def flow_job(ctx: JobContext, predictor, text: str, method: str, mask, text_pair: str | None = None):
    """``Predictor.attention_flow(text, method, head_mask=mask)`` of ``text`` (with ``text_pair`` when given).

    Returns:
        the :class:`model.records.flow.AttentionFlow`.

    Raises:
        :class:`model.records.flow.FlowNotSupported` (the method does not cover this model) or whatever the Predictor
        raises; the controller shows it in one line.
    """
    pair = {} if text_pair is None else {"text_pair": text_pair}
    return predictor.attention_flow(text, method, head_mask=mask, **pair)


class FlowController(QObject):
    """GUI-thread side: keeps ``state.flow`` the flow of the current text, choice and head mask.

    Args:
        state: the explorer state, as :class:`~desktop_app.workers.state_protocol.FlowState` (read: prediction,
            show, head_mask, flow; written: ``set_flow``).

    Signals:
        error(str): a flow could not be computed (also in ``state.flow_note``).
    """

    error = Signal(str)

    def __init__(self, state: FlowState, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.predictor = None
        self.cache: OrderedDict[tuple, object] = OrderedDict()  # key -> AttentionFlow or failure message (str)
        self._asked: tuple | None = None
        self.handle = Jobs("attention-flow", INTERNALS_NICE, parent=self)
        state.events.prediction.connect(lambda _pred: self.refresh())
        state.events.show.connect(lambda _show: self.refresh())
        state.events.head_mask.connect(lambda _mask: self.refresh())

    def set_predictor(self, predictor) -> None:
        """Use ``predictor`` (a newly loaded :class:`model.Predictor`): forget the old model's flows and refresh."""
        self.predictor = predictor
        self.cache.clear()
        self._asked = None
        self.refresh()

    def key(self) -> tuple | None:
        """(text, method, head-mask key, second text or None) of what the views need now, or None (attention weights,
        or no text)."""
        pred, show = self.state.prediction, self.state.show
        if pred is None or show == SHOW_ATTENTION:
            return None
        return pred.text, show, mask_key(self.state.head_mask), pred.text_pair

    def refresh(self) -> int:
        """Give the state the flow it needs now: from the cache at once, else ask the worker (the state says
        "Computing ..." meanwhile). Returns the request's generation."""
        key = self.key()
        if key is None:
            self._asked = None
            return self.handle.next_generation()
        if self.state.flow is not None and self.state.flow_fits(self.state.flow):
            return self.handle.generation
        cached = self.cache.get(key)
        if cached is not None:
            self.cache.move_to_end(key)
            if isinstance(cached, str):
                self.state.set_flow(None, cached)
            elif self.state.flow_fits(cached):
                self.state.set_flow(cached)
            return self.handle.generation
        if self.predictor is None or key == self._asked:
            return self.handle.generation
        self._asked = key
        generation = self.handle.next_generation()
        self.state.set_flow(None, f"Computing {SHOW_TITLES[key[1]]}\u2026")
        return self.handle.run(flow_job, self.predictor, key[0], key[1], self.state.head_mask, key[3],
                               generation=generation, on_result=lambda flow: self._on_result(key, flow),
                               on_stale=lambda flow: self._remember(key, flow),
                               on_error=lambda exc: self._on_failed(key, exc),
                               on_stale_error=lambda exc: self._remember(key, self._note(key, exc)))

    def shutdown(self) -> None:
        """Stop the worker thread."""
        self.handle.shutdown()

    def _remember(self, key: tuple, value) -> None:
        self.cache[key] = value
        self.cache.move_to_end(key)
        while len(self.cache) > CACHE_SIZE:
            self.cache.popitem(last=False)

    def _on_result(self, key: tuple, flow) -> None:
        self._remember(key, flow)
        self._asked = None
        if key == self.key() and self.state.flow_fits(flow):
            self.state.set_flow(flow)

    @staticmethod
    def _note(key: tuple, exc: Exception) -> str:
        return f"{SHOW_TITLES[key[1]]} cannot be shown: {one_line(exc)}"

    def _on_failed(self, key: tuple, exc: Exception) -> None:
        note = self._note(key, exc)
        self._remember(key, note)
        self._asked = None
        log.info("attention flow failed: %s", one_line(exc))
        if key == self.key():
            self.state.set_flow(None, note)
        self.error.emit(note)
