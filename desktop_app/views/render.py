"""The render scheduler of the views: deferred, one view per event-loop turn, only when visible.

All views share one queue (:class:`DeferredRender`): each event-loop turn renders at most one view, so the GUI
stays responsive (a 10 ms timer keeps ticking) while a new 512-token analysis is drawn.
"""

from __future__ import annotations

from PySide6.QtCore import QTimer

_render_queue: list = []  # views waiting to render, oldest first
_pump_scheduled = False


def _schedule_pump() -> None:
    global _pump_scheduled
    if not _pump_scheduled and _render_queue:
        _pump_scheduled = True
        QTimer.singleShot(0, _pump)


def _pump() -> None:
    """Render ONE queued view, then give the event loop a turn before the next."""
    global _pump_scheduled
    _pump_scheduled = False
    while _render_queue:
        view = _render_queue.pop(0)
        try:
            rendered = view._render_if_visible()
        except RuntimeError:  # the C++ widget is gone
            continue
        if rendered:
            break
    _schedule_pump()


class DeferredRender:
    """Mixin for views: ``request_render()`` renders later, one view per event-loop turn, only when visible.

    All views share one queue: each event-loop turn renders at most one view,
    so the GUI stays responsive (a 10 ms timer keeps ticking) while a new
    512-token analysis is drawn. Hidden (tabbed-away) views render when shown.
    Subclasses implement ``redraw()`` and call ``_deferred_show()`` from ``showEvent``.
    """

    def _init_deferred(self) -> None:
        self._dirty = False

    def request_render(self) -> None:
        """Mark the view out of date and queue a render."""
        self._dirty = True
        if self not in _render_queue:
            _render_queue.append(self)
        _schedule_pump()

    def flush(self) -> None:
        """Render now if out of date (used by tests, exports and benchmarks)."""
        if self._dirty:
            self._dirty = False
            self.redraw()

    def _render_if_visible(self) -> bool:
        if self._dirty and self.isVisible():  # type: ignore[attr-defined]
            self._dirty = False
            self.redraw()
            return True
        return False

    def _deferred_show(self) -> None:
        if self._dirty:
            self.request_render()

    def redraw(self) -> None:  # pragma: no cover - overridden
        """Draw the current state (override)."""
        raise NotImplementedError
