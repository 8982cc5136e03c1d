"""The main window's drop banner: what dropping the files and folders being dragged over the window will do.

:class:`DropBanner` (``window.drop_banner``) is a translucent label over the whole window, made on first use. The
window's own drops (:class:`desktop_app.panels.editor.PathDrops`) and the child widgets that take drops themselves
(the editor, the batch panel) show and hide it through :func:`desktop_app.panels.editor.drop_hint`.
"""

from __future__ import annotations

import os

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel


def describe_drop(paths: list[str]) -> str:
    """What dropping ``paths`` does, e.g. "Drop to score 2 folders and 1 file in the Batch scoring panel"."""
    folders = sum(os.path.isdir(p) for p in paths)
    files = len(paths) - folders
    parts = [f"{n} {word}{'s' if n != 1 else ''}" for n, word in ((folders, "folder"), (files, "file")) if n]
    return f"Drop to score {' and '.join(parts)} in the Batch scoring panel"


class DropBanner:
    """The drop banner of a :class:`~desktop_app.window.main_window.MainWindow` (see the module docstring).

    Args:
        window: the window the banner covers.
    """

    def __init__(self, window) -> None:
        self.window = window
        self._label: QLabel | None = None

    @property
    def label(self) -> QLabel:
        """The translucent banner shown over the window while files are dragged over it (made on first use)."""
        label = self._label
        if label is None:
            label = QLabel(self.window)
            label.setObjectName("dropOverlay")
            label.setAlignment(Qt.AlignCenter)
            label.setWordWrap(True)
            label.setAttribute(Qt.WA_TransparentForMouseEvents)
            label.setStyleSheet(
                "QLabel#dropOverlay { background: rgba(31, 58, 147, 60); border: 3px dashed #1f3a93;"
                " color: #1f3a93; font-size: 16pt; font-weight: bold; }"
            )
            label.hide()
            self._label = label
        return label

    def show(self, paths: list[str]) -> None:
        """Show the banner over the whole window, saying what dropping ``paths`` does (:func:`describe_drop`)."""
        label = self.label
        label.setText(describe_drop(paths))
        label.setGeometry(self.window.rect().adjusted(8, 8, -8, -8))
        label.raise_()
        label.show()

    def hide(self) -> None:
        """Hide the banner (nothing when it was never shown)."""
        if self._label is not None:
            self._label.hide()
