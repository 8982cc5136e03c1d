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

import dataclasses
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
        loaded(object, object): (Predictor, :class:`model.records.info.ModelInfo`) once the model is ready.
        load_failed(str): a one-line reason (missing folder, corrupt weights, ...).
        result(int, object): (generation, ``model.Prediction``), sent as soon as it is computed.
        layer_result(int, object): (generation, its :class:`~desktop_app.records.LayerProbabilities`), sent after
            ``result`` (not at all without a classification head, or when the request went stale meanwhile).
        failed(int, str): (generation, one-line reason), e.g. "the text is empty".
        started(int): the request of this generation is now being computed.
        progress(str): the loading stage now under way, for the status bar ("Loading weights\u2026").
        task_set(object): the :class:`model.records.info.ModelInfo` after ``Predictor.set_task`` (the task override).
        task_failed(str): why the task could not be set (e.g. regression asked of a model with several outputs).
    """

    loaded = Signal(object, object)
    task_set = Signal(object)
    task_failed = Signal(str)
    progress = Signal(str)
    load_failed = Signal(str)
    result = Signal(int, object)
    layer_result = Signal(int, object)
    failed = Signal(int, str)
    started = Signal(int)

    def __init__(self) -> None:
        super().__init__()
        self.predictor = None
        self._reference: tuple | None = None  # ((text, pair), (L + 1, C) all-heads probabilities), last masked request
        self._load_s = 0.0

    def load(self, model_dir, device, precision: str = "auto") -> None:
        """Load ``model.Predictor.from_pretrained(model_dir, device)`` to run in ``precision`` (``auto``, ``fp32``,
        ``bf16``: ``Predictor.use_precision``); emits ``loaded`` or ``load_failed``."""
        t0 = time.perf_counter()
        try:
            from model.hf.loading import is_hf_folder, is_warm, warm_up
            from model.predictor.predictor import Predictor  # torch is imported here, on the worker thread

            if model_dir is not None and is_hf_folder(model_dir) and not is_warm():
                self.progress.emit("Importing the Hugging Face backend (transformers)\u2026")
                warm_up()  # or wait for the one under way on the preloading thread (desktop_app.workers.preload)
                gc.freeze()  # the modules stay: keep them out of the window's gc.collect() on the GUI thread
            self.progress.emit("Loading weights\u2026")
            predictor = Predictor.from_pretrained(model_dir, device=device)
            predictor.use_precision(precision)  # auto: from the CPU's reported features (model.predictor.precision)
            info = predictor.model_info(load_s=time.perf_counter() - t0)
        except Exception as exc:  # noqa: BLE001 - any failure becomes a message, never a traceback in the GUI
            log.debug("model load failed:\n%s", traceback.format_exc())
            self.load_failed.emit(f"Could not load the model: {one_line(exc)}")
            return
        self.predictor, self._reference, self._load_s = predictor, None, info.load_s
        self.loaded.emit(predictor, info)

    def set_task(self, kind: str | None, threshold: float | None = None) -> None:
        """``Predictor.set_task(kind, threshold)`` (the user's task override, :mod:`model.tasks.task`); emits ``task_set``
        with the new :class:`model.records.info.ModelInfo`, or ``task_failed`` with a one-line reason."""
        if self.predictor is None:
            self.task_failed.emit("the model is not loaded")
            return
        try:
            self.predictor.set_task(kind, threshold=threshold)
            info = self.predictor.model_info(load_s=self._load_s)
        except Exception as exc:  # noqa: BLE001 - a message, never a crash
            self.task_failed.emit(one_line(exc))
            return
        self._reference = None
        self.task_set.emit(info)

    def analyze(self, generation: int, text: str, head_mask=None, window: int = 0, document=None,
                text_pair: str | None = None) -> None:
        """Run ``predict(text, head_mask=head_mask)`` and the prediction by layer (with the mask and, when heads are
        off, without) unless a newer request has been made; emits ``result`` or ``failed``.

        A text read in several windows (:mod:`model.text.document_windows`) answers with the prediction of its window ``window``
        (``predict(whole.window_text(window))``, ``document`` the whole text's; :mod:`desktop_app.document`); a given
        ``document`` (the whole prediction of ``text``, another window asked for) is not computed again.
        ``text_pair``: the second text of a sentence pair (None: a single text; a pair is never read in windows)."""
        if self.is_stale(generation):
            return  # stale: a newer request is queued behind this one
        if self.predictor is None:
            self.failed.emit(generation, "the model is not loaded")
            return
        self.started.emit(generation)
        try:
            pair = {} if text_pair is None else {"text_pair": text_pair}
            pred = self.predictor.predict(text, head_mask=head_mask, **pair) if document is None else document
            if pred.num_windows > 1:  # the attention views show one window; the whole review rides along
                w = min(max(0, int(window)), pred.num_windows - 1)
                part = self.predictor.predict(pred.window_text(w), head_mask=head_mask)
                pred = dataclasses.replace(part, document=pred, window=w)
        except Exception as exc:  # noqa: BLE001 - any failure becomes a message
            log.debug("predict failed:\n%s", traceback.format_exc())
            self.failed.emit(generation, one_line(exc))
            return
        self.result.emit(generation, pred)  # first: the prediction is on screen before the plot's passes run
        probs = self._layer_probabilities(generation, pred.text, head_mask, pred, pair)
        if probs is not None and not self.is_stale(generation):
            self.layer_result.emit(generation, probs)

    def _layer_probabilities(self, generation: int, text: str, head_mask, pred, pair: dict):
        """The prediction by layer, and the all-heads curve when heads are off (kept for the last text, so toggling
        heads costs one pass); None without a head, when stale, or if it fails (the prediction is shown anyway)."""
        from ..records import LayerProbabilities

        if pred.attention_only or self.is_stale(generation):
            return None
        try:
            probs = self.predictor.layer_predictions(text, head_mask=head_mask, **pair)
            ref = None
            if head_mask is not None:
                if self._reference is None or self._reference[0] != (text, pred.text_pair):
                    self._reference = ((text, pred.text_pair), self.predictor.layer_predictions(text, **pair))
                ref = self._reference[1]
        except Exception:  # noqa: BLE001 - the plot stays empty; the prediction itself is fine
            log.debug("layer predictions failed:\n%s", traceback.format_exc())
            return None
        return LayerProbabilities(probs, ref, tuple(pred.labels), pred.task)


class InferenceController(QObject):
    """GUI-thread front end of :class:`InferenceWorker`: owns its handle, numbers requests, drops stale results.

    Signals:
        loaded(object, object): (Predictor, :class:`model.records.info.ModelInfo`).
        load_failed(str): why the model could not be loaded.
        prediction(object): the newest ``model.Prediction`` (stale ones never arrive).
        layer_probabilities(object): the newest prediction's :class:`~desktop_app.records.LayerProbabilities`,
            after ``prediction``.
        error(str): why the newest request failed.
        busy_changed(bool): True while a request is outstanding.
        progress(str): the loading stage under way (see :class:`InferenceWorker`).
        task_set(object): the new :class:`model.records.info.ModelInfo` after :meth:`set_task`.
        task_failed(str): why :meth:`set_task` failed.

    Attributes:
        precision: what the next loaded model runs predict and scoring in ("auto", "fp32", "bf16"; the app sets it
            from its settings, ``desktop_app.window.settings.precision_setting``).
    """

    loaded = Signal(object, object)
    progress = Signal(str)
    load_failed = Signal(str)
    prediction = Signal(object)
    layer_probabilities = Signal(object)
    error = Signal(str)
    busy_changed = Signal(bool)
    task_set = Signal(object)
    task_failed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.precision = "auto"
        self.handle = WorkerHandle(InferenceWorker(), "inference", parent=self)
        worker = self.handle.worker
        worker.loaded.connect(self._on_loaded)
        worker.load_failed.connect(self._on_load_failed)
        worker.result.connect(self._on_result)
        worker.layer_result.connect(self._on_layer_result)
        worker.failed.connect(self._on_failed)
        worker.progress.connect(self.progress)
        worker.task_set.connect(self.task_set)
        worker.task_failed.connect(self.task_failed)
        self._ready = False
        self._pending: tuple | None = None  # (text, head mask) asked before the model loaded
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
        self.handle.submit(self.handle.worker.load, str(model_dir) if model_dir is not None else None, device,
                           self.precision)

    def switch_model(self, model_dir: str | Path | None, device: str | None) -> None:
        """Load another model (asynchronous, like :meth:`load`): analysis requests still queued for the current
        model become stale and are dropped; the current model stays in use if the new one fails to load."""
        self.handle.next_generation()
        self._pending = None
        self._set_busy(False)
        self.load(model_dir, device)

    def set_task(self, kind: str | None, threshold: float | None = None) -> None:
        """Read the model's outputs as task ``kind`` (:data:`model.tasks.task.TASKS`; None: keep) with ``threshold`` on
        the inference thread (queued before any later analysis); answers ``task_set`` or ``task_failed``."""
        self.handle.submit(self.handle.worker.set_task, kind, threshold)

    def analyze(self, text: str, head_mask=None, window: int = 0, document=None, text_pair: str | None = None) -> int:
        """Queue ``text`` for analysis with ``head_mask`` ((L, H), 0 = head off; None: every head on); any older
        outstanding request becomes stale. ``window``, ``document``: a long text's window to show, and its whole
        prediction when known (see :meth:`InferenceWorker.analyze`); ``text_pair``: a pair's second text.

        Before the model has loaded, only the newest text is kept and sent once
        it is ready. Returns the request's generation.
        """
        generation = self.handle.next_generation()
        self._set_busy(True)
        if not self._ready:
            self._pending = (text, head_mask, text_pair)
            return generation
        self.handle.submit(self.handle.worker.analyze, generation, text, head_mask, window, document, text_pair)
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
            (text, mask, pair), self._pending = self._pending, None
            self.handle.submit(self.handle.worker.analyze, self.handle.generation, text, mask, 0, None, pair)

    def _on_load_failed(self, message: str) -> None:
        self._pending = None
        self._set_busy(False)
        self.load_failed.emit(message)

    def _on_result(self, generation: int, pred) -> None:
        if not self.handle.is_current(generation):
            return  # stale
        self._set_busy(False)
        self.prediction.emit(pred)

    def _on_layer_result(self, generation: int, probs) -> None:
        if self.handle.is_current(generation):
            self.layer_probabilities.emit(probs)

    def _on_failed(self, generation: int, message: str) -> None:
        if not self.handle.is_current(generation):
            return
        self._set_busy(False)
        self.error.emit(message)
