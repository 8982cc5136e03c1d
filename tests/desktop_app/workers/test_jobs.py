"""The one worker class for background jobs (desktop_app.workers.jobs): stale results dropped, cancellation, progress,
errors; and the typed protocols the controllers see the explorer state through (desktop_app.workers.state_protocol)."""

from __future__ import annotations

import threading

import pytest

pytest.importorskip("PySide6")

from desktop_app.workers.jobs import Jobs, JobStopped

WAIT_MS = 10_000


class Calls:
    """Records every callback of one request, by name."""

    def __init__(self) -> None:
        self.seen: list[tuple] = []

    def callbacks(self, name: str) -> dict:
        """The keyword callbacks of :meth:`Jobs.run`, each recording (name, callback, value)."""
        return {cb: (lambda *v, cb=cb: self.seen.append((name, cb, *v)))
                for cb in ("on_result", "on_progress", "on_error", "on_stop", "on_start", "on_stale", "on_stale_error")}

    def of(self, name: str) -> list[tuple]:
        """What request ``name`` received: (callback, value...) in order."""
        return [s[1:] for s in self.seen if s[0] == name]


@pytest.fixture
def jobs(qtbot):
    handle = Jobs("test-jobs")
    yield handle
    handle.shutdown()


def _blocking(release: threading.Event, entered: threading.Event):
    def job(_ctx, value):
        entered.set()
        release.wait(WAIT_MS / 1000)
        return value
    return job


def _drain(qtbot, jobs: Jobs) -> None:
    """Wait until every request sent so far has ended on the runner and its events reached the GUI thread."""
    done = []
    jobs.run(lambda _ctx: None, latest=False, on_result=lambda _v: done.append(True))
    qtbot.waitUntil(lambda: bool(done), timeout=WAIT_MS)


def test_result_progress_and_start_reach_the_latest_request(qtbot, jobs):
    calls = Calls()

    def job(ctx, n):
        yield from range(n)
        ctx.report("inside")
        return n * 10

    generation = jobs.run(job, 3, **calls.callbacks("a"))
    assert generation == jobs.generation == 1
    _drain(qtbot, jobs)
    assert calls.of("a") == [("on_start",), ("on_progress", 0), ("on_progress", 1), ("on_progress", 2),
                             ("on_progress", "inside"), ("on_result", 30)]


def test_a_newer_request_drops_the_stale_result_and_skips_queued_ones(qtbot, jobs):
    calls = Calls()
    release, entered = threading.Event(), threading.Event()
    jobs.run(_blocking(release, entered), "old", **calls.callbacks("old"))
    qtbot.waitUntil(lambda: entered.is_set() and bool(calls.of("old")), timeout=WAIT_MS)  # it runs, its start arrived
    ran = []
    jobs.run(lambda _ctx: ran.append("queued") or "queued", **calls.callbacks("queued"))  # stale before it starts
    jobs.run(lambda _ctx: "new", **calls.callbacks("new"))
    release.set()
    _drain(qtbot, jobs)
    assert calls.of("old") == [("on_start",), ("on_stale", "old")]  # its result reaches only on_stale
    assert calls.of("queued") == [] and ran == []  # skipped on the runner: never ran
    assert calls.of("new") == [("on_start",), ("on_result", "new")]
    assert jobs._requests == {}  # every request forgotten once it ended


def test_cancel_stops_a_generator_and_a_checking_job(qtbot, jobs):
    calls = Calls()
    entered, release = threading.Event(), threading.Event()
    closed = []

    def generator(_ctx):
        try:
            entered.set()
            release.wait(WAIT_MS / 1000)
            yield "step 1"  # the runner stops it here: cancelled meanwhile
            yield "step 2"
        finally:
            closed.append(True)
        return "never"

    jobs.run(generator, **calls.callbacks("gen"))
    qtbot.waitUntil(lambda: entered.is_set() and bool(calls.of("gen")), timeout=WAIT_MS)
    jobs.cancel()
    assert jobs.stop_requested()
    release.set()
    _drain(qtbot, jobs)
    assert closed == [True]
    assert calls.of("gen") == [("on_start",)]  # cancelled: no progress, no result, and no on_stop (it is stale)

    # Cancel (the abort flag alone, the request still current) reaches a job that checks: it stops, on_stop runs
    release2, entered2 = threading.Event(), threading.Event()
    jobs.run(_blocking(release2, entered2), "busy", latest=False)
    qtbot.waitUntil(entered2.is_set, timeout=WAIT_MS)
    seen = []

    def checking(ctx):
        seen.append(ctx.should_stop())
        ctx.check()
        return "not reached"

    jobs.run(checking, **calls.callbacks("check"))  # queued behind "busy"
    jobs.request_stop()
    release2.set()
    _drain(qtbot, jobs)
    assert seen == [True]
    assert calls.of("check") == [("on_start",), ("on_stop",)]


def test_a_new_latest_request_clears_an_older_cancel(qtbot, jobs):
    calls = Calls()
    jobs.request_stop()
    jobs.run(lambda ctx: ctx.should_stop(), **calls.callbacks("a"))
    _drain(qtbot, jobs)
    assert calls.of("a") == [("on_start",), ("on_result", False)]


def test_a_stale_error_reaches_only_on_stale_error_and_on_end_runs_however_a_request_ends(qtbot, jobs):
    calls = Calls()
    ended = []
    release, entered = threading.Event(), threading.Event()

    def failing_later(_ctx):
        entered.set()
        release.wait(WAIT_MS / 1000)
        raise OSError("the disk went away")

    jobs.run(failing_later, **calls.callbacks("old"), on_end=lambda: ended.append("old"))
    qtbot.waitUntil(lambda: entered.is_set() and bool(calls.of("old")), timeout=WAIT_MS)
    jobs.run(lambda _ctx: "new", **calls.callbacks("new"), on_end=lambda: ended.append("new"))
    release.set()
    _drain(qtbot, jobs)
    (start, (kind, exc)) = calls.of("old")
    assert start == ("on_start",) and kind == "on_stale_error" and isinstance(exc, OSError)
    assert calls.of("new") == [("on_start",), ("on_result", "new")]
    assert ended == ["old", "new"]


def test_errors_reach_on_error_as_the_exception(qtbot, jobs):
    calls = Calls()

    def failing(_ctx):
        raise ValueError("the text is empty")

    jobs.run(failing, **calls.callbacks("a"))
    _drain(qtbot, jobs)
    (start, (kind, exc)) = calls.of("a")
    assert start == ("on_start",) and kind == "on_error"
    assert isinstance(exc, ValueError) and str(exc) == "the text is empty"


def test_job_stopped_raised_by_a_job_is_on_stop(qtbot, jobs):
    calls = Calls()

    def stopping(_ctx):
        raise JobStopped

    jobs.run(stopping, **calls.callbacks("a"))
    _drain(qtbot, jobs)
    assert calls.of("a") == [("on_start",), ("on_stop",)]


def test_requests_that_are_not_latest_are_never_stale(qtbot, jobs):
    calls = Calls()
    release, entered = threading.Event(), threading.Event()
    jobs.run(_blocking(release, entered), "load", latest=False, **calls.callbacks("load"))
    qtbot.waitUntil(lambda: entered.is_set() and bool(calls.of("load")), timeout=WAIT_MS)
    jobs.run(lambda _ctx: "analysis", **calls.callbacks("analysis"))  # a newer generation
    release.set()
    _drain(qtbot, jobs)
    assert calls.of("load") == [("on_start",), ("on_result", "load")]
    assert calls.of("analysis") == [("on_start",), ("on_result", "analysis")]


def test_the_job_runs_on_the_named_thread(qtbot, jobs):
    names = []
    jobs.run(lambda _ctx: threading.current_thread(), on_result=names.append)
    _drain(qtbot, jobs)
    assert names and names[0] is not threading.main_thread()
    assert jobs._thread.objectName() == "test-jobs"


def test_after_shutdown_nothing_runs(qtbot):
    jobs = Jobs("test-jobs-shutdown")
    jobs.shutdown()
    got = []
    jobs.run(lambda _ctx: "x", on_result=got.append)
    qtbot.wait(50)
    assert got == [] and jobs._requests == {}


def test_the_explorer_state_satisfies_the_controllers_protocols():
    from desktop_app.state import ExplorerState
    from desktop_app.workers.state_protocol import CompareState, FlowState, InternalsState

    state = ExplorerState()
    for protocol in (InternalsState, FlowState, CompareState):
        assert isinstance(state, protocol), protocol.__name__
    for event in ("prediction", "head_mask", "layer_head", "show", "pins"):
        assert callable(getattr(state.events, event).connect)
