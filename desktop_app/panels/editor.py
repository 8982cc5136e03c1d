"""The review editor and the drag-and-drop helpers: local paths out of a drag (QMimeData), the window's drop
banner, and :class:`PathDrops` for a widget that takes dropped files itself (the window, the batch panel).

Dropped files and folders are reported (``paths_dropped``), never pasted as text; the main window
and the batch panel use :func:`local_paths` too.
"""

from __future__ import annotations

import re
from typing import Callable

from PySide6.QtCore import QEvent, QObject, Signal
from PySide6.QtWidgets import QPlainTextEdit, QWidget


def drop_hint(widget, paths: list[str] | None) -> None:
    """Show (``paths``) or hide (None) the top-level window's drop banner, when it has one
    (:class:`desktop_app.window.drop_banner.DropBanner`, ``window.drop_banner``): child widgets that take drops
    themselves call this, since the window then sees no drag events."""
    banner = getattr(widget.window(), "drop_banner", None)
    if banner is not None:
        banner.show(paths) if paths else banner.hide()


def local_paths(mime) -> list[str]:
    """Local file/folder paths carried by a drag's QMimeData (empty when there are none)."""
    if mime is None or not mime.hasUrls():
        return []
    return [u.toLocalFile() for u in mime.urls() if u.isLocalFile() and u.toLocalFile()]


class PathDrops(QObject):
    """Takes the local files and folders dropped on ``widget`` (an event filter installed on it, owned by it): while
    they are dragged over it the window's drop banner shows (:func:`drop_hint`); a drop calls ``on_drop(paths)``
    (a list of local paths, never empty). Drags of anything else (text, remote URLs) are refused.

    Args:
        widget: the widget that takes the drops (its drops are switched on).
        on_drop: called with the dropped paths (list[str]).
    """

    def __init__(self, widget: QWidget, on_drop: Callable[[list[str]], None]) -> None:
        super().__init__(widget)
        self.widget = widget
        self.on_drop = on_drop
        widget.setAcceptDrops(True)
        widget.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt's name
        """Handle ``widget``'s drag-enter, drag-move and drop events (True: taken); a drag leaving hides the banner."""
        kind = event.type()
        if watched is not self.widget or kind not in _DRAG_EVENTS:
            return False
        if kind == QEvent.Type.DragLeave:
            drop_hint(self.widget, None)
            return False
        paths = local_paths(event.mimeData())
        if kind == QEvent.Type.Drop:
            drop_hint(self.widget, None)
        if not paths:
            event.ignore()
            return True
        event.acceptProposedAction()
        if kind == QEvent.Type.DragEnter:
            drop_hint(self.widget, paths)
        elif kind == QEvent.Type.Drop:
            self.on_drop(paths)
        return True


_DRAG_EVENTS = (QEvent.Type.DragEnter, QEvent.Type.DragMove, QEvent.Type.DragLeave, QEvent.Type.Drop)


_BR = re.compile(r"(?i)<br\s*/?\s*>")


def display_text(text: str) -> str:
    """``text`` with IMDB's HTML line breaks (``<br />``, ``<br>``, any case) turned into newlines, for the editor.

    The model reads both the same way: its tokenizer's normaliser maps ``<br />`` and newlines to
    whitespace (:mod:`model.core.tokenizer`), so the prediction of the displayed text equals the original's.
    """
    return _BR.sub("\n", text)


class ReviewEditor(QPlainTextEdit):
    """The review editor; dropped files/folders are reported, never pasted as paths.

    Signals:
        paths_dropped(list): local paths (list[str]) dropped on the editor.
    """

    paths_dropped = Signal(list)

    def dragEnterEvent(self, event) -> None:
        """Accept drags of local files (for ``paths_dropped``; the window's drop banner shows); text drags behave as usual."""
        paths = local_paths(event.mimeData())
        if paths:
            event.acceptProposedAction()
            drop_hint(self, paths)
            return
        super().dragEnterEvent(event)

    def dragLeaveEvent(self, event) -> None:
        """Hide the window's drop banner."""
        drop_hint(self, None)
        super().dragLeaveEvent(event)

    def dragMoveEvent(self, event) -> None:
        """See :meth:`dragEnterEvent`."""
        if local_paths(event.mimeData()):
            event.acceptProposedAction()
            return
        super().dragMoveEvent(event)

    def dropEvent(self, event) -> None:
        """Files -> ``paths_dropped``; anything else is inserted as text."""
        drop_hint(self, None)
        paths = local_paths(event.mimeData())
        if paths:
            event.acceptProposedAction()
            self.paths_dropped.emit(paths)
            return
        super().dropEvent(event)

    def canInsertFromMimeData(self, source) -> bool:
        """Pasting files inserts nothing (they are not review text)."""
        if local_paths(source) and not source.hasText():
            return False
        return super().canInsertFromMimeData(source)
