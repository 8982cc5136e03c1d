"""The prediction panel: label, class probabilities as bars, truncation, token count, time, device."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFormLayout, QLabel, QProgressBar, QVBoxLayout, QWidget

LABEL_COLOURS = {"positive": "#1a7f37", "negative": "#c0392b"}


class PredictionPanel(QWidget):
    """Shows one ``model.Prediction``: predicted label, P(class) bars, truncated?, T, inference time, device.

    ``set_loading(message)`` shows the "loading model" state; ``set_error``
    shows a one-line error; ``set_prediction(None)`` clears.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
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
        self.bars: dict[str, QProgressBar] = {}
        self.details = QLabel("")
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextSelectableByMouse)
        lay = QVBoxLayout(self)
        lay.addWidget(self.label)
        lay.addWidget(self.bars_box)
        lay.addWidget(self.details)
        lay.addStretch(1)
        self.prediction = None
        self.device_name = ""

    def set_labels(self, labels, device_name: str = "") -> None:
        """Create one probability bar per class name in ``labels``; remember the device's name."""
        while self.bars_layout.rowCount():
            self.bars_layout.removeRow(0)
        self.bars = {}
        for name in labels:
            bar = QProgressBar()
            bar.setRange(0, 1000)
            bar.setValue(0)
            bar.setFormat("\u2014")
            bar.setTextVisible(True)
            colour = LABEL_COLOURS.get(name, "#2874a6")
            bar.setStyleSheet(f"QProgressBar::chunk {{ background-color: {colour}; }}")
            self.bars[name] = bar
            self.bars_layout.addRow(name, bar)
        self.device_name = device_name

    def set_loading(self, message: str = "Loading model\u2026") -> None:
        """Show the loading state."""
        self.label.setText(message)
        self.label.setStyleSheet("color: palette(mid);")

    def set_idle(self, message: str = "Type or paste a review") -> None:
        """Show a hint instead of a prediction."""
        self.prediction = None
        self.label.setText(message)
        self.label.setStyleSheet("color: palette(mid);")
        for bar in self.bars.values():
            bar.setValue(0)
            bar.setFormat("\u2014")
        self.details.setText("")

    def set_error(self, message: str) -> None:
        """Show an error message in place of the label."""
        self.label.setText("Error")
        self.label.setStyleSheet("color: #c0392b;")
        self.details.setText(message)

    def set_prediction(self, pred) -> None:
        """Show ``pred`` (a ``model.Prediction``), or clear when None."""
        if pred is None:
            self.set_idle()
            return
        self.prediction = pred
        if set(self.bars) != set(pred.labels):
            self.set_labels(pred.labels, self.device_name)
        self.label.setText(pred.label)
        self.label.setStyleSheet(f"color: {LABEL_COLOURS.get(pred.label, '#2874a6')};")
        for name, p in zip(pred.labels, pred.probabilities):
            bar = self.bars[name]
            bar.setValue(round(float(p) * 1000))
            bar.setFormat(f"{float(p) * 100:.1f} %")
        trunc = (
            f"<b>truncated</b>: {pred.num_source_tokens:,} word pieces \u2192 {pred.num_tokens:,} tokens (head+tail)"
            if pred.truncated
            else "not truncated"
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
