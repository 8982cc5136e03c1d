"""The prediction by layer (a "logit lens" for encoders): a compact plot in the prediction panel.

Draws a :class:`desktop_app.records.LayerProbabilities` (NumPy only; this module never imports torch): x is the
read-out point, "emb" (after the embeddings) then 1 ... L (after each layer); y is the probability of the followed
class (:func:`desktop_app.compare_records.focus_class`: "positive" when the model has it, else the predicted class)
read out through the model's own classification head. With heads switched off, the same curve with every head on is
drawn dashed ("all heads"), so the layer where the decision changes shows. A dotted line marks 0.5 (multi-label: the
threshold, set by the prediction panel). The class drawn
is the state's "Explain class" choice when given (:meth:`LayerPlot.set_class`); a regression model's curve is its
predicted value by layer (y scaled to the values).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt

from model.tasks.types import task_type

from ..compare_records import focus_class
from .widgets import style_plot

PLOT_HEIGHT = 110  # pixels: the panel stays small
CURVE_COLOUR = "#2874a6"
REFERENCE_COLOUR = "#7f7f7f"


class LayerAxis(pg.AxisItem):
    """The x axis of :class:`LayerPlot`: "emb" at 0, then the layer numbers 1 ... L."""

    def __init__(self) -> None:
        super().__init__("bottom")
        self.n_layers = 0

    def tickValues(self, minVal: float, maxVal: float, size: float):
        """One major tick per read-out point 0 ... L (every other one beyond 12 layers)."""
        if self.n_layers <= 0:
            return []
        step = 1 if self.n_layers <= 12 else 2
        return [(1.0, [float(i) for i in range(0, self.n_layers + 1, step)])]

    def tickStrings(self, values, scale, spacing):
        """ "emb" for 0, else the layer number."""
        return ["emb" if round(v) == 0 else str(int(round(v))) for v in values]


class LayerPlot(pg.PlotWidget):
    """P(class) after the embeddings and after each layer, live from the state's prediction by layer.

    Not interactive (no pan, zoom or menu); about :data:`PLOT_HEIGHT` pixels high. ``set_layer_probabilities(None)``
    clears it.

    Attributes:
        curve: the prediction by layer under the head mask in force (solid, with dots).
        reference_curve: the same with every head on (dashed); empty when no head is off.
        class_index: the class drawn (an index into the record's labels), -1 when empty.
    """

    def __init__(self, parent=None) -> None:
        self.axis = LayerAxis()
        super().__init__(parent, background="w", axisItems={"bottom": self.axis})
        self.setObjectName("layerPlot")
        self.setFixedHeight(PLOT_HEIGHT)
        self.setMinimumWidth(120)
        item = self.getPlotItem()
        style_plot(item)
        item.setMouseEnabled(False, False)
        item.setMenuEnabled(False)
        item.hideButtons()
        item.setContentsMargins(0, 0, 4, 0)
        item.getAxis("left").setWidth(30)
        item.getAxis("left").setTicks([[(0.0, "0"), (0.5, ".5"), (1.0, "1")]])
        item.setYRange(0.0, 1.0, padding=0.06)
        self.half_line = pg.InfiniteLine(0.5, angle=0, pen=pg.mkPen("#b0b0b0", width=1, style=Qt.DotLine))
        item.addItem(self.half_line)
        self.reference_curve = item.plot(pen=pg.mkPen(REFERENCE_COLOUR, width=1.5, style=Qt.DashLine),
                                         name="all heads")
        self.curve = item.plot(pen=pg.mkPen(CURVE_COLOUR, width=2), symbol="o", symbolSize=5,
                               symbolBrush=CURVE_COLOUR, symbolPen=None)
        self.class_index = -1
        self.chosen = -1  # the state's class to explain (-1: the focus class)
        self.record = None
        self.setToolTip("The prediction if the model stopped after the embeddings (emb) or after each layer, "
                        "read out through its own classification head")
        self._set_title("")

    def _set_title(self, text: str) -> None:
        self.getPlotItem().setTitle(text, color="#222222", size="8pt")

    def set_class(self, index: int) -> None:
        """Draw class ``index`` (the state's "Explain class" choice; -1: the focus class) from now on."""
        if int(index) != self.chosen:
            self.chosen = int(index)
            if self.record is not None:
                self.set_layer_probabilities(self.record)

    def set_layer_probabilities(self, record) -> None:
        """Draw ``record`` (a :class:`desktop_app.records.LayerProbabilities`: probabilities float (L + 1, C) in
        [0, 1], reference (L + 1, C) or None), or clear the plot when None (or when the model has no classes)."""
        self.record = record
        probs = None if record is None else np.asarray(record.probabilities, dtype=np.float64)
        if probs is None or probs.ndim != 2 or probs.shape[1] == 0 or probs.shape[0] == 0:
            self.class_index = -1
            self.axis.n_layers = 0
            self.curve.setData([], [])
            self.reference_curve.setData([], [])
            self._set_title("")
            self.axis.picture = None
            self.axis.update()
            return
        c = self.chosen if 0 <= self.chosen < probs.shape[1] else focus_class(record.labels, probs[-1])
        x = np.arange(probs.shape[0], dtype=np.float64)
        self.class_index = c
        self.axis.n_layers = probs.shape[0] - 1
        self.axis.picture = None
        self.axis.update()
        self.curve.setData(x, probs[:, c])
        ref = None if record.reference is None else np.asarray(record.reference, dtype=np.float64)
        if ref is not None and ref.shape == probs.shape:
            self.reference_curve.setData(x, ref[:, c])
        else:
            self.reference_curve.setData([], [])
        name = record.labels[c] if c < len(record.labels) else str(c)
        values = not task_type(record.task).reads_probabilities  # a regression's predicted value by layer
        what = "value" if values else f"P({name})"
        self._set_title(f"{what} by layer" + (" \u2014 dashed: all heads" if ref is not None else ""))
        self._scale_y(values, probs[:, c] if ref is None else np.r_[probs[:, c], ref[:, c]])
        self.getPlotItem().setXRange(0.0, float(max(1, probs.shape[0] - 1)), padding=0.06)

    def _scale_y(self, values: bool, y: np.ndarray) -> None:
        """Probabilities: 0 to 1 with ticks 0, .5, 1; a regression's values: their own range, automatic ticks."""
        item = self.getPlotItem()
        if values:
            lo, hi = float(np.min(y)), float(np.max(y))
            pad = max(0.05, 0.1 * (hi - lo))
            item.getAxis("left").setTicks(None)
            item.setYRange(lo - pad, hi + pad, padding=0.0)
            self.half_line.setVisible(False)
        else:
            item.getAxis("left").setTicks([[(0.0, "0"), (0.5, ".5"), (1.0, "1")]])
            item.setYRange(0.0, 1.0, padding=0.06)
            self.half_line.setVisible(True)

    def curve_data(self) -> np.ndarray:
        """float64 [L + 1]: the probabilities drawn by :attr:`curve` (empty when cleared)."""
        _, y = self.curve.getData()
        return np.zeros(0) if y is None else np.asarray(y, dtype=np.float64)

    def reference_data(self) -> np.ndarray:
        """float64 [L + 1]: the dashed all-heads curve's probabilities (empty when none is drawn)."""
        _, y = self.reference_curve.getData()
        return np.zeros(0) if y is None else np.asarray(y, dtype=np.float64)

    def export_item(self):
        """The plot item (for PNG and SVG export)."""
        return self.getPlotItem()
