"""Per-head token links (a native, fast version of bertviz's "head view", Vig 2019, ACL demo).

Tokens stand in two columns, queries left and keys right. A line from query i
to key j has opacity proportional to what the state's "Show" selector picks
(:func:`desktop_app.views.shown.shown_heads`): ``attention[l, h, i, j]``, the value-weighted norm
||alpha_ij f^h(x_j)|| (unnormalised: opacity and threshold are relative to the strongest candidate link, whatever
the unit), or the layer's ALTI contribution (one matrix per layer: one grey "all heads" set of lines, the head
boxes disabled); each head has its own colour and can be toggled.
Hovering a token shows only its links (a query's outgoing row, or a key's
incoming column); otherwise the selected query tokens' links are shown, or,
with no selection, all links of the layer. A threshold slider hides links
weaker than a percentage of the strongest one.

Rendering: each head's lines are binned into a few opacity levels and every
(head, bin) is ONE ``QGraphicsPathItem`` built with ``pg.arrayToQPath(...,
connect="pairs")`` - a few dozen items, never one item per line (:mod:`desktop_app.views.link_paths`).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QGraphicsPathItem, QHBoxLayout, QLabel, QSlider, QVBoxLayout, QWidget

from ..state import MAX_HEADS, MEAN_HEADS, SHOW_TITLES
from .colours import ALL_HEADS_COLOUR, head_colour
from .head_boxes import HeadBoxes
from .link_paths import KEY_X, MAX_LINES_PER_HEAD, N_OPACITY_BINS, QUERY_X, candidate_links, draw_links
from .pair_marks import PairLinkFilter
from .render import DeferredRender
from .shown import UNITS, shown_heads
from .widgets import ElidedLabel, TokenAxis, style_plot

class AttentionLinksView(DeferredRender, QWidget):
    """Two columns of tokens joined by attention lines, one colour per head (see module docstring).

    Signals:
        heads_changed(tuple): the enabled heads (0-based).

    Attributes:
        focus: ("query"|"key", tuple of indices) whose links are shown, or None for all links.
        shown_links: number of lines drawn by the last redraw.
    """

    heads_changed = Signal(tuple)

    def __init__(self, state, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._init_deferred()
        self.state = state
        self.pw = pg.PlotWidget(background="w")
        self.pw.setAcceptDrops(False)
        self.q_axis = TokenAxis("left", max_chars=12)
        self.k_axis = TokenAxis("right", max_chars=12)
        self.plot = self.pw.getPlotItem()
        self.plot.setAxisItems({"left": self.q_axis, "right": self.k_axis})
        self.plot.showAxis("right")
        self.plot.hideAxis("bottom")
        self.plot.hideButtons()
        self.plot.setMenuEnabled(False)
        self.plot.setTitle("queries \u2192 keys", size="9pt")
        self.plot.invertY(True)
        style_plot(self.plot)
        vb = self.plot.getViewBox()
        vb.setMouseEnabled(x=False, y=True)
        vb.setXRange(QUERY_X - 0.02, KEY_X + 0.02, padding=0)
        self.anchors = pg.ScatterPlotItem(size=4, pen=None, brush=pg.mkBrush(120, 120, 120, 160))
        self.focus_dots = pg.ScatterPlotItem(size=9, pen=pg.mkPen("k"), brush=pg.mkBrush(255, 45, 85))
        self.plot.addItem(self.anchors)
        self.plot.addItem(self.focus_dots)
        self.anchors.setZValue(5)
        self.focus_dots.setZValue(6)
        self.path_items: list[list[QGraphicsPathItem]] = []  # [head][bin]
        self.heads_row = QHBoxLayout()
        self.heads_row.addWidget(QLabel("Heads:"))
        self.heads = HeadBoxes()  # wrapped: 12 heads (MiniLM, BERT) never widen the dock
        self.heads.toggled.connect(self.set_head_enabled)
        self.heads_row.addWidget(self.heads)
        self.all_heads_label = QLabel("all heads (ALTI: one matrix per layer)")
        self.all_heads_label.setStyleSheet(f"QLabel {{ color: {ALL_HEADS_COLOUR}; font-weight: bold; }}")
        self.all_heads_label.setVisible(False)
        self.heads_row.addWidget(self.all_heads_label)
        self.heads_row.addStretch(1)
        self.pair_filter = PairLinkFilter()  # a sentence pair: A -> B, B -> A or all links
        self.heads_row.addWidget(self.pair_filter)
        self.pair_filter.changed.connect(self.request_render)
        self.slider = QSlider(Qt.Horizontal)
        self.slider.setRange(0, 100)
        self.slider.setValue(10)
        self.slider.setToolTip("Hide links weaker than this percentage of the strongest link shown")
        self.slider_label = QLabel()
        self.info = ElidedLabel("")  # elided: a long caption never widens the dock
        thr = QHBoxLayout()
        thr.addWidget(QLabel("Threshold:"))
        thr.addWidget(self.slider, 1)
        thr.addWidget(self.slider_label)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addLayout(self.heads_row)
        lay.addLayout(thr)
        lay.addWidget(self.pw, 1)
        lay.addWidget(self.info)
        self.enabled_heads: set[int] = set()
        self.hover: tuple[str, int] | None = None
        self.focus: tuple[str, tuple[int, ...]] | None = None
        self.shown_links = 0
        self._n_heads = 0
        self._tokens_key = None
        self.slider.valueChanged.connect(self._on_slider)
        self._on_slider(self.slider.value())
        self.pw.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self.pw.scene().sigMouseClicked.connect(self._on_click)
        state.events.prediction.connect(lambda *_: self.request_render())
        state.events.layer_head.connect(lambda layer_head: self._on_layer_head(*layer_head))
        state.events.selection.connect(lambda *_: self.request_render())
        state.events.show.connect(self._on_show)
        state.events.flow.connect(lambda *_: self.request_render())
        state.events.info.connect(lambda info: self._make_heads(info.n_heads))

    # -- heads -----------------------------------------------------------------------------
    def _make_heads(self, n_heads: int) -> None:
        if n_heads == self._n_heads:
            return
        for row in self.path_items:
            for item in row:
                self.plot.removeItem(item)
        self.path_items = []
        for h in range(n_heads + 1):  # the heads, then the "all heads" lines of ALTI
            c = head_colour(h) if h < n_heads else QColor(ALL_HEADS_COLOUR)
            row = []
            for b in range(N_OPACITY_BINS):
                item = QGraphicsPathItem()
                col = QColor(c)
                col.setAlphaF((b + 1) / N_OPACITY_BINS)
                pen = QPen(col, 1.0)  # width-1 cosmetic lines take the raster fast path
                pen.setCosmetic(True)
                item.setPen(pen)
                item.setZValue(1 + b / N_OPACITY_BINS)
                self.plot.addItem(item)
                row.append(item)
            self.path_items.append(row)
        self.heads.set_count(n_heads)
        self._n_heads = n_heads
        self.enabled_heads = set(range(n_heads))
        self._sync_head_boxes(self.state.show)

    def _sync_head_boxes(self, show: str) -> None:
        """ALTI has one matrix per layer: the head boxes give way to the "all heads" label (hidden, so the row is no
        wider than either)."""
        self.heads.setVisible(show != "alti")
        self.all_heads_label.setVisible(show == "alti")

    def _on_show(self, show: str) -> None:
        self._sync_head_boxes(show)
        self.request_render()

    def set_head_enabled(self, head: int, on: bool) -> None:
        """Show or hide head ``head``'s links."""
        before = set(self.enabled_heads)
        if on:
            self.enabled_heads.add(head)
        else:
            self.enabled_heads.discard(head)
        self.heads.set_checked(head, on)
        if before != self.enabled_heads:
            self.heads_changed.emit(tuple(sorted(self.enabled_heads)))
            self.request_render()

    def _on_layer_head(self, layer: int, head: int) -> None:
        if head in (MEAN_HEADS, MAX_HEADS):
            wanted = set(range(self._n_heads))
        else:
            wanted = {head}
        for h in range(self._n_heads):
            self.set_head_enabled(h, h in wanted)
        self.request_render()

    # -- threshold / focus -------------------------------------------------------------------
    @property
    def threshold_fraction(self) -> float:
        """Links weaker than this fraction of the strongest candidate link are hidden."""
        return self.slider.value() / 100.0

    def _on_slider(self, v: int) -> None:
        self.slider_label.setText(f"{v:3d} % of max")
        self.request_render()

    def set_hover(self, side: str | None, index: int = -1) -> None:
        """Show only the links of the hovered token: side "query"/"key", or None to stop hovering."""
        new = (side, int(index)) if side is not None and index >= 0 else None
        if new != self.hover:
            self.hover = new
            self.request_render()

    def _pos_to_token(self, scene_pos):
        pred = self.state.prediction
        if pred is None or not self.plot.sceneBoundingRect().contains(scene_pos):
            return None
        pt = self.plot.getViewBox().mapSceneToView(scene_pos)
        i = int(np.floor(pt.y()))
        if not 0 <= i < pred.num_tokens:
            return None
        if pt.x() < 0.2:
            return ("query", i)
        if pt.x() > 0.8:
            return ("key", i)
        return None

    def _on_mouse_moved(self, scene_pos) -> None:
        hit = self._pos_to_token(scene_pos)
        self.set_hover(*(hit if hit else (None, -1)))

    def _on_click(self, ev) -> None:
        if ev.button() != Qt.LeftButton:
            return
        hit = self._pos_to_token(ev.scenePos())
        if hit is not None and hit[0] == "query":
            self.state.select_token(hit[1], additive=bool(ev.modifiers() & Qt.ShiftModifier))

    def token_scene_pos(self, side: str, index: int):
        """Scene position of token ``index`` in column ``side`` ("query" or "key") (for tests)."""
        x = QUERY_X + 0.05 if side == "query" else KEY_X - 0.05
        return self.plot.getViewBox().mapViewToScene(pg.Point(x, index + 0.5))

    # -- drawing -----------------------------------------------------------------------------
    def redraw(self) -> None:
        """Rebuild the per-(head, opacity bin) paths for the current state."""
        pred = self.state.prediction
        if self._n_heads == 0 and pred is not None:
            self._make_heads(pred.attention.shape[1])
        if pred is None:
            self._draw_links({}, np.zeros(0, np.int64), np.zeros(0, np.int64), None, 0.0)
            self.anchors.clear()
            self.focus_dots.clear()
            self.info.setText("")
            return
        layer = min(self.state.layer, pred.attention.shape[0] - 1)
        self._set_tokens(pred)
        T = pred.num_tokens  # a focus outside the tokens (a stale hover or selection) is no focus
        if self.hover is not None and 0 <= self.hover[1] < T:
            side, idx = self.hover
            self.focus = (side, (idx,))
        elif picked := tuple(i for i in self.state.selection if 0 <= i < T):
            self.focus = ("query", picked)
        else:
            self.focus = None
        A, note = shown_heads(self.state, layer)
        if A is None:  # the flow is being computed, or cannot be: no lines, and say why
            self._draw_links({}, np.zeros(0, np.int64), np.zeros(0, np.int64), None, 0.0)
            self.shown_links = 0
            self.focus_dots.clear()
            self.info.setText(f"Layer {layer + 1}: {note}")
            return
        per_head, rows, cols, cap = self.pair_filter.apply(pred, *self._candidates(A))
        wmax = max((float(w.max()) for w in per_head.values() if w.size), default=0.0)
        self.shown_links = self._draw_links(per_head, rows, cols, cap, wmax)
        if self.focus is None:
            self.focus_dots.clear()
            self.focus_dots.setVisible(False)
            what = "all queries"
        else:
            side, idxs = self.focus
            fx = QUERY_X if side == "query" else KEY_X
            self.focus_dots.setData(np.full(len(idxs), fx), np.asarray(idxs) + 0.5)
            self.focus_dots.setVisible(True)
            names = ", ".join(f"\u201c{pred.tokens[i]}\u201d" for i in idxs[:3]) + ("\u2026" if len(idxs) > 3 else "")
            what = f"{side} {names}"
        show = self.state.show
        what += self.pair_filter.caption()
        self.info.setText(
            f"Layer {layer + 1}, {SHOW_TITLES[show]}: {self.shown_links:,} links from {what}; opacity \u221d "
            f"{UNITS[show]} / {wmax:.3g}"
            + (f" (strongest {MAX_LINES_PER_HEAD:,} per head)" if self.focus is None else "")
        )

    def _set_tokens(self, pred) -> None:
        """Axis labels, anchor dots and view range for a new prediction (once per prediction)."""
        T = pred.num_tokens
        key = (id(pred), T)
        if key == self._tokens_key:
            return
        self._tokens_key = key
        self.pair_filter.set_prediction(pred, self.plot)
        self.q_axis.set_tokens(pred.tokens)
        self.k_axis.set_tokens(pred.tokens)
        ys = np.arange(T) + 0.5
        self.anchors.setData(np.r_[np.full(T, QUERY_X), np.full(T, KEY_X)], np.r_[ys, ys])
        vb = self.plot.getViewBox()
        vb.setLimits(yMin=-0.5, yMax=T + 0.5, minYRange=3)
        vb.setRange(xRange=(QUERY_X - 0.02, KEY_X + 0.02), yRange=(0, T), padding=0)

    def _candidates(self, A: np.ndarray):
        """The candidate links of :func:`~desktop_app.views.link_paths.candidate_links` for the current focus."""
        return candidate_links(A, self.state.show, self.enabled_heads, self._n_heads, self.focus)

    def _draw_links(self, per_head: dict, rows: np.ndarray, cols: np.ndarray, cap: int | None, wmax: float) -> int:
        """Set the paths to the links above the threshold (:func:`~desktop_app.views.link_paths.draw_links`)."""
        return draw_links(self.path_items, per_head, rows, cols, cap, wmax, self.threshold_fraction)

    def export_item(self):
        """The graphics scene that PNG/SVG export should render."""
        return self.pw.scene()

    def showEvent(self, event) -> None:
        """Render if the state changed while hidden."""
        super().showEvent(event)
        self._deferred_show()
