"""The prediction panel's class bars for any task type (issue 30): :class:`ProbabilityBar` and :class:`ClassBars`.

* single-label: one bar per class (softmax probability). Two classes stay in the model's order (the bundled
  negative/positive model looks as it always did); more are sorted by probability, the :data:`TOP_N` most probable
  shown and the rest on request ("Show all N").
* multi-label: one bar per label (its own sigmoid), sorted likewise, each with the decision threshold drawn as a
  vertical line; the labels at or above it are named in bold. The threshold is a spin box (``threshold_edited``).
* regression: no bars (the panel shows the value).

Views draw NumPy records only (no torch).
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import (
    QDoubleSpinBox,
    QFrame,
    QScrollArea,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from model.tasks.types import task_type

from .colours import label_colour

TOP_N = 5  # classes shown before "Show all N" (single-label and multi-label with more than TOP_N classes)
THRESHOLD_COLOUR = "#222222"


class ProbabilityBar(QWidget):
    """A horizontal bar for one class probability, with the percentage written on it and, for a multi-label model,
    the decision threshold as a vertical line.

    Custom-painted instead of a ``QProgressBar``: ``QProgressBar.setValue`` repaints synchronously, which
    flushes every pending paint of the window on the spot (tens of ms at 512 tokens); this widget only
    schedules an ``update()``.

    Args:
        colour: fill colour (any ``QColor`` string).
    """

    def __init__(self, colour: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.colour = QColor(colour)
        self.probability: float | None = None
        self.threshold: float | None = None  # multi-label: the decision threshold in (0, 1); None: no line
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)

    def set_probability(self, p: float | None, threshold: float | None = None) -> None:
        """Show probability ``p`` in [0, 1] (clamped), or nothing ("\u2014") when None; ``threshold``: the line."""
        self.probability = None if p is None else min(1.0, max(0.0, float(p)))
        self.threshold = threshold
        self.update()

    def text(self) -> str:
        """What the bar says: e.g. "97.3 %", or "\u2014" when empty."""
        return "\u2014" if self.probability is None else f"{self.probability * 100:.1f} %"

    def sizeHint(self) -> QSize:
        """A line of text high, 160 pixels wide."""
        return QSize(160, self.fontMetrics().height() + 8)

    def paintEvent(self, event) -> None:
        """Frame, filled share, the threshold line and the percentage, centred."""
        p = QPainter(self)
        r = QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
        p.fillRect(r, self.palette().base())
        if self.probability:  # the class colour, lightened so that the percentage on it stays readable
            fill = QColor(self.colour)
            fill.setAlpha(150)
            p.fillRect(QRectF(r.x(), r.y(), r.width() * self.probability, r.height()), fill)
        p.setPen(QPen(QColor("#8a8a8a")))
        p.drawRect(r)
        if self.threshold is not None:
            x = r.x() + r.width() * self.threshold
            p.setPen(QPen(QColor(THRESHOLD_COLOUR), 2, Qt.DashLine))
            p.drawLine(int(x), int(r.top()), int(x), int(r.bottom()))
        p.setPen(QPen(self.palette().text().color()))
        p.drawText(r, Qt.AlignCenter, self.text())


class ClassBars(QWidget):
    """The class bars of a prediction (see the module docstring).

    Attributes:
        bars: class name -> its :class:`ProbabilityBar` (one per class, in the model's colours).
        names: class name -> its name label.
        order: the class indices in the order shown (model order for two classes, else by probability).
        show_all_button: "Show all N" / "Show top 5" (hidden with at most :data:`TOP_N` classes).
        threshold_box: the multi-label threshold (hidden for the other tasks).

    Signals:
        threshold_edited(float): the user changed the threshold.
    """

    threshold_edited = Signal(float)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.grid = QGridLayout()
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.grid.setVerticalSpacing(2)
        self.grid.setColumnStretch(1, 1)
        self.bars: dict[str, ProbabilityBar] = {}
        self.names: dict[str, QLabel] = {}
        self.labels: tuple[str, ...] = ()
        self.order: list[int] = []
        self.show_all = False
        self.show_all_button = QPushButton("")
        self.show_all_button.setFlat(True)
        self.show_all_button.setVisible(False)
        self.show_all_button.clicked.connect(lambda: self.set_show_all(not self.show_all))
        self.threshold_box = QDoubleSpinBox()
        self.threshold_box.setObjectName("thresholdBox")
        self.threshold_box.setRange(0.01, 0.99)
        self.threshold_box.setSingleStep(0.05)
        self.threshold_box.setDecimals(2)
        self.threshold_box.setValue(0.5)
        self.threshold_box.setToolTip("Multi-label: a label is predicted when its sigmoid is at or above this "
                                      "threshold (the dashed line); changing it re-labels without running the model")
        self.threshold_box.valueChanged.connect(self.threshold_edited)
        self.threshold_row = QWidget()
        tl = QHBoxLayout(self.threshold_row)
        tl.setContentsMargins(0, 0, 0, 0)
        tl.addWidget(QLabel("Threshold:"))
        tl.addWidget(self.threshold_box)
        tl.addStretch(1)
        self.threshold_row.setVisible(False)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.threshold_row)
        rows = QWidget()
        rows.setLayout(self.grid)
        self.scroll = QScrollArea()  # "Show all 28": the rows scroll; the dock keeps its height
        self.scroll.setFrameShape(QFrame.NoFrame)
        self.scroll.setWidgetResizable(True)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.scroll.setWidget(rows)
        lay.addWidget(self.scroll, 1)
        lay.addWidget(self.show_all_button, 0, Qt.AlignLeft)

    def set_labels(self, labels) -> None:
        """One name and one bar per class of ``labels`` (the class palette's colours), in the model's order."""
        for w in (*self.bars.values(), *self.names.values()):
            self.grid.removeWidget(w)
            w.deleteLater()
        self.labels = tuple(labels)
        self.bars, self.names = {}, {}
        for i, name in enumerate(self.labels):
            self.bars[name] = ProbabilityBar(label_colour(name, self.labels))  # the one class palette (model.palette)
            self.names[name] = QLabel(name)
        self.order = []
        self._place(list(range(len(self.labels))))

    def _place(self, order: list[int]) -> None:
        """Lay the rows out in ``order`` (moves only when it changed) and show the top ones or all."""
        if order != self.order:
            for row, i in enumerate(order):
                name = self.labels[i]
                self.grid.addWidget(self.names[name], row, 0)
                self.grid.addWidget(self.bars[name], row, 1)
            self.order = order
        many = len(self.labels) > TOP_N
        for row, i in enumerate(order):
            visible = self.show_all or row < TOP_N
            self.names[self.labels[i]].setVisible(visible)
            self.bars[self.labels[i]].setVisible(visible)
        self.show_all_button.setVisible(many)
        self.show_all_button.setText(f"Show top {TOP_N}" if self.show_all else f"Show all {len(self.labels)}")
        shown = len(order) if self.show_all else min(len(order), TOP_N)
        row_h = self.fontMetrics().height() + 8 + max(0, self.grid.verticalSpacing())  # a ProbabilityBar's height
        self.scroll.setMinimumHeight(min(shown, TOP_N) * row_h)  # as many rows as before; more scroll
        self.scroll.setMaximumHeight(shown * row_h + 2)

    def set_show_all(self, on: bool) -> None:
        """Show every class (True) or the :data:`TOP_N` most probable ones."""
        self.show_all = bool(on)
        self._place(self.order)

    def visible_names(self) -> list[str]:
        """The class names shown, top first."""
        return [self.labels[i] for i in self.order if self.bars[self.labels[i]].isVisibleTo(self)]

    def clear(self) -> None:
        """Every bar empty ("\u2014")."""
        for bar in self.bars.values():
            bar.set_probability(None)

    def show_prediction(self, pred) -> None:
        """Fill the bars from ``pred`` (a :class:`model.records.prediction.Prediction`; its whole text's), sorted as the
        module docstring says; multi-label: the threshold line, the labels at or above it in bold."""
        kind = task_type(pred.task)
        multi = kind.label_set
        self.threshold_row.setVisible(multi)
        self.setVisible(kind.reads_probabilities and bool(pred.labels))
        if multi and abs(self.threshold_box.value() - pred.threshold) > 1e-9:
            self.threshold_box.blockSignals(True)
            self.threshold_box.setValue(pred.threshold)
            self.threshold_box.blockSignals(False)
        probs = np.asarray(pred.probabilities, dtype=np.float64)
        if len(probs) != len(self.labels):
            return
        order = list(range(len(probs))) if len(probs) <= 2 else [int(i) for i in np.argsort(-probs, kind="stable")]
        self._place(order)
        line = float(pred.threshold) if multi else None
        for name, p in zip(self.labels, probs):
            self.bars[name].set_probability(float(p), line)
            if multi:
                f = self.names[name].font()
                if f.bold() != (p >= pred.threshold):
                    f.setBold(bool(p >= pred.threshold))
                    self.names[name].setFont(f)
