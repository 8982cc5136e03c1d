"""The main window's file actions: open files/folders, load a review, save the analysis as JSON, export views.

:class:`FileActions` (``window.file_actions``) is the File menu's behaviour (:mod:`desktop_app.window.menus` makes the
menu): it remembers the last folder in the window's QSettings, hands opened files and folders to the window's
``paths_dropped``, and exports the views (the docked views, the token view, the plots that panels add with
:meth:`FileActions.register_view`, the whole window). Review files are decoded by
:func:`model.files.textio.read_text_file` (at most :data:`MAX_REVIEW_FILE_BYTES` bytes); every file is written
atomically (:mod:`model.files.atomic`). Errors reach the user as a message box, never a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import QObject, Signal
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


class FileActions(QObject):
    """The File menu's behaviour of a :class:`~desktop_app.window.main_window.MainWindow` (module docstring).

    Args:
        window: the main window: the file dialogs' parent, its status bar and ``show_error`` for the outcome, its
            ``paths_dropped`` for opened files and folders, ``open_review`` for a review file, its views to export.
        state: the window's :class:`~desktop_app.state.ExplorerState` (the analysis saved as JSON).
        settings: the window's QSettings (``files/last_folder``).

    Attributes:
        extra_views: name -> widget of the exportable views added by panels (:meth:`register_view`).

    Signals:
        view_registered(str): a panel added an exportable view of this name (File > Export view lists it).
    """

    view_registered = Signal(str)

    def __init__(self, window, state, settings) -> None:
        super().__init__(window)
        self.window = window
        self.state = state
        self.settings = settings
        self.extra_views: dict[str, QWidget] = {}

    # ------------------------------------------------------------------ folders and files
    def last_folder(self) -> str:
        """The folder of the last file dialog (the home folder at first)."""
        return str(self.settings.value("files/last_folder", str(Path.home())))

    def remember_folder(self, path: str) -> None:
        """Start the next file dialog in ``path``'s folder (``path`` itself when it is a folder)."""
        p = Path(path)
        self.settings.setValue("files/last_folder", str(p if p.is_dir() else p.parent))

    def open_paths(self, paths: list[str]) -> None:
        """Score local files and folders (dropped on the window or chosen in a dialog): the next file dialog starts
        in the first one's folder, and the window's ``paths_dropped`` carries them (to the batch panel)."""
        self.remember_folder(paths[0])
        self.window.paths_dropped.emit(list(paths))

    def open_files(self) -> None:
        """File > Open files...: choose review files (:func:`review_file_filter`) and score them."""
        paths, _ = QFileDialog.getOpenFileNames(self.window, "Open review files", self.last_folder(),
                                                review_file_filter())
        if paths:
            self.open_paths(paths)

    def open_folder(self) -> None:
        """File > Open folder...: choose a folder of reviews and score it."""
        folder = QFileDialog.getExistingDirectory(self.window, "Open a folder of reviews", self.last_folder())
        if folder:
            self.open_paths([folder])

    def load_review_file(self) -> None:
        """File > Load review from text file...: choose a text file and analyse it (:meth:`open_review_file`)."""
        path, _ = QFileDialog.getOpenFileName(self.window, "Load a review", self.last_folder(),
                                              "Text (*.txt);;All files (*)")
        if path:
            self.remember_folder(path)
            self.open_review_file(path)

    def open_review_file(self, path: str | Path) -> None:
        """Decode a review file and analyse it; an unreadable, binary or too large file is a message box."""
        try:
            self.window.open_review(read_text_file(path, MAX_REVIEW_FILE_BYTES))
        except ValueError as exc:
            self.window.show_error(str(exc))

    # ------------------------------------------------------------------ the analysis as JSON
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

    def save_json_dialog(self) -> None:
        """File > Save analysis as JSON...: ask where, then :meth:`save_json`; errors become a message box."""
        if self.state.prediction is None:
            self.window.show_error("There is no analysis to save yet.")
            return
        path, _ = QFileDialog.getSaveFileName(
            self.window, "Save analysis", str(Path(self.last_folder()) / "analysis.json"), "JSON (*.json)"
        )
        if not path:
            return
        self.remember_folder(path)
        try:
            self.save_json(path)
            self.window.statusBar().showMessage(f"Saved {path}", 5000)
        except (OSError, ValueError) as exc:
            self.window.show_error(str(exc))

    # ------------------------------------------------------------------ views
    def view_widgets(self) -> dict[str, QWidget]:
        """Name -> widget of every exportable view (the docked views, the token view, the panels' registered plots,
        the whole window)."""
        w = self.window
        views = {v.title: getattr(w, v.attr) for v in DOCKED_VIEWS}
        return {**views, CENTRAL_VIEW_TITLE: w.token_view, **self.extra_views, WHOLE_WINDOW_TITLE: w}

    def register_view(self, name: str, widget: QWidget) -> None:
        """Make ``widget`` (a plot with ``export_item()``, or any widget) exportable as view ``name``: File > Export
        view lists it (``view_registered``) and :meth:`export_view` writes it."""
        new = name not in self.extra_views
        self.extra_views[name] = widget
        if new:
            self.view_registered.emit(name)

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
            w = getattr(self.window, spec.attr)
            if w.isVisible() and not w.visibleRegion().isEmpty():
                return spec.title
        return CENTRAL_VIEW_TITLE

    def export_current_view(self) -> None:
        """File > Export current view...: :meth:`export_view_dialog` for :meth:`current_view_name`."""
        self.export_view_dialog(self.current_view_name())

    def export_view_dialog(self, name: str) -> None:
        """Ask where to export view ``name`` (PNG or SVG) and export it; errors become a message box."""
        default = Path(self.last_folder()) / (name.lower().replace(" ", "_") + ".png")
        path, _ = QFileDialog.getSaveFileName(
            self.window, f"Export {name}", str(default), "PNG image (*.png);;SVG vector (*.svg)"
        )
        if not path:
            return
        self.remember_folder(path)
        try:
            self.export_view(name, path)
            self.window.statusBar().showMessage(f"Exported {name} to {path}", 5000)
        except (OSError, ValueError) as exc:
            self.window.show_error(str(exc))
