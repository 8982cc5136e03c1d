"""The prediction panel: label, class probabilities as bars, the prediction by layer, truncation, token count, time,
device, and the Pin button (Ctrl+Shift+P) that pins the analysis for the Compare view."""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QAction, QColor, QKeySequence, QPainter, QPen
from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QVBoxLayout, QWidget

from .colours import label_colour
from .document_plot import DocumentPlot
from .layer_plot import LayerPlot

PIN_SHORTCUT = "Ctrl+Shift+P"
ERROR_COLOUR = "#b00020"  # the label when an analysis failed (no class)


class ProbabilityBar(QWidget):
    """A horizontal bar for one class probability, with the percentage written on it.

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
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)

    def set_probability(self, p: float | None) -> None:
        """Show probability ``p`` in [0, 1] (clamped), or nothing ("\u2014") when None."""
        self.probability = None if p is None else min(1.0, max(0.0, float(p)))
        self.update()

    def text(self) -> str:
        """What the bar says: e.g. "97.3 %", or "\u2014" when empty."""
        return "\u2014" if self.probability is None else f"{self.probability * 100:.1f} %"

    def sizeHint(self) -> QSize:
        """A line of text high, 160 pixels wide."""
        return QSize(160, self.fontMetrics().height() + 8)

    def paintEvent(self, event) -> None:
        """Frame, filled share and the percentage, centred."""
        p = QPainter(self)
        r = QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
        p.fillRect(r, self.palette().base())
        if self.probability:  # the class colour, lightened so that the percentage on it stays readable
            fill = QColor(self.colour)
            fill.setAlpha(150)
            p.fillRect(QRectF(r.x(), r.y(), r.width() * self.probability, r.height()), fill)
        p.setPen(QPen(QColor("#8a8a8a")))
        p.drawRect(r)
        p.setPen(QPen(self.palette().text().color()))
        p.drawText(r, Qt.AlignCenter, self.text())


class PredictionPanel(QWidget):
    """Shows one ``model.Prediction``: predicted label, P(class) bars, the prediction by layer (:attr:`layer_plot`),
    truncated?, T, inference time, device; :attr:`pin_button` / :attr:`pin_action` (Ctrl+Shift+P) pin the analysis
    (``state.pin_current()``) for the Compare view.

    Follows the state: each new prediction is shown, each new model gets its class bars, each new
    ``layer_probabilities`` is drawn (and cleared with None). A cleared prediction
    (None) empties the bars and the details at once (nothing is current, e.g. while another model loads); the
    big label is left to the window, which says why: ``set_loading(message)`` shows the "loading model" state,
    ``set_idle`` a hint, ``set_error`` a one-line error; ``set_prediction(None)`` clears.

    Args:
        state: the shared :class:`desktop_app.state.ExplorerState`.
    """

    def __init__(self, state, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.label = QLabel("Loading model\u2026")
        self.label.setObjectName("predictionLabel")
        f = self.label.font()
        f.setPointSizeF(f.pointSizeF() * 1.6)
        f.setBold(True)
        self.label.setFont(f)
        self.label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.bars_box = QWidget()
        self.bars_layout = QFormLayout(self.bars_box)
        self.bars_layout.setContentsMargins(0, 0, 0, 0)
        self.bars: dict[str, ProbabilityBar] = {}
        self.details = QLabel("")
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.layer_plot = LayerPlot()
        self.document_plot = DocumentPlot()  # P(class) along a long review, one point per window
        self.document_plot.setVisible(False)
        self.document_plot.window_clicked.connect(lambda w: state.windows.request(w))
        self.pin_action = QAction("Pin for comparison", self)
        self.pin_action.setShortcut(QKeySequence(PIN_SHORTCUT))
        self.pin_action.setShortcutContext(Qt.WindowShortcut)
        self.pin_action.setToolTip(f"Pin this analysis to compare the next ones with it ({PIN_SHORTCUT})")
        self.pin_action.setEnabled(False)
        self.pin_action.triggered.connect(lambda _checked=False: state.pin_current())
        self.addAction(self.pin_action)
        self.pin_button = QPushButton("Pin")
        self.pin_button.setToolTip(self.pin_action.toolTip())
        self.pin_button.setEnabled(False)
        self.pin_button.clicked.connect(self.pin_action.trigger)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.label, 1)
        top.addWidget(self.pin_button, 0, Qt.AlignTop)
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addWidget(self.bars_box)
        plots = QHBoxLayout()  # side by side: a long review's plot takes no height from the docks below
        plots.addWidget(self.document_plot, 1)
        plots.addWidget(self.layer_plot, 1)
        lay.addLayout(plots)
        lay.addWidget(self.details)
        lay.addStretch(1)
        self.prediction = None
        self.device_name = ""
        state.model_changed.connect(lambda info: self.set_labels(info.labels, info.device_name))
        state.prediction_changed.connect(self._on_prediction)
        state.layer_probabilities_changed.connect(self.layer_plot.set_layer_probabilities)

    def _on_prediction(self, pred) -> None:
        self.pin_action.setEnabled(pred is not None)
        self.pin_button.setEnabled(pred is not None)
        if pred is None:  # nothing is current; the window says why in the label (loading, idle hint, error)
            self._clear_result()
        else:
            self.set_prediction(pred)

    def _clear_result(self) -> None:
        """No prediction on display: empty bars ("\u2014"), no details."""
        self.prediction = None
        for bar in self.bars.values():
            bar.set_probability(None)
        self.details.setText("")

    def _show_label(self, text: str, colour: str) -> None:
        """Set the big label; restyle only when the colour changes (a style sheet change re-polishes)."""
        self.label.setText(text)
        sheet = f"color: {colour};"
        if self.label.styleSheet() != sheet:
            self.label.setStyleSheet(sheet)

    def set_labels(self, labels, device_name: str = "") -> None:
        """Create one probability bar per class name in ``labels``; remember the device's name."""
        while self.bars_layout.rowCount():
            self.bars_layout.removeRow(0)
        self.bars = {}
        for name in labels:
            bar = ProbabilityBar(label_colour(name, labels))  # the one class palette (model.palette)
            self.bars[name] = bar
            self.bars_layout.addRow(name, bar)
        self.device_name = device_name

    def set_loading(self, message: str = "Loading model\u2026") -> None:
        """Show the loading state (``message``; no prediction is current)."""
        self._clear_result()
        self._show_label(message, "palette(mid)")

    def set_idle(self, message: str = "Type or paste a review") -> None:
        """Show a hint instead of a prediction."""
        self._clear_result()
        self._show_label(message, "palette(mid)")

    def set_error(self, message: str) -> None:
        """Show an error message in place of the label."""
        self._show_label("Error", ERROR_COLOUR)
        self.details.setText(message)

    def set_prediction(self, pred) -> None:
        """Show ``pred`` (a ``model.Prediction``), or clear when None."""
        if pred is None:
            self.set_idle()
            return
        self.prediction = pred
        many = pred.whole.num_windows > 1 and bool(pred.labels)
        self.document_plot.setVisible(many)
        if many:
            self.document_plot.set_document(pred.whole, pred.window)
        pred = pred.whole  # the label, bars and details are the whole review's
        if set(self.bars) != set(pred.labels):
            self.set_labels(pred.labels, self.device_name)
        if not pred.labels:  # attention-only mode: a bare encoder has no classes to show
            self._show_label("attention only", "palette(mid)")
        else:
            self._show_label(pred.label, label_colour(pred.label, pred.labels))
        for name, p in zip(pred.labels, pred.probabilities):
            self.bars[name].set_probability(float(p))
        trunc = (
            f"<b>truncated</b>: {pred.num_source_tokens:,} word pieces \u2192 {pred.num_tokens:,} tokens (head+tail)"
            if pred.truncated
            else f"read whole in <b>{pred.num_windows} windows</b>" if pred.num_windows > 1 else "not truncated"
        )
        device = (
            self.device_name
            if self.device_name and pred.device.startswith(self.device_name.split()[0].lower())
            else pred.device.upper()
        )
        self.details.setText(
            f"{pred.num_tokens:,} tokens ([CLS] included), {trunc}<br>"
            f"inference {pred.elapsed_s * 1000:.1f} ms on {device}"
        )
