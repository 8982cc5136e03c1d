"""The main window's saved layout: what the window restores at start and saves when it closes.

:class:`WindowLayout` (``window.window_layout``) keeps, in the window's QSettings (:mod:`desktop_app.window.settings`),
the geometry, each workspace's dock layout (:mod:`desktop_app.window.workspaces`), ``window/results_area`` (the
results working area was given, :mod:`desktop_app.window.results_area`), the zoom and the selected layer/head (read
back when the model has loaded, :mod:`desktop_app.window.loading`). The window saves it only when it was shown and
``persist_settings`` is on (:meth:`desktop_app.window.main_window.MainWindow.closeEvent`).
"""

from __future__ import annotations


class WindowLayout:
    """The saved layout of a :class:`~desktop_app.window.main_window.MainWindow` (see the module docstring).

    Args:
        window: the main window (its geometry, ``zoom``).
        settings: the window's QSettings.
        workspaces: the window's :class:`~desktop_app.window.workspaces.Workspaces` (their dock layouts).
        state: the window's :class:`~desktop_app.state.ExplorerState` (the layer and head saved).

    Attributes:
        results_area_known: a saved layout already had the results working area (the user's to arrange).
        results_area_given: this run gave it (:func:`desktop_app.window.results_area.give_results_room`).
    """

    def __init__(self, window, settings, workspaces, state) -> None:
        self.window = window
        self.settings = settings
        self.workspaces = workspaces
        self.state = state
        self.results_area_known = False
        self.results_area_given = False

    def restore(self) -> None:
        """Restore the geometry (1400 x 860 the first time) and load each workspace's dock layout (restored when it
        is switched to)."""
        geom = self.settings.value("window/geometry")
        if geom is not None:
            self.window.restoreGeometry(geom)
        else:
            self.window.resize(1400, 860)
        self.workspaces.load(self.settings)
        # The results working area (window/results_area.py) is given once; a saved layout that had it is the user's.
        self.results_area_known = str(self.settings.value("window/results_area", "false")).lower() == "true"
        self.results_area_given = False

    def saved_zoom(self, default: float) -> float:
        """The zoom (points) saved by an earlier run, else ``default``."""
        try:
            return float(self.settings.value("view/zoom", default))
        except (TypeError, ValueError):
            return default

    def save(self) -> None:
        """Store geometry, every workspace's dock layout, zoom and the selected layer/head in QSettings."""
        s = self.settings
        s.setValue("window/geometry", self.window.saveGeometry())
        self.workspaces.save(s)
        for old in ("window/state", "window/docks"):  # the one layout of versions before the workspaces (issue 54)
            s.remove(old)
        s.setValue("window/results_area", self.results_area_known or self.results_area_given)
        s.setValue("view/layer", self.state.layer)
        s.setValue("view/head", self.state.head)
        s.setValue("view/zoom", self.window.zoom)
        s.sync()
