"""Model loading and inference off the GUI thread: :class:`InferenceWorker` and its :class:`InferenceController`.

One :class:`InferenceWorker` lives on its own thread, owned by a :class:`~.handle.WorkerHandle`. The GUI
talks to it only through :class:`InferenceController`, which lives on the GUI thread and enforces *latest
request wins*: every request gets a new generation; the worker skips a queued request whose generation is
no longer the latest (it is stale before it even starts), and the controller drops any result whose
generation is not the latest when it arrives.

Errors (a missing model folder, a corrupt weights file, empty text) arrive as signals with a one-line
message; no exception ever reaches the event loop.
"""

from __future__ import annotations

import gc
import logging
import time
import traceback
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from .handle import BackgroundWorker, WorkerHandle, one_line

log = logging.getLogger(__name__)


class InferenceWorker(BackgroundWorker):
    """Loads the model and runs ``Predictor.predict``; lives on a background QThread.

    Signals:
        loaded(object, object): (Predictor, :class:`model.info.ModelInfo`) once the model is ready.
        load_failed(str): a one-line reason (missing folder, corrupt weights, ...).
        result(int, object): (generation, ``model.Prediction``).
        failed(int, str): (generation, one-line reason), e.g. "the text is empty".
        started(int): the request of this generation is now being computed.
        progress(str): the loading stage now under way, for the status bar ("Loading weights\u2026").
    """

    loaded = Signal(object, object)
    progress = Signal(str)
    load_failed = Signal(str)
    result = Signal(int, object)
    failed = Signal(int, str)
    started = Signal(int)

    def __init__(self) -> None:
        super().__init__()
        self.predictor = None

    def load(self, model_dir, device) -> None:
        """Load ``model.Predictor.from_pretrained(model_dir, device)``; emits ``loaded`` or ``load_failed``."""
        t0 = time.perf_counter()
        try:
            from model.hf.loading import is_hf_folder, is_warm, warm_up
            from model.predictor import Predictor  # torch is imported here, on the worker thread

            if model_dir is not None and is_hf_folder(model_dir) and not is_warm():
                self.progress.emit("Importing the Hugging Face backend (transformers)\u2026")
                warm_up()  # or wait for the one under way on the preloading thread (desktop_app.workers.preload)
                gc.freeze()  # the modules stay: keep them out of the window's gc.collect() on the GUI thread
            self.progress.emit("Loading weights\u2026")
            predictor = Predictor.from_pretrained(model_dir, device=device)
            info = predictor.model_info(load_s=time.perf_counter() - t0)
        except Exception as exc:  # noqa: BLE001 - any failure becomes a message, never a traceback in the GUI
            log.debug("model load failed:\n%s", traceback.format_exc())
            self.load_failed.emit(f"Could not load the model: {one_line(exc)}")
            return
        self.predictor = predictor
        self.loaded.emit(predictor, info)

    def analyze(self, generation: int, text: str) -> None:
        """Run ``predict(text)`` unless a newer request has been made; emits ``result`` or ``failed``."""
        if self.is_stale(generation):
            return  # stale: a newer request is queued behind this one
        if self.predictor is None:
            self.failed.emit(generation, "the model is not loaded")
            return
        self.started.emit(generation)
        try:
            pred = self.predictor.predict(text)
        except Exception as exc:  # noqa: BLE001 - any failure becomes a message
            log.debug("predict failed:\n%s", traceback.format_exc())
            self.failed.emit(generation, one_line(exc))
            return
        self.result.emit(generation, pred)


class InferenceController(QObject):
    """GUI-thread front end of :class:`InferenceWorker`: owns its handle, numbers requests, drops stale results.

    Signals:
        loaded(object, object): (Predictor, :class:`model.info.ModelInfo`).
        load_failed(str): why the model could not be loaded.
        prediction(object): the newest ``model.Prediction`` (stale ones never arrive).
        error(str): why the newest request failed.
        busy_changed(bool): True while a request is outstanding.
        progress(str): the loading stage under way (see :class:`InferenceWorker`).
    """

    loaded = Signal(object, object)
    progress = Signal(str)
    load_failed = Signal(str)
    prediction = Signal(object)
    error = Signal(str)
    busy_changed = Signal(bool)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.handle = WorkerHandle(InferenceWorker(), "inference", parent=self)
        worker = self.handle.worker
        worker.loaded.connect(self._on_loaded)
        worker.load_failed.connect(self._on_load_failed)
        worker.result.connect(self._on_result)
        worker.failed.connect(self._on_failed)
        worker.progress.connect(self.progress)
        self._ready = False
        self._pending: str | None = None
        self._busy = False

    @property
    def ready(self) -> bool:
        """True once the model has loaded."""
        return self._ready

    @property
    def busy(self) -> bool:
        """True while the newest request has not yet been answered."""
        return self._busy

    def load(self, model_dir: str | Path | None, device: str | None) -> None:
        """Ask the worker to load the model (asynchronous; answers with ``loaded`` or ``load_failed``)."""
        self.handle.submit(self.handle.worker.load, str(model_dir) if model_dir is not None else None, device)

    def switch_model(self, model_dir: str | Path | None, device: str | None) -> None:
        """Load another model (asynchronous, like :meth:`load`): analysis requests still queued for the current
        model become stale and are dropped; the current model stays in use if the new one fails to load."""
        self.handle.next_generation()
        self._pending = None
        self._set_busy(False)
        self.load(model_dir, device)

    def analyze(self, text: str) -> int:
        """Queue ``text`` for analysis; any older outstanding request becomes stale.

        Before the model has loaded, only the newest text is kept and sent once
        it is ready. Returns the request's generation.
        """
        generation = self.handle.next_generation()
        self._set_busy(True)
        if not self._ready:
            self._pending = text
            return generation
        self.handle.submit(self.handle.worker.analyze, generation, text)
        return generation

    def shutdown(self) -> None:
        """Stop the worker thread (waits for a running forward pass, up to the handle's ``wait_ms``)."""
        self.handle.shutdown()

    def _set_busy(self, busy: bool) -> None:
        if busy != self._busy:
            self._busy = busy
            self.busy_changed.emit(busy)

    def _on_loaded(self, predictor, info) -> None:
        self._ready = True
        self.loaded.emit(predictor, info)
        if self._pending is not None:
            text, self._pending = self._pending, None
            self.handle.submit(self.handle.worker.analyze, self.handle.generation, text)

    def _on_load_failed(self, message: str) -> None:
        self._pending = None
        self._set_busy(False)
        self.load_failed.emit(message)

    def _on_result(self, generation: int, pred) -> None:
        if not self.handle.is_current(generation):
            return  # stale
        self._set_busy(False)
        self.prediction.emit(pred)

    def _on_failed(self, generation: int, message: str) -> None:
        if not self.handle.is_current(generation):
            return
        self._set_busy(False)
        self.error.emit(message)
