"""Attention step by step: how one attention row and the head's output are computed, with their numbers.

For the selected layer, head and query token i, in the teaching order of the classic material
(Vaswani et al. 2017, equation 1; the NYU "Attention and the Transformer" lecture; chapter 3 of
Raschka, "Build a Large Language Model (From Scratch)"):

1. raw scores q_i . k_j, 2. scaled by 1/sqrt(d_k), 3. masked (padded keys -> -inf),
4. softmax -> weights w_j, 5. weighted value vectors w_j v_j, 6. their sum: the head's output o_i.

Steps 1-4 are a table (one row per key; the top keys by weight when the text is long), steps 5-6 are
heatmaps of the vectors. Numbers come from :meth:`model.internals.AttentionInternals.steps`. Beside the weight w_j
the table shows ||f(x_j)||, the norm of key j's value vector as the head writes it into the residual stream
(f^h(x) = (x W_V + b_V)^h W_O^h, Kobayashi et al. 2020; ``state.value_norms``), and w_j ||f(x_j)||, how much
of it the head actually moves: a large weight on a small vector moves little. "\u2014" until they are computed.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from .colours import DIVERGING_CMAP, colormap
from .render import DeferredRender
from .shown import head_value_norms
from .widgets import TokenAxis, fit_table_height, style_plot

TOP_K = 12  # keys listed when the text has more tokens than this
STEPS_HTML = (
    "<b>Attention(Q, K, V) = softmax(Q K<sup>T</sup> / \u221ad<sub>k</sub>) V</b> (Vaswani et al. 2017, eq. 1)<ol>"
    "<li>raw score: the dot product q<sub>i</sub>\u00b7k<sub>j</sub> of the query with each key;</li>"
    "<li>scaled: divided by \u221ad<sub>k</sub>, so the softmax does not saturate as d<sub>k</sub> grows;</li>"
    "<li>masked: padding keys set to \u2212\u221e (weight 0);</li>"
    "<li>softmax: w<sub>j</sub> = e<sup>s<sub>j</sub></sup> / \u03a3 e<sup>s<sub>k</sub></sup>, the attention row "
    "(sums to 1);</li>"
    "<li>each value vector v<sub>j</sub> is scaled by its weight w<sub>j</sub>;</li>"
    "<li>their sum is the head's output o<sub>i</sub> for token i.</li></ol>"
)
COLUMNS = ("key j", "token", "1. q\u1d62\u00b7k\u2c7c", "2. \u00f7 \u221ad", "3. masked", "4. softmax w\u2c7c",
           "\u2016f(x\u2c7c)\u2016", "w\u2c7c\u00b7\u2016f(x\u2c7c)\u2016")
NORM_TIPS = {
    6: "\u2016f(x\u2c7c)\u2016: the norm of key j's value vector as this head writes it into the residual stream, "
       "f(x) = (x W_V + b_V) W_O (Kobayashi et al. 2020)",
    7: "w\u2c7c\u00b7\u2016f(x\u2c7c)\u2016 = \u2016w\u2c7c f(x\u2c7c)\u2016: how much of key j this head actually "
       "moves "
       "into the query (a large weight on a small vector moves little)",
}
NO_NORM = "\u2014"  # the norm columns before the value norms are computed


def _fmt(v: float) -> str:
    return "\u2212\u221e" if np.isneginf(v) else f"{v:.4f}"


def _norm_cells(st, value_norms) -> list[tuple[str, str]]:
    """The ||f(x_j)|| and w_j ||f(x_j)|| cells of each listed key, then of the other keys (blank, their total).

    Args:
        st: :class:`model.internals.AttentionSteps` (``keys`` [k], ``weights`` [T]).
        value_norms: float32 [T] ||f(x_j)||, or None ("\u2014" in every cell).
    """
    keys = [int(j) for j in st.keys]
    if value_norms is None or len(value_norms) != len(st.weights):
        return [(NO_NORM, NO_NORM)] * (len(keys) + 1)
    moved = np.asarray(st.weights, np.float64) * np.asarray(value_norms, np.float64)  # [T]
    rest = float(moved.sum() - moved[keys].sum())
    return [(f"{float(value_norms[j]):.4f}", f"{moved[j]:.4f}") for j in keys] + [("", f"{rest:.4f}")]


class AttentionStepsView(DeferredRender, QWidget):
    """The six steps of one attention row for the selected layer, head and query (see the module docstring).

    Attributes:
        table: steps 1-4, one row per key shown (+ one row for the other keys' total weight).
        weighted_image / output_image: ``pg.ImageItem`` of w_j v_j (k x d_head) and o_i (1 x d_head).
        steps: the :class:`model.internals.AttentionSteps` on display, or None.
        highlighted_row: the table row highlighted as the selected key's (:meth:`highlight_key`), or None.
    """

    def __init__(self, state, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._init_deferred()
        self.state = state
        self.steps = None
        self.internals = None
        self.title = QLabel("Analyse a review to see how an attention row is computed.")
        self.title.setWordWrap(True)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        for c, tip in NORM_TIPS.items():
            self.table.horizontalHeaderItem(c).setToolTip(tip)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        # no Qt selection: it stayed on a row number while the rows were rebuilt for another query; the one
        # highlight is the selected key's row (highlight_key)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.highlighted_row: int | None = None
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 4)
        self.table.itemDoubleClicked.connect(self._on_double_click)
        self.glw = pg.GraphicsLayoutWidget()
        self.glw.setBackground("w")
        self.glw.setAcceptDrops(False)
        self.key_axis = TokenAxis("left", max_chars=10)
        self.weighted_plot = self.glw.addPlot(row=0, col=0, axisItems={"left": self.key_axis},
                                              title="5. weighted values w\u2c7c v\u2c7c (keys shown)")
        self.output_plot = self.glw.addPlot(row=1, col=0, title="6. head output o\u1d62 = \u03a3\u2c7c w\u2c7c v\u2c7c")
        self.weighted_image = pg.ImageItem(axisOrder="row-major")
        self.output_image = pg.ImageItem(axisOrder="row-major")
        lut = colormap(DIVERGING_CMAP).getLookupTable(0.0, 1.0, 256)
        for plot, img in ((self.weighted_plot, self.weighted_image), (self.output_plot, self.output_image)):
            style_plot(plot)
            plot.hideButtons()
            plot.setMenuEnabled(False)
            plot.setMouseEnabled(x=False, y=False)
            plot.getAxis("bottom").enableAutoSIPrefix(False)
            img.setLookupTable(lut)
            plot.addItem(img)
        self.weighted_plot.invertY(True)
        self.output_plot.getAxis("left").setStyle(showValues=False)
        self.output_plot.getAxis("left").setWidth(self.key_axis.width())
        self.output_plot.setXLink(self.weighted_plot)
        self.glw.ci.layout.setRowStretchFactor(0, 5)
        self.glw.ci.layout.setRowStretchFactor(1, 1)
        self.output_label = QLabel("")
        self.output_label.setWordWrap(True)
        self.hover_label = QLabel("")
        self.glw.scene().sigMouseMoved.connect(self._on_hover)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(self.title)
        explain = QLabel(STEPS_HTML)
        explain.setWordWrap(True)
        top = QHBoxLayout()
        top.addWidget(self.table)
        top.addWidget(explain, 1)
        lay.addLayout(top)
        lay.addWidget(self.glw, 1)
        lay.addWidget(self.output_label)
        lay.addWidget(self.hover_label)
        for sig in (state.internals_changed, state.prediction_changed, state.layer_head_changed,
                    state.selection_changed, state.value_norms_changed):
            sig.connect(lambda *_: self.request_render())

    def redraw(self) -> None:
        """Show the steps for the state's layer, head (mean/max: head 1) and first selected token (else 0)."""
        x = self.state.current_internals()
        if x is None:
            self.steps = None
            if self.state.prediction is None:  # nothing is current (e.g. another model is loading): show nothing
                self._clear()
            self.title.setText("Computing\u2026" if self.state.prediction is not None
                               else "Analyse a review to see how an attention row is computed.")
            return
        selected = self.state.selection[0] if self.state.selection else None
        head = max(self.state.head, 0)
        norms = head_value_norms(self.state, x.layer, head, x.num_tokens)
        self.set_data(x, head, selected if selected is not None else 0, value_norms=norms)
        self.highlight_key(selected)

    def _clear(self) -> None:
        """Empty the table and the plots (no internals on display)."""
        self.table.setRowCount(0)
        self.highlighted_row = None
        for img in (self.weighted_image, self.output_image):
            img.clear()
        self.key_axis.set_tokens([])
        self.output_label.setText("")
        self.hover_label.setText("")

    def highlight_key(self, key: int | None) -> int | None:
        """Highlight the table row of key ``key`` (the selected token), or no row when it is None or not listed.

        The highlight belongs to the key, not to a row number: the rows are rebuilt for every query and text.
        Returns the highlighted row (None: none).
        """
        keys = [int(j) for j in self.steps.keys] if self.steps is not None else []
        row = keys.index(key) if key is not None and key in keys else None
        self.highlighted_row = row
        on, off = self.palette().highlight(), QBrush()
        text_on, text_off = self.palette().highlightedText(), QBrush()
        for r in range(self.table.rowCount()):
            for c in range(self.table.columnCount()):
                item = self.table.item(r, c)
                if item is not None:
                    item.setBackground(on if r == row else off)
                    item.setForeground(text_on if r == row else text_off)
        return row

    def set_data(self, internals, head: int, query: int, top_k: int = TOP_K, value_norms=None) -> None:
        """Show the steps of ``internals`` (AttentionInternals) for ``head`` and ``query`` (top ``top_k`` keys);
        ``value_norms``: float32 [T] ||f(x_j)|| of this head for every key j, or None ("\u2014" in those columns).

        Raises:
            IndexError: ``head`` or ``query`` out of range.
        """
        T, d = internals.num_tokens, internals.d_head
        st = internals.steps(head, query, None if T <= top_k else top_k)
        self.steps, self.internals = st, internals
        tok = internals.tokens
        shown = "all keys" if len(st.keys) == T else f"the {len(st.keys)} keys with the largest weights of {T}"
        extra = f" (+ {internals.extra_score_terms})" if internals.extra_score_terms else ""
        if not np.isneginf(st.masked).any():
            extra += "; step 3 masks nothing here (one review, no padding: every key is a real token)"
        self.title.setText(
            f"Layer {internals.layer + 1}, head {head + 1}, query {query} \u201c{tok[query]}\u201d, d_k = {d}, "
            f"\u221ad_k = {internals.scale:.3g}{extra}; {shown}. Double-click a row to select that token."
        )
        rows = len(st.keys) + (1 if st.rest_weight > 0 else 0)
        self.table.setRowCount(rows)
        self.highlighted_row = None  # new items: redraw highlights the selected key's row again
        norm_cells = _norm_cells(st, value_norms)
        for r, j in enumerate(st.keys):
            cells = (str(int(j)), tok[j], _fmt(st.raw[j]), _fmt(st.scaled[j]), _fmt(st.masked[j]), f"{st.weights[j]:.4f}",
                     *norm_cells[r])
            for c, text in enumerate(cells):
                self.table.setItem(r, c, QTableWidgetItem(text))
        if st.rest_weight > 0:
            cells = ("\u2026", f"{T - len(st.keys)} other keys", "", "", "", f"{st.rest_weight:.4f}", *norm_cells[-1])
            for c, text in enumerate(cells):
                self.table.setItem(rows - 1, c, QTableWidgetItem(text))
        fit_table_height(self.table)
        self.table.resizeColumnsToContents()
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.setFixedWidth(sum(self.table.columnWidth(c) for c in range(len(COLUMNS))) + 2 * self.table.frameWidth())
        wv = st.weighted_values
        m = float(max(np.abs(wv).max(), np.abs(st.output).max(), 1e-9))
        self.weighted_image.setImage(wv, levels=(-m, m))
        self.weighted_image.setRect(QRectF(0, 0, d, len(st.keys)))
        self.key_axis.set_tokens([tok[j] for j in st.keys])
        self.weighted_plot.setRange(xRange=(0, d), yRange=(0, len(st.keys)), padding=0)
        self.output_image.setImage(st.output[None, :], levels=(-m, m))
        self.output_image.setRect(QRectF(0, 0, d, 1))
        self.output_plot.setRange(yRange=(0, 1), padding=0)
        head_vals = ", ".join(f"{v:.3f}" for v in st.output[:6]) + (", \u2026" if d > 6 else "")
        self.output_label.setText(
            f"6. o\u1d62 = [{head_vals}] ({d} numbers, \u2016o\u1d62\u2016 = "
            f"{float(np.linalg.norm(st.output)):.3f}): concatenated with the other heads' outputs and projected by "
            "W\u1d3c, it is this token's attention output."
        )

    def _on_hover(self, scene_pos) -> None:
        st = self.steps
        if st is None:
            return
        for plot, rows in ((self.weighted_plot, st.weighted_values), (self.output_plot, st.output[None, :])):
            vb = plot.getViewBox()
            if vb.sceneBoundingRect().contains(scene_pos):
                pt = vb.mapSceneToView(scene_pos)
                r, c = int(np.floor(pt.y())), int(np.floor(pt.x()))
                if 0 <= r < rows.shape[0] and 0 <= c < rows.shape[1]:
                    who = "o\u1d62" if plot is self.output_plot else f"w\u2c7c v\u2c7c of key {int(st.keys[r])}"
                    self.hover_label.setText(f"{who}, component {c}: {float(rows[r, c]):.4f}")
                    return
        self.hover_label.setText("")

    def _on_double_click(self, item) -> None:
        if self.steps is not None and item.row() < len(self.steps.keys):
            self.state.select_token(int(self.steps.keys[item.row()]))

    def showEvent(self, event) -> None:
        """Render if the state changed while hidden."""
        super().showEvent(event)
        self._deferred_show()
