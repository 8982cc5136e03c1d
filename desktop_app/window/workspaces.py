"""Workspaces: named dock arrangements of the one main window, by the question the user is asking (issue 54).

Desktop tools keep many views in one window this way (Qt Creator's modes, Krita's workspaces, LIT's layouts). Each
:class:`Workspace` of :data:`WORKSPACES` (Read, Learn, Inside, Compare, Corpus) names the docks it shows and where;
every other dock is hidden while it is on, so the views it hides are not drawn
(:meth:`desktop_app.views.render.DeferredRender.request_render` renders visible views only). The window keeps one
:class:`~desktop_app.state.ExplorerState`: the text, the selection, the pins and the models stay as they are when
the workspace changes; only the docks change.

:class:`Workspaces` (``window.workspaces``) switches them: the workspace bar at the top of the window, View >
Workspace, Ctrl+1 to Ctrl+5, and :meth:`desktop_app.window.layout.LayoutMixin.raise_view` (showing a view that the
current workspace does not hold switches to the first workspace that holds it; files dropped on the window go to
Corpus). The user may rearrange each workspace (move, tab, float, show or hide docks); its layout
(``QMainWindow.saveState``) is kept per workspace, in the window's QSettings under ``workspace/<key>/state`` with
the docks it knew (``workspace/<key>/docks``) and the current workspace under ``workspace/current``
(:mod:`desktop_app.window.settings`). View > Workspace > Reset layout puts the current one back to its default.

A new view is placed by naming its dock title in one :class:`DockGroup` here (its dock is built from
:data:`desktop_app.views.registry.DOCKED_VIEWS` or added by a panel with ``add_panel``): this table is the one place
that says which workspace shows which dock. A workspace holds at most :data:`MAX_DOCKS` docks, so that every tab
shows its whole name at 1400 x 860 (tests/desktop_app/window/test_workspaces.py checks both).
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QTabBar, QToolBar, QWidget
from shiboken6 import getCppPointer

MAX_DOCKS = 6  # docks a workspace shows at most (1400 x 860 shows every tab's whole name)
LEFT, RIGHT, BOTTOM = Qt.LeftDockWidgetArea, Qt.RightDockWidgetArea, Qt.BottomDockWidgetArea
H, V = Qt.Horizontal, Qt.Vertical


@dataclass(frozen=True)
class DockGroup:
    """Docks tabbed together in one place of a workspace's default layout.

    Attributes:
        area: the dock area (``Qt.LeftDockWidgetArea``, ...).
        titles: the docks' titles (:meth:`~desktop_app.window.main_window.MainWindow.dock`), tabbed in this order;
            the first is raised. A title the window does not have (a panel not attached) is skipped.
        split: how the group sits beside the group before it in the same area (``Qt.Vertical``: below it).
    """

    area: Qt.DockWidgetArea
    titles: tuple[str, ...]
    split: Qt.Orientation = V


@dataclass(frozen=True)
class Workspace:
    """One workspace: a named dock arrangement of the main window.

    Attributes:
        key: its id in QSettings and sessions ("read").
        title: its name on the workspace bar ("Read").
        hint: one line saying what it is for (the bar's tooltip, the status bar on switching, the first-run hint).
        groups: its docks (:class:`DockGroup`); the token view is the centre of every workspace.
        sizes: ``(dock title, orientation, share)``: the default layout gives that dock ``share`` of the window's
            width (``Qt.Horizontal``) or height (``Qt.Vertical``).
    """

    key: str
    title: str
    hint: str
    groups: tuple[DockGroup, ...]
    sizes: tuple[tuple[str, Qt.Orientation, float], ...] = ()

    @property
    def titles(self) -> tuple[str, ...]:
        """Every dock title this workspace shows."""
        return tuple(t for g in self.groups for t in g.titles)


TEXT_DOCKS = (DockGroup(LEFT, ("Review",)), DockGroup(LEFT, ("Prediction",), V))  # the text and its verdict
SIDE_SIZES = (("Review", H, 0.26), ("Review", V, 0.62))  # the left column: 360 px of 1400, the editor on top

WORKSPACES: tuple[Workspace, ...] = (
    Workspace("read", "Read", "One text: why did the model say that? Tokens, attention, links and explanations.",
              (*TEXT_DOCKS, DockGroup(RIGHT, ("Attention heatmap", "Token links", "Explanations"))),
              (*SIDE_SIZES, ("Attention heatmap", H, 0.44))),
    Workspace("learn", "Learn", "How the encoder works: positions, query/key/value, attention step by step and "
              "the whole layer (Block).",
              (*TEXT_DOCKS, DockGroup(RIGHT, ("Attention steps", "Block", "Neuron view", "Positional encoding"))),
              (*SIDE_SIZES, ("Attention steps", H, 0.48))),
    Workspace("inside", "Inside", "Inside the model: which heads and FFNs wrote the verdict (components), the "
              "contribution graph, patching two texts; every layer and head, heads off.",
              (*TEXT_DOCKS, DockGroup(RIGHT, ("Components", "Contribution graph", "Patching", "Model view"))),
              (*SIDE_SIZES, ("Components", H, 0.48))),
    Workspace("compare", "Compare", "Pinned texts, What if edits and a second model (B) side by side.",
              (*TEXT_DOCKS, DockGroup(RIGHT, ("Compare", "What if", "Model B attention"))),
              (*SIDE_SIZES, ("Compare", H, 0.48))),
    Workspace("corpus", "Corpus", "Many texts: score folders and tables, metrics, the map, words, A vs B.",
              (DockGroup(LEFT, ("Prediction", "Review")), DockGroup(BOTTOM, ("Batch scoring",)),
               DockGroup(BOTTOM, ("Corpus",), H)),  # a row opened from the table: its verdict over its tokens
              (("Prediction", H, 0.26), ("Batch scoring", V, 0.55), ("Batch scoring", H, 0.55), ("Corpus", H, 0.45))),
)
"""The workspaces, in the bar's order (Ctrl+1 is the first); the first is the first run's."""

BY_KEY = {w.key: w for w in WORKSPACES}
CORPUS = "corpus"  # where dropped files go


def workspace(key: str) -> Workspace:
    """The workspace ``key`` ("read", ...). Raises ValueError for an unknown key (naming the known ones)."""
    try:
        return BY_KEY[key]
    except KeyError:
        raise ValueError(f"unknown workspace {key!r}: one of {', '.join(BY_KEY)}") from None


def home_of(title: str) -> Workspace | None:
    """The first workspace that shows the dock ``title``, or None."""
    return next((w for w in WORKSPACES if title in w.titles), None)


PIN_VIEWS = ("Compare", "Patching")
"""The views that read the pins, in order of preference: a new pin shows the first that the current workspace holds
(:func:`pin_view`)."""


def pin_view(current: Workspace | None) -> str:
    """The dock title a new pin shows: the first of :data:`PIN_VIEWS` the ``current`` workspace holds (pinning in
    Inside raises Patching there, the clean text of its pair), else "Compare", whose workspace it switches to
    (:meth:`desktop_app.window.layout.LayoutMixin.raise_view`)."""
    held = [t for t in PIN_VIEWS if current is not None and t in current.titles]
    return held[0] if held else PIN_VIEWS[0]


def first_run_hint() -> str:
    """The first run's hint: one line per workspace (HTML)."""
    lines = [f"<b>{w.title}</b> (Ctrl+{i}): {w.hint}" for i, w in enumerate(WORKSPACES, 1)]
    return "Workspaces, on the bar above:<br>" + "<br>".join(lines)


@dataclass(frozen=True)
class SavedLayout:
    """A workspace's layout: ``QMainWindow.saveState()`` bytes and the objectNames of the docks it knew."""

    state: object
    docks: frozenset[str]


class Workspaces(QObject):
    """The main window's workspaces (module docstring): the bar, the menu and the layouts.

    Args:
        window: the :class:`~desktop_app.window.main_window.MainWindow` (its docks by title: ``window._docks``).

    Attributes:
        current: the :class:`Workspace` on, or None before :meth:`start`.
        actions: key -> the checkable action switching to it (Ctrl+1...); reset_action: Reset layout.
        toolbar: the workspace bar.

    Signals:
        changed(str): the key of the workspace switched to.
    """

    changed = Signal(str)

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.current: Workspace | None = None
        self.layouts: dict[str, SavedLayout] = {}
        self._first_key = WORKSPACES[0].key
        self.first_run = True
        self.hint: FirstRunHint | None = None
        self.started = False  # start() was called (the window's docks all exist)
        group = QActionGroup(self)
        self.actions: dict[str, QAction] = {}
        for i, w in enumerate(WORKSPACES, 1):
            act = QAction(w.title, self, checkable=True)
            act.setShortcut(QKeySequence(f"Ctrl+{i}"))
            act.setToolTip(f"{w.title} (Ctrl+{i}): {w.hint}")
            act.setStatusTip(w.hint)
            act.triggered.connect(lambda _=False, k=w.key: self.switch(k))
            group.addAction(act)
            self.actions[w.key] = act
        self.reset_action = QAction("Reset layout", self)
        self.reset_action.setToolTip("Put the docks of this workspace back where they start")
        self.reset_action.triggered.connect(self.reset_layout)
        bar = self.toolbar = QToolBar("Workspaces")
        bar.setObjectName("toolbar_workspaces")
        bar.addWidget(QLabel(" Workspace: "))
        for act in self.actions.values():
            bar.addAction(act)
        bar.addAction(self.reset_action)

    # ------------------------------------------------------------------ settings
    def load(self, settings) -> None:
        """Read the current workspace and every saved layout from ``settings`` (before :meth:`start`)."""
        for w in WORKSPACES:
            state = settings.value(f"workspace/{w.key}/state")
            if state is not None:
                docks = settings.value(f"workspace/{w.key}/docks")
                names = docks if isinstance(docks, (list, tuple)) else [docks] if docks else []
                self.layouts[w.key] = SavedLayout(state, frozenset(map(str, names)))
        key = str(settings.value("workspace/current", ""))
        self.first_run = key == ""
        self._first_key = key if key in BY_KEY else WORKSPACES[0].key

    def save(self, settings) -> None:
        """Write the current workspace and every layout (the current one as it is now) to ``settings``."""
        if self.current is not None:
            self._keep_current()
            settings.setValue("workspace/current", self.current.key)
        for w in WORKSPACES:
            saved = self.layouts.get(w.key)
            if saved is None:
                settings.remove(f"workspace/{w.key}")
            else:
                settings.setValue(f"workspace/{w.key}/state", saved.state)
                settings.setValue(f"workspace/{w.key}/docks", sorted(saved.docks))

    @property
    def has_saved_layout(self) -> bool:
        """True when the workspace the window opens in has a layout saved by an earlier run."""
        return self._first_key in self.layouts

    # ------------------------------------------------------------------ switching
    def start(self) -> None:
        """Open the window's first workspace (the saved one, else Read); called once every dock exists, it waits for
        the window's first show when not shown yet (docks moved between tab groups before the first show left a tab
        bar with stale names on screen, Qt 6.x). The first run also shows :func:`first_run_hint` over the token view
        (until dismissed or another workspace is chosen)."""
        self.started = True
        if not self.window.isVisible():
            return  # LayoutMixin.showEvent calls show_started()
        if self.current is None:
            self.switch(self._first_key, announce=False)  # the status bar says "Loading model…" now
            if self.first_run and self.window.centralWidget() is not None:
                QTimer.singleShot(0, self._show_hint)  # after the first paint: the window comes first

    def _show_hint(self) -> None:
        if self.hint is None and self.current is not None and self.current.key == self._first_key:
            self.hint = FirstRunHint(self.window.centralWidget())
            self.changed.connect(lambda _key: self.hint.close())

    def show_started(self) -> None:
        """The window is being shown: open the first workspace if :meth:`start` was called."""
        if self.started and self.current is None:
            self.start()

    def switch(self, key: str, announce: bool = True) -> None:
        """Show workspace ``key``: keep the current one's layout, then restore ``key``'s (else its default); with
        ``announce``, the status bar names it and its hint.

        Raises:
            ValueError: an unknown key.
        """
        target = workspace(key)
        if self.current is not None:
            if target is self.current:
                return
            self._keep_current()
        self.current = target
        saved = self.layouts.get(key)
        if saved is None or not self.window.restoreState(saved.state):
            self._apply_default(target)
        else:
            self._place_unknown(target, saved.docks)
        self._hide_stale_tab_bars()
        self.actions[key].setChecked(True)
        if announce:
            self.window.statusBar().showMessage(f"{target.title}: {target.hint}", 6000)
        self.changed.emit(key)

    def reset_layout(self) -> None:
        """Put the current workspace's docks back to its default layout (forgetting the user's changes)."""
        if self.current is not None:
            self.layouts.pop(self.current.key, None)
            self._apply_default(self.current)

    def place(self, dock, title: str) -> None:
        """A dock added after :meth:`start`: shown when the current workspace holds ``title``, else hidden."""
        if self.current is not None:
            dock.setVisible(title in self.current.titles)

    def _hide_stale_tab_bars(self) -> None:
        """Hide the window's dock tab bars that show no tab group of the layout now on screen. ``restoreState`` (Qt
        6.11) leaves the tab bar of a group that the restored layout no longer has on screen, with its old names; under
        X a default layout placed group by group can leave a second bar naming the right docks where the group was
        before the next group took its room (Corpus: Prediction and Review over the batch dock's status line), so a
        bar that does not touch its docks is stale too."""
        win = self.window
        win.layout().activate()
        by_pointer = {getCppPointer(d)[0]: d for d in win._docks.values()}
        for bar in win.findChildren(QTabBar, options=Qt.FindDirectChildrenOnly):
            if not bar.isVisible():
                continue
            shown = [d for d in (by_pointer.get(bar.tabData(i)) for i in range(bar.count())) if d and d.isVisible()]
            together = set(win.tabifiedDockWidgets(shown[0])) if shown else set()
            if len(shown) < 2 or not set(shown[1:]) <= together or not any(
                    d.geometry().adjusted(-4, -4, 4, 4).intersects(bar.geometry()) for d in shown):
                bar.hide()

    def _keep_current(self) -> None:
        docks = frozenset(d.objectName() for d in self.window._docks.values())
        self.layouts[self.current.key] = SavedLayout(self.window.saveState(), docks)

    def _place_unknown(self, target: Workspace, known: frozenset[str]) -> None:
        """Docks that a saved layout did not know (added by a later version) follow the workspace's table."""
        for title, dock in self.window._docks.items():
            if dock.objectName() not in known:
                dock.setVisible(title in target.titles)

    def _apply_default(self, target: Workspace) -> None:
        """Hide the docks ``target`` does not hold; place, tab and size the ones it does."""
        win, docks = self.window, self.window._docks
        for title, dock in docks.items():
            if title not in target.titles:
                dock.hide()
        for group in target.groups:
            present = [docks[t] for t in group.titles if t in docks]
            if not present:
                continue
            first = present[0]
            for dock in present:
                if dock.isFloating():  # setFloating(False) costs ~1 ms a dock even when it is docked already
                    dock.setFloating(False)
            win.addDockWidget(group.area, first, group.split)
            first.show()
            for dock in present[1:]:
                win.tabifyDockWidget(first, dock)
                dock.show()
            first.raise_()
        width, height = max(win.width(), 800), max(win.height(), 600)
        for title, orientation, share in target.sizes:
            dock = docks.get(title)
            if dock is not None:
                win.resizeDocks([dock], [int(share * (width if orientation == H else height))], orientation)


class FirstRunHint(QFrame):
    """The first run's hint over the top of ``parent`` (the token view): one line per workspace and "Got it"."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("workspaceHint")
        self.setStyleSheet("QFrame#workspaceHint { background: #fffbe6; border: 1px solid #c9a227; }")
        self.label = QLabel(first_run_hint())
        self.label.setTextFormat(Qt.RichText)
        self.label.setWordWrap(True)
        button = QPushButton("Got it")
        button.clicked.connect(self.close)
        lay = QHBoxLayout(self)
        lay.addWidget(self.label, 1)
        lay.addWidget(button, 0, Qt.AlignTop)
        parent.installEventFilter(self)
        self._fit()
        self.show()

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt's name
        """Follow the parent's size."""
        if event.type() == QEvent.Resize:
            self._fit()
        return False

    def _fit(self) -> None:
        width = max(200, self.parentWidget().width() - 16)
        self.setGeometry(8, 8, width, self.heightForWidth(width) if self.hasHeightForWidth() else
                         self.sizeHint().height())


__all__ = ["BY_KEY", "CORPUS", "MAX_DOCKS", "WORKSPACES", "DockGroup", "FirstRunHint", "SavedLayout", "Workspace",
           "Workspaces",
           "first_run_hint", "home_of", "workspace"]
