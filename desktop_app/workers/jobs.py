"""Background jobs as plain functions, run by one worker class that handles staleness, cancellation, progress and
errors once (the pattern of superqt's ``thread_worker``: started / yielded / returned / errored, plus an abort flag).

A job is a function ``job(ctx, *args)`` that returns its result; a generator function may also ``yield`` progress
values between its steps, and then returns its result (``return value`` in a generator). ``ctx`` is the job's
:class:`JobContext`: :meth:`JobContext.should_stop` (Cancel, or a newer request made this one stale) for model code
that checks between its own steps and :meth:`JobContext.report` for progress from inside a call that cannot yield;
every job that runs the model uses the one shared Predictor it is given (issue 41: one copy of the weights). A job stops early by raising :class:`JobStopped` (after a yield the runner stops a
job gone stale itself), or returns what it has (a cancelled batch's summary). Cancel is the abort flag
(:meth:`Jobs.request_stop`): the jobs that can stop check it through :meth:`JobContext.should_stop`.

:class:`Jobs` (a :class:`~desktop_app.workers.handle.WorkerHandle` on the GUI thread: the thread, its name and
niceness, the generation counter and the shutdown) runs them on its :class:`JobRunner` with :meth:`Jobs.run`, which
takes the callbacks of one request: ``on_result(value)``, ``on_progress(value)``, ``on_error(exc)``, ``on_stop()``,
``on_start()``. Latest request wins: ``run`` numbers the request with a new generation, a request that is stale
before it starts is skipped on the runner, and the callbacks of a stale request are never called (``on_stale`` and
``on_stale_error``, when given, still receive a stale result or exception: a cache may keep it; ``on_end()`` runs
once when the request ends however it ends, stale or not: bookkeeping such as starting the next queued job). A request with ``latest=False`` (loading a model,
importing a backend) makes nothing stale and is never stale itself. Every failure of a job reaches ``on_error`` as the
exception (its traceback logged at debug level), never the event loop.
"""

from __future__ import annotations

import inspect
import itertools
import logging
import traceback
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal

from .handle import BackgroundWorker, WorkerHandle

log = logging.getLogger(__name__)


class JobStopped(Exception):
    """Raised by (or for) a job that stops without a result: Cancel, or a newer request made it stale."""


class JobContext:
    """What a running job sees of its runner (see the module docstring).

    Attributes:
        generation: the request's generation (None: a request that is never stale).
    """

    def __init__(self, runner: JobRunner, rid: int, generation: int | None) -> None:
        self._runner, self._rid, self.generation = runner, rid, generation

    def stale(self) -> bool:
        """True once a newer request was made (never for a ``latest=False`` request)."""
        return self.generation is not None and self.generation != self._runner.latest

    def should_stop(self) -> bool:
        """What model code checks between its steps: Cancel (the abort flag) or :meth:`stale`."""
        return self._runner.stop_requested() or self.stale()

    def check(self) -> None:
        """Raise :class:`JobStopped` when the job :meth:`should_stop`."""
        if self.should_stop():
            raise JobStopped

    def report(self, value) -> None:
        """Send a progress ``value`` to the request's ``on_progress``, as a ``yield`` would (from model callbacks)."""
        self._runner._send(self._runner.yielded, self._rid, value)


class JobRunner(BackgroundWorker):
    """Runs jobs on its thread, one at a time in the order asked (see the module docstring).

    Signals (each carries the request id first):
        started(int): the job starts (it was not stale).
        yielded(int, object): a progress value (a ``yield`` or :meth:`JobContext.report`).
        returned(int, object): the job's result (sent even when the request went stale meanwhile).
        errored(int, object): the exception the job raised.
        stopped(int): the job was skipped (stale before it started) or raised :class:`JobStopped`.
    """

    started = Signal(int)
    yielded = Signal(int, object)
    returned = Signal(int, object)
    errored = Signal(int, object)
    stopped = Signal(int)

    def execute(self, rid: int, generation: int | None, job: Callable, args: tuple, kwargs: dict) -> None:
        """Run ``job(ctx, *args, **kwargs)`` for request ``rid`` and send what it gives (the class docstring)."""
        ctx = JobContext(self, rid, generation)
        if ctx.stale():
            self._send(self.stopped, rid)
            return
        self._send(self.started, rid)
        try:
            out = job(ctx, *args, **kwargs)
            if inspect.isgenerator(out):
                out = self._drive(ctx, rid, out)
        except JobStopped:
            self._send(self.stopped, rid)
            return
        except Exception as exc:  # noqa: BLE001 - the one place a job's failure becomes a message, never a crash
            log.debug("job %s failed:\n%s", getattr(job, "__name__", job), traceback.format_exc())
            self._send(self.errored, rid, exc.with_traceback(None))  # its frames (tensors, a predictor) are not kept
            return
        self._send(self.returned, rid, out)

    def _drive(self, ctx: JobContext, rid: int, gen):
        """Run a generator job to its ``return``; its yields are progress; stops it when it has gone stale."""
        try:
            while True:
                value = next(gen)
                if ctx.stale():
                    gen.close()
                    raise JobStopped
                self._send(self.yielded, rid, value)
        except StopIteration as end:
            return end.value

    @staticmethod
    def _send(signal, *args) -> None:
        """Emit ``signal(*args)``; nothing when the runner's Qt object was deleted meanwhile (its handle is gone, the
        application quitting while a job ran: no one is left to receive it)."""
        try:
            signal.emit(*args)
        except RuntimeError as exc:  # "Signal source has been deleted"
            log.debug("a job's %s was not delivered: %s", args[:1], exc)


@dataclass
class _Request:
    """The GUI side of one request: its generation (None: never stale) and its callbacks."""

    generation: int | None
    on_result: Callable | None = None
    on_progress: Callable | None = None
    on_error: Callable | None = None
    on_stop: Callable | None = None
    on_start: Callable | None = None
    on_stale: Callable | None = None
    on_stale_error: Callable | None = None
    on_end: Callable | None = None


class Jobs(WorkerHandle):
    """Owns one :class:`JobRunner` on its own thread and runs job functions there (see the module docstring).

    Args:
        name: the thread's object name (shown by debuggers and ``ps -L``).
        nice: > 0 makes it a background thread (:class:`~desktop_app.workers.handle.WorkerHandle`).
        parent: the owner (a controller or panel); the main window finds its handles through it.
        wait_ms: how long :meth:`shutdown` waits for the running job (None: until it ends).
    """

    def __init__(self, name: str, nice: int = 0, parent: QObject | None = None, wait_ms: int | None = 5000) -> None:
        super().__init__(JobRunner(), name, nice, parent=parent, wait_ms=wait_ms)
        self._ids = itertools.count(1)
        self._requests: dict[int, _Request] = {}
        runner = self.worker
        runner.started.connect(self._on_started)
        runner.yielded.connect(self._on_yielded)
        runner.returned.connect(self._on_returned)
        runner.errored.connect(self._on_errored)
        runner.stopped.connect(self._on_stopped)

    def run(self, job: Callable, *args, on_result: Callable | None = None, on_progress: Callable | None = None,
            on_error: Callable | None = None, on_stop: Callable | None = None, on_start: Callable | None = None,
            on_stale: Callable | None = None, on_stale_error: Callable | None = None, on_end: Callable | None = None,
            latest: bool = True, generation: int | None = None, **kwargs) -> int:
        """Run ``job(ctx, *args, **kwargs)`` on the runner's thread after what is queued there.

        Args:
            on_result, on_progress, on_error, on_stop, on_start: this request's callbacks (GUI thread), called only
                while it is the latest (see the module docstring).
            on_stale, on_stale_error: receive the result or exception of a request that went stale meanwhile.
            on_end: called once the request has ended (after the callback of how), current or stale.
            latest: True: a new generation, every older request becomes stale (and the abort flag is cleared: a
                Cancel of an older job must not stop this one); False: a request that is never stale.
            generation: run under this existing generation instead of a new one (the abort flag is left as it is):
                another request of the same text, or one asked before the model loaded, sent once it has.

        Returns:
            the request's generation (the handle's current one for ``latest=False``).
        """
        if latest and generation is None:
            generation = self.next_generation()
            self.reset_stop()
        rid = next(self._ids)
        if not self.stopped:
            self._requests[rid] = _Request(generation if latest else None, on_result, on_progress, on_error, on_stop,
                                           on_start, on_stale, on_stale_error, on_end)
        self.submit(self.worker.execute, rid, generation if latest else None, job, args, kwargs)
        return generation if latest else self.generation

    def cancel(self) -> None:
        """Stop the running job at its next check and make every request stale (none of their callbacks runs)."""
        self.next_generation()
        self.request_stop()

    def _current(self, req: _Request | None) -> bool:
        """True when ``req`` is a request whose callbacks run: the latest, or one that is never stale."""
        return req is not None and (req.generation is None or req.generation == self.generation)

    def _on_started(self, rid: int) -> None:
        req = self._requests.get(rid)
        if self._current(req) and req.on_start is not None:
            req.on_start()

    def _on_yielded(self, rid: int, value) -> None:
        req = self._requests.get(rid)
        if self._current(req) and req.on_progress is not None:
            req.on_progress(value)

    def _on_returned(self, rid: int, value) -> None:
        req = self._requests.pop(rid, None)
        if req is not None:
            self._end(req, req.on_result if self._current(req) else req.on_stale, value)

    def _on_errored(self, rid: int, exc) -> None:
        req = self._requests.pop(rid, None)
        if req is not None:
            self._end(req, req.on_error if self._current(req) else req.on_stale_error, exc)

    def _on_stopped(self, rid: int) -> None:
        req = self._requests.pop(rid, None)
        if req is not None:
            self._end(req, req.on_stop if self._current(req) else None)

    @staticmethod
    def _end(req: _Request, callback: Callable | None, *value) -> None:
        """Call the outcome's ``callback`` (if any) with ``value``, then the request's ``on_end``."""
        try:
            if callback is not None:
                callback(*value)
        finally:
            if req.on_end is not None:
                req.on_end()


class InlineContext:
    """The context of a job run on the calling thread, outside any runner (the ``--self-test``, tests): it never
    stops, its progress goes to ``report`` (None: dropped) and the predictor is used as it is."""

    generation = None

    def __init__(self, report: Callable | None = None) -> None:
        self._report = report

    def stale(self) -> bool:
        """Never stale."""
        return False

    def should_stop(self) -> bool:
        """Never stops."""
        return False

    def check(self) -> None:
        """Never raises."""

    def report(self, value) -> None:
        """Hand ``value`` to the ``report`` given (if any)."""
        if self._report is not None:
            self._report(value)
