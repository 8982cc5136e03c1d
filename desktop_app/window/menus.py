"""The main window's menu bar (File, Analysis, Samples, View, Help), its workspace bar and its layer/head/show toolbar.

:class:`WindowMenus` (``window.menus``) makes them; the Model menu is :mod:`desktop_app.window.model_menu`'s. The
menu actions call public methods of the window, of its :class:`~desktop_app.window.file_actions.FileActions`, its
:class:`~desktop_app.window.workspaces.Workspaces` and of the explorer state (:mod:`desktop_app.state`).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QLabel, QMenu, QMessageBox, QToolBar

from ..views.registry import CENTRAL_VIEW_TITLE, DOCKED_VIEWS, WHOLE_WINDOW_TITLE
from ..views.selectors import LayerHeadSelector
from desktop_app.window.session import save_open as session

log = logging.getLogger(__name__)


class WindowMenus:
    """The menus and toolbars of a :class:`~desktop_app.window.main_window.MainWindow` (see the module docstring).

    Args:
        window: the main window (its menu bar, toolbars, ``state``, ``workspaces``, ``analyze_now``, zoom, About).
        file_actions: the window's :class:`~desktop_app.window.file_actions.FileActions` (the File menu's slots;
            the views it registers join File > Export view).
        panels_menu: View > Panels (:attr:`desktop_app.window.docks.WindowDocks.panels_menu`).

    Attributes:
        analysis_menu, export_menu, samples_menu: Analysis, File > Export view and Samples (panels add entries).
        analyze_action: Analysis > Analyze now (Ctrl+Return; also on the toolbar).
        samples: the bundled sample reviews in the Samples menu (``index.json`` entries with their ``path``).
        layer_head: the toolbar's :class:`~desktop_app.views.selectors.LayerHeadSelector`, and its ``layer_combo``,
            ``head_combo``, ``window_combo`` and ``show_combo`` (made by :meth:`build_toolbar`).
    """

    def __init__(self, window, file_actions, panels_menu: QMenu) -> None:
        self.window = window
        self.file_actions = file_actions
        self.samples: list[dict] = []
        self._build_menus(panels_menu)
        file_actions.view_registered.connect(self._add_export_entry)

    def add_action(self, menu, text: str, slot, shortcut=None) -> QAction:
        """Add an action ``text`` calling ``slot`` to ``menu``, with a shortcut (a key sequence, or a list of them:
        the first is shown in the menu); returns the action."""
        act = QAction(text, self.window)
        if shortcut is not None:
            if isinstance(shortcut, (list, tuple)):
                act.setShortcuts([QKeySequence(s) for s in shortcut])
            else:
                act.setShortcut(QKeySequence(shortcut))
        act.triggered.connect(slot)
        menu.addAction(act)
        return act

    def _add_export_entry(self, name: str) -> None:
        """File > Export view > ``name``... asks where to export that view."""
        self.add_action(self.export_menu, name + "\u2026",
                        lambda _=False, n=name: self.file_actions.export_view_dialog(n))

    def _build_menus(self, panels_menu: QMenu) -> None:
        w, files, add = self.window, self.file_actions, self.add_action
        mb = w.menuBar()
        fm = mb.addMenu("&File")
        add(fm, "Open &files\u2026", files.open_files, QKeySequence.Open)
        add(fm, "Open f&older\u2026", files.open_folder, "Ctrl+Shift+O")
        add(fm, "&Load review from text file\u2026", files.load_review_file, "Ctrl+L")
        fm.addSeparator()
        add(fm, "&Save analysis as JSON\u2026", files.save_json_dialog, QKeySequence.Save)
        add(fm, "Save sessi&on\u2026", lambda: session.save_session_dialog(w))
        add(fm, "Open sess&ion\u2026", lambda: session.open_session_dialog(w))
        add(fm, "&Export current view (PNG/SVG)\u2026", files.export_current_view, "Ctrl+E")
        self.export_menu = fm.addMenu("Export &view")
        for name in (*(v.title for v in DOCKED_VIEWS), CENTRAL_VIEW_TITLE, WHOLE_WINDOW_TITLE):
            self._add_export_entry(name)
        fm.addSeparator()
        add(fm, "&Quit", w.close, QKeySequence.Quit)

        am = self.analysis_menu = mb.addMenu("&Analysis")
        self.analyze_action = add(am, "&Analyze now", w.analyze_now, ("Ctrl+Return", "Ctrl+Enter"))
        add(am, "Clear token &selection", w.state.clear_selection, "Esc")
        add(am, "Reset token colours to attention", lambda: w.state.set_importance(None))

        self.samples_menu = mb.addMenu("&Samples")
        placeholder = self.samples_menu.addAction("(available once the model has loaded)")
        placeholder.setEnabled(False)

        vm = mb.addMenu("&View")
        add(vm, "Zoom &in", lambda: w.set_zoom(w.zoom + 1), QKeySequence.ZoomIn)
        add(vm, "Zoom &out", lambda: w.set_zoom(w.zoom - 1), QKeySequence.ZoomOut)
        add(vm, "&Reset zoom", w.reset_zoom, "Ctrl+0")
        vm.addSeparator()
        wm = vm.addMenu("&Workspace")
        wm.addActions(list(w.workspaces.actions.values()))
        wm.addSeparator()
        wm.addAction(w.workspaces.reset_action)
        vm.addMenu(panels_menu)

        hm = mb.addMenu("&Help")
        add(hm, "&About Attention Explorer\u2026", w.show_about)
        add(hm, "About &Qt\u2026", lambda: QMessageBox.aboutQt(w))

    def build_toolbar(self) -> None:
        """The workspace bar, then the layer / head / window / show selectors and Analyze now."""
        w = self.window
        w.addToolBar(Qt.TopToolBarArea, w.workspaces.toolbar)
        tb = QToolBar("Layer and head")
        tb.setObjectName("toolbar_layer_head")
        w.addToolBar(Qt.TopToolBarArea, tb)
        tb.addWidget(QLabel(" Layer: "))
        self.layer_head = LayerHeadSelector(w.state, w)
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

    def fill_samples_menu(self) -> None:
        """The Samples menu: the bundled sample reviews (``resources/samples/index.json``), each opened with
        :meth:`~desktop_app.window.file_actions.FileActions.open_review_file`; a missing or broken index leaves one
        disabled entry saying so."""
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
            self.add_action(self.samples_menu, text,
                            lambda _=False, p=s["path"]: self.file_actions.open_review_file(p))
