"""The positional-encoding view: the model's actual PE matrix and its position-by-position similarity.

Left: the sinusoidal positional encoding the model adds to its token
embeddings (Vaswani et al. 2017, "Attention Is All You Need", section 3.5),
P positions x d_model dimensions, exactly ``Predictor.positional_encoding(P)``.
Right: the P x P similarity between positions, cosine or dot product.
Positions used by the current text (0..T-1) are marked.

Teaching aids: the positional-encoding tutorial's worked table (d_model = 4, base n = 100,
positions 0-3; :attr:`~model.records.info.ModelInfo.pe_worked_example`, computed by the model's own function) beside
the formula, and below, the norm of the positional encoding against the norm of the scaled token
embedding at each position of the current text (:class:`model.records.internals.EmbeddingNorms`).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from .colours import DIVERGING_CMAP, HEATMAP_CMAP, colormap
from .render import DeferredRender
from .widgets import fit_table_height, style_plot

NORM_TITLE = ("norms per position: <span style='color:#d62728'>‖PE(pos)‖</span>, "
              "<span style='color:#1f77b4'>‖token embedding × √d‖</span>")
"""The norm plot's title: it names the two curves in their colours (no legend over them)."""
NORM_PLOT_MIN_HEIGHT = 130
"""The norm plot's smallest height in pixels (it was ~50 px in the default window, its legend over the curves)."""
PLOTS_MIN_HEIGHT = 420
"""The plots' smallest height in pixels: the PE matrix and the similarity above the norm plot, each readable."""


def similarity(pe: np.ndarray, kind: str = "cosine") -> np.ndarray:
    """Position-by-position similarity of PE rows.

    Args:
        pe: float32 [P, d_model].
        kind: "cosine" (dot product of unit-length rows, in [-1, 1]) or "dot"
            (raw dot product; for sinusoids it depends only on the offset, sum_i cos(w_i (p - q))).

    Returns:
        float32 [P, P].
    """
    x = pe.astype(np.float64)
    if kind == "cosine":
        n = np.linalg.norm(x, axis=1, keepdims=True)
        x = x / np.where(n > 0, n, 1.0)
    return (x @ x.T).astype(np.float32)


FORMULA_HTML = (
    "<b>PE</b>(pos, 2i) = sin(pos / {base:g}<sup>2i/d</sup>), &nbsp; "
    "<b>PE</b>(pos, 2i+1) = cos(pos / {base:g}<sup>2i/d</sup>), &nbsp; d = d_model = {d}; "
    "added to token embedding \u00d7 \u221ad (Vaswani et al. 2017, \u00a73.5)"
)


class PositionalEncodingView(DeferredRender, QWidget):
    """PE heatmap + similarity heatmap + a positions control + the formula (see module docstring).

    Attributes:
        pe_image: ``pg.ImageItem`` whose ``image`` is float32 [P, d_model], exactly ``positional_encoding(P)``.
        sim_image: ``pg.ImageItem`` whose ``image`` is the [P, P] similarity.
        positions: the QSpinBox choosing P.
    """

    def __init__(self, state, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._init_deferred()
        self.state = state
        self.positions = QSpinBox()
        self.positions.setRange(2, 512)
        self.positions.setValue(128)
        self.positions.setSuffix(" positions")
        self.positions.setKeyboardTracking(False)
        self.kind = QComboBox()
        self.kind.addItems(["cosine", "dot"])
        self.formula = QLabel("")
        self.formula.setTextFormat(Qt.RichText)
        self.formula.setWordWrap(True)
        self.used_label = QLabel("")
        self.norm_label = QLabel("")
        self.norm_label.setWordWrap(True)
        self.worked_title = QLabel("Worked example: d_model = 4, n = 100, positions 0–3")
        self._build_plots()
        self._build_worked_table()
        controls = QHBoxLayout()
        controls.addWidget(QLabel("Show"))
        controls.addWidget(self.positions)
        controls.addWidget(QLabel("Similarity:"))
        controls.addWidget(self.kind)
        controls.addWidget(self.used_label, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addLayout(controls)
        teach = QHBoxLayout()
        teach.addWidget(self.formula, 1)
        worked_box = QVBoxLayout()
        worked_box.addWidget(self.worked_title)
        worked_box.addWidget(self.worked)
        teach.addLayout(worked_box)
        lay.addLayout(teach)
        lay.addWidget(self.norm_label)
        lay.addWidget(self.glw, 1)
        self.pe_matrix: np.ndarray | None = None  # [max_len, d_model] from ModelInfo
        self.positions.valueChanged.connect(lambda *_: self.request_render())
        self.kind.currentTextChanged.connect(lambda *_: self.request_render())
        state.events.info.connect(self.set_model)
        state.events.prediction.connect(lambda *_: self._mark_used())
        state.events.embedding_norms.connect(self.set_norms)

    def _build_plots(self) -> None:
        """The PE matrix and the similarity heatmaps (with colour bars and used-positions lines), the norms plot."""
        self.glw = pg.GraphicsLayoutWidget()
        self.glw.setBackground("w")
        self.glw.setAcceptDrops(False)
        self.pe_plot = self.glw.addPlot(row=0, col=0, title="PE matrix")
        self.pe_plot.setLabel("left", "position")
        self.pe_plot.setLabel("bottom", "dimension")
        self.pe_plot.invertY(True)
        style_plot(self.pe_plot)
        self.pe_image = pg.ImageItem(axisOrder="row-major")
        self.pe_plot.addItem(self.pe_image)
        self.pe_bar = pg.ColorBarItem(
            values=(-1.0, 1.0), colorMap=colormap(DIVERGING_CMAP), width=12, interactive=False
        )
        self.pe_bar.setImageItem(self.pe_image, insert_in=self.pe_plot)
        self.sim_plot = self.glw.addPlot(row=0, col=1, title="similarity of positions")
        self.sim_plot.setLabel("left", "position p")
        self.sim_plot.setLabel("bottom", "position q")
        self.sim_plot.invertY(True)
        style_plot(self.sim_plot)
        self.sim_image = pg.ImageItem(axisOrder="row-major")
        self.sim_plot.addItem(self.sim_image)
        self.sim_bar = pg.ColorBarItem(values=(-1.0, 1.0), colorMap=colormap(HEATMAP_CMAP), width=12)
        self.sim_bar.setImageItem(self.sim_image, insert_in=self.sim_plot)
        pen = pg.mkPen("#ff2d55", width=2, style=Qt.DashLine)
        self.pe_used = pg.InfiniteLine(angle=0, movable=False, pen=pen)
        self.sim_used_h = pg.InfiniteLine(angle=0, movable=False, pen=pen)
        self.sim_used_v = pg.InfiniteLine(angle=90, movable=False, pen=pen)
        for item, plot in (
            (self.pe_used, self.pe_plot),
            (self.sim_used_h, self.sim_plot),
            (self.sim_used_v, self.sim_plot),
        ):
            plot.addItem(item)
            item.setZValue(10)
        # the curves are named in the title, in their colours: a legend inside covered them (issue 46)
        self.norm_plot = self.glw.addPlot(row=1, col=0, colspan=2, title=NORM_TITLE)
        self.norm_plot.setMinimumHeight(NORM_PLOT_MIN_HEIGHT)
        self.norm_plot.setLabel("bottom", "position (token index)")
        self.norm_plot.setLabel("left", "L2 norm")
        style_plot(self.norm_plot)
        self.pe_norm_curve = self.norm_plot.plot([], [], pen=pg.mkPen("#d62728", width=2), name="‖PE(pos)‖")
        self.tok_norm_curve = self.norm_plot.plot(
            [], [], pen=pg.mkPen("#1f77b4", width=1.5), name="‖token embedding × √d‖"
        )
        self.glw.ci.layout.setRowStretchFactor(0, 3)
        self.glw.ci.layout.setRowStretchFactor(1, 1)
        self.glw.setMinimumHeight(PLOTS_MIN_HEIGHT)  # the dock scrolls (registry) rather than squash the plots

    def _build_worked_table(self) -> None:
        """The tutorial's 4 x 4 worked example (filled by :meth:`set_worked_example`)."""
        self.worked = QTableWidget(4, 4)
        self.worked.setHorizontalHeaderLabels(["i=0: sin", "i=0: cos", "i=1: sin", "i=1: cos"])
        self.worked.setVerticalHeaderLabels([f"pos {p}" for p in range(4)])
        self.worked.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.worked.setToolTip("PE(pos, 2i) = sin(pos / 100^(2i/4)), PE(pos, 2i+1) = cos(pos / 100^(2i/4)):"
                               " the tutorial's worked example, computed by the model's own function")
        self.worked.resizeColumnsToContents()

    def set_model(self, info) -> None:
        """Adopt a :class:`model.records.info.ModelInfo`: its PE matrix [max_len, d_model], base and d_model.

        A model without a positional matrix (``info.positional_encoding`` None, e.g. DeBERTa's relative
        positions) gets its explanation (``info.pe_note``) in place of the formula and empty plots.
        """
        self.pe_matrix = info.positional_encoding
        self.positions.setMaximum(info.max_len)
        self.positions.setValue(info.max_len)  # all positions the model can use; the control narrows it
        if self.pe_matrix is None:
            self.formula.setText(f"<b>No positional matrix</b> ({info.pe_kind}): {info.pe_note}")
            self.pe_image.clear()
            self.sim_image.clear()
        elif info.pe_base > 0:
            self.formula.setText(FORMULA_HTML.format(base=info.pe_base, d=info.d_model))
        else:
            self.formula.setText(f"<b>{info.family}</b>: {info.pe_kind} position embeddings, the rows the model adds "
                                 "to the token embeddings for positions 0, 1, 2, \u2026")
        self.set_worked_example(info.pe_worked_example)
        self.request_render()

    def set_worked_example(self, table: np.ndarray | None) -> None:
        """Fill the worked-example table from float [4, 4] (rows: positions 0-3; columns: sin, cos, sin, cos)."""
        if table is None:
            return
        for r in range(table.shape[0]):
            for c in range(table.shape[1]):
                self.worked.setItem(r, c, QTableWidgetItem(f"{float(table[r, c]):.4f}"))
        self.worked.resizeColumnsToContents()
        fit_table_height(self.worked)
        self.worked.setFixedWidth(
            self.worked.verticalHeader().width() + sum(self.worked.columnWidth(c) for c in range(4))
            + 2 * self.worked.frameWidth()
        )

    def set_norms(self, norms) -> None:
        """Plot ||PE(pos)|| and ||token embedding x sqrt(d)|| per position (a model.records.internals.EmbeddingNorms or None)."""
        if norms is None:
            self.pe_norm_curve.setData([], [])
            self.tok_norm_curve.setData([], [])
            self.norm_label.setText("")
            return
        x = np.arange(len(norms.tokens))
        self.pe_norm_curve.setData(x, norms.pe_norm)
        self.tok_norm_curve.setData(x, norms.token_norm)
        ratio = float(np.median(norms.token_norm / np.maximum(norms.pe_norm, 1e-9)))
        self.norm_plot.setYRange(0.0, 1.1 * float(max(norms.token_norm.max(), norms.pe_norm.max())), padding=0)
        self.norm_label.setText(
            f"Below: in the current text the scaled token embedding is ~{ratio:.2g}× as long as the positional "
            "encoding (median over positions): position shifts each input vector noticeably without drowning the word."
        )

    def set_num_positions(self, n: int) -> None:
        """Show the first ``n`` positions (clamped to 2..max_len)."""
        self.positions.setValue(int(n))

    def redraw(self) -> None:
        """Redraw both heatmaps for the chosen number of positions."""
        if self.pe_matrix is None:
            return
        P = min(self.positions.value(), self.pe_matrix.shape[0])
        pe = self.pe_matrix[:P]
        d = pe.shape[1]
        self.pe_image.setImage(pe, autoLevels=False)
        self.pe_image.setRect(QRectF(0, 0, d, P))
        self.pe_bar.setLevels((-1.0, 1.0))
        sim = similarity(pe, self.kind.currentText())
        self.sim_image.setImage(sim, autoLevels=False)
        self.sim_image.setRect(QRectF(0, 0, P, P))
        lo, hi = (-1.0, 1.0) if self.kind.currentText() == "cosine" else (float(sim.min()), float(sim.max()))
        self.sim_bar.setLevels((lo, hi))
        self.pe_plot.setRange(xRange=(0, d), yRange=(0, P), padding=0)
        self.sim_plot.setRange(xRange=(0, P), yRange=(0, P), padding=0)
        self._mark_used()

    def _mark_used(self) -> None:
        pred = self.state.prediction
        if pred is None:
            for item in (self.pe_used, self.sim_used_h, self.sim_used_v):
                item.hide()
            self.used_label.setText("")
            return
        T = pred.num_tokens
        for item in (self.pe_used, self.sim_used_h, self.sim_used_v):
            item.setValue(T)
            item.setVisible(T <= self.positions.value())
        self.used_label.setText(f"dashed line: the current text uses positions 0\u2013{T - 1}")

    def export_item(self):
        """The graphics scene that PNG/SVG export should render."""
        return self.glw.scene()

    def showEvent(self, event) -> None:
        """Render if the state changed while hidden."""
        super().showEvent(event)
        self._deferred_show()
