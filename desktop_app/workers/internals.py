"""One layer's attention internals (Q, K, V, scores, head outputs), computed off the GUI thread.

The worker pattern of :mod:`desktop_app.workers.handle`: :class:`InternalsWorker` (a
:class:`~desktop_app.workers.handle.BackgroundWorker` on the one shared :class:`model.Predictor`) lives on
its own QThread, owned by a :class:`~desktop_app.workers.handle.WorkerHandle`; :class:`InternalsController`,
on the GUI thread, asks for the internals of the current text and the selected layer whenever either
changes, tags each request with a generation (latest request wins: the worker skips stale requests, the
controller drops stale results) and hands the :class:`model.records.internals.AttentionInternals` record to the
:class:`~desktop_app.state.ExplorerState`, from which the neuron view and the step-by-step panel draw.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject, Signal

from desktop_app.workers.attention_flow import mask_key
from .handle import INTERNALS_NICE, BackgroundWorker, WorkerHandle

log = logging.getLogger(__name__)


class InternalsWorker(BackgroundWorker):
    """Runs ``Predictor.attention_internals(text, layer)`` on its own thread.

    Also computes the text's :class:`model.records.internals.EmbeddingNorms` (for the positional-encoding view) and, once
    per text and head mask, the value-vector norms ||f^h(x_j)|| of every layer (float32 (L, H, T), from
    ``Predictor.attention_flow(text, "value_norm")``; None where the model's family is not covered), which the neuron
    view and the attention steps show beside the weights.

    Signals:
        result(int, object, object, object): (generation, AttentionInternals, EmbeddingNorms, value norms or None;
            None also when they were not asked for).
        failed(int, str): (generation, one-line reason).
    """

    result = Signal(int, object, object, object)
    failed = Signal(int, str)

    def compute(self, generation: int, predictor, text: str, layer: int, head_mask=None,
                want_value_norms: bool = False, text_pair: str | None = None) -> None:
        """Compute the internals (and the value norms if ``want_value_norms``) of ``text`` (with its pair's second
        text ``text_pair`` when given) unless ``generation`` is stale."""
        if self.is_stale(generation):
            return
        try:
            mine = predictor
            pair = {} if text_pair is None else {"text_pair": text_pair}
            out = mine.attention_internals(text, layer, head_mask=head_mask, **pair)
            norms = mine.embedding_norms(text, **pair)  # cheap (an embedding lookup), so always sent along
        except Exception as exc:  # noqa: BLE001 - any failure becomes a message
            self.failed.emit(generation, f"{type(exc).__name__}: {exc}")
            return
        value_norms = None
        if want_value_norms and not self.is_stale(generation):
            try:
                value_norms = mine.attention_flow(text, "value_norm", head_mask=head_mask, **pair).value_norms
            except Exception as exc:  # noqa: BLE001 - e.g. FlowNotSupported: the views show the weights alone
                log.info("value norms not available: %s", exc)
        if not self.is_stale(generation):
            self.result.emit(generation, out, norms, value_norms)


class InternalsController(QObject):
    """GUI-thread side: requests internals for (current text, selected layer); stale results are dropped.

    Args:
        state: the :class:`~desktop_app.state.ExplorerState` (read: prediction, layer; written:
            :meth:`~desktop_app.state.ExplorerState.set_internals`, ``set_embedding_norms``).

    Signals:
        error(str): the newest request failed.
    """

    error = Signal(str)

    def __init__(self, state, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.predictor = None
        self._asked: tuple | None = None  # (text, layer, head-mask key) of the last request
        self._norms_done: tuple | None = None  # (text, head-mask key) whose value norms were computed (or tried)
        self._norms_asked: tuple[int, tuple] | None = None  # (generation, (text, head-mask key)) asking for them
        self.handle = WorkerHandle(InternalsWorker(), "attention-internals", INTERNALS_NICE, parent=self)
        self.handle.worker.result.connect(self._on_result)
        self.handle.worker.failed.connect(self._on_failed)
        state.prediction_changed.connect(lambda _pred: self.refresh())
        state.layer_head_changed.connect(lambda *_: self.refresh())
        state.head_mask_changed.connect(lambda *_: self.refresh())

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
        generation = self.handle.next_generation()
        self._norms_asked = (generation, (key[0], key[2], key[3])) if want_norms else None
        self.handle.submit(self.handle.worker.compute, generation, self.predictor, key[0], key[1], mask, want_norms,
                           key[3])
        return generation

    def shutdown(self) -> None:
        """Stop the worker thread (waits for a running computation up to the handle's ``wait_ms``)."""
        self.handle.shutdown()

    def _on_result(self, generation: int, internals, norms, value_norms) -> None:
        if self.handle.is_current(generation):
            if self.state.embedding_norms is None or self.state.embedding_norms.tokens != norms.tokens:
                self.state.set_embedding_norms(norms)
            if self._norms_asked is not None and self._norms_asked[0] == generation:
                self._norms_done, self._norms_asked = self._norms_asked[1], None
                if value_norms is not None:
                    self.state.set_value_norms(value_norms)
            self.state.set_internals(internals)

    def _on_failed(self, generation: int, message: str) -> None:
        if self.handle.is_current(generation):
            self._norms_asked = None
            log.warning("attention internals failed: %s", message)
            self.error.emit(message)
