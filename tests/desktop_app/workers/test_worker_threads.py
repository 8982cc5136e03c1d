"""Background threads yield the CPU to the GUI thread (desktop_app.workers.handle.lower_thread_priority)."""

from __future__ import annotations

import os
import sys
import threading

import pytest

pytest.importorskip("PySide6")

from desktop_app.workers.handle import lower_thread_priority


def _nice_after(nice: int) -> tuple[bool, int, int, int]:
    """Run lower_thread_priority(nice) on a fresh thread: (returned, nice before, nice after, GUI thread's nice)."""
    out = {}

    def body() -> None:
        tid = threading.get_native_id()
        out["before"] = os.getpriority(os.PRIO_PROCESS, tid)
        out["ok"] = lower_thread_priority(nice)
        out["after"] = os.getpriority(os.PRIO_PROCESS, tid)

    t = threading.Thread(target=body)
    t.start()
    t.join()
    return out["ok"], out["before"], out["after"], os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread niceness is a Linux feature")
def test_only_the_calling_thread_is_reniced():
    main_before = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    ok, before, after, main_after = _nice_after(3)
    assert ok is True
    assert after == min(19, before + 3)
    assert main_after == main_before  # the calling (GUI) thread keeps its priority


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread niceness is a Linux feature")
def test_niceness_is_capped_at_19():
    ok, _before, after, _ = _nice_after(100)
    assert ok is True and after == 19


def test_other_systems_report_no_change(monkeypatch):
    monkeypatch.setattr(sys, "platform", "win32")
    assert lower_thread_priority(5) is False
