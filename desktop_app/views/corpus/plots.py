"""The corpus dock's plots (pyqtgraph): confusion matrix, score histogram (P(positive), the confidence or the
value), reliability diagram, accuracy by slice.

Each plot is a :class:`~desktop_app.views.corpus.corpus_plot.CorpusPlot` (a ``pg.PlotWidget`` with
``export_item()``, so File > Export view writes it as PNG or SVG like the other views; drawn through the render
scheduler, one plot per event-loop turn and only when visible) and draws the fields of a
:class:`model.corpus.metrics.CorpusMetrics` record (NumPy arrays and plain numbers; this module never imports it, nor
torch). Plots are static summaries: no pan or zoom; the confusion matrix's cells are clickable (``cell_clicked``).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFont, QPen
from PySide6.QtWidgets import QGraphicsRectItem

from desktop_app.views.colours import NEUTRAL, class_colour
from desktop_app.views.corpus.corpus_plot import READABLE_SIZE, TEXT_COLOUR, CorpusPlot, alpha
from desktop_app.views.widgets import TokenAxis, short_count, short_slice_name

CELL_TEXT_PX = 34  # pixels of height a confusion-matrix cell needs for its count and percentage
SMALL_CELL_PX = 24  # ... and for its count alone (more than NUMBERED classes)
NUMBERED = 8  # above this many classes the columns are numbered (the rows name them: "3 joy")


def share_ramp(n: int = 256) -> np.ndarray:
    """uint8 [n, 4] RGBA: white to the palette's neutral grey, for shares that belong to no class (the confusion
    matrix's cells, as in the HTML report)."""
    end = QColor(NEUTRAL)
    t = np.linspace(0.0, 1.0, n)[:, None]
    rgb = (1 - t) * 255 + t * np.array([end.red(), end.green(), end.blue()])
    return np.concatenate([rgb, np.full((n, 1), 255.0)], axis=1).round().astype(np.uint8)


class ConfusionMatrixPlot(CorpusPlot):
    """Counts per (gold, predicted) pair: rows gold (top to bottom), columns predicted; a cell's colour is its share
    of its row. Click a cell: ``cell_clicked(row, column)``; :meth:`select` outlines one.

    Signals:
        cell_clicked(int, int): (gold index, predicted index) in the order of the labels given to :meth:`set_matrix`.
    """

    cell_clicked = Signal(int, int)

    def __init__(self) -> None:
        self.left_axis = TokenAxis("left", max_chars=16, min_spacing_px=12)
        self.bottom_axis = TokenAxis("bottom", max_chars=10, min_spacing_px=14)
        super().__init__("Confusion matrix", {"left": self.left_axis, "bottom": self.bottom_axis})
        item = self.getPlotItem()
        item.invertY(True)
        item.setLabel("left", "gold", color=TEXT_COLOUR)
        item.setLabel("bottom", "predicted", color=TEXT_COLOUR)
        self.matrix: np.ndarray | None = None
        self.selected: tuple[int, int] | None = None
        self._outline: QGraphicsRectItem | None = None
        self.scene().sigMouseClicked.connect(self._on_click)
        self.setToolTip("Click a cell to show its reviews in the batch table; click it again to show all")

    def set_matrix(self, labels, matrix: np.ndarray | None) -> None:
        """Show ``matrix`` (int [C, C], rows gold, columns predicted) for ``labels``; None: no gold labels."""
        self.matrix = None if matrix is None else np.asarray(matrix)
        self.defer(self._draw, labels)

    def _draw(self, labels) -> None:
        self.clear_items()
        self._outline = None
        if self.matrix is None or self.matrix.size == 0:
            self.left_axis.set_tokens([])
            self.bottom_axis.set_tokens([])
            self.show_empty("needs gold labels")
            return
        self.show_data()
        m = self.matrix.astype(np.float64)
        c = len(m)
        numbered = c > NUMBERED  # up to 28 classes (GoEmotions): numbered columns, the count alone in a cell
        cell_px = SMALL_CELL_PX if numbered else CELL_TEXT_PX
        # every cell keeps room for its text (the corpus dock scrolls instead)
        self.setMinimumHeight(max(READABLE_SIZE[1], 80 + cell_px * c))
        self.setMinimumWidth(max(READABLE_SIZE[0], 130 + (cell_px - 8) * c))  # 28 classes: 578 px
        share = m / np.maximum(m.sum(axis=1, keepdims=True), 1)
        img = pg.ImageItem(share.T, levels=(0.0, 1.0), lut=share_ramp())  # no class colour: a share of a row
        img.setRect(QRectF(0, 0, c, c))
        self.addItem(img)
        for i in range(c):
            for j in range(c):
                if numbered and m[i, j] == 0:
                    continue  # an empty cell stays blank: 784 zeros would hide the pattern
                text = pg.TextItem(anchor=(0.5, 0.5))
                ink = "#ffffff" if share[i, j] > 0.55 else TEXT_COLOUR  # readable on the dark end of the ramp
                body = (f'<span style="font-size:{6 if c > 16 else 7}pt">{int(m[i, j]):,}</span>' if numbered
                        else f"<b>{int(m[i, j]):,}</b><br>{100 * share[i, j]:.1f}%")
                text.setHtml(f'<div style="text-align:center; color:{ink}">{body}</div>')
                text.setPos(j + 0.5, i + 0.5)
                self.addItem(text)
        names = [str(x) for x in labels]
        self.left_axis.set_tokens([f"{k + 1} {n}" for k, n in enumerate(names)] if numbered else names)
        self.bottom_axis.set_tokens([str(k + 1) for k in range(c)] if numbered else names)
        self.getPlotItem().setLabel("bottom", "predicted (class number)" if numbered else "predicted",
                                    color=TEXT_COLOUR)
        self.getPlotItem().setRange(xRange=(0, c), yRange=(0, c), padding=0.02)
        self.select(self.selected)

    def select(self, cell: tuple[int, int] | None) -> None:
        """Outline cell (gold, predicted), or none."""
        self.selected = cell
        if self._outline is not None:
            self.removeItem(self._outline)
            self._outline = None
        if cell is None or self.matrix is None or not all(0 <= k < len(self.matrix) for k in cell):
            return
        self._outline = QGraphicsRectItem(QRectF(cell[1] + 0.03, cell[0] + 0.03, 0.94, 0.94))
        pen = QPen(QColor("#1f3a93"), 3)
        pen.setCosmetic(True)
        self._outline.setPen(pen)
        self.addItem(self._outline)

    def cell_center(self, gold: int, predicted: int):
        """Scene position of the centre of a cell (for tests)."""
        return self.getPlotItem().getViewBox().mapViewToScene(pg.Point(predicted + 0.5, gold + 0.5))

    def _on_click(self, event) -> None:
        if self.matrix is None or event.button() != Qt.MouseButton.LeftButton:
            return
        vb = self.getPlotItem().getViewBox()
        if not vb.sceneBoundingRect().contains(event.scenePos()):
            return
        p = vb.mapSceneToView(event.scenePos())
        j, i = int(np.floor(p.x())), int(np.floor(p.y()))
        if 0 <= i < len(self.matrix) and 0 <= j < len(self.matrix):
            self.cell_clicked.emit(i, j)


class ProbabilityHistogramPlot(CorpusPlot):
    """P(positive) (or the top label's probability, or the predicted value) of the scored rows, one outline per gold
    label (and the rows without gold in grey)."""

    def __init__(self) -> None:
        super().__init__("P(positive) by gold label")
        item = self.getPlotItem()
        item.setLabel("bottom", "P(positive)", color=TEXT_COLOUR)
        item.setLabel("left", "reviews", color=TEXT_COLOUR)
        self._heading = self.title

    def set_histogram(self, histogram, labels, name: str = "P(positive)") -> None:
        """Show a :class:`model.corpus.metrics.Histogram` (``edges``, ``counts``, ``counts_by_gold`` [C, B] or None) of
        the number called ``name`` (``CorpusMetrics.score_name``)."""
        self._heading = f"{name} by gold label" if histogram.counts_by_gold is not None else name
        self.getPlotItem().setLabel("bottom", name, color=TEXT_COLOUR)
        self.defer(self._draw, histogram, labels)

    def _draw(self, histogram, labels) -> None:
        self.clear_items()
        edges, counts = np.asarray(histogram.edges), np.asarray(histogram.counts)
        if counts.sum() == 0:
            self.set_title(self._heading)
            self.show_empty("no scored reviews")
            return
        self.show_data()
        series = []
        by_gold = histogram.counts_by_gold
        if by_gold is not None:
            by_gold = np.asarray(by_gold)
            series = [(str(name), by_gold[i], class_colour(i)) for i, name in enumerate(labels)]
            rest = counts - by_gold.sum(axis=0)
            if rest.sum() > 0:
                series.append(("none", rest, NEUTRAL))
        else:
            series = [("all reviews", counts, NEUTRAL)]
        for _name, values, colour in series:
            self.plot(edges, values, stepMode="center", fillLevel=0, brush=alpha(colour, 60),
                      pen=pg.mkPen(colour, width=2))
        # the key is the title's second line: inside the plot a key covered the bars (which pile up at either end)
        # as soon as the plot was short; in the title it takes its own room at any size
        entries = [f'<span style="color:{colour}">\u25a0 {name} {int(values.sum()):,}</span>'
                   for name, values, colour in series]
        self.set_title(f'{self._heading}<br><span style="font-size:8pt">{" ".join(entries)}</span>')
        top = max(1, max(v.max() for _, v, _ in series))
        self.getPlotItem().setRange(xRange=(float(edges[0]), float(edges[-1])), yRange=(0, 1.05 * top), padding=0.02)


class ReliabilityPlot(CorpusPlot):
    """Reliability diagram (Guo et al. 2017): accuracy per confidence bin, its gap to the diagonal, and the ECE."""

    def __init__(self) -> None:
        super().__init__("Reliability")
        item = self.getPlotItem()
        item.setLabel("bottom", "confidence (predicted class)", color=TEXT_COLOUR)
        item.setLabel("left", "accuracy", color=TEXT_COLOUR)

    def set_reliability(self, bins, ece: float | None) -> None:
        """Show :class:`model.corpus.metrics.ReliabilityBins` (``edges``, ``counts``, ``confidence``, ``accuracy``) and
        the ECE in the title; None: no gold labels (or more than two classes)."""
        self.defer(self._draw, bins, ece)

    def _draw(self, bins, ece: float | None) -> None:
        self.clear_items()
        if bins is None or ece is None or int(np.sum(bins.counts)) == 0:
            self.set_title("Reliability")
            self.show_empty("needs gold labels (a single-label model)")
            return
        self.show_data()
        self.set_title(f"Reliability \u00b7 ECE {100 * ece:.1f}%")
        edges = np.asarray(bins.edges)
        full = np.asarray(bins.counts) > 0
        lo, width = edges[:-1][full], np.diff(edges)[full]
        acc, conf = np.asarray(bins.accuracy)[full], np.asarray(bins.confidence)[full]
        self.addItem(pg.BarGraphItem(x0=lo, width=width, height=acc, brush=alpha(NEUTRAL, 170),
                                     pen=pg.mkPen("w"), name="accuracy"))
        gap = pg.BarGraphItem(x0=lo, width=width, y0=np.minimum(acc, conf), height=np.abs(conf - acc),
                              brush=alpha(NEUTRAL, 60), pen=pg.mkPen(TEXT_COLOUR, width=1))
        self.addItem(gap)
        start = float(lo.min()) if len(lo) else 0.0
        self.plot([start, 1.0], [start, 1.0], pen=pg.mkPen("#555555", width=1, style=Qt.PenStyle.DashLine))
        self.getPlotItem().setRange(xRange=(start, 1.0), yRange=(0, 1.0), padding=0.02)


class SliceAccuracyPlot(CorpusPlot):
    """Accuracy by review length (token bins) and for truncated vs not truncated reviews; the number of reviews
    above each bar; the overall accuracy dashed. Without gold labels: the share of reviews per slice instead."""

    def __init__(self) -> None:
        self.axis = pg.AxisItem("bottom")
        font = self.small_font = QFont()  # ticks and counts (a count in the window font was wider than its bar)
        font.setPointSizeF(max(6.0, font.pointSizeF() - 1.5))
        self.axis.setStyle(tickFont=font)
        super().__init__("Accuracy by length (tokens)", {"bottom": self.axis})
        self.getPlotItem().setLabel("left", "accuracy", color=TEXT_COLOUR)

    def set_slices(self, by_length, by_truncation, accuracy: float | None, error: bool = False) -> None:
        """Show two :class:`model.corpus.metrics.SliceAccuracy` records: the length bins (their "truncated" slice is
        shown once, with the truncation pair) and not truncated / truncated. ``error``: the slices hold a
        regression's mean absolute error (``CorpusMetrics.error_by_length``) and ``accuracy`` is the overall MAE."""
        self.defer(self._draw, by_length, by_truncation, accuracy, error)

    def _draw(self, by_length, by_truncation, accuracy: float | None, error: bool = False) -> None:
        self.clear_items()
        if int(np.asarray(by_truncation.counts).sum()) == 0:
            self.set_title("Accuracy by length (tokens)")
            self.show_empty("no scored reviews")
            return
        self.show_data()
        keep = [i for i, n in enumerate(by_length.names) if n != "truncated"]
        names = [short_slice_name(by_length.names[i], k) for k, i in enumerate(keep)] + ["no", "yes"]
        counts = np.concatenate([np.asarray(by_length.counts)[keep], np.asarray(by_truncation.counts)])
        gold = np.concatenate([np.asarray(by_length.gold_counts)[keep], np.asarray(by_truncation.gold_counts)])
        acc = np.concatenate([np.asarray(by_length.accuracy)[keep], np.asarray(by_truncation.accuracy)])
        total = max(1, int(np.asarray(by_truncation.counts).sum()))
        with_gold = accuracy is not None
        heights = np.nan_to_num(acc) if with_gold else counts / total
        x = np.arange(len(names), dtype=float) + np.where(np.arange(len(names)) >= len(keep), 0.5, 0.0)
        self.addItem(pg.BarGraphItem(x=x, width=0.8, height=heights, brush=alpha(NEUTRAL, 170), pen=pg.mkPen("w")))
        top = max(1.0, float(heights.max()) if heights.size else 1.0)
        for xi, h, n, g in zip(x, heights, counts, gold):
            # the count inside the top of a tall bar, just above a short one: never over the title or the axis
            inside = h > 0.35 * top
            label = pg.TextItem(short_count(int(g if with_gold else n)), color=TEXT_COLOUR,
                                anchor=(0.5, 0.0 if inside else 1.0))
            label.setFont(self.small_font)
            label.textItem.document().setDocumentMargin(1)  # Qt's 4-pixel margin made neighbours' boxes touch
            label.setPos(xi, h)
            self.addItem(label)
        if with_gold:
            self.plot([x[0] - 0.5, x[-1] + 0.5], [accuracy, accuracy],
                      pen=pg.mkPen("#555555", width=1, style=Qt.PenStyle.DashLine))
        self.axis.setTicks([[(float(xi), n) for xi, n in zip(x, names)]])
        what = "mean absolute error" if error else "accuracy"
        self.getPlotItem().setLabel("left", what if with_gold else "share of reviews", color=TEXT_COLOUR)
        self.getPlotItem().setLabel("bottom", "length (tokens) \u00b7 truncated?", color=TEXT_COLOUR)
        self.set_title(("Error" if error else "Accuracy") + " by length (tokens)" if with_gold
                       else "Reviews by length (no gold labels)")
        self.getPlotItem().setRange(xRange=(x[0] - 0.5, x[-1] + 0.5), yRange=(0, 1.05 * top), padding=0.02)
