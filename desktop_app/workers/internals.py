"""One layer's attention internals (Q, K, V, scores, head outputs), computed off the GUI thread.

A job of :mod:`desktop_app.workers.jobs`: :func:`internals_job` runs on the "attention-internals" thread (nice +5)
of the :class:`InternalsController`'s :class:`~desktop_app.workers.jobs.Jobs`. The controller, on the GUI thread, asks
for the internals of the current text and the selected layer whenever either changes (latest request wins: stale
requests are skipped, stale results dropped, by the jobs' runner) and hands the
:class:`model.records.internals.AttentionInternals` record to the explorer state (as
:class:`~desktop_app.workers.state_protocol.InternalsState`), from which the neuron view and the step-by-step panel
draw.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject, Signal

from desktop_app.workers.attention_flow import mask_key
from .handle import INTERNALS_NICE
from .jobs import JobContext, Jobs
from .state_protocol import InternalsState

log = logging.getLogger(__name__)


def internals_job(ctx: JobContext, predictor, text: str, layer: int, head_mask=None, want_value_norms: bool = False,
                  text_pair: str | None = None) -> tuple:
    """``Predictor.attention_internals(text, layer)`` of ``text`` (with its pair's second text ``text_pair``), for the
    model with ``head_mask`` ((L, H), 0 = head off; None: every head on).

    Also the text's :class:`model.records.internals.EmbeddingNorms` (for the positional-encoding view) and, when
    ``want_value_norms`` (once per text and head mask), the value-vector norms ||f^h(x_j)|| of every layer (float32
    (L, H, T), from ``Predictor.attention_flow(text, "value_norm")``; None where the model's family is not covered),
    which the neuron view and the attention steps show beside the weights.

    Returns:
        (AttentionInternals, EmbeddingNorms, value norms or None: also when not asked for or gone stale).

    Raises:
        whatever the Predictor raises for the internals (the controller shows it in one line).
    """
    mine = predictor
    pair = {} if text_pair is None else {"text_pair": text_pair}
    out = mine.attention_internals(text, layer, head_mask=head_mask, **pair)
    norms = mine.embedding_norms(text, **pair)  # cheap (an embedding lookup), so always sent along
    value_norms = None
    if want_value_norms and not ctx.stale():
        try:
            value_norms = mine.attention_flow(text, "value_norm", head_mask=head_mask, **pair).value_norms
        except Exception as exc:  # noqa: BLE001 - e.g. FlowNotSupported: the views show the weights alone
            log.info("value norms not available: %s", exc)
    return out, norms, value_norms


class InternalsController(QObject):
    """GUI-thread side: requests internals for (current text, selected layer); stale results are dropped.

    Args:
        state: the explorer state, as :class:`~desktop_app.workers.state_protocol.InternalsState` (read: prediction,
            layer, head mask; written: ``set_internals``, ``set_embedding_norms``, ``set_value_norms``).

    Signals:
        error(str): the newest request failed.
    """

    error = Signal(str)

    def __init__(self, state: InternalsState, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.predictor = None
        self._asked: tuple | None = None  # (text, layer, head-mask key) of the last request
        self._norms_done: tuple | None = None  # (text, head-mask key) whose value norms were computed (or tried)
        self._norms_asked: tuple | None = None  # (text, head-mask key, pair) the latest request asks value norms of
        self.handle = Jobs("attention-internals", INTERNALS_NICE, parent=self)
        state.events.prediction.connect(lambda _pred: self.refresh())
        state.events.layer_head.connect(lambda *_: self.refresh())
        state.events.head_mask.connect(lambda *_: self.refresh())

    def set_predictor(self, predictor) -> None:
        """Use ``predictor`` (a loaded :class:`model.Predictor`) and refresh."""
        self.predictor = predictor
        self._asked = self._norms_done = self._norms_asked = None
        self.refresh()

    def refresh(self) -> int:
        """Ask for the internals of the current text and layer if not asked already; returns the generation."""
        pred = self.state.prediction
        if pred is None:  # the state dropped the internals with the prediction: drop any in flight, ask anew
            self._asked = self._norms_done = self._norms_asked = None
            return self.handle.next_generation()
        if self.predictor is None:
            return self.handle.generation
        mask = self.state.head_mask
        key = (pred.text, int(self.state.layer), mask_key(mask), pred.text_pair)
        if key == self._asked:
            return self.handle.generation
        self._asked = key
        want_norms = self._norms_done != (key[0], key[2], key[3])
        if want_norms and self.state.value_norms is not None:
            self.state.set_value_norms(None)  # of another text or head mask
        self._norms_asked = (key[0], key[2], key[3]) if want_norms else None
        return self.handle.run(internals_job, self.predictor, key[0], key[1], mask, want_norms, key[3],
                               on_result=self._on_result, on_error=self._on_failed)

    def shutdown(self) -> None:
        """Stop the worker thread (waits for a running computation up to the handle's ``wait_ms``)."""
        self.handle.shutdown()

    def _on_result(self, result: tuple) -> None:
        internals, norms, value_norms = result
        if self.state.embedding_norms is None or self.state.embedding_norms.tokens != norms.tokens:
            self.state.set_embedding_norms(norms)
        if self._norms_asked is not None:  # this (the latest) request asked for them
            self._norms_done, self._norms_asked = self._norms_asked, None
            if value_norms is not None:
                self.state.set_value_norms(value_norms)
        self.state.set_internals(internals)

    def _on_failed(self, exc: Exception) -> None:
        self._norms_asked = None
        message = f"{type(exc).__name__}: {exc}"
        log.warning("attention internals failed: %s", message)
        self.error.emit(message)
