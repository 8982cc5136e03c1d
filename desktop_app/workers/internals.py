"""One layer's attention internals (Q, K, V, scores, head outputs), computed off the GUI thread.

The worker pattern of :mod:`desktop_app.workers.handle`: :class:`InternalsWorker` (a
:class:`~desktop_app.workers.handle.BackgroundWorker` with its own :meth:`model.Predictor.replica`) lives on
its own QThread, owned by a :class:`~desktop_app.workers.handle.WorkerHandle`; :class:`InternalsController`,
on the GUI thread, asks for the internals of the current text and the selected layer whenever either
changes, tags each request with a generation (latest request wins: the worker skips stale requests, the
controller drops stale results) and hands the :class:`model.internals.AttentionInternals` record to the
:class:`~desktop_app.state.ExplorerState`, from which the neuron view and the step-by-step panel draw.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject, Signal

from .handle import INTERNALS_NICE, BackgroundWorker, WorkerHandle

log = logging.getLogger(__name__)


class InternalsWorker(BackgroundWorker):
    """Runs ``Predictor.attention_internals(text, layer)`` on its own thread.

    Also computes the text's :class:`model.internals.EmbeddingNorms` (for the positional-encoding view).

    Signals:
        result(int, object, object): (generation, AttentionInternals, EmbeddingNorms).
        failed(int, str): (generation, one-line reason).
    """

    result = Signal(int, object, object)
    failed = Signal(int, str)

    def compute(self, generation: int, predictor, text: str, layer: int) -> None:
        """Compute the internals unless ``generation`` is already stale."""
        if self.is_stale(generation):
            return
        try:
            mine = self.own_predictor(predictor)
            out = mine.attention_internals(text, layer)
            norms = mine.embedding_norms(text)  # cheap (an embedding lookup), so always sent along
        except Exception as exc:  # noqa: BLE001 - any failure becomes a message
            self.failed.emit(generation, f"{type(exc).__name__}: {exc}")
            return
        if not self.is_stale(generation):
            self.result.emit(generation, out, norms)


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
        self._asked: tuple[str, int] | None = None
        self.handle = WorkerHandle(InternalsWorker(), "attention-internals", INTERNALS_NICE, parent=self)
        self.handle.worker.result.connect(self._on_result)
        self.handle.worker.failed.connect(self._on_failed)
        state.prediction_changed.connect(lambda _pred: self.refresh())
        state.layer_head_changed.connect(lambda *_: self.refresh())

    def set_predictor(self, predictor) -> None:
        """Use ``predictor`` (a loaded :class:`model.Predictor`) and refresh."""
        self.predictor = predictor
        self._asked = None
        self.refresh()

    def refresh(self) -> int:
        """Ask for the internals of the current text and layer if not asked already; returns the generation."""
        pred = self.state.prediction
        if pred is None:  # the state dropped the internals with the prediction: drop any in flight, ask anew
            self._asked = None
            return self.handle.next_generation()
        if self.predictor is None:
            return self.handle.generation
        key = (pred.text, int(self.state.layer))
        if key == self._asked:
            return self.handle.generation
        self._asked = key
        generation = self.handle.next_generation()
        self.handle.submit(self.handle.worker.compute, generation, self.predictor, key[0], key[1])
        return generation

    def shutdown(self) -> None:
        """Stop the worker thread (waits for a running computation up to the handle's ``wait_ms``)."""
        self.handle.shutdown()

    def _on_result(self, generation: int, internals, norms) -> None:
        if self.handle.is_current(generation):
            if self.state.embedding_norms is None or self.state.embedding_norms.tokens != norms.tokens:
                self.state.set_embedding_norms(norms)
            self.state.set_internals(internals)

    def _on_failed(self, generation: int, message: str) -> None:
        if self.handle.is_current(generation):
            log.warning("attention internals failed: %s", message)
            self.error.emit(message)
