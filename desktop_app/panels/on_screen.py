"""Whether a panel is on screen, for the panels that compute only while someone can see them.

A widget is on screen when Qt shows it (``isVisible()``) and some of it is not covered (a non-empty
``visibleRegion()``): a dock's widget tabbed behind another dock stays "visible" to Qt with nothing of it on screen,
and raising its tab sends it no show event, only its dock's ``visibilityChanged``. :class:`OnScreen` follows both,
so that its owner can skip work while hidden, remember that something changed, and catch up once when its
:attr:`~OnScreen.shown` signal comes. Used by the Corpus dock's metrics
(:class:`~desktop_app.panels.corpus.panel.CorpusPanel`) and the corpus map's slices table
(:class:`~desktop_app.panels.corpus.map_slices.SlicesBox`).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QTimer, Signal
from PySide6.QtWidgets import QDockWidget, QWidget


class OnScreen(QObject):
    """Watches ``widget``: :meth:`now` says whether it is on screen; :attr:`shown` says it may have come on screen.

    Args:
        widget: the watched widget (also this object's parent).

    Signals:
        shown(): the widget was shown, or the dock it sits in (followed from its first show) came in front of its tab
            mates; emitted on the next event-loop turn, once its visible region is known. :meth:`now` may still be
            False (e.g. covered by another dock's tab).
    """

    shown = Signal()

    def __init__(self, widget: QWidget) -> None:
        super().__init__(widget)
        self.widget = widget
        self._dock: QDockWidget | None = None  # the dock the widget sits in, once shown there
        widget.installEventFilter(self)

    def now(self) -> bool:
        """Whether the widget is on screen now (module docstring)."""
        return self.widget.isVisible() and not self.widget.visibleRegion().isEmpty()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """A show event of the widget: follow its dock and emit :attr:`shown` on the next turn (never filtered)."""
        if watched is self.widget and event.type() == QEvent.Type.Show:
            self._follow_dock()
            QTimer.singleShot(0, self, self._emit_shown)
        return False

    def _follow_dock(self) -> None:
        dock = self.widget.parentWidget()
        while dock is not None and not isinstance(dock, QDockWidget):
            dock = dock.parentWidget()
        if dock is not None and dock is not self._dock:
            self._dock = dock
            dock.visibilityChanged.connect(self._on_dock_visibility)

    def _on_dock_visibility(self, visible: bool) -> None:
        if visible:
            QTimer.singleShot(0, self, self._emit_shown)

    def _emit_shown(self) -> None:
        self.shown.emit()


__all__ = ["OnScreen"]
