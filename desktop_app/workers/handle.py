"""The thread plumbing under the jobs (:mod:`desktop_app.workers.jobs`): a :class:`BackgroundWorker` on its own
QThread, owned by a :class:`WorkerHandle`.

* :class:`BackgroundWorker` (a QObject that is its own signals object) runs what is sent to it on its thread. It
  knows the newest generation the GUI asked for (``latest``) and has an abort flag (Cancel).
  :class:`~desktop_app.workers.jobs.JobRunner`, the one worker class of the app, is one.
* :class:`WorkerHandle` (on the GUI thread) owns one worker: it moves the worker to a new QThread (reniced
  first on Linux, :func:`lower_thread_priority`), numbers the requests (:meth:`WorkerHandle.next_generation`:
  the latest request wins), sends them to the worker's thread (:meth:`WorkerHandle.submit`), says which
  generation is current (:meth:`WorkerHandle.is_current`), and stops it (:meth:`WorkerHandle.shutdown`:
  everything queued becomes stale, the abort flag is set, the thread quits and is waited for). It shuts itself down
  when the application quits; the main window shuts down every handle in its object tree when it closes
  (:meth:`desktop_app.window.main_window.MainWindow.shutdown_workers`).
  :class:`~desktop_app.workers.jobs.Jobs` is the one kind the app uses.
"""

from __future__ import annotations

import logging
import os
import sys
import threading

from PySide6.QtCore import QCoreApplication, QObject, Qt, QThread, Signal, Slot

log = logging.getLogger(__name__)

INTERNALS_NICE = 5  # attention internals: below the GUI thread and live analysis, above explanations and batches
EXPLANATION_NICE = 10  # explanations (and their faithfulness) for the current review: below the GUI, above batches
BATCH_NICE = 15  # niceness added to a batch-scoring thread on Linux: a nice-0 thread gets ~35x its CPU share


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


def one_line(exc: BaseException) -> str:
    """A short, user-facing message for ``exc`` (no traceback)."""
    msg = str(exc).strip() or type(exc).__name__
    return msg.splitlines()[0] if isinstance(exc, (ValueError, FileNotFoundError)) else f"{type(exc).__name__}: {msg}"


class BackgroundWorker(QObject):
    """Base of a background worker: a generation token and an abort flag.

    ``latest`` is the newest generation the GUI asked for (written by the GUI thread through its
    :class:`WorkerHandle`; an int store is atomic under the GIL); a request of an older generation is stale.
    :meth:`request_stop` sets the abort flag (thread-safe); :meth:`reset_stop` clears it for the next request.
    Subclasses declare their own signals (:class:`~desktop_app.workers.jobs.JobRunner`'s carry the request).
    """

    def __init__(self) -> None:
        super().__init__()
        self.latest = 0
        self._abort = threading.Event()

    @Slot(object, object)
    def _dispatch(self, method, args) -> None:
        """Run ``method(*args)`` on this worker's thread (what :meth:`WorkerHandle.submit` queues)."""
        method(*args)

    def request_stop(self) -> None:
        """Ask the running step to stop at its next check (callable from any thread)."""
        self._abort.set()

    def reset_stop(self) -> None:
        """Clear the abort flag (before a new request)."""
        self._abort.clear()

    def stop_requested(self) -> bool:
        """True once :meth:`request_stop` was called (until :meth:`reset_stop`)."""
        return self._abort.is_set()


def _stopper(worker: BackgroundWorker, thread: QThread, wait_ms: int | None):
    """What stops ``worker``'s ``thread`` when its handle is deleted without :meth:`WorkerHandle.shutdown`."""

    def stop(*_args) -> None:
        if thread.isRunning():
            worker.latest = -1
            worker.request_stop()
            thread.quit()
            if wait_ms is None:
                thread.wait()
            else:
                thread.wait(wait_ms)

    return stop


class WorkerHandle(QObject):
    """Owns one background job: its worker, its QThread, its generation counter and its shutdown.

    Args:
        worker: the :class:`BackgroundWorker` (no parent); it moves to the new thread and is deleted with it.
        name: the thread's object name (shown by debuggers and ``ps -L``).
        nice: > 0 makes it a background thread: reniced on Linux before any request runs
            (:func:`lower_thread_priority`), ``QThread.LowPriority`` elsewhere; 0 keeps the default.
        parent: the owner (a controller or panel); the main window finds its handles through it.
        wait_ms: how long :meth:`shutdown` waits for the running step (None: until it ends).

    Attributes:
        worker: the worker; connect to its signals, and send requests with :meth:`submit`.
        generation: the newest generation handed out (0 before the first).
    """

    _call = Signal(object, object)

    def __init__(self, worker: BackgroundWorker, name: str, nice: int = 0, parent: QObject | None = None,
                 wait_ms: int | None = 5000) -> None:
        super().__init__(parent)
        self.worker = worker
        self.generation = 0
        self.wait_ms = wait_ms
        self._stopped = False
        self._thread = QThread(self)
        self._thread.setObjectName(name)
        worker.moveToThread(self._thread)
        self._thread.finished.connect(worker.deleteLater)
        self._call.connect(worker._dispatch)
        # An owner deleted without shutdown (a panel closed by its test) deletes this handle and its thread; a
        # QThread destroyed while running aborts the process, so stop it first (``destroyed`` of a QObject is
        # sent before its children go; the closure holds no reference to this handle).
        self.destroyed.connect(_stopper(worker, self._thread, wait_ms))
        if nice > 0:
            # a plain function connected to `started` runs on the new thread: renice it before any torch call
            self._thread.started.connect(lambda: lower_thread_priority(nice), Qt.DirectConnection)
            self._thread.start(QThread.Priority.LowPriority)
        else:
            self._thread.start()
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)

    @property
    def stopped(self) -> bool:
        """True once :meth:`shutdown` ran: requests are no longer sent."""
        return self._stopped

    def next_generation(self) -> int:
        """A new generation: every older one becomes stale (skipped or stopped by the worker, dropped here)."""
        self.generation += 1
        self.worker.latest = self.generation
        return self.generation

    def is_current(self, generation: int) -> bool:
        """True if ``generation`` is the newest one (its results are wanted)."""
        return generation == self.generation

    def submit(self, method, *args) -> None:
        """Run ``method(*args)`` (a method of :attr:`worker`) on the worker's thread, after what is queued there."""
        if not self._stopped:
            self._call.emit(method, args)

    def request_stop(self) -> None:
        """Set the worker's abort flag: the running step stops at its next check."""
        self.worker.request_stop()

    def reset_stop(self) -> None:
        """Clear the abort flag (before a new request that checks it)."""
        self.worker.reset_stop()

    def stop_requested(self) -> bool:
        """True while the abort flag is set."""
        return self.worker.stop_requested()

    def shutdown(self) -> None:
        """Stop the job: everything queued becomes stale, the abort flag is set, the thread quits and is waited for
        (:attr:`wait_ms`). Safe to call more than once."""
        if self._stopped:
            return
        self._stopped = True
        _stopper(self.worker, self._thread, self.wait_ms)()
