"""The main window's file actions: open files/folders, load a review, save the analysis as JSON, export views.

:class:`FileActionsMixin` is mixed into :class:`desktop_app.window.main_window.MainWindow`; it uses the
window's ``settings``, ``state``, ``statusBar()``, ``paths_dropped``, ``open_review``,
``view_widgets``/``export_view`` and ``show_error``; panels add exportable plots with ``register_view``.
Review files are decoded by :func:`model.files.textio.read_text_file` (at most :data:`MAX_REVIEW_FILE_BYTES` bytes);
every file is written atomically (:mod:`model.files.atomic`). Errors reach the user as a message box, never a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QWidget

from model.batch.readers import SUPPORTED_PATTERNS
from model.files.atomic import atomic_write_bytes
from model.files.textio import read_text_file

from ..views.registry import CENTRAL_VIEW_TITLE, DOCKED_VIEWS, WHOLE_WINDOW_TITLE
from .view_export import export_widget

MAX_REVIEW_FILE_BYTES = 5_000_000  # larger text files are refused with a message


def review_file_filter() -> str:
    """The File > Open files dialog's name filter: exactly the files the batch readers read, plain or compressed
    (:data:`model.batch.readers.SUPPORTED_PATTERNS`), then "All files"."""
    return f"Reviews ({' '.join(SUPPORTED_PATTERNS)});;All files (*)"


class FileActionsMixin:
    """File menu behaviour of the main window (see the module docstring)."""

    def last_folder(self) -> str:
        """The folder of the last file dialog (the home folder at first)."""
        return str(self.settings.value("files/last_folder", str(Path.home())))

    def remember_folder(self, path: str) -> None:
        """Start the next file dialog in ``path``'s folder (``path`` itself when it is a folder)."""
        p = Path(path)
        self.settings.setValue("files/last_folder", str(p if p.is_dir() else p.parent))

    def _open_files(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(
            self,
            "Open review files",
            self.last_folder(),
            review_file_filter(),
        )
        if paths:
            self.remember_folder(paths[0])
            self.paths_dropped.emit(list(paths))

    def _open_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Open a folder of reviews", self.last_folder())
        if folder:
            self.settings.setValue("files/last_folder", folder)
            self.paths_dropped.emit([folder])

    def _load_review_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Load a review", self.last_folder(), "Text (*.txt);;All files (*)")
        if path:
            self.remember_folder(path)
            self.open_review_file(path)

    def open_review_file(self, path: str | Path) -> None:
        """Decode a review file and analyse it; an unreadable, binary or too large file is a message box."""
        try:
            self.open_review(read_text_file(path, MAX_REVIEW_FILE_BYTES))
        except ValueError as exc:
            self.show_error(str(exc))

    def save_json(self, path: str | Path) -> None:
        """Write the current analysis (``Prediction.to_json_dict()``) to ``path`` atomically.

        Raises:
            ValueError: when there is no analysis yet.
            OSError: when the file cannot be written.
        """
        pred = self.state.prediction
        if pred is None:
            raise ValueError("there is no analysis to save yet")
        atomic_write_bytes(path, json.dumps(pred.to_json_dict(), ensure_ascii=False).encode("utf-8"))

    def _save_json(self) -> None:
        if self.state.prediction is None:
            self.show_error("There is no analysis to save yet.")
            return
        path, _ = QFileDialog.getSaveFileName(
            self, "Save analysis", str(Path(self.last_folder()) / "analysis.json"), "JSON (*.json)"
        )
        if not path:
            return
        self.remember_folder(path)
        try:
            self.save_json(path)
            self.statusBar().showMessage(f"Saved {path}", 5000)
        except (OSError, ValueError) as exc:
            self.show_error(str(exc))

    def view_widgets(self) -> dict[str, QWidget]:
        """Name -> widget of every exportable view (the docked views, the token view, the panels' registered plots,
        the whole window)."""
        views = {v.title: getattr(self, v.attr) for v in DOCKED_VIEWS}
        return {**views, CENTRAL_VIEW_TITLE: self.token_view, **self.extra_views, WHOLE_WINDOW_TITLE: self}

    def register_view(self, name: str, widget: QWidget) -> None:
        """Make ``widget`` (a plot with ``export_item()``, or any widget) exportable as view ``name``: File > Export
        view lists it and :meth:`export_view` writes it."""
        if name not in self.extra_views:
            self._action(self.export_menu, name + "\u2026", lambda _=False, n=name: self._export_view_dialog(n))
        self.extra_views[name] = widget

    def export_view(self, name: str, path: str | Path) -> None:
        """Export view ``name`` (see :meth:`view_widgets`) to ``path``; see :func:`desktop_app.window.view_export.export_widget`.

        Raises:
            ValueError: unknown view or a suffix other than .png/.svg.
            OSError: the file cannot be written.
        """
        widget = self.view_widgets().get(name)
        if widget is None:
            raise ValueError(f"unknown view {name!r}")
        export_widget(widget, path)

    def current_view_name(self) -> str:
        """The title of the docked view on screen (the first visible one), else the central token view's."""
        for spec in DOCKED_VIEWS:
            w = getattr(self, spec.attr)
            if w.isVisible() and not w.visibleRegion().isEmpty():
                return spec.title
        return CENTRAL_VIEW_TITLE

    def _export_current_view(self) -> None:
        self._export_view_dialog(self.current_view_name())

    def export_view_dialog(self, name: str) -> None:
        """Ask where to export view ``name`` (PNG or SVG) and export it; errors become a message box."""
        self._export_view_dialog(name)

    def _export_view_dialog(self, name: str) -> None:
        default = Path(self.last_folder()) / (name.lower().replace(" ", "_") + ".png")
        path, _ = QFileDialog.getSaveFileName(
            self, f"Export {name}", str(default), "PNG image (*.png);;SVG vector (*.svg)"
        )
        if not path:
            return
        self.remember_folder(path)
        try:
            self.export_view(name, path)
            self.statusBar().showMessage(f"Exported {name} to {path}", 5000)
        except (OSError, ValueError) as exc:
            self.show_error(str(exc))
