"""The main window's layout persistence and window-wide drops.

:class:`LayoutMixin` is mixed into :class:`desktop_app.window.main_window.MainWindow`: it restores and saves
the geometry, the workspaces' dock layouts (:mod:`desktop_app.window.workspaces`), ``window/results_area`` (the
results working area was given, :mod:`desktop_app.window.results_area`), zoom and layer/head in the window's
QSettings (:mod:`desktop_app.window.settings`), records that the window was shown (only a shown window's
layout is saved), and turns local files/folders dropped anywhere on the window into ``paths_dropped``;
while they are dragged over the window, :attr:`LayoutMixin.drop_overlay` says what a drop will do. It also adds
the docks (:meth:`LayoutMixin.add_panel`, :meth:`LayoutMixin.dock`, :meth:`LayoutMixin.raise_view`).
"""

from __future__ import annotations

import os

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QLabel, QWidget

from ..panels.editor import local_paths
from .workspaces import home_of


def describe_drop(paths: list[str]) -> str:
    """What dropping ``paths`` does, e.g. "Drop to score 2 folders and 1 file in the Batch scoring panel"."""
    folders = sum(os.path.isdir(p) for p in paths)
    files = len(paths) - folders
    parts = [f"{n} {word}{'s' if n != 1 else ''}" for n, word in ((folders, "folder"), (files, "file")) if n]
    return f"Drop to score {' and '.join(parts)} in the Batch scoring panel"


class LayoutMixin:
    """Settings and drag-and-drop behaviour of the main window (see the module docstring)."""

    def _restore_settings(self) -> None:
        geom = self.settings.value("window/geometry")
        if geom is not None:
            self.restoreGeometry(geom)
        else:
            self.resize(1400, 860)
        self.workspaces.load(self.settings)  # each workspace's dock layout, restored when it is switched to
        # The results working area (window/results_area.py) is given once; a saved layout that had it is the user's.
        self.results_area_known = str(self.settings.value("window/results_area", "false")).lower() == "true"
        self.results_area_given = False
        zoom = self.settings.value("view/zoom")
        if zoom is not None:
            try:
                self._zoom_pt = float(zoom)
            except (TypeError, ValueError):
                pass

    def save_settings(self) -> None:
        """Store geometry, every workspace's dock layout, zoom and the selected layer/head in QSettings."""
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.workspaces.save(self.settings)
        for old in ("window/state", "window/docks"):  # the one layout of versions before the workspaces (issue 54)
            self.settings.remove(old)
        self.settings.setValue("window/results_area", self.results_area_known or self.results_area_given)
        self.settings.setValue("view/layer", self.state.layer)
        self.settings.setValue("view/head", self.state.head)
        self.settings.setValue("view/zoom", self._zoom_pt)
        self.settings.sync()

    def showEvent(self, event) -> None:
        """Remember that the window was shown (only then is its layout worth saving); open the workspace."""
        self.workspaces.show_started()  # the first show opens the workspace (when the panels are attached)
        super().showEvent(event)
        self._shown = True

    @property
    def drop_overlay(self) -> QLabel:
        """The translucent banner shown over the window while files are dragged over it (made on first use)."""
        overlay = self._drop_overlay
        if overlay is None:
            overlay = QLabel(self)
            overlay.setObjectName("dropOverlay")
            overlay.setAlignment(Qt.AlignCenter)
            overlay.setWordWrap(True)
            overlay.setAttribute(Qt.WA_TransparentForMouseEvents)
            overlay.setStyleSheet(
                "QLabel#dropOverlay { background: rgba(31, 58, 147, 60); border: 3px dashed #1f3a93;"
                " color: #1f3a93; font-size: 16pt; font-weight: bold; }"
            )
            overlay.hide()
            self._drop_overlay = overlay
        return overlay

    def show_drop_hint(self, paths: list[str]) -> None:
        """Show the drop banner for ``paths`` (also called by child widgets that take drops themselves)."""
        self._show_drop_overlay(paths)

    def hide_drop_hint(self) -> None:
        """Hide the drop banner."""
        self._hide_drop_overlay()

    def _show_drop_overlay(self, paths: list[str]) -> None:
        overlay = self.drop_overlay
        overlay.setText(describe_drop(paths))
        overlay.setGeometry(self.rect().adjusted(8, 8, -8, -8))
        overlay.raise_()
        overlay.show()

    def _hide_drop_overlay(self) -> None:
        if self._drop_overlay is not None:
            self._drop_overlay.hide()

    def dragEnterEvent(self, event) -> None:
        """Accept local files and folders dropped anywhere on the window; show where they will land."""
        paths = local_paths(event.mimeData())
        if paths:
            event.acceptProposedAction()
            self._show_drop_overlay(paths)
        else:
            event.ignore()

    def dragLeaveEvent(self, event) -> None:
        """Hide the drop banner."""
        self._hide_drop_overlay()
        super().dragLeaveEvent(event)

    def dragMoveEvent(self, event) -> None:
        """See :meth:`dragEnterEvent`."""
        if local_paths(event.mimeData()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event) -> None:
        """Emit ``paths_dropped`` with the dropped local paths."""
        self._hide_drop_overlay()
        paths = local_paths(event.mimeData())
        if paths:
            event.acceptProposedAction()
            self.remember_folder(paths[0])
            self.paths_dropped.emit(paths)
        else:
            event.ignore()

    # ------------------------------------------------------------------ docks
    def add_panel(self, widget: QWidget, title: str, area=Qt.RightDockWidgetArea,
                  beside: QDockWidget | None = None, tab: str = "") -> QDockWidget:
        """Add ``widget`` as a dock titled ``title`` (objectName derived from it, so layouts persist).

        The dock is tabbed with the docks already in ``area`` (or, with ``beside``, placed to the right of that
        dock) and gets a View-menu toggle named ``title``; ``tab`` (default ``title``) is the shorter name on its
        tab and title bar. Which workspace shows it is :data:`desktop_app.window.workspaces.WORKSPACES`'s to say.
        """
        dock = self._add_dock(widget, title, area, tab)
        others = [
            d for d in self._docks.values() if d is not dock and self.dockWidgetArea(d) == area and not d.isFloating()
        ]
        if beside is not None and beside in others:
            self.splitDockWidget(beside, dock, Qt.Horizontal)
        elif others:
            self.tabifyDockWidget(others[0], dock)
        dock.show()
        self.workspaces.place(dock, title)  # once the workspaces started: shown when the current one holds it
        return dock

    def dock(self, title: str) -> QDockWidget | None:
        """The dock titled ``title`` (a view's, "Review", "Prediction" or an added panel's), or None."""
        return self._docks.get(title)

    def raise_view(self, title: str) -> None:
        """Show and raise the dock titled ``title`` (nothing for an unknown title, e.g. the central token view); a dock
        that the current workspace does not hold switches to the first workspace that holds it
        (:mod:`desktop_app.window.workspaces`)."""
        dock = self._docks.get(title)
        if dock is None:
            return
        current, home = self.workspaces.current, home_of(title)
        if current is not None and home is not None and title not in current.titles:
            self.workspaces.switch(home.key)
        self._raise_dock(dock)

    def _add_dock(self, widget: QWidget, title: str, area, tab: str = "") -> QDockWidget:
        """A dock for ``widget``: ``tab`` (else ``title``) on its tab; ``title`` names it in the View menu (which
        shows it in front of its tab mates, or hides it) and in its ``objectName`` (unchanged when the tab names were
        shortened, so older layouts restore)."""
        dock = QDockWidget(tab or title, self)
        dock.setObjectName("dock_" + "".join(c if c.isalnum() else "_" for c in title.lower()))
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        self._docks[title] = dock
        action = dock.toggleViewAction()
        action.setText(title)  # set once: Qt renames it only when the dock's title changes
        action.setToolTip(f"Show or hide {title}")
        # shown from the menu, the panel comes to the front (a tabbed dock's show() only adds its tab, issue 56), in
        # its workspace when the current one does not hold it, as raise_view opens it
        action.triggered.connect(lambda checked, t=title: self._show_from_menu(t) if checked else None)
        if self.view_menu_docks is not None:
            self.view_menu_docks.addAction(action)
        return dock

    def _show_from_menu(self, title: str) -> None:
        """View > Panels showed the dock ``title`` (its toggle action already made it visible): raise it. A dock the
        current workspace does not hold is hidden again first, so that the workspace's kept layout stays without it,
        and :meth:`raise_view` opens it in its own workspace."""
        current = self.workspaces.current
        if current is not None and home_of(title) is not None and title not in current.titles:
            self._docks[title].hide()
        self.raise_view(title)

    def _raise_dock(self, dock: QDockWidget) -> None:
        dock.show()
        dock.raise_()
