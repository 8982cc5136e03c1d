"""The main window's menu bar (File, Analysis, Samples, View, Help), its workspace bar and its layer/head/show toolbar.

:class:`MenusMixin` is mixed into :class:`desktop_app.window.main_window.MainWindow`; the Model menu is
:mod:`desktop_app.window.model_menu`'s. The menu actions call public methods of the window and of the
explorer state (:mod:`desktop_app.state`).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QLabel, QMessageBox, QToolBar

from ..views.registry import CENTRAL_VIEW_TITLE, DOCKED_VIEWS, WHOLE_WINDOW_TITLE
from ..views.selectors import LayerHeadSelector
from desktop_app.window.session import save_open as session

log = logging.getLogger(__name__)


class MenusMixin:
    """Menus and toolbar of the main window (see the module docstring)."""

    def _action(self, menu, text: str, slot, shortcut=None) -> QAction:
        act = QAction(text, self)
        if shortcut is not None:
            if isinstance(shortcut, (list, tuple)):
                act.setShortcuts([QKeySequence(s) for s in shortcut])
            else:
                act.setShortcut(QKeySequence(shortcut))
        act.triggered.connect(slot)
        menu.addAction(act)
        return act

    def _build_menus(self) -> None:
        mb = self.menuBar()
        fm = mb.addMenu("&File")
        self._action(fm, "Open &files\u2026", self._open_files, QKeySequence.Open)
        self._action(fm, "Open f&older\u2026", self._open_folder, "Ctrl+Shift+O")
        self._action(fm, "&Load review from text file\u2026", self._load_review_file, "Ctrl+L")
        fm.addSeparator()
        self._action(fm, "&Save analysis as JSON\u2026", self._save_json, QKeySequence.Save)
        self._action(fm, "Save sessi&on\u2026", lambda: session.save_session_dialog(self))
        self._action(fm, "Open sess&ion\u2026", lambda: session.open_session_dialog(self))
        self._action(fm, "&Export current view (PNG/SVG)\u2026", self._export_current_view, "Ctrl+E")
        self.export_menu = fm.addMenu("Export &view")
        for name in (*(v.title for v in DOCKED_VIEWS), CENTRAL_VIEW_TITLE, WHOLE_WINDOW_TITLE):
            self._action(self.export_menu, name + "\u2026", lambda _=False, n=name: self._export_view_dialog(n))
        fm.addSeparator()
        self._action(fm, "&Quit", self.close, QKeySequence.Quit)

        am = self.analysis_menu = mb.addMenu("&Analysis")
        self.analyze_action = self._action(am, "&Analyze now", self.analyze_now, ("Ctrl+Return", "Ctrl+Enter"))
        self._action(am, "Clear token &selection", self.state.clear_selection, "Esc")
        self._action(am, "Reset token colours to attention", lambda: self.state.set_importance(None))

        self.samples_menu = mb.addMenu("&Samples")
        placeholder = self.samples_menu.addAction("(available once the model has loaded)")
        placeholder.setEnabled(False)

        vm = mb.addMenu("&View")
        self._action(vm, "Zoom &in", lambda: self.set_zoom(self._zoom_pt + 1), QKeySequence.ZoomIn)
        self._action(vm, "Zoom &out", lambda: self.set_zoom(self._zoom_pt - 1), QKeySequence.ZoomOut)
        self._action(vm, "&Reset zoom", lambda: self.set_zoom(self._font_pt + 1), "Ctrl+0")
        vm.addSeparator()
        wm = vm.addMenu("&Workspace")
        wm.addActions(list(self.workspaces.actions.values()))
        wm.addSeparator()
        wm.addAction(self.workspaces.reset_action)
        self.view_menu_docks = vm.addMenu("&Panels")

        hm = mb.addMenu("&Help")
        self._action(hm, "&About Attention Explorer\u2026", self.show_about)
        self._action(hm, "About &Qt\u2026", lambda: QMessageBox.aboutQt(self))

    def _build_toolbar(self) -> None:
        self.addToolBar(Qt.TopToolBarArea, self.workspaces.toolbar)
        tb = QToolBar("Layer and head")
        tb.setObjectName("toolbar_layer_head")
        self.addToolBar(Qt.TopToolBarArea, tb)
        tb.addWidget(QLabel(" Layer: "))
        self.layer_head = LayerHeadSelector(self.state, self)
        self.layer_combo, self.head_combo = self.layer_head.layer_combo, self.layer_head.head_combo
        self.layer_combo.setMinimumContentsLength(8)
        tb.addWidget(self.layer_combo)
        tb.addWidget(QLabel("  Head: "))
        self.head_combo.setMinimumContentsLength(12)
        tb.addWidget(self.head_combo)
        self.window_combo = self.layer_head.window_combo  # a long review's window (desktop_app.document)
        tb.addWidget(QLabel("  Window: "))
        tb.addWidget(self.window_combo)
        tb.addWidget(QLabel("  Show: "))
        self.show_combo = self.layer_head.show_combo
        tb.addWidget(self.show_combo)
        tb.addSeparator()
        tb.addAction(self.analyze_action)

    def _fill_samples_menu(self) -> None:
        self.samples_menu.clear()
        self.samples = []
        try:
            from model.core.paths import samples_dir  # torch is already imported by the loader by now

            folder = samples_dir()
            index = json.loads((folder / "index.json").read_text(encoding="utf-8"))
            for entry in index.get("samples", []):
                path = folder / entry["file"]
                if path.is_file():
                    self.samples.append({**entry, "path": str(path)})
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("sample reviews unavailable: %s", exc)
        if not self.samples:
            act = self.samples_menu.addAction("(no sample reviews found)")
            act.setEnabled(False)
            return
        for s in self.samples:
            stars = f", {s['rating']}/10" if "rating" in s else ""
            text = f"{s.get('title', Path(s['path']).stem)}  ({s.get('label', '?')}{stars})"
            self._action(self.samples_menu, text, lambda _=False, p=s["path"]: self.open_review_file(p))
