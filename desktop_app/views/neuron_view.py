"""The neuron view: the query and key vectors behind one attention row (after bertviz's neuron view).

For the selected layer, head and query token i it shows, top to bottom and left to right:

* the query vector q_i (1 x d_head), above the key vectors k_j of every token (T x d_head);
* the elementwise product q_i * k_j (T x d_head): its row sums are the dot products;
* the scaled dot product q_i . k_j / sqrt(d_head) per key (bars): the attention logit;
* the softmax of those logits (bars): the attention row ``attention[layer, head, i]``;
* beside it, ||f(x_j)|| (bars): the norm of key j's value vector as the head writes it into the residual stream
  (f^h(x) = (x W_V + b_V)^h W_O^h, Kobayashi et al. 2020; ``state.value_norms``), so a large weight on a small
  vector shows; hovering a key gives alpha_ij, ||f(x_j)|| and their product ||alpha_ij f(x_j)||.

Source: Vaswani et al. 2017, section 3.2.1, equation 1; the layout follows Vig 2019 ("A Multiscale
Visualization of Attention in the Transformer Model", bertviz's neuron view).

The numbers come from :class:`model.records.internals.AttentionInternals` in the explorer state (computed on a
worker, :mod:`desktop_app.workers.internals`); the view never imports torch. Hover shows values;
clicking a key row selects that token in every view.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QGraphicsRectItem, QLabel, QVBoxLayout, QWidget

from .colours import DIVERGING_CMAP, colormap
from .heads import head_name
from .render import DeferredRender
from .shown import head_value_norms
from .widgets import FittedValueAxis, TokenAxis, style_plot

BAR_BRUSH = "#4c72b0"
SOFTMAX_BRUSH = "#dd8452"
NORM_BRUSH = "#55a868"
NORM_TITLE = "\u2016f(x<sub>j</sub>)\u2016"
VISIBLE_KEYS = 40  # key rows shown at once; a new query scrolls to its most attended key


def _image_plot(glw, row: int, col: int, title: str, left_axis=None):
    plot = glw.addPlot(row=row, col=col, axisItems={"left": left_axis} if left_axis is not None else None)
    plot.setTitle(title, size="9pt")
    style_plot(plot)
    plot.hideButtons()
    plot.setMenuEnabled(False)
    plot.setMouseEnabled(x=False, y=True)
    for name in ("left", "bottom"):
        plot.getAxis(name).enableAutoSIPrefix(False)
    img = pg.ImageItem(axisOrder="row-major")
    img.setLookupTable(colormap(DIVERGING_CMAP).getLookupTable(0.0, 1.0, 256))
    plot.addItem(img)
    return plot, img


def _symmetric_levels(a: np.ndarray) -> tuple[float, float]:
    m = float(np.max(np.abs(a))) if a.size else 1.0
    m = m if m > 0 else 1.0
    return -m, m


class NeuronView(DeferredRender, QWidget):
    """q_i, every k_j, q_i * k_j, the scaled dot products and their softmax (see the module docstring).

    Attributes:
        key_image / product_image: ``pg.ImageItem`` of k_j (T x d) and q_i * k_j (T x d).
        query_image: ``pg.ImageItem`` of q_i (1 x d).
        score_bars / weight_bars: ``pg.BarGraphItem`` of q_i . k_j / sqrt(d) and the softmax row.
        norm_bars: ``pg.BarGraphItem`` of ||f(x_j)|| (float32 [T] widths; empty while the value norms are missing).
        shown: ``(internals, head, query)`` on display, or None.
        value_norms: float32 [T] ||f(x_j)|| of the shown head, or None.
    """

    def __init__(self, state, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._init_deferred()
        self.state = state
        self.shown = None
        self.value_norms: np.ndarray | None = None
        self._key_cache = None
        self.title = QLabel("Analyse a review to see the query and key vectors behind an attention row.")
        self.title.setWordWrap(True)
        self.hover_label = QLabel("")
        self.glw = pg.GraphicsLayoutWidget()
        self.glw.setBackground("w")
        self.glw.setAcceptDrops(False)
        self.y_axis = TokenAxis("left", max_chars=10)
        self.query_plot, self.query_image = _image_plot(self.glw, 0, 0, "query q<sub>i</sub>")
        self.query_plot2, self.query_image2 = _image_plot(self.glw, 0, 1, "q<sub>i</sub>, multiplied into every k<sub>j</sub>")
        self.key_plot, self.key_image = _image_plot(self.glw, 1, 0, "keys k<sub>j</sub>", self.y_axis)
        self.product_plot, self.product_image = _image_plot(self.glw, 1, 1, "q<sub>i</sub> \u2299 k<sub>j</sub>")
        self.score_plot = self.glw.addPlot(row=1, col=2, title="q<sub>i</sub>\u00b7k<sub>j</sub> / \u221ad",
                                           axisItems={"bottom": FittedValueAxis("bottom")})
        self.weight_plot = self.glw.addPlot(row=1, col=3, title="softmax",
                                            axisItems={"bottom": FittedValueAxis("bottom")})
        self.norm_plot = self.glw.addPlot(row=1, col=4, title=NORM_TITLE,
                                          axisItems={"bottom": FittedValueAxis("bottom")})
        for plot in (self.score_plot, self.weight_plot, self.norm_plot):
            style_plot(plot)
            plot.hideButtons()
            plot.setMenuEnabled(False)
            plot.setMouseEnabled(x=False, y=True)
            plot.hideAxis("left")  # rows are the key tokens of the plot on the left; fewer axes paint faster
            plot.getAxis("bottom").enableAutoSIPrefix(False)
        self.query_plot.getAxis("left").setStyle(showValues=False)
        self.query_plot.getAxis("left").setWidth(self.y_axis.width())
        for plot in (self.query_plot, self.query_plot2):
            plot.setMouseEnabled(x=False, y=False)
        for plot in (self.query_plot2, self.product_plot):
            plot.hideAxis("left")
        for plot in (self.key_plot, self.product_plot, self.score_plot, self.weight_plot, self.norm_plot):
            plot.invertY(True)
            if plot is not self.key_plot:
                plot.setYLink(self.key_plot)
        self.query_plot.setXLink(self.key_plot)
        self.query_plot2.setXLink(self.product_plot)
        self.score_bars = pg.BarGraphItem(x0=[], y0=[], width=[], height=[], brush=BAR_BRUSH, pen=None)
        self.weight_bars = pg.BarGraphItem(x0=[], y0=[], width=[], height=[], brush=SOFTMAX_BRUSH, pen=None)
        self.norm_bars = pg.BarGraphItem(x0=[], y0=[], width=[], height=[], brush=NORM_BRUSH, pen=None)
        self.query_marker = QGraphicsRectItem()
        pen = QPen(QColor("#2ca02c"), 2.0)
        pen.setCosmetic(True)
        self.query_marker.setPen(pen)
        self.query_marker.setZValue(10)
        self.key_plot.addItem(self.query_marker)
        self.score_plot.addItem(self.score_bars)
        self.weight_plot.addItem(self.weight_bars)
        self.norm_plot.addItem(self.norm_bars)
        self.glw.ci.layout.setRowStretchFactor(0, 1)
        self.glw.ci.layout.setRowStretchFactor(1, 12)
        for col, factor in enumerate((4, 4, 2, 2, 2)):
            self.glw.ci.layout.setColumnStretchFactor(col, factor)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(self.title)
        lay.addWidget(self.glw, 1)
        lay.addWidget(self.hover_label)
        self.glw.scene().sigMouseMoved.connect(self._on_hover)
        self.glw.scene().sigMouseClicked.connect(self._on_click)
        state.events.internals.connect(lambda *_: self.request_render())
        state.events.prediction.connect(lambda *_: self.request_render())
        state.events.layer_head.connect(lambda *_: self.request_render())
        state.events.selection.connect(lambda *_: self.request_render())
        state.events.value_norms.connect(lambda *_: self.request_render())

    # -- drawing -------------------------------------------------------------------------------------------------
    def redraw(self) -> None:
        """Draw the current state's internals (selected head; mean/max of heads shows head 1)."""
        x = self.state.current_internals()
        if x is None:
            self.shown = None
            if self.state.prediction is None:  # nothing is current (e.g. another model is loading): draw nothing
                self._clear()
            self.title.setText("Computing the query and key vectors\u2026" if self.state.prediction is not None
                               else "Analyse a review to see the query and key vectors behind an attention row.")
            return
        head = max(self.state.head, 0)
        query = self.state.selection[0] if self.state.selection else 0
        self.set_data(x, head, query, head_value_norms(self.state, x.layer, head, x.num_tokens))
        if self.state.head < 0:
            self.title.setText(self.title.text() + f" (the neuron view needs one head: {head_name(self.state.head)}"
                                                   " is shown as head 1)")

    def _clear(self) -> None:
        """Empty every plot (no internals on display)."""
        for img in (self.query_image, self.query_image2, self.key_image, self.product_image):
            img.clear()
        self.value_norms = None
        for bars in (self.score_bars, self.weight_bars, self.norm_bars):
            bars.setOpts(x0=[], y0=[], width=[], height=[])
        self.query_marker.setRect(QRectF())
        self.y_axis.set_tokens([])
        self._key_cache = None
        self.hover_label.setText("")

    def set_data(self, internals, head: int, query: int, value_norms=None) -> None:
        """Show head ``head`` (0-based) and query token ``query`` of ``internals`` (an AttentionInternals);
        ``value_norms``: float32 [T] ||f(x_j)|| of that head for every key j, or None (not computed yet).

        Raises:
            IndexError: ``head`` or ``query`` out of range.
        """
        H, T, d = internals.queries.shape
        if not (0 <= head < H and 0 <= query < T):
            raise IndexError(f"head {head} / query {query} out of range ({H} heads, {T} tokens)")
        q = internals.queries[head, query]  # (d,)
        keys = internals.keys[head]  # (T, d)
        key = (id(internals), head)
        if key != self._key_cache:
            self._key_cache = key
            self.key_image.setImage(keys, levels=_symmetric_levels(keys))
            self.key_image.setRect(QRectF(0, 0, d, T))
            self.y_axis.set_tokens(list(internals.tokens))
            self.key_plot.setLimits(yMin=-0.5, yMax=T + 0.5)
            self.key_plot.setRange(xRange=(0, d), yRange=(0, min(T, VISIBLE_KEYS)), padding=0)
            self.product_plot.setRange(xRange=(0, d), padding=0)
        product = keys * q  # (T, d)
        self.query_image.setImage(q[None, :], levels=_symmetric_levels(q))
        self.query_image.setRect(QRectF(0, 0, d, 1))
        self.query_image2.setImage(q[None, :], levels=_symmetric_levels(q))
        self.query_image2.setRect(QRectF(0, 0, d, 1))
        self.product_image.setImage(product, levels=_symmetric_levels(product))
        self.product_image.setRect(QRectF(0, 0, d, T))
        scores = internals.scores[head, query]  # (T,)
        weights = internals.weights(head, query)  # (T,)
        finite = np.where(np.isfinite(scores), scores, 0.0)
        y0 = np.arange(T, dtype=np.float64) + 0.1
        self.score_bars.setOpts(x0=np.minimum(finite, 0), y0=y0, width=np.abs(finite), height=0.8)
        self.weight_bars.setOpts(x0=np.zeros(T), y0=y0, width=weights, height=0.8)
        self.score_plot.setXRange(min(0.0, float(finite.min())), max(0.0, float(finite.max())) or 1.0, padding=0.05)
        self.weight_plot.setXRange(0.0, max(float(weights.max()), 1e-6), padding=0.05)
        self._set_norms(value_norms, T, y0)
        self.query_marker.setRect(QRectF(0, query, d, 1))
        if T > VISIBLE_KEYS:  # scroll to the key this query attends to most
            top = int(np.clip(int(np.argmax(weights)) - VISIBLE_KEYS // 2, 0, T - VISIBLE_KEYS))
            self.key_plot.setYRange(top, top + VISIBLE_KEYS, padding=0)
        self.shown = (internals, head, query)
        extra = f"; scores also add {internals.extra_score_terms}" if internals.extra_score_terms else ""
        self.title.setText(
            f"Layer {internals.layer + 1}, head {head + 1}, query {query} \u201c{internals.tokens[query]}\u201d: "
            f"score(j) = q\u1d62\u00b7k\u2c7c / \u221a{d} = \u03a3 (q\u1d62 \u2299 k\u2c7c) / {np.sqrt(d):.3g}{extra}; "
            "the softmax of the scores is the attention row (green box: the query's own key). Click a key to select it."
        )

    def _set_norms(self, value_norms, T: int, y0: np.ndarray) -> None:
        """The ||f(x_j)|| bars (float32 [T]), or none and a "\u2014" in the title while they are missing."""
        if value_norms is None or len(value_norms) != T:
            self.value_norms = None
            self.norm_bars.setOpts(x0=[], y0=[], width=[], height=[])
            self.norm_plot.setTitle(NORM_TITLE + " \u2014", size="9pt")
            return
        self.value_norms = np.asarray(value_norms, np.float32)
        self.norm_bars.setOpts(x0=np.zeros(T), y0=y0, width=self.value_norms, height=0.8)
        self.norm_plot.setXRange(0.0, max(float(self.value_norms.max()), 1e-6), padding=0.05)
        self.norm_plot.setTitle(NORM_TITLE, size="9pt")

    # -- interaction ---------------------------------------------------------------------------------------------
    def _key_under(self, scene_pos) -> tuple[int, int | None] | None:
        """(key j, vector component or None) under a scene position in the key/product/score/softmax plots."""
        if self.shown is None:
            return None
        internals = self.shown[0]
        T, d = internals.num_tokens, internals.d_head
        for plot, has_dims in ((self.key_plot, True), (self.product_plot, True), (self.score_plot, False),
                               (self.weight_plot, False), (self.norm_plot, False)):
            vb = plot.getViewBox()
            if vb.sceneBoundingRect().contains(scene_pos):
                pt = vb.mapSceneToView(scene_pos)
                j = int(np.floor(pt.y()))
                c = int(np.floor(pt.x())) if has_dims else None
                if 0 <= j < T and (c is None or 0 <= c < d):
                    return j, c
        return None

    def describe(self, key: int, component: int | None = None) -> str:
        """The hover text for key ``key`` (and vector component ``component``)."""
        internals, head, query = self.shown
        s = float(internals.scores[head, query, key])
        w = float(internals.weights(head, query)[key])
        text = f"key {key} \u201c{internals.tokens[key]}\u201d: score {s:.4f}, weight \u03b1 {w:.4f}"
        if self.value_norms is not None:
            n = float(self.value_norms[key])
            text += f", \u2016f(x\u2c7c)\u2016 {n:.4f}, \u2016\u03b1 f(x\u2c7c)\u2016 {w * n:.4f}"
        else:
            text += ", \u2016f(x\u2c7c)\u2016 \u2014 (not computed yet)"
        if component is not None:
            q = float(internals.queries[head, query, component])
            k = float(internals.keys[head, key, component])
            text += f" \u2014 component {component}: q {q:.4f} \u00d7 k {k:.4f} = {q * k:.4f}"
        return text

    def _on_hover(self, scene_pos) -> None:
        hit = self._key_under(scene_pos)
        self.hover_label.setText(self.describe(*hit) if hit is not None else "")

    def _on_click(self, ev) -> None:
        if ev.button() != Qt.LeftButton:
            return
        hit = self._key_under(ev.scenePos())
        if hit is not None:
            self.click_key(hit[0])

    def click_key(self, key: int) -> None:
        """Select token ``key`` in every view (as a click on its row does)."""
        self.state.select_token(key)

    def key_scene_pos(self, key: int, plot=None):
        """Scene position of the middle of key ``key``'s row in ``plot`` (default: the score bars; for tests)."""
        plot = plot or self.score_plot
        vb = plot.getViewBox()
        x0, x1 = vb.viewRange()[0]
        return vb.mapViewToScene(pg.Point((x0 + x1) / 2, key + 0.5))

    def export_item(self):
        """The graphics scene, for PNG/SVG export."""
        return self.glw.scene()

    def showEvent(self, event) -> None:
        """Render if the state changed while hidden."""
        super().showEvent(event)
        self._deferred_show()
