"""The main window's docks: adding them (the built-in views and the panels), finding one by title, raising one.

:class:`WindowDocks` (``window.docks``) owns every dock of the window by title and the View > Panels menu (a toggle
per dock, :attr:`WindowDocks.panels_menu`). Each dock's ``objectName`` derives from its title, so the layouts that
:mod:`desktop_app.window.workspaces` saves restore. Which workspace shows a dock is
:data:`desktop_app.window.workspaces.WORKSPACES`'s to say: raising a dock that the current workspace does not hold
switches to the first workspace that holds it.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QMenu, QWidget

from .workspaces import home_of


class WindowDocks:
    """The docks of a :class:`~desktop_app.window.main_window.MainWindow` (see the module docstring).

    Args:
        window: the ``QMainWindow`` the docks are added to.
        workspaces: the window's :class:`~desktop_app.window.workspaces.Workspaces` (which one holds a dock).

    Attributes:
        by_title: title -> dock, in the order they were added (the built-in views, then the panels).
        panels_menu: View > Panels: a toggle per dock, named by its title.
    """

    def __init__(self, window, workspaces) -> None:
        self.window = window
        self.workspaces = workspaces
        self.by_title: dict[str, QDockWidget] = {}
        self.panels_menu = QMenu("&Panels", window)

    def get(self, title: str) -> QDockWidget | None:
        """The dock titled ``title`` (a view's, "Review", "Prediction" or an added panel's), or None."""
        return self.by_title.get(title)

    def add(self, widget: QWidget, title: str, area, tab: str = "") -> QDockWidget:
        """A dock for ``widget`` in ``area``: ``tab`` (else ``title``) on its tab; ``title`` names it in View > Panels
        (which shows it in front of its tab mates, or hides it) and in its ``objectName`` (unchanged when the tab
        names were shortened, so older layouts restore)."""
        dock = QDockWidget(tab or title, self.window)
        dock.setObjectName("dock_" + "".join(c if c.isalnum() else "_" for c in title.lower()))
        dock.setWidget(widget)
        self.window.addDockWidget(area, dock)
        self.by_title[title] = dock
        action = dock.toggleViewAction()
        action.setText(title)  # set once: Qt renames it only when the dock's title changes
        action.setToolTip(f"Show or hide {title}")
        # shown from the menu, the panel comes to the front (a tabbed dock's show() only adds its tab, issue 56), in
        # its workspace when the current one does not hold it, as raise_view opens it
        action.triggered.connect(lambda checked, t=title: self._show_from_menu(t) if checked else None)
        self.panels_menu.addAction(action)
        return dock

    def add_panel(self, widget: QWidget, title: str, area=Qt.RightDockWidgetArea,
                  beside: QDockWidget | None = None, tab: str = "") -> QDockWidget:
        """Add ``widget`` as a dock titled ``title`` (objectName derived from it, so layouts persist).

        The dock is tabbed with the docks already in ``area`` (or, with ``beside``, placed to the right of that
        dock) and gets a View > Panels toggle named ``title``; ``tab`` (default ``title``) is the shorter name on its
        tab and title bar. Which workspace shows it is :data:`desktop_app.window.workspaces.WORKSPACES`'s to say.
        """
        win = self.window
        dock = self.add(widget, title, area, tab)
        others = [d for d in self.by_title.values()
                  if d is not dock and win.dockWidgetArea(d) == area and not d.isFloating()]
        if beside is not None and beside in others:
            win.splitDockWidget(beside, dock, Qt.Horizontal)
        elif others:
            win.tabifyDockWidget(others[0], dock)
        dock.show()
        self.workspaces.place(dock, title)  # once the workspaces started: shown when the current one holds it
        return dock

    def raise_view(self, title: str) -> None:
        """Show and raise the dock titled ``title`` (nothing for an unknown title, e.g. the central token view); a dock
        that the current workspace does not hold switches to the first workspace that holds it
        (:mod:`desktop_app.window.workspaces`)."""
        dock = self.by_title.get(title)
        if dock is None:
            return
        current, home = self.workspaces.current, home_of(title)
        if current is not None and home is not None and title not in current.titles:
            self.workspaces.switch(home.key)
        raise_dock(dock)

    def _show_from_menu(self, title: str) -> None:
        """View > Panels showed the dock ``title`` (its toggle action already made it visible): raise it. A dock the
        current workspace does not hold is hidden again first, so that the workspace's kept layout stays without it,
        and :meth:`raise_view` opens it in its own workspace."""
        current = self.workspaces.current
        if current is not None and home_of(title) is not None and title not in current.titles:
            self.by_title[title].hide()
        self.raise_view(title)


def raise_dock(dock: QDockWidget) -> None:
    """Show ``dock`` and bring it in front of its tab mates."""
    dock.show()
    dock.raise_()
