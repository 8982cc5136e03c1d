"""The corpus dock's plots that depend on the task (issue 30): per-class precision/recall/F1 and a regression's
predicted-vs-gold scatter (pyqtgraph, drawn through :class:`~desktop_app.views.corpus.corpus_plot.CorpusPlot`).

They draw fields of a :class:`model.corpus.metrics.CorpusMetrics` record (``per_class``:
:class:`model.corpus.task_metrics.PerClass`; ``regression``: :class:`model.corpus.task_metrics.RegressionMetrics`);
no torch, no model import.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt

from desktop_app.views.colours import NEUTRAL
from desktop_app.views.corpus.corpus_plot import READABLE_SIZE, TEXT_COLOUR, CorpusPlot, alpha
from desktop_app.views.widgets import TokenAxis

ROW_PX = 16  # pixels per class in the per-class plot (28 classes stay readable; the dock scrolls)
SCATTER_POINTS = 5000  # most points drawn (evenly spaced through the rows)


class PerClassPlot(CorpusPlot):
    """F1 per class as horizontal bars, precision (▲) and recall (●) as markers on the same 0..1 scale; the class
    names on the left, in the model's order (top to bottom). Multi-label: the same per label."""

    def __init__(self) -> None:
        self.axis = TokenAxis("left", max_chars=16, min_spacing_px=11)
        super().__init__("Per class: F1 (bars), precision \u25b2, recall \u25cf", {"left": self.axis})
        item = self.getPlotItem()
        item.invertY(True)
        item.setLabel("bottom", "score", color=TEXT_COLOUR)

    def set_per_class(self, labels, per_class) -> None:
        """Show :class:`model.corpus.task_metrics.PerClass` (``precision``, ``recall``, ``f1``, ``support`` [C]) for
        ``labels``; None: no gold labels (or a regression model)."""
        self.defer(self._draw, tuple(str(x) for x in labels), per_class)

    def _draw(self, labels, pc) -> None:
        self.clear_items()
        if pc is None or len(labels) == 0:
            self.axis.set_tokens([])
            self.show_empty("needs gold labels (a classifier)")
            return
        self.show_data()
        c = len(labels)
        self.setMinimumHeight(max(READABLE_SIZE[1], 70 + ROW_PX * c))
        y = np.arange(c) + 0.5
        self.addItem(pg.BarGraphItem(x0=np.zeros(c), y=y, height=0.7, width=np.asarray(pc.f1, float),
                                     brush=alpha(NEUTRAL, 150), pen=pg.mkPen("w")))
        self.plot(np.asarray(pc.precision, float), y, pen=None, symbol="t1", symbolSize=7,
                  symbolBrush=pg.mkBrush(TEXT_COLOUR), symbolPen=None)
        self.plot(np.asarray(pc.recall, float), y, pen=None, symbol="o", symbolSize=6,
                  symbolBrush=pg.mkBrush("#ffffff"), symbolPen=pg.mkPen(TEXT_COLOUR, width=1.2))
        support = np.asarray(pc.support)
        self.axis.set_tokens([f"{n} ({int(s):,})" for n, s in zip(labels, support)])
        self.setToolTip("\n".join(f"{n}: precision {p:.3f}, recall {r:.3f}, F1 {f:.3f}, support {int(s):,}"
                                  for n, p, r, f, s in zip(labels, pc.precision, pc.recall, pc.f1, support)))
        # room beyond 0 and 1: their tick labels are drawn and markers at 1 (a perfect score) are not cut
        self.getPlotItem().setRange(xRange=(-0.06, 1.1), yRange=(-0.02 * c, 1.02 * c), padding=0)


class RegressionScatterPlot(CorpusPlot):
    """A regression model's predicted value against the gold value, one dot per text with a gold value, and the
    line predicted = gold (dashed); MAE and Spearman's rho in the title."""

    def __init__(self) -> None:
        super().__init__("Predicted against gold")
        item = self.getPlotItem()
        item.setLabel("bottom", "gold", color=TEXT_COLOUR)
        item.setLabel("left", "predicted", color=TEXT_COLOUR)

    def set_regression(self, reg) -> None:
        """Show :class:`model.corpus.task_metrics.RegressionMetrics` (``predicted``, ``gold`` [N], ``mae``,
        ``spearman``); None: no gold values (or a classifier)."""
        self.defer(self._draw, reg)

    def _draw(self, reg) -> None:
        self.clear_items()
        if reg is None or len(reg.gold) == 0:
            self.set_title(self.title)
            self.show_empty("needs gold values (a regression model)")
            return
        self.show_data()
        x, y = np.asarray(reg.gold, float), np.asarray(reg.predicted, float)
        if len(x) > SCATTER_POINTS:
            keep = np.linspace(0, len(x) - 1, SCATTER_POINTS).astype(int)
            x, y = x[keep], y[keep]
        self.plot(x, y, pen=None, symbol="o", symbolSize=4, symbolBrush=alpha(NEUTRAL, 110), symbolPen=None)
        lo, hi = float(min(x.min(), y.min())), float(max(x.max(), y.max()))
        hi = hi if hi > lo else lo + 1.0
        self.plot([lo, hi], [lo, hi], pen=pg.mkPen("#555555", width=1, style=Qt.PenStyle.DashLine))
        rho = "" if reg.spearman is None else f" \u00b7 Spearman \u03c1 {reg.spearman:.3f}"
        self.set_title(f"{self.title} \u00b7 MAE {reg.mae:.3f}{rho}")
        self.getPlotItem().setRange(xRange=(lo, hi), yRange=(lo, hi), padding=0.04)


__all__ = ["PerClassPlot", "RegressionScatterPlot"]
