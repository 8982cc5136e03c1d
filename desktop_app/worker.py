"""Background work off the GUI thread: the one worker pattern, and model loading + inference.

The pattern (used by inference here, explanations in :mod:`desktop_app.explain_worker` and batch
scoring in :mod:`desktop_app.batch_worker`): a :class:`BackgroundWorker` is a QObject whose signals
carry the results; :func:`start_worker_thread` moves it to its own ``QThread`` (renicing that thread
first on Linux, :func:`lower_thread_priority`); the GUI sends requests through queued signals,
each tagged with a *generation* token; the worker skips requests that are stale (a newer generation
exists) and checks :meth:`BackgroundWorker.should_stop` (stale or aborted) between steps, and the
GUI side drops results of an old generation when they arrive.

One :class:`InferenceWorker` lives on its own ``QThread``. The GUI talks to it only through
queued signals, via :class:`InferenceController`, which lives on the GUI
thread and enforces *latest request wins*:

* every request gets an increasing id; the worker skips a queued request
  whose id is no longer the latest (it is stale before it even starts), and
* the controller drops any result whose id is not the latest when it arrives.

Errors (a missing model folder, a corrupt weights file, empty text) arrive as
signals with a one-line message; no exception ever reaches the event loop.

This is the only module of ``desktop_app`` that calls the ``Predictor``.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
import traceback
from pathlib import Path

from PySide6.QtCore import QObject, Qt, QThread, Signal, Slot

from .model_info import ModelInfo, model_info

log = logging.getLogger(__name__)

BATCH_NICE = 15  # niceness added to a batch-scoring thread on Linux: a nice-0 thread gets ~35x its CPU share
EXPLANATION_NICE = 10  # explanations (and their faithfulness) for the current review: below the GUI, above batches


def lower_thread_priority(nice: int) -> bool:
    """Make the calling thread a background thread, so the GUI thread (and live analysis) win the CPU.

    On Linux, niceness is per thread (``setpriority(PRIO_PROCESS, tid)``), and threads started from this
    one afterwards (torch's OpenMP helpers, created on its first parallel operation) inherit it. Qt's
    ``QThread.setPriority`` is ignored there under the default scheduler, so this uses ``os.setpriority``.
    Elsewhere the caller starts the QThread with ``QThread.LowPriority`` instead.

    Args:
        nice: niceness to add to the thread's current value (0..19; larger yields more).

    Returns:
        True if the priority was lowered; False where the OS offers no per-thread niceness (errors are
        swallowed: a background job must not fail over its priority).
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + nice))
        return True
    except OSError as exc:
        log.debug("could not lower the priority of thread %s: %s", threading.current_thread().name, exc)
        return False


class BackgroundWorker(QObject):
    """Base of every background worker: a generation token and an abort flag, checked between steps.

    ``latest`` is the newest generation the GUI asked for (written by the GUI thread; an int store is
    atomic under the GIL). A request of an older generation is stale: the worker skips it, or stops it
    at the next check. :meth:`request_stop` sets the abort flag (thread-safe), which also stops the
    current step; :meth:`reset_stop` clears it for the next request. Subclasses declare their own
    signals (the worker is its own signals object) and carry the generation in every one of them so
    the GUI side can drop stale results.
    """

    def __init__(self) -> None:
        super().__init__()
        self.latest = 0
        self._abort = threading.Event()

    def is_stale(self, generation: int) -> bool:
        """True if a newer generation was requested."""
        return generation != self.latest

    def request_stop(self) -> None:
        """Ask the running step to stop at its next check (callable from any thread)."""
        self._abort.set()

    def reset_stop(self) -> None:
        """Clear the abort flag (before a new request)."""
        self._abort.clear()

    def stop_requested(self) -> bool:
        """True once :meth:`request_stop` was called (until :meth:`reset_stop`)."""
        return self._abort.is_set()

    def should_stop(self, generation: int) -> bool:
        """What model code checks between steps: aborted, or ``generation`` is stale."""
        return self._abort.is_set() or generation != self.latest

    def own_predictor(self, predictor):
        """This worker's own :meth:`model.Predictor.replica` of ``predictor`` (the Predictor's one-per-thread
        policy), made once per source Predictor on the worker's thread; objects without ``replica`` pass through."""
        if getattr(self, "_replica_source", None) is not predictor:
            make = getattr(predictor, "replica", None)
            self._replica_source, self._replica = predictor, (make() if callable(make) else predictor)
        return self._replica


def start_worker_thread(worker: QObject, name: str, nice: int = 0, parent: QObject | None = None,
                        delete_worker: bool = False, run=None) -> QThread:
    """Move ``worker`` to a new, started ``QThread`` called ``name``.

    Args:
        worker: the QObject (no parent) that will live on the thread.
        name: the thread's object name (shown by debuggers and ``ps -L``).
        nice: > 0 makes it a background thread: renices it on Linux before any other slot runs
            (:func:`lower_thread_priority`), ``QThread.LowPriority`` elsewhere; 0 keeps the default.
        parent: the thread's QObject parent.
        delete_worker: delete the worker (``deleteLater``) when the thread finishes.
        run: a slot of ``worker`` to run once on the thread after it started (and was reniced).

    Returns:
        The running thread; stop it with ``quit()`` + ``wait()``.
    """
    thread = QThread(parent)
    thread.setObjectName(name)
    worker.moveToThread(thread)
    if delete_worker:
        thread.finished.connect(worker.deleteLater)
    if nice > 0:
        # a plain function connected to `started` runs on the new thread: renice it before any torch call
        thread.started.connect(lambda: lower_thread_priority(nice), Qt.DirectConnection)
    if run is not None:
        thread.started.connect(run)
    if nice > 0:
        thread.start(QThread.Priority.LowPriority)
    else:
        thread.start()
    return thread



def _one_line(exc: BaseException) -> str:
    """A short, user-facing message for ``exc`` (no traceback)."""
    msg = str(exc).strip() or type(exc).__name__
    return msg.splitlines()[0] if isinstance(exc, (ValueError, FileNotFoundError)) else f"{type(exc).__name__}: {msg}"


class InferenceWorker(BackgroundWorker):
    """Loads the model and runs ``Predictor.predict``; lives on a background QThread.

    Signals:
        loaded(object, object): (Predictor, :class:`ModelInfo`) once the model is ready.
        load_failed(str): a one-line reason (missing folder, corrupt weights, ...).
        result(int, object): (request id, ``model.Prediction``).
        failed(int, str): (request id, one-line reason), e.g. "the text is empty".
        started(int): the request with this id is now being computed.
    """

    loaded = Signal(object, object)
    load_failed = Signal(str)
    result = Signal(int, object)
    failed = Signal(int, str)
    started = Signal(int)

    def __init__(self) -> None:
        super().__init__()
        self.predictor = None

    @Slot(object, object)
    def load(self, model_dir, device) -> None:
        """Load ``model.Predictor.from_pretrained(model_dir, device)``; emits ``loaded`` or ``load_failed``."""
        t0 = time.perf_counter()
        try:
            from model.predictor import Predictor  # torch is imported here, on the worker thread

            predictor = Predictor.from_pretrained(model_dir, device=device)
            info = model_info(predictor, time.perf_counter() - t0)
        except Exception as exc:  # any failure becomes a message, never a traceback in the GUI  # noqa: BLE001 - any failure becomes a message
            log.debug("model load failed:\n%s", traceback.format_exc())
            self.load_failed.emit(f"Could not load the model: {_one_line(exc)}")
            return
        self.predictor = predictor
        self.loaded.emit(predictor, info)

    @Slot(int, str)
    def analyze(self, request_id: int, text: str) -> None:
        """Run ``predict(text)`` unless a newer request has been made; emits ``result`` or ``failed``."""
        if self.is_stale(request_id):
            return  # stale: a newer request is queued behind this one
        if self.predictor is None:
            self.failed.emit(request_id, "the model is not loaded")
            return
        self.started.emit(request_id)
        try:
            pred = self.predictor.predict(text)
        except Exception as exc:  # noqa: BLE001 - any failure becomes a message
            log.debug("predict failed:\n%s", traceback.format_exc())
            self.failed.emit(request_id, _one_line(exc))
            return
        self.result.emit(request_id, pred)


class InferenceController(QObject):
    """GUI-thread front end of :class:`InferenceWorker`: owns the thread, numbers requests, drops stale results.

    Signals:
        loaded(object, object): (Predictor, ModelInfo).
        load_failed(str): why the model could not be loaded.
        prediction(object): the newest ``model.Prediction`` (stale ones never arrive).
        error(str): why the newest request failed.
        busy_changed(bool): True while a request is outstanding.
    """

    loaded = Signal(object, object)
    load_failed = Signal(str)
    prediction = Signal(object)
    error = Signal(str)
    busy_changed = Signal(bool)

    _request_load = Signal(object, object)
    _request_analyze = Signal(int, str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._worker = InferenceWorker()
        self._request_load.connect(self._worker.load)
        self._request_analyze.connect(self._worker.analyze)
        self._worker.loaded.connect(self._on_loaded)
        self._worker.load_failed.connect(self._on_load_failed)
        self._worker.result.connect(self._on_result)
        self._worker.failed.connect(self._on_failed)
        self._thread = start_worker_thread(self._worker, "inference")
        self._next_id = 0
        self._latest_id = -1
        self._ready = False
        self._pending: str | None = None
        self._busy = False
        self.predictor = None
        self.info: ModelInfo | None = None

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
        self._request_load.emit(str(model_dir) if model_dir is not None else None, device)

    def switch_model(self, model_dir: str | Path | None, device: str | None) -> None:
        """Load another model (asynchronous, like :meth:`load`): analysis requests still queued for the current
        model become stale and are dropped; the current model stays in use if the new one fails to load."""
        self._next_id += 1
        self._latest_id = self._next_id
        self._worker.latest = self._latest_id
        self._pending = None
        self._set_busy(False)
        self.load(model_dir, device)

    def analyze(self, text: str) -> int:
        """Queue ``text`` for analysis; any older outstanding request becomes stale.

        Before the model has loaded, only the newest text is kept and sent once
        it is ready. Returns the request id.
        """
        self._next_id += 1
        self._latest_id = self._next_id
        self._worker.latest = self._latest_id
        self._set_busy(True)
        if not self._ready:
            self._pending = text
            return self._latest_id
        self._request_analyze.emit(self._latest_id, text)
        return self._latest_id

    def _set_busy(self, busy: bool) -> None:
        if busy != self._busy:
            self._busy = busy
            self.busy_changed.emit(busy)

    def _on_loaded(self, predictor, info) -> None:
        self.predictor = predictor
        self.info = info
        self._ready = True
        self.loaded.emit(predictor, info)
        if self._pending is not None:
            text, self._pending = self._pending, None
            self._request_analyze.emit(self._latest_id, text)

    def _on_load_failed(self, message: str) -> None:
        self._pending = None
        self._set_busy(False)
        self.load_failed.emit(message)

    def _on_result(self, request_id: int, pred) -> None:
        if request_id != self._latest_id:
            return  # stale
        self._set_busy(False)
        self.prediction.emit(pred)

    def _on_failed(self, request_id: int, message: str) -> None:
        if request_id != self._latest_id:
            return
        self._set_busy(False)
        self.error.emit(message)

    def shutdown(self, timeout_ms: int = 5000) -> None:
        """Stop the worker thread (waits for a running forward pass, up to ``timeout_ms`` milliseconds)."""
        self._worker.latest = -1  # everything still queued is stale
        self._thread.quit()
        self._thread.wait(timeout_ms)


__all__ = ["BATCH_NICE", "EXPLANATION_NICE", "BackgroundWorker", "InferenceController", "InferenceWorker", "ModelInfo",
           "lower_thread_priority", "model_info", "start_worker_thread"]
