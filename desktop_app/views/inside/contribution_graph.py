"""The Contribution graph view (issue 53, section 2; Ferrando & Voita 2024, "Information Flow Routes"): the residual
states (layer, token) the read-out is built from, drawn with pyqtgraph's ``GraphItem``.

It draws ``state.inside.graph`` (a :class:`model.records.graph.ContributionGraph` computed at the slider's least
threshold, :data:`THRESHOLDS`\\ [0], by :mod:`desktop_app.panels.inside.contribution_graph`) pruned to the slider's
threshold on the GUI thread with :meth:`~model.records.graph.ContributionGraph.pruned`, which equals the graph the
API computes at that threshold (tested), in O(E) NumPy: the slider never waits for the model.

Layout: x is the token (its centre, i + 0.5, labelled along the bottom), y the level (0 the embeddings at the bottom,
L the last layer's output, where the read-out starts, at the top). An edge's width and opacity grow with its weight
(its proportional contribution, ALTI per head; opacity as the colour's mix with the white background: opaque pens
paint ~8x faster than translucent wide ones); head paths are green, the residual/FFN path grey, the explorer's
selected layer and head purple; a node is filled with the colour of the class its state alone would be read as
(:attr:`~model.records.graph.ContributionGraph.node_outputs`). Clicking an edge selects its layer and head in the
explorer (``state.set_layer_head``: the Model view follows) and names the path; hovering a node says what the
read-out would say from that state. NumPy and Qt only (no torch).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSlider, QToolTip, QVBoxLayout, QWidget

from model.palette import NEUTRAL, class_colour
from model.records.graph import RESIDUAL

from ...records import MAX_HEADS, MEAN_HEADS
from ..widgets import display_token, style_plot
from .graph_drawing import BatchedGraphItem, GraphTokenAxis, edge_pens, nearest_segment

THRESHOLDS = (0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.08, 0.1, 0.12, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5)
"""The slider's thresholds (the least contribution an edge keeps); the graph is computed once at the first."""
DEFAULT_THRESHOLD = 0.04  # Ferrando & Voita 2024's tau, the API's default
PICK_PX = 6.0  # how near (pixels) a click must be to an edge, a hover to a node
MAX_HEAD_EDGES = 150  # a new graph opens at the least threshold >= AUTO_FLOOR keeping at most this many head paths
AUTO_FLOOR = 0.02


def readable_threshold(graph, start: float = AUTO_FLOOR) -> float:
    """The least of :data:`THRESHOLDS` at or above ``start`` at which ``graph`` keeps at most :data:`MAX_HEAD_EDGES`
    head paths (the last threshold when none does): the slider's position for a new graph until the user moves it, so
    a long mean-pooled text (every token read out) opens readable, and a [CLS] read-out of a long text (whose
    contributions spread over many tokens) shows more than its own residual chain."""
    for t in THRESHOLDS:
        if t >= start and (t >= graph.threshold) and int((graph.pruned(t).heads != RESIDUAL).sum()) <= MAX_HEAD_EDGES:
            return t
    return THRESHOLDS[-1]


def level_name(level: int, n_layers: int) -> str:
    """A level as the axis and the texts name it: "embeddings", "L1", ... (1-based layers), "L6 (read-out)"."""
    if level == 0:
        return "embeddings"
    return f"L{level} (read-out)" if level == n_layers else f"L{level}"


class ContributionGraphView(QWidget):
    """The contribution graph of the current text (module docstring).

    Args:
        state: the explorer state (:class:`desktop_app.state.ExplorerState`): reads ``inside.graph`` and its note,
            ``layer_head``; writes ``set_layer_head`` on an edge click.

    Attributes:
        graph: the graph drawn (pruned to :attr:`threshold`), or None. edges_drawn: its edges in drawing order
            (int (E, 2) node indices into ``graph.nodes``). item: the ``GraphItem``. info: the line under the plot
            (the clicked edge, or the hovered node's read-out). hover_text: the hovered node's text ("" for none).
        draw_ms: the last draw's milliseconds on the GUI thread (pruning and building the item; painting aside).

    Signals:
        edge_clicked(int): the index (into ``graph``'s edges) of an edge clicked.
        threshold_changed(float): the slider moved.
    """

    edge_clicked = Signal(int)
    threshold_changed = Signal(float)

    def __init__(self, state, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.graph = None
        self.edges_drawn = np.zeros((0, 2), np.int64)
        self._order = np.zeros(0, np.int64)
        self._pos = np.zeros((0, 2))
        self.hover_text = ""
        self.draw_ms = 0.0
        self._framed = None  # the graph the plot's range was last set for
        self.slider = QSlider(Qt.Horizontal)
        self.slider.setRange(0, len(THRESHOLDS) - 1)
        self.slider.setValue(THRESHOLDS.index(DEFAULT_THRESHOLD))
        self.slider.setToolTip("Prune: an edge is kept when its share of its target state is at least this")
        self.slider_label = QLabel()
        self.slider.valueChanged.connect(self._on_slider)
        self.slider.sliderMoved.connect(lambda *_: self._on_user_slider())
        self.slider.actionTriggered.connect(lambda *_: self._on_user_slider())
        self.user_threshold = False  # the user moved the slider (or a session set it): new graphs keep it
        self.axis = GraphTokenAxis("bottom", max_chars=10)
        self.plot = pg.PlotWidget(background="w", axisItems={"bottom": self.axis})
        style_plot(self.plot.getPlotItem())
        self.plot.setMenuEnabled(False)
        self.plot.getPlotItem().hideButtons()
        self.plot.getViewBox().setMouseEnabled(x=True, y=False)
        self.item = BatchedGraphItem()
        self.plot.addItem(self.item)
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.info = QLabel("Click an edge: its head; hover a node: what the read-out would say from that state.")
        self.info.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(QLabel("Threshold:"))
        row.addWidget(self.slider, 1)
        row.addWidget(self.slider_label)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addLayout(row)
        lay.addWidget(self.note)
        lay.addWidget(self.plot, 1)
        lay.addWidget(self.info)
        self.plot.scene().sigMouseClicked.connect(self._on_click)
        self.plot.scene().sigMouseMoved.connect(self._on_move)
        state.inside.events.graph.connect(lambda *_: self._on_graph())
        state.events.layer_head.connect(lambda *_: self._restyle())
        self._on_slider(self.slider.value())

    # ------------------------------------------------------------------ the threshold
    @property
    def threshold(self) -> float:
        """The slider's threshold (one of :data:`THRESHOLDS`)."""
        return THRESHOLDS[self.slider.value()]

    def set_threshold(self, value: float) -> None:
        """Move the slider to the step nearest ``value`` (the user's choice: new graphs keep it)."""
        self.user_threshold = True
        self.slider.setValue(int(np.argmin([abs(t - float(value)) for t in THRESHOLDS])))

    def _on_user_slider(self) -> None:
        self.user_threshold = True

    def _on_graph(self) -> None:
        """A new graph: open it at a readable threshold (:func:`readable_threshold`) unless the user chose one."""
        g = self.state.inside.graph
        if g is not None and not self.user_threshold:
            t = readable_threshold(g)
            if t != self.threshold:
                with QSignalBlocker(self.slider):
                    self.slider.setValue(THRESHOLDS.index(t))
                self.threshold_changed.emit(t)
            self.slider_label.setText(f"{t:.2f} (auto)")
            self.slider_label.setToolTip(f"The least threshold keeping at most {MAX_HEAD_EDGES} head paths; move the "
                                         "slider to choose")
        self.redraw()

    def _on_slider(self, _index: int) -> None:
        self.slider_label.setText(f"{self.threshold:.2f}")
        self.slider_label.setToolTip("")
        self.redraw()
        self.threshold_changed.emit(self.threshold)

    # ------------------------------------------------------------------ drawing
    def _selected(self) -> tuple[int, int] | None:
        layer, head = self.state.layer_head
        return None if head in (MEAN_HEADS, MAX_HEADS) else (layer, head)

    def redraw(self) -> None:
        """Draw ``state.inside.graph`` pruned to the slider's threshold, or its note."""
        import time

        t0 = time.perf_counter()
        full = self.state.inside.graph
        if full is None:
            self.graph = None
            self.note.setText(self.state.inside.note("graph") or "Analyse a text to see its contribution graph.")
            self.note.show()
            self.item.setData(pos=np.zeros((0, 2)), adj=None)
            self.axis.set_tokens([])
            self.edges_drawn = np.zeros((0, 2), np.int64)
            self._pos = np.zeros((0, 2))
            return
        self.note.hide()
        self.graph = full.pruned(max(self.threshold, full.threshold))
        g = self.graph
        self._pos = np.stack([g.nodes[:, 1] + 0.5, g.nodes[:, 0]], 1).astype(float)
        self.axis.set_tokens(list(g.tokens))
        self.axis.set_positions(g.nodes[:, 1])
        left = self.plot.getAxis("left")
        left.setTicks([[(lv, level_name(lv, g.n_layers)) for lv in range(g.n_layers + 1)]])
        self._restyle()
        if full is not self._framed:  # a new graph: show it whole (the slider keeps the user's zoom)
            self._framed = full
            self.plot.setLimits(xMin=-0.5, xMax=len(g.tokens) + 0.5)
            self.plot.setXRange(0, len(g.tokens), padding=0.01)
            self.plot.setYRange(-0.3, g.n_layers + 0.3, padding=0)
        self.draw_ms = (time.perf_counter() - t0) * 1000

    def _restyle(self) -> None:
        """Set the item's data: edges in drawing order with their pens, nodes coloured by their read-out's class."""
        g = self.graph
        if g is None:
            return
        px_per_token = self.plot.getViewBox().width() / max(len(g.tokens), 1)
        order, pens = edge_pens(g, self._selected(), float(np.clip(0.4 * px_per_token, 1.0, 4.0)))
        self._order = order
        self.edges_drawn = g.edges[order].astype(np.int64)
        outs = g.node_outputs
        if outs.shape[1] and g.task != "regression":
            palette = [pg.mkBrush(class_colour(c)) for c in range(outs.shape[1])]  # one brush per class, shared
            brushes = [palette[c] for c in np.argmax(outs, 1)]
        else:
            brushes = pg.mkBrush(NEUTRAL)
        top = g.nodes[:, 0] == g.n_layers
        small = float(np.clip(0.8 * px_per_token, 5.0, 7.0))
        sizes = np.where(top, small + 4, small)
        self.item.setData(pos=self._pos, adj=self.edges_drawn if len(order) else None,
                          pen=pens if len(order) else None, size=sizes, symbol="o", symbolBrush=brushes,
                          symbolPen=pg.mkPen("#222222", width=0.6), pxMode=True)

    # ------------------------------------------------------------------ picking
    def _pixels(self, view_xy: np.ndarray) -> np.ndarray:
        px, py = self.plot.getViewBox().viewPixelSize()
        return view_xy / np.array([max(px, 1e-12), max(py, 1e-12)])

    def edge_at(self, x: float, y: float) -> int:
        """The index (into ``graph``'s edges) of the edge within :data:`PICK_PX` pixels of view point (x, y), or -1."""
        if self.graph is None:
            return -1
        k, d = nearest_segment(self._pixels(self._pos), self.edges_drawn, self._pixels(np.array([x, y])))
        return int(self._order[k]) if k >= 0 and d <= PICK_PX else -1

    def node_at(self, x: float, y: float) -> int:
        """The node within :data:`PICK_PX` + 4 pixels of view point (x, y), or -1."""
        if self.graph is None or not len(self._pos):
            return -1
        d = np.hypot(*(self._pixels(self._pos) - self._pixels(np.array([x, y]))).T)
        n = int(np.argmin(d))
        return n if d[n] <= PICK_PX + 4 else -1

    def node_text(self, n: int) -> str:
        """What the hover says of node ``n``: its level and token, and what the read-out would say from its state
        (:meth:`~model.records.graph.ContributionGraph.node_readout`)."""
        g = self.graph
        level, pos = (int(v) for v in g.nodes[n])
        where = f"{level_name(level, g.n_layers)}, token {pos} \u201c{display_token(g.tokens[pos], 20)}\u201d"
        label, value = g.node_readout(n)
        if not label:
            return f"{where}: no read-out (no classification head)"
        said = f"{value:.3f}" if label == "value" else f"{label} {value:.3f}"
        return f"{where}: the read-out from this state alone says {said}"

    def edge_text(self, e: int) -> str:
        """What a click on edge ``e`` says: its path ("L2.H3" or "L2 residual/FFN"), weight, source and target."""
        g = self.graph
        (ls, ps), (lt, pt) = (tuple(int(v) for v in g.nodes[i]) for i in g.edges[e])
        return (f"{g.edge_label(e)}: {g.weights[e]:.3f} of \u201c{display_token(g.tokens[pt], 20)}\u201d at "
                f"{level_name(lt, g.n_layers)} comes from \u201c{display_token(g.tokens[ps], 20)}\u201d at "
                f"{level_name(ls, g.n_layers)}")

    def click_edge(self, e: int) -> None:
        """Edge ``e`` was clicked: select its layer (and head: a head path) in the explorer; name the path."""
        g = self.graph
        layer = int(g.nodes[g.edges[e, 1], 0]) - 1  # the target's level l is layer l's output: 0-based l - 1
        head = int(g.heads[e])
        self.info.setText(self.edge_text(e))
        self.state.set_layer_head(layer, head if head != RESIDUAL else self.state.head)
        self.edge_clicked.emit(e)

    def hover_node(self, n: int) -> None:
        """Node ``n`` is hovered (-1: none): say what the read-out would say from its state."""
        self.hover_text = self.node_text(n) if n >= 0 else ""
        if self.hover_text:
            self.info.setText(self.hover_text)

    def _on_click(self, ev) -> None:
        vb = self.plot.getViewBox()
        if ev.button() != Qt.LeftButton or not vb.sceneBoundingRect().contains(ev.scenePos()):
            return
        p = vb.mapSceneToView(ev.scenePos())
        e = self.edge_at(p.x(), p.y())
        if e >= 0:
            self.click_edge(e)

    def _on_move(self, scene_pos) -> None:
        vb = self.plot.getViewBox()
        if self.graph is None or not vb.sceneBoundingRect().contains(scene_pos):
            return
        p = vb.mapSceneToView(scene_pos)
        n = self.node_at(p.x(), p.y())
        self.hover_node(n)
        if n >= 0:
            QToolTip.showText(self.plot.mapToGlobal(self.plot.mapFromScene(scene_pos)), self.hover_text, self.plot)
        else:
            QToolTip.hideText()


__all__ = ["AUTO_FLOOR", "DEFAULT_THRESHOLD", "MAX_HEAD_EDGES", "THRESHOLDS", "ContributionGraphView", "level_name",
           "readable_threshold"]
