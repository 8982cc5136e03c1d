"""Attention step by step: how one attention row and the head's output are computed, with their numbers.

For the selected layer, head and query token i, in the teaching order of the classic material
(Vaswani et al. 2017, equation 1; the NYU "Attention and the Transformer" lecture; chapter 3 of
Raschka, "Build a Large Language Model (From Scratch)"):

1. raw scores q_i . k_j, 2. scaled by 1/sqrt(d_k), 3. masked (padded keys -> -inf),
4. softmax -> weights w_j, 5. weighted value vectors w_j v_j, 6. their sum: the head's output o_i.

Steps 1-4 are a table (one row per key; the top keys by weight when the text is long), steps 5-6 are
heatmaps of the vectors. Numbers come from :meth:`model.records.internals.AttentionInternals.steps`. Beside the weight w_j
the table shows ||f(x_j)||, the norm of key j's value vector as the head writes it into the residual stream
(f^h(x) = (x W_V + b_V)^h W_O^h, Kobayashi et al. 2020; ``state.value_norms``), and w_j ||f(x_j)||, how much
of it the head actually moves: a large weight on a small vector moves little. "\u2014" until they are computed.

The rest of the chapter, in tabs below the table (:mod:`desktop_app.views.steps_lessons`, numbers from
:mod:`model.attention.lessons`): "step 0", attention without trainable weights (x_i . x_j of the layer's input states) beside
q_i . k_j; the heads joined by W^O into the layer's attention output. The "Causal mask (decoder what-if)" switch
(``state.causal``, shared with the heatmap) greys the keys after the query, adds the renormalised row w'_j to the
table and the head output it would give beside the real one: a lesson, never the model's behaviour.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from model.attention.lessons import CAUSAL_NOTE, causal_what_if, heads_joined, plain_attention

from .colours import DIVERGING_CMAP, colormap
from .render import DeferredRender
from .shown import head_value_norms
from .steps_lessons import CausalSection, HeadsSection, PlainSection
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
           "\u2016f(x\u2c7c)\u2016", "w\u2c7c\u00b7\u2016f(x\u2c7c)\u2016", "causal w\u2032\u2c7c")
CAUSAL_COLUMN = 8  # shown while state.causal is on
NORM_TIPS = {
    6: "\u2016f(x\u2c7c)\u2016: the norm of key j's value vector as this head writes it into the residual stream, "
       "f(x) = (x W_V + b_V) W_O (Kobayashi et al. 2020)",
    7: "w\u2c7c\u00b7\u2016f(x\u2c7c)\u2016 = \u2016w\u2c7c f(x\u2c7c)\u2016: how much of key j this head actually "
       "moves "
       "into the query (a large weight on a small vector moves little)",
}
NO_NORM = "\u2014"  # the norm columns before the value norms are computed
MASKED_BRUSH = QBrush(QColor(200, 200, 200))  # rows of the keys the causal what-if masks
MASKED_TEXT = QBrush(QColor(120, 120, 120))


def _fmt(v: float) -> str:
    return "\u2212\u221e" if np.isneginf(v) else f"{v:.4f}"


def _norm_cells(st, value_norms) -> list[tuple[str, str]]:
    """The ||f(x_j)|| and w_j ||f(x_j)|| cells of each listed key, then of the other keys (blank, their total).

    Args:
        st: :class:`model.records.internals.AttentionSteps` (``keys`` [k], ``weights`` [T]).
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
        steps: the :class:`model.records.internals.AttentionSteps` on display, or None.
        highlighted_row: the table row highlighted as the selected key's (:meth:`highlight_key`), or None.
        causal_check: the "Causal mask (decoder what-if)" switch (``state.causal``).
        tabs: "1\u20136" (steps 5-6, and the causal what-if's output while it is on), "0. without weights"
            (:class:`~desktop_app.views.steps_lessons.PlainSection`), "Heads joined" (``HeadsSection``).
        plain_section, causal_section, heads_section: the three lesson sections.
        causal: the :class:`model.attention.lessons.CausalWhatIf` on display (the switch on), or None.
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
        self.causal = None
        self.causal_check = QCheckBox("Causal mask (decoder what-if)")
        self.causal_check.setToolTip(f"A decoder's mask: keys after the query get \u2212\u221e. {CAUSAL_NOTE[0].upper()}"
                                     f"{CAUSAL_NOTE[1:]}.")
        self.causal_check.toggled.connect(state.set_causal)
        self._build_plots()
        self.output_label = QLabel("")
        self.output_label.setWordWrap(True)
        self.hover_label = QLabel("")
        self.glw.scene().sigMouseMoved.connect(self._on_hover)
        self.plain_section, self.causal_section, self.heads_section = PlainSection(), CausalSection(), HeadsSection()
        self.causal_section.setVisible(False)
        page = QWidget()
        page_lay = QVBoxLayout(page)
        page_lay.setContentsMargins(0, 0, 0, 0)
        page_lay.addWidget(self.glw, 1)
        page_lay.addWidget(self.output_label)
        page_lay.addWidget(self.causal_section, 1)
        self.tabs = QTabWidget()
        # short tab names, whole in the default window's narrow dock; the full name is the tooltip
        for section, name, tip in (
            (page, "Steps 1\u20136", "Steps 1\u20136: with the trained projections W\u1d60, W\u1d4f, W\u1d5b"),
            (self.plain_section, "Step 0", "Step 0: attention without trainable weights (x\u1d62\u00b7x\u2c7c)"),
            (self.heads_section, "Heads joined", "Heads joined: each head's output projected by its slice of W\u1d3c"),
        ):
            self.tabs.setTabToolTip(self.tabs.addTab(section, name), tip)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        head_row = QHBoxLayout()
        head_row.addWidget(self.title, 1)
        head_row.addWidget(self.causal_check)
        lay.addLayout(head_row)
        explain = QLabel(STEPS_HTML)
        explain.setWordWrap(True)
        top = QHBoxLayout()
        top.addWidget(self.table)
        top.addWidget(explain, 1)
        lay.addLayout(top)
        lay.addWidget(self.tabs, 1)
        lay.addWidget(self.hover_label)
        for sig in (state.events.internals, state.events.prediction, state.events.layer_head,
                    state.events.selection, state.events.value_norms, state.events.causal):
            sig.connect(lambda *_: self.request_render())

    def _build_plots(self) -> None:
        """The heatmaps of steps 5 and 6 (``glw``: w_j v_j of the keys shown, o_i)."""
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

    def redraw(self) -> None:
        """Show the steps for the state's layer, head (mean/max: head 1) and first selected token (else 0)."""
        self.causal_check.blockSignals(True)
        self.causal_check.setChecked(self.state.causal)
        self.causal_check.blockSignals(False)
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
        self.causal = None
        for section in (self.plain_section, self.causal_section, self.heads_section):
            section.clear()
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
        on, text_on = self.palette().highlight(), self.palette().highlightedText()
        masked = self.masked_rows()
        for r in range(self.table.rowCount()):
            off, text_off = (MASKED_BRUSH, MASKED_TEXT) if r in masked else (QBrush(), QBrush())
            for c in range(self.table.columnCount()):
                item = self.table.item(r, c)
                if item is not None:
                    item.setBackground(on if r == row else off)
                    item.setForeground(text_on if r == row else text_off)
        return row

    def masked_rows(self) -> set[int]:
        """The table rows of the keys the causal what-if masks (j > i; none while it is off)."""
        if self.causal is None or self.steps is None:
            return set()
        return {r for r, j in enumerate(self.steps.keys) if self.causal.masked[int(j)]}

    def set_data(self, internals, head: int, query: int, top_k: int = TOP_K, value_norms=None) -> None:
        """Show the steps of ``internals`` (AttentionInternals) for ``head`` and ``query`` (top ``top_k`` keys);
        ``value_norms``: float32 [T] ||f(x_j)|| of this head for every key j, or None ("\u2014" in those columns).
        With ``state.causal`` on, also the causal what-if (greyed rows, the w'_j column, its head output).

        Raises:
            IndexError: ``head`` or ``query`` out of range.
        """
        T, d = internals.num_tokens, internals.d_head
        st = internals.steps(head, query, None if T <= top_k else top_k)
        self.steps, self.internals = st, internals
        self.causal = causal_what_if(internals, head, query) if self.state.causal else None
        tok = internals.tokens
        shown = "all keys" if len(st.keys) == T else f"the {len(st.keys)} keys with the largest weights of {T}"
        extra = f" (+ {internals.extra_score_terms}, in step 3)" if internals.extra_score_terms else ""
        if not np.isneginf(st.masked).any():
            extra += "; step 3 masks no padding here (one review: every key is a real token)"
        self.title.setText(
            f"Layer {internals.layer + 1}, head {head + 1}, query {query} \u201c{tok[query]}\u201d, d_k = {d}, "
            f"scale {internals.scale:.3g}{extra}; {shown}. Double-click a row to select that token."
        )
        self.table.horizontalHeaderItem(3).setText("2. \u00f7 \u221ad" if internals.score_scale is None
                                                   else f"2. \u00f7 {internals.scale:.3g}")
        self._fill_table(st, tok, value_norms)
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
            "W\u1d3c, it is this token's attention output (tab \u201cHeads joined\u201d)."
        )
        self._set_lessons(internals, head, st)

    def _fill_table(self, st, tok, value_norms) -> None:
        """Steps 1-4 of the keys shown (+ the other keys' total), the norms and, while on, the causal w'_j."""
        T = len(st.weights)
        rows = len(st.keys) + (1 if st.rest_weight > 0 else 0)
        self.table.setRowCount(rows)
        self.highlighted_row = None  # new items: redraw highlights the selected key's row again
        norm_cells = _norm_cells(st, value_norms)
        cw = self.causal.weights if self.causal is not None else None
        for r, j in enumerate(st.keys):
            cells = (str(int(j)), tok[j], _fmt(st.raw[j]), _fmt(st.scaled[j]), _fmt(st.masked[j]), f"{st.weights[j]:.4f}",
                     *norm_cells[r], "" if cw is None else f"{cw[j]:.4f}")
            for c, text in enumerate(cells):
                self.table.setItem(r, c, QTableWidgetItem(text))
        if st.rest_weight > 0:
            rest = "" if cw is None else f"{1.0 - float(cw[st.keys].sum()):.4f}"
            cells = ("\u2026", f"{T - len(st.keys)} other keys", "", "", "", f"{st.rest_weight:.4f}", *norm_cells[-1],
                     rest)
            for c, text in enumerate(cells):
                self.table.setItem(rows - 1, c, QTableWidgetItem(text))
        self.table.setColumnHidden(CAUSAL_COLUMN, cw is None)
        fit_table_height(self.table)
        self.table.resizeColumnsToContents()
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        width = sum(self.table.columnWidth(c) for c in range(len(COLUMNS)) if not self.table.isColumnHidden(c))
        self.table.setFixedWidth(width + 2 * self.table.frameWidth())
        self.highlight_key(None)  # greys the masked rows; redraw then highlights the selected key's row

    def _set_lessons(self, internals, head: int, st) -> None:
        """Step 0, the causal what-if's head output and the heads joined, for the query of ``st``."""
        query = st.query
        self.causal_section.setVisible(self.causal is not None)
        if self.causal is not None:
            self.causal_section.set_data(self.causal, internals.tokens)
        try:
            self.plain_section.set_data(plain_attention(internals, query), st, internals)
        except ValueError as exc:  # internals without the layer input (e.g. an older record)
            self.plain_section.clear()
            self.plain_section.note.setText(f"Step 0 is not available: {exc}.")
        try:
            self.heads_section.set_data(heads_joined(internals, query), internals.tokens, head, internals.output_weight)
        except ValueError as exc:  # a family whose output projection is not known
            self.heads_section.clear()
            self.heads_section.note.setText(f"Heads joined is not available for this model: {exc}.")

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
