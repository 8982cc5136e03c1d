"""One layer's attention internals (Q, K, V, scores, head outputs), computed off the GUI thread.

The worker pattern of :mod:`desktop_app.worker`: :class:`InternalsWorker` (a
:class:`~desktop_app.worker.BackgroundWorker` with its own :meth:`model.Predictor.replica`) lives on
its own QThread; :class:`InternalsController`, on the GUI thread, asks for the internals of the
current text and the selected layer whenever either changes, tags each request with a generation
(latest request wins: the worker skips stale requests, the controller drops stale results) and hands
the :class:`model.internals.AttentionInternals` record to the :class:`ExplorerState`, from which the
neuron view and the step-by-step panel draw.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject, Signal, Slot

from .worker import BackgroundWorker, start_worker_thread

log = logging.getLogger(__name__)

INTERNALS_NICE = 5  # below the GUI thread and live analysis, above explanations and batches


class InternalsWorker(BackgroundWorker):
    """Runs ``Predictor.attention_internals(text, layer)`` on its own thread.

    Also computes the text's :class:`model.internals.EmbeddingNorms` (for the positional-encoding view).

    Signals:
        result(int, object, object): (generation, AttentionInternals, EmbeddingNorms).
        failed(int, str): (generation, one-line reason).
    """

    result = Signal(int, object, object)
    failed = Signal(int, str)

    @Slot(int, object, str, int)
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
        state: the :class:`~desktop_app.views.state.ExplorerState` (read: prediction, layer; written:
            :meth:`~desktop_app.views.state.ExplorerState.set_internals`).

    Signals:
        error(str): the newest request failed.
    """

    error = Signal(str)
    _request = Signal(int, object, str, int)

    def __init__(self, state, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.predictor = None
        self._generation = 0
        self._asked: tuple[str, int] | None = None
        self._worker = InternalsWorker()
        self._request.connect(self._worker.compute)
        self._worker.result.connect(self._on_result)
        self._worker.failed.connect(self._on_failed)
        self._thread = start_worker_thread(self._worker, "attention-internals", INTERNALS_NICE)
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
        if self.predictor is None or pred is None:
            return self._generation
        key = (pred.text, int(self.state.layer))
        if key == self._asked:
            return self._generation
        self._asked = key
        self._generation += 1
        self._worker.latest = self._generation
        self._request.emit(self._generation, self.predictor, key[0], key[1])
        return self._generation

    def _on_result(self, generation: int, internals, norms) -> None:
        if generation == self._generation:
            if self.state.embedding_norms is None or self.state.embedding_norms.tokens != norms.tokens:
                self.state.set_embedding_norms(norms)
            self.state.set_internals(internals)

    def _on_failed(self, generation: int, message: str) -> None:
        if generation == self._generation:
            log.warning("attention internals failed: %s", message)
            self.error.emit(message)

    def shutdown(self, timeout_ms: int = 5000) -> None:
        """Stop the worker thread (waits for a running computation up to ``timeout_ms`` milliseconds)."""
        self._worker.latest = -1
        self._thread.quit()
        self._thread.wait(timeout_ms)
