"""Issue 32: an exception that escapes a Qt slot, a worker or a thread becomes a short message in the app (and a
log record), never only a traceback on stderr."""

from __future__ import annotations

import logging
import sys
import threading

import pytest
from gui_helpers import loaded_window

pytestmark = pytest.mark.gui


@pytest.mark.qt_no_exception_capture
def test_slot_and_thread_exceptions_reach_the_user(qtbot, tiny_model_dir, caplog):
    from PySide6.QtCore import QTimer

    from desktop_app.errors import install_error_hooks

    win = loaded_window(qtbot, tiny_model_dir)
    reporter = install_error_hooks(win)
    try:
        assert sys.excepthook == reporter.report

        def slot():
            raise KeyError("a broken slot")

        with caplog.at_level(logging.ERROR, logger="desktop_app"):
            QTimer.singleShot(0, slot)
            qtbot.waitUntil(lambda: bool(win.errors), timeout=5000)
            assert "a broken slot" in win.errors[0] and "Something went wrong" in win.errors[0]
            assert any(r.exc_info and r.exc_info[0] is KeyError for r in caplog.records)

            t = threading.Thread(target=lambda: 1 / 0, name="helper")
            t.start()
            t.join()
            qtbot.waitUntil(lambda: "ZeroDivisionError" in win.statusBar().currentMessage() or len(win.errors) > 1,
                            timeout=5000)
    finally:
        reporter.uninstall()
    assert sys.excepthook is not reporter.report


@pytest.mark.qt_no_exception_capture
def test_a_worker_exception_reaches_the_user(qtbot, tiny_model_dir):
    from desktop_app.errors import install_error_hooks
    from desktop_app.workers.handle import BackgroundWorker, WorkerHandle

    class Broken(BackgroundWorker):
        def run(self):
            raise RuntimeError("the worker broke")

    win = loaded_window(qtbot, tiny_model_dir)
    reporter = install_error_hooks(win)
    handle = WorkerHandle(Broken(), "broken-worker", parent=win)
    try:
        handle.submit(handle.worker.run)
        qtbot.waitUntil(lambda: bool(win.errors), timeout=5000)
        assert "RuntimeError: the worker broke" in win.errors[0]
    finally:
        handle.shutdown()
        reporter.uninstall()
