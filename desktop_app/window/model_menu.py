"""Choosing the model: File > Open model folder..., the Model menu (bundled model + recently opened folders).

A folder is either one of our own model folders or a local Hugging Face encoder folder (``model.hf``: safetensors,
a fast tokenizer, no remote code). The menu asks the window to load it
(:meth:`~desktop_app.window.main_window.MainWindow.switch_model`: the model loads on the inference thread while
the status bar shows a busy indicator; analysis still queued for the old model is dropped, the results on display
are cleared, running batch scoring is cancelled, and the review in the editor is analysed again once the new model
is ready). A folder that fails to load shows one message and the current model stays loaded. Opening the first
Hugging Face folder mostly waits for ``transformers`` to import: :class:`~desktop_app.workers.preload.HFPreloader`
imports it ahead when the folder dialog opens, and after start-up when a recent folder is a Hugging Face one.

Recently opened folders (at most :data:`MAX_RECENT`) are kept in QSettings under ``models/recent``.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QFileDialog, QMenu, QMessageBox

from model.core.paths import default_model_dir

from ..workers.preload import HFPreloader
from .settings import APP_NAME, PRECISION_KEY
from .second_model import SecondModel
from .task_menu import TaskMenu

MAX_RECENT = 8
RECENT_KEY = "models/recent"
BUNDLED = ""  # the key of the bundled model in the menu (model_dir None)


def folder_key(folder: str | Path | None) -> str:
    """How a model folder is named in the menu, the settings and sessions: "" (:data:`BUNDLED`) for the bundled
    model (None, "", or a path to ``resources/model``), else the folder's absolute path."""
    if not folder:
        return BUNDLED
    path = Path(folder).resolve()
    return BUNDLED if path == default_model_dir().resolve() else str(path)


def _as_list(value) -> list[str]:
    """QSettings returns a str for a one-element list and None for none: always a list of str."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value else []
    return [str(v) for v in value if str(v)]


class ModelMenu(QObject):
    """The model-choosing actions of a :class:`~desktop_app.window.main_window.MainWindow` (see the module docstring).

    Attributes:
        menu: the "Model" menu.
        open_action: File > Open model folder... (Ctrl+Shift+M).
        current: the folder of the model in use ("" for the bundled one).
        loading: the folder being loaded, or None when no switch is under way.
        error_box: the last "could not load" message box (non-modal), or None.
    """

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.current = folder_key(window.model_dir)
        self.loading: str | None = None
        self.error_box: QMessageBox | None = None
        self.preloader = HFPreloader(self)  # imports transformers ahead (see desktop_app.workers.preload)
        bar = window.menuBar()
        file_menu = next(a.menu() for a in bar.actions() if a.menu() is not None)
        self.open_action = QAction("Open &model folder\u2026", window)
        self.open_action.setShortcut("Ctrl+Shift+M")
        self.open_action.setStatusTip("Open one of our model folders or a local Hugging Face encoder folder")
        self.open_action.triggered.connect(self.open_model_folder)
        # the backend's import starts as the pointer reaches the item, a moment before the dialog (see open_model_folder)
        self.open_action.hovered.connect(self.preloader.start)
        actions = file_menu.actions()
        file_menu.insertAction(actions[2] if len(actions) > 2 else None, self.open_action)
        self.menu = QMenu("&Model", window)
        before = next((a for a in bar.actions() if a.text().replace("&", "") == "View"), None)
        if before is not None:
            bar.insertMenu(before, self.menu)
        else:
            bar.addMenu(self.menu)
        self._group = QActionGroup(self)
        self.menu.aboutToShow.connect(self.rebuild)
        self.menu.aboutToShow.connect(lambda: self.preloader.start(self.recent()))  # a recent folder may be picked
        window.predictor_loaded.connect(self._on_loaded)
        self.tasks = TaskMenu(window, lambda: self.current)  # Model > Task, the second text (after _on_loaded)
        self.second = SecondModel(window)  # Model > Compare with a second model... (issue 44)
        self.rebuild()

    # ---------------------------------------------------------------- recent folders
    def recent(self) -> list[str]:
        """Recently opened model folders, newest first (absolute paths)."""
        return _as_list(self.window.settings.value(RECENT_KEY))[:MAX_RECENT]

    def _remember(self, folder: str) -> None:
        if not folder:
            return
        items = [folder, *(f for f in self.recent() if f != folder)][:MAX_RECENT]
        self.window.settings.setValue(RECENT_KEY, items)

    def clear_recent(self) -> None:
        """Forget the recently opened folders."""
        self.window.settings.remove(RECENT_KEY)
        self.rebuild()

    def rebuild(self) -> None:
        """Refill the Model menu: the bundled model, the recent folders (the one in use checked), the actions."""
        self.menu.clear()
        self._group = QActionGroup(self)
        entries = [(BUNDLED, "&Bundled model (resources/model)")]
        entries += [(f, f"&{i + 1} {Path(f).name}  \u2014  {f}") for i, f in enumerate(self.recent())]
        for key, text in entries:
            act = QAction(text, self.menu)
            act.setCheckable(True)
            act.setChecked(key == self.current)
            act.setData(key)
            act.triggered.connect(lambda _=False, k=key: self.open_model(k or None))
            self._group.addAction(act)
            self.menu.addAction(act)
            if key == BUNDLED:
                self.menu.addSeparator()
        self.menu.addSeparator()
        self.menu.addAction(self.open_action)
        clear = self.menu.addAction("&Clear recent folders", self.clear_recent)
        clear.setEnabled(bool(self.recent()))
        self._precision_menu()
        self.tasks.add_to(self.menu)
        self.second.add_to(self.menu)

    def _precision_menu(self) -> None:
        """Model > Precision: auto / float32 / bfloat16 for predict and batch scoring (model/predictor/precision.py)."""
        sub = self.menu.addMenu("&Precision")
        sub.setToolTipsVisible(True)
        group = QActionGroup(sub)
        chosen = self.window.controller.precision
        for key, text in (("auto", "&Auto (float32; bfloat16 only where it was measured 1.5x faster)"),
                          ("fp32", "&float32"), ("bf16", "&bfloat16")):
            act = sub.addAction(text)
            act.setCheckable(True)
            act.setChecked(key == chosen)
            act.triggered.connect(lambda _=False, k=key: self.set_precision(k))
            group.addAction(act)

    def set_precision(self, precision: str) -> None:
        """Use ``precision`` ("auto", "fp32", "bf16") from now on: saved in the settings, the model reloaded."""
        self.window.controller.precision = precision
        if self.window.persist_settings:
            self.window.settings.setValue(PRECISION_KEY, precision)
        self.open_model(self.current or None)

    # ---------------------------------------------------------------- switching
    def open_model_folder(self) -> str | None:
        """Ask for a folder (a directory dialog) and open it; returns the folder or None when cancelled."""
        start = self.current or (self.recent() or [str(Path.home())])[0]
        self.preloader.start()  # while the user picks a folder: most of opening a first Hugging Face folder
        folder = QFileDialog.getExistingDirectory(self.window, "Open model folder", start)
        if not folder:
            return None
        self.open_model(folder)
        return folder

    def open_model(self, folder: str | Path | None) -> None:
        """Load the model in ``folder`` (None: the bundled model) on the inference thread.

        Clears the results on display and drops queued analysis; the answer arrives as the window's
        ``predictor_loaded`` (then the editor's review is analysed again) or as one message (:meth:`switch_failed`).
        """
        self.loading = folder_key(folder)
        self.window.switch_model(self.loading or None)

    def _on_loaded(self, _predictor) -> None:
        if self.loading is None:  # the first load at start-up (--model DIR); automated runs leave settings alone
            if self.window.persist_settings:
                self._remember(self.current)
            if self.recent():  # one of them is likely opened again: import its backend ahead if it needs one
                self.preloader.start(self.recent())
            return
        self.current, self.loading = self.loading, None
        self._remember(self.current)
        self.rebuild()

    def switch_failed(self, message: str) -> None:
        """Show ``message`` once (a non-modal box); the current model stays (called by the window)."""
        self.loading = None
        self.error_box = QMessageBox(QMessageBox.Warning, APP_NAME, f"{message}\n\nThe current model stays loaded.",
                                     QMessageBox.Ok, self.window)
        self.error_box.open()
