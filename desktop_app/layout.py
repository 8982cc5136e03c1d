"""The main window's layout persistence and window-wide drops.

:class:`LayoutMixin` is mixed into :class:`desktop_app.main_window.MainWindow`: it restores and saves
the geometry, dock layout (``window/state``, ``window/docks``), zoom and layer/head in the window's
QSettings (:mod:`desktop_app.settings`), records that the window was shown (only a shown window's
layout is saved), and turns local files/folders dropped anywhere on the window into ``paths_dropped``.
"""

from __future__ import annotations

from .editor import local_paths


class LayoutMixin:
    """Settings and drag-and-drop behaviour of the main window (see the module docstring)."""

    def _restore_settings(self) -> None:
        geom = self.settings.value("window/geometry")
        if geom is not None:
            self.restoreGeometry(geom)
        else:
            self.resize(1400, 860)
        state = self.settings.value("window/state")
        if state is not None:
            self._saved_state = state
            docks = self.settings.value("window/docks")
            self._saved_docks = set(docks) if isinstance(docks, (list, tuple)) else {docks} if docks else set()
            self.restoreState(state)
        zoom = self.settings.value("view/zoom")
        if zoom is not None:
            try:
                self._zoom_pt = float(zoom)
            except (TypeError, ValueError):
                pass

    def save_settings(self) -> None:
        """Store geometry, dock layout, zoom and the selected layer/head in QSettings."""
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self.saveState())
        self.settings.setValue("window/docks", sorted(d.objectName() for d in self._docks.values()))
        self.settings.setValue("view/layer", self.state.layer)
        self.settings.setValue("view/head", self.state.head)
        self.settings.setValue("view/zoom", self._zoom_pt)
        self.settings.sync()

    def showEvent(self, event) -> None:
        """Remember that the window was shown: only then is its layout worth saving."""
        super().showEvent(event)
        self._shown = True

    def dragEnterEvent(self, event) -> None:
        """Accept local files and folders dropped anywhere on the window."""
        if local_paths(event.mimeData()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event) -> None:
        """See :meth:`dragEnterEvent`."""
        if local_paths(event.mimeData()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event) -> None:
        """Emit ``paths_dropped`` with the dropped local paths."""
        paths = local_paths(event.mimeData())
        if paths:
            event.acceptProposedAction()
            self._remember_folder(paths[0])
            self.paths_dropped.emit(paths)
        else:
            event.ignore()
