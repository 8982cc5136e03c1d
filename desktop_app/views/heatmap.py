"""The attention heatmap: query x key matrix of the selected layer and head (pyqtgraph ImageItem + ColorBarItem).

Rows are query tokens i (top to bottom), columns key tokens j (left to
right); the value is what the state's "Show" selector picks (:func:`desktop_app.views.shown.shown_matrix`):
the attention weights ``attention[l, h, i, j]`` (each row sums to 1), the value-weighted norms
||alpha_ij f(x_j)|| or the layer's ALTI contributions; the colour bar is labelled with its unit. While a flow is
being computed (or cannot be), the image is cleared and the title says why: never a stale picture. Token tick
labels are decimated so they stay legible at 512 tokens and all appear when zoomed in. Mouse wheel zooms, drag
pans; clicking a cell selects its query token (Shift-click adds to the selection). The "Causal what-if" switch
(``state.causal``, shared with the attention steps) shows the matrix a decoder's causal mask would give
(:func:`desktop_app.views.shown.causal_shown`), the masked keys j > i greyed: a lesson, labelled as one.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainterPath, QPen, QPolygonF
from PySide6.QtWidgets import QCheckBox, QComboBox, QGraphicsPathItem, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from model.attention.lessons import CAUSAL_NOTE

from .colours import HEATMAP_CMAP, colormap
from ..state import MAX_HEADS, MEAN_HEADS, SHOW_ATTENTION
from .heads import head_name
from .shown import Shown, causal_shown, shown_matrix
from .pair_marks import pair_lines
from .render import DeferredRender
from .selectors import LayerHeadSelector
from .widgets import ElidedLabel, TokenAxis, style_plot


class AttentionHeatmap(DeferredRender, QWidget):
    """Query x key heatmap for ``state.layer`` and ``state.head`` with a colour bar.

    Attributes:
        image_item: the ``pg.ImageItem``; ``image_item.image`` is the float32 [T, T]
            matrix on display (exactly ``prediction.attention[l, h]`` for a single head, ``flow.matrices[l, h]``
            for a head's value-weighted norms, ``flow.matrices[l]`` for ALTI; the causal what-if's while ``state.causal``
            is on); None when nothing is shown.
        causal_check: the "Causal what-if" switch (``state.causal``); causal_item: the grey over the masked keys.
        colorbar: the ``pg.ColorBarItem`` (drag it to change the colour range); its left axis label is the unit.
        shown: the :class:`desktop_app.views.shown.Shown` on display, or None.
    """

    def __init__(self, state, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._init_deferred()
        self.state = state
        self.glw = pg.GraphicsLayoutWidget()
        self.glw.setBackground("w")
        self.glw.setAcceptDrops(False)
        self.x_axis = TokenAxis("bottom", max_chars=12)  # "recommend", "emotional" whole (issue 46)
        self.y_axis = TokenAxis("left", max_chars=12)
        self.plot = self.glw.addPlot(row=0, col=0, axisItems={"bottom": self.x_axis, "left": self.y_axis})
        self.plot.setLabel("bottom", "key token j")
        self.plot.setLabel("left", "query token i")
        self.plot.invertY(True)
        style_plot(self.plot)
        self.plot.setAspectLocked(False)
        self.plot.hideButtons()
        self.plot.setMenuEnabled(False)
        vb = self.plot.getViewBox()
        vb.setMouseMode(pg.ViewBox.PanMode)
        self.image_item = pg.ImageItem(axisOrder="row-major")
        self.image_item.setAutoDownsample(True)
        self.plot.addItem(self.image_item)
        self.colorbar = pg.ColorBarItem(
            values=(0.0, 1.0), colorMap=colormap(HEATMAP_CMAP), label="attention weight", width=15
        )
        self.colorbar.setImageItem(self.image_item, insert_in=self.plot)
        # token indices and weights in [0, 1] need no SI prefix ("(x0.001)" on an empty plot)
        for axis in (self.x_axis, self.y_axis, self.colorbar.axis):
            axis.enableAutoSIPrefix(False)
        self.selection_item = QGraphicsPathItem()
        pen = QPen(QColor("#ff2d55"), 2.0)
        pen.setCosmetic(True)
        self.selection_item.setPen(pen)
        self.selection_item.setBrush(QBrush(Qt.NoBrush))
        self.selection_item.setZValue(10)
        self.plot.addItem(self.selection_item)
        self.causal_item = QGraphicsPathItem()  # grey over the keys a causal mask removes (j > i)
        self.causal_item.setPen(QPen(Qt.NoPen))
        self.causal_item.setBrush(QBrush(QColor(128, 128, 128, 150)))
        self.causal_item.setZValue(5)
        self.plot.addItem(self.causal_item)
        self.title = ElidedLabel("")  # long flow captions are elided: they never widen the dock
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        top = QHBoxLayout()
        self.selector = LayerHeadSelector(state, self)
        self.layer_combo, self.head_combo = self.selector.layer_combo, self.selector.head_combo
        self.show_combo = self.selector.show_combo
        for combo in (self.layer_combo, self.head_combo, self.show_combo):
            combo.setSizeAdjustPolicy(QComboBox.AdjustToContents)
        self.head_combo.setMinimumContentsLength(13)
        top.addWidget(self.layer_combo)
        top.addWidget(self.head_combo)
        top.addWidget(self.show_combo)
        self.causal_check = QCheckBox("Causal what-if")
        self.causal_check.setToolTip(f"Causal mask (decoder what-if): {CAUSAL_NOTE}")
        self.causal_check.toggled.connect(state.set_causal)
        top.addWidget(self.causal_check)
        top.addStretch(1)
        lay.addLayout(top)
        lay.addWidget(self.title)  # a row of its own: the whole width for "Layer 2, mean of heads: ..."
        lay.addWidget(self.glw, 1)
        self.causal_label = QLabel(f"<i>Causal mask (decoder what-if)</i>: {CAUSAL_NOTE}; grey keys (j > i) are masked.")
        self.causal_label.setWordWrap(True)
        self.causal_label.setVisible(False)
        lay.addWidget(self.causal_label)
        self.matrix: np.ndarray | None = None
        self.shown: Shown | None = None
        self._layer = 0
        self._tokens_key = None
        self._pair_lines: list = []  # the dashed lines at a sentence pair's second text
        self.glw.scene().sigMouseClicked.connect(self._on_click)
        self.glw.scene().sigMouseMoved.connect(self._on_hover)
        self.hover_label = QLabel("")
        lay.addWidget(self.hover_label)
        state.events.prediction.connect(self._on_prediction)
        for sig in (state.events.layer_head, state.events.show, state.events.flow, state.events.causal):
            sig.connect(lambda *_: self.request_render())
        state.events.selection.connect(lambda *_: self._draw_selection())

    def _on_prediction(self, pred) -> None:
        self.request_render()

    def redraw(self) -> None:
        """Show the matrix of the current layer/head under the "Show" choice (and reset the view when the tokens
        changed); without a matrix (no prediction, a flow being computed or failed) clear the image, note why."""
        pred = self.state.prediction
        self.causal_check.blockSignals(True)
        self.causal_check.setChecked(self.state.causal)
        self.causal_check.blockSignals(False)
        self.causal_label.setVisible(self.state.causal)
        shown = causal_shown(self.state, shown_matrix(self.state))
        self.colorbar.getAxis("left").setLabel(shown.units)
        self.shown = shown if shown.matrix is not None else None
        if pred is None or shown.matrix is None:
            self.image_item.clear()
            self.colorbar.setLevels((0.0, 1.0))  # not the "0 ... 0" bar of an empty image
            self.matrix = None
            self.hover_label.setText("")
            self.title.setText("" if pred is None else f"{shown.caption}: {shown.note}")
            self._draw_selection()
            self.causal_item.setPath(QPainterPath())
            return
        self._layer = min(self.state.layer, pred.attention.shape[0] - 1)
        m = shown.matrix
        self.matrix = m
        hi = float(m.max()) if m.size else 1.0
        self.image_item.setImage(m, autoLevels=False)
        self.colorbar.setLevels((0.0, hi if hi > 0 else 1.0))
        T = m.shape[0]
        key = (id(pred), T)
        if key != self._tokens_key:
            self._tokens_key = key
            self.x_axis.set_tokens(pred.tokens)
            self.y_axis.set_tokens(pred.tokens)
            self.image_item.setRect(QRectF(0, 0, T, T))
            vb = self.plot.getViewBox()
            vb.setLimits(xMin=-0.5, xMax=T + 0.5, yMin=-0.5, yMax=T + 0.5, minXRange=2, minYRange=2)
            self.plot.setRange(xRange=(0, T), yRange=(0, T), padding=0)
            self._pair_lines = pair_lines(self.plot, self._pair_lines, pred)  # a pair's 2nd text
        rows = ", rows sum to 1" if shown.rows_sum_to_one else f", max {hi:.3g}"
        self.title.setText(f"{shown.caption} \u2014 {T} \u00d7 {T}{rows}")
        self._draw_selection()
        self.causal_item.setPath(_upper_triangle(T) if self.state.causal else QPainterPath())

    def alpha(self, query: int, key: int) -> float:
        """The attention weight alpha_ij behind cell (query i, key j) of the shown layer and head choice (ALTI, one
        matrix per layer: the mean of the heads' weights)."""
        a = self.state.prediction.attention[self._layer, :, query, key]  # (H,)
        head = self.state.head if self.state.show != "alti" else MEAN_HEADS
        if head == MEAN_HEADS:
            return float(a.mean())
        return float(a.max()) if head == MAX_HEADS else float(a[head])

    def describe_cell(self, query: int, key: int) -> str:
        """The hover text of cell (query i, key j): the tokens, the value shown with its unit, and alpha_ij beside a
        flow."""
        pred, shown = self.state.prediction, self.shown
        text = (f"query {query} \u201c{pred.tokens[query]}\u201d \u2192 key {key} \u201c{pred.tokens[key]}\u201d: "
                f"{shown.units} {float(self.matrix[query, key]):.4f}")
        if self.state.show != SHOW_ATTENTION:
            head = MEAN_HEADS if self.state.show == "alti" else self.state.head
            which = f" ({head_name(head)})" if head < 0 else ""
            text += f"; attention weight \u03b1 {self.alpha(query, key):.4f}{which}"
        if self.state.causal and key > query:
            text += " (masked by the causal what-if)"
        return text

    def _draw_selection(self) -> None:
        path = QPainterPath()
        pred = self.state.prediction
        if pred is not None:
            T = pred.num_tokens
            for i in self.state.selection:
                if 0 <= i < T:
                    path.addRect(QRectF(0, i, T, 1))
        self.selection_item.setPath(path)

    def _on_click(self, ev) -> None:
        if ev.button() != Qt.LeftButton or self.matrix is None:
            return
        vb = self.plot.getViewBox()
        if not vb.sceneBoundingRect().contains(ev.scenePos()):
            return
        pt = vb.mapSceneToView(ev.scenePos())
        self.click_cell(int(np.floor(pt.y())), int(np.floor(pt.x())), bool(ev.modifiers() & Qt.ShiftModifier))

    def _on_hover(self, scene_pos) -> None:
        pred = self.state.prediction
        vb = self.plot.getViewBox()
        if self.matrix is None or pred is None or not vb.sceneBoundingRect().contains(scene_pos):
            self.hover_label.setText("")
            return
        pt = vb.mapSceneToView(scene_pos)
        i, j = int(np.floor(pt.y())), int(np.floor(pt.x()))
        T = self.matrix.shape[0]
        if 0 <= i < T and 0 <= j < T:
            self.hover_label.setText(self.describe_cell(i, j))

    def click_cell(self, query: int, key: int, additive: bool = False) -> None:
        """Act as if cell (query i, key j) was clicked: select query token i."""
        if self.matrix is None:
            return
        T = self.matrix.shape[0]
        if 0 <= query < T and 0 <= key < T:
            self.state.select_token(query, additive=additive)

    def cell_scene_pos(self, query: int, key: int):
        """Scene position of the centre of cell (query, key) (for tests)."""
        return self.plot.getViewBox().mapViewToScene(pg.Point(key + 0.5, query + 0.5))

    def export_item(self):
        """The graphics item that PNG/SVG export should render (the whole layout)."""
        return self.glw.scene()

    def showEvent(self, event) -> None:
        """Render if the state changed while hidden."""
        super().showEvent(event)
        self._deferred_show()


def _upper_triangle(T: int) -> QPainterPath:
    """The cells (query i, key j > i) of a T x T heatmap (row i spans y in [i, i + 1]) as one staircase polygon."""
    path = QPainterPath()
    if T < 2:
        return path
    pts = [(1.0, 0.0), (float(T), 0.0), (float(T), T - 1.0)]
    for i in range(T - 2, -1, -1):
        pts += [(i + 2.0, i + 1.0), (i + 1.0, i + 1.0)]
    path.addPolygon(QPolygonF([QPointF(x, y) for x, y in pts]))
    path.closeSubpath()
    return path
