"""The attention steps' other lessons, drawn from the records of :mod:`model.attention.lessons` (the views compute nothing).

* :class:`PlainSection`, "step 0": attention without trainable weights, x_i . x_j of the layer's input states and
  their softmax beside q_i . k_j and w_j for the same keys, and the context vector z_i = sum_j w_j x_j;
* :class:`CausalSection`: the head output the causal (decoder) row would give, beside the real one, and the
  difference (shown while ``state.causal`` is on; labelled as a lesson, never the model's behaviour);
* :class:`HeadsSection`: the heads joined, each head's output times its rows of W^O, the bias, their sum and the
  model's own attention output (Vaswani et al. 2017, section 3.2.2).

Each vector is a row of a diverging heatmap (:class:`VectorRows`, blue < 0 < red, symmetric levels).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF
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

from model.attention.lessons import CAUSAL_NOTE

from .colours import DIVERGING_CMAP, colormap
from .widgets import TokenAxis, fit_table_height, style_plot

PLAIN_COLUMNS = ("key j", "token", "0. x\u1d62\u00b7x\u2c7c", "0. softmax", "1. q\u1d62\u00b7k\u2c7c",
                 "4. w\u2c7c")
PLAIN_HTML = (
    "<b>Step 0: attention without trainable weights</b> (Raschka, <i>Build a Large Language Model</i>, 3.3.1). "
    "Before W<sup>Q</sup>, W<sup>K</sup>, W<sup>V</sup>, the scores are the dot products "
    "x<sub>i</sub>\u00b7x<sub>j</sub> of the layer's input states themselves, their softmax (no scaling) the weights, "
    "and z<sub>i</sub> = \u03a3<sub>j</sub> w<sub>j</sub> x<sub>j</sub> the context vector. Beside them, the same "
    "keys' q<sub>i</sub>\u00b7k<sub>j</sub> and w<sub>j</sub> of the selected head: what the projections change. "
    "Without them each token's largest score is usually with itself."
)
HEADS_HTML = (
    "<b>Heads joined</b> (Vaswani et al. 2017, 3.2.2): the H head outputs o<sub>h</sub> are concatenated and "
    "projected by W<sup>O</sup>; that is the sum of each head's o<sub>h</sub> times its own d rows "
    "W<sup>O</sup><sub>h</sub>: concat(o<sub>1</sub>\u2026o<sub>H</sub>) W<sup>O</sup> + b = "
    "\u03a3<sub>h</sub> o<sub>h</sub> W<sup>O</sup><sub>h</sub> + b. Multi-head attention is H small attentions "
    "added up."
)


def _fmt(v: float) -> str:
    return "\u2212\u221e" if np.isneginf(v) else f"{v:.4f}"


class VectorRows(pg.GraphicsLayoutWidget):
    """Named vectors as the rows of one diverging heatmap.

    Attributes:
        image: the ``pg.ImageItem``; ``image.image`` is the float32 [R, n] matrix on display.
        names: the R row names shown on the left axis.
    """

    def __init__(self, title: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setBackground("w")
        self.setAcceptDrops(False)
        self.axis = TokenAxis("left", max_chars=22)
        self.plot = self.addPlot(row=0, col=0, axisItems={"left": self.axis}, title=title)
        style_plot(self.plot)
        self.plot.hideButtons()
        self.plot.setMenuEnabled(False)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.getAxis("bottom").enableAutoSIPrefix(False)
        self.plot.invertY(True)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.image.setLookupTable(colormap(DIVERGING_CMAP).getLookupTable(0.0, 1.0, 256))
        self.plot.addItem(self.image)
        self.names: list[str] = []

    def set_rows(self, rows: np.ndarray, names: list[str]) -> None:
        """Show ``rows`` (float [R, n]) named ``names`` (R strings), colours symmetric around 0."""
        rows = np.asarray(rows, np.float32)
        R, n = rows.shape
        m = float(max(np.abs(rows).max(), 1e-9))
        self.image.setImage(rows, levels=(-m, m))
        self.image.setRect(QRectF(0, 0, n, R))
        self.names = list(names)
        self.axis.set_tokens(self.names)
        self.plot.setRange(xRange=(0, n), yRange=(0, R), padding=0)

    def clear_rows(self) -> None:
        """Show nothing."""
        self.image.clear()
        self.names = []
        self.axis.set_tokens([])


class PlainSection(QWidget):
    """Step 0 beside steps 1 and 4 for the keys the steps table lists (see the module docstring).

    Attributes:
        table: one row per key shown: j, token, x_i . x_j, its softmax, q_i . k_j, w_j.
        vectors: :class:`VectorRows` of z_i (the context vector) and x_i (the query's own input state).
        plain: the :class:`model.attention.lessons.PlainAttention` on display, or None.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plain = None
        self.table = QTableWidget(0, len(PLAIN_COLUMNS))
        self.table.setHorizontalHeaderLabels(list(PLAIN_COLUMNS))
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.vectors = VectorRows("context vector z\u1d62 = \u03a3\u2c7c w\u2c7c x\u2c7c (d_model numbers)")
        self.note = QLabel("")
        self.note.setWordWrap(True)
        explain = QLabel(PLAIN_HTML)
        explain.setWordWrap(True)
        top = QHBoxLayout()
        top.addWidget(self.table)
        top.addWidget(explain, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(top)
        lay.addWidget(self.vectors, 1)
        lay.addWidget(self.note)

    def set_data(self, plain, steps, internals) -> None:
        """Show ``plain`` (:class:`model.attention.lessons.PlainAttention`) for the keys of ``steps``
        (:class:`model.records.internals.AttentionSteps` of the same query) of ``internals`` (their AttentionInternals)."""
        self.plain = plain
        tokens = internals.tokens
        keys = [int(j) for j in steps.keys]
        self.table.setRowCount(len(keys))
        for r, j in enumerate(keys):
            cells = (str(j), tokens[j], _fmt(plain.scores[j]), f"{plain.weights[j]:.4f}", _fmt(steps.raw[j]),
                     f"{steps.weights[j]:.4f}")
            for c, text in enumerate(cells):
                self.table.setItem(r, c, QTableWidgetItem(text))
        fit_table_height(self.table)
        self.table.resizeColumnsToContents()
        self.table.setFixedWidth(sum(self.table.columnWidth(c) for c in range(len(PLAIN_COLUMNS)))
                                 + 2 * self.table.frameWidth())
        i = plain.query
        top = int(np.argmax(plain.weights))
        self.vectors.set_rows(np.stack([plain.context, internals.inputs[i]]),
                              ["z\u1d62 (step 0)", f"x\u1d62 \u201c{tokens[i]}\u201d"])
        self.note.setText(
            f"Step 0 for query {i} \u201c{tokens[i]}\u201d: its largest weight, {plain.weights[top]:.3f}, is on key "
            f"{top} \u201c{tokens[top]}\u201d (\u2016z\u1d62\u2016 = {float(np.linalg.norm(plain.context)):.3f}); "
            f"with the projections the head puts {float(steps.weights.max()):.3f} on key "
            f"{int(np.argmax(steps.weights))} \u201c{tokens[int(np.argmax(steps.weights))]}\u201d."
        )

    def clear(self) -> None:
        """Show nothing."""
        self.plain = None
        self.table.setRowCount(0)
        self.vectors.clear_rows()
        self.note.setText("")


class CausalSection(QWidget):
    """The head output of the causal what-if beside the real one, and their difference.

    Attributes:
        vectors: :class:`VectorRows` of o_i (real), o'_i (causal) and o'_i - o_i.
        causal: the :class:`model.attention.lessons.CausalWhatIf` on display, or None.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.causal = None
        self.label = QLabel(f"<b>Causal mask (decoder what-if)</b>: {CAUSAL_NOTE}.")
        self.label.setWordWrap(True)
        self.vectors = VectorRows("head output: real, causal what-if, difference")
        self.note = QLabel("")
        self.note.setWordWrap(True)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.label)
        lay.addWidget(self.vectors, 1)
        lay.addWidget(self.note)

    def set_data(self, causal, tokens) -> None:
        """Show ``causal`` (:class:`model.attention.lessons.CausalWhatIf`); ``tokens`` the T token strings."""
        self.causal = causal
        self.vectors.set_rows(np.stack([causal.real_output, causal.output, causal.difference]),
                              ["o\u1d62 (real)", "o\u2032\u1d62 (causal)", "o\u2032\u1d62 \u2212 o\u1d62"])
        i, n_masked = causal.query, int(causal.masked.sum())
        lost = float(causal.real_weights[causal.masked].sum())
        self.note.setText(
            f"Query {i} \u201c{tokens[i]}\u201d may look at keys 0\u2013{i} only: {n_masked} later keys masked "
            f"(\u2212\u221e before the softmax), which held {lost:.3f} of the real weight; the row renormalises over "
            f"the rest. \u2016o\u2032\u1d62 \u2212 o\u1d62\u2016 = {float(np.linalg.norm(causal.difference)):.4f} "
            f"(\u2016o\u1d62\u2016 = {float(np.linalg.norm(causal.real_output)):.4f})."
        )

    def clear(self) -> None:
        """Show nothing."""
        self.causal = None
        self.vectors.clear_rows()
        self.note.setText("")


class HeadsSection(QWidget):
    """The heads joined for the selected query (see the module docstring).

    Attributes:
        vectors: :class:`VectorRows`: one row per head o_h W^O_h, then b^O, their sum, the model's attention output.
        slice_rows: :class:`VectorRows` of the selected head's slice W^O_h (d_head rows of W^O, each d_model wide).
        joined: the :class:`model.attention.lessons.HeadsJoined` on display, or None.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.joined = None
        explain = QLabel(HEADS_HTML)
        explain.setWordWrap(True)
        self.vectors = VectorRows("each head's part o\u2095 W\u1d3c\u2095 of the attention output (d_model numbers)")
        self.slice_rows = VectorRows("")
        self.note = QLabel("")
        self.note.setWordWrap(True)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(explain)
        lay.addWidget(self.vectors, 2)
        lay.addWidget(self.slice_rows, 1)
        lay.addWidget(self.note)

    def set_data(self, joined, tokens, selected_head: int | None = None, output_weight=None) -> None:
        """Show ``joined`` (:class:`model.attention.lessons.HeadsJoined`); ``tokens`` the T token strings; ``selected_head``
        (0-based, or None) is marked in its row name and, with ``output_weight`` (float32 [H, d, D], W^O by head),
        its slice W^O_h is drawn."""
        self.joined = joined
        if selected_head is not None and output_weight is not None:
            d = output_weight.shape[1]
            self.slice_rows.plot.setTitle(f"head {selected_head + 1}'s slice W\u1d3c\u2095: rows "
                                          f"{selected_head * d}\u2013{(selected_head + 1) * d - 1} of W\u1d3c "
                                          f"({d} \u00d7 {output_weight.shape[2]})")
            self.slice_rows.set_rows(output_weight[selected_head],
                                     [f"row {selected_head * d + k}" for k in range(d)])
        else:
            self.slice_rows.clear_rows()
        H = joined.parts.shape[0]
        mark = "\u25b6 "
        names = [f"{mark if h == selected_head else ''}head {h + 1}: o W\u1d3c" for h in range(H)]
        rows = np.vstack([joined.parts, joined.bias[None], joined.total[None], joined.attention_output[None]])
        self.vectors.set_rows(rows, [*names, "bias b\u1d3c", "\u03a3 parts + b\u1d3c", "attention output"])
        norms = np.linalg.norm(joined.parts, axis=1)
        i = joined.query
        share = ", ".join(f"{h + 1}: {v:.2f}" for h, v in enumerate(norms))
        self.note.setText(
            f"Query {i} \u201c{tokens[i]}\u201d: \u2016o\u2095 W\u1d3c\u2095\u2016 by head ({share}). The parts add up to "
            f"the model's attention output to {joined.max_error:.1e} (largest difference of the {rows.shape[1]} "
            "numbers); then come the residual, LayerNorm and the feed-forward block."
        )

    def clear(self) -> None:
        """Show nothing."""
        self.joined = None
        self.vectors.clear_rows()
        self.slice_rows.clear_rows()
        self.note.setText("")
