"""The one place that decides what the user sees for an exception nothing else caught.

An exception raised in a Qt slot (on the GUI thread or a worker's ``QThread``) reaches ``sys.excepthook``; one
raised in a plain Python thread reaches ``threading.excepthook``. :func:`install_error_hooks` replaces both with
:class:`ErrorReporter.report`, which logs the full traceback (logger ``desktop_app``) and shows the user a short
message through the window's ``show_error`` (status bar + message box), always on the GUI thread (a queued
signal). At most one message box per :data:`QUIET_S` seconds: later ones go to the status bar only, so a slot
failing on every paint cannot bury the window under dialogs. ``KeyboardInterrupt`` and ``SystemExit`` keep their
usual handling.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from .workers.handle import one_line

log = logging.getLogger("desktop_app")
QUIET_S = 3.0
"""Seconds after a message box during which further errors only go to the status bar."""


class ErrorReporter(QObject):
    """Turns an uncaught exception into a log record and a short message (see the module docstring).

    Args:
        show_error: shows a message box (and the status bar), e.g. ``MainWindow.show_error``; GUI thread only.
        show_status: shows a status-bar message (for errors within :data:`QUIET_S` of a box), or None.

    Signals:
        message(str): the short message, queued to the GUI thread.
    """

    message = Signal(str)

    def __init__(self, show_error: Callable[[str], None], show_status: Callable[[str], None] | None = None) -> None:
        super().__init__()
        self._show_error, self._show_status = show_error, show_status
        self._last_box = -QUIET_S
        self._previous = (sys.excepthook, threading.excepthook)
        self.message.connect(self._show)

    def report(self, exc_type, exc, tb, where: str = "") -> None:
        """Log ``exc`` with its traceback and show a short message (callable from any thread)."""
        if issubclass(exc_type, (KeyboardInterrupt, SystemExit)):
            self._previous[0](exc_type, exc, tb)
            return
        log.error("Unexpected error%s", f" in {where}" if where else "", exc_info=(exc_type, exc, tb))
        text = one_line(exc) if exc is not None else exc_type.__name__
        self.message.emit(f"Something went wrong{f' in {where}' if where else ''}: {text}. "
                          "The app carries on; the details are in the log.")

    def _show(self, text: str) -> None:
        now = time.monotonic()
        if now - self._last_box < QUIET_S and self._show_status is not None:
            self._show_status(text)
            return
        self._last_box = now
        try:
            self._show_error(text)
        except Exception:  # noqa: BLE001 - the last resort must not raise into the hook again
            log.exception("could not show an error message")

    def _thread_hook(self, args) -> None:
        name = args.thread.name if args.thread is not None else "a thread"
        self.report(args.exc_type, args.exc_value, args.exc_traceback, f"thread {name!r}")

    def install(self) -> ErrorReporter:
        """Make this reporter ``sys.excepthook`` and ``threading.excepthook``; returns self."""
        self._previous = (sys.excepthook, threading.excepthook)
        sys.excepthook = self.report
        threading.excepthook = self._thread_hook
        return self

    def uninstall(self) -> None:
        """Put back the hooks :meth:`install` replaced."""
        sys.excepthook, threading.excepthook = self._previous


def install_error_hooks(window) -> ErrorReporter:
    """Install an :class:`ErrorReporter` that shows errors in ``window`` (its ``show_error`` and status bar)."""
    reporter = ErrorReporter(window.show_error, lambda text: window.statusBar().showMessage(text, 10000))
    reporter.setParent(window)
    return reporter.install()
