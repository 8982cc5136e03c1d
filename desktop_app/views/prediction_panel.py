"""The prediction panel: label, class probabilities as bars, the prediction by layer, truncation, token count, time,
device, and the Pin button (Ctrl+Shift+P) that pins the analysis for the Compare view.

Any task type (issue 30, :mod:`desktop_app.views.class_bars`): single-label, the classes sorted by probability (top
ones first, "Show all N"); multi-label, each label's sigmoid against the threshold line (a spin box: re-labels without
running the model, ``state.task.set_threshold``); regression, the predicted value (and its value by layer)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from model.tasks.types import task_type

from .class_bars import ClassBars, ProbabilityBar  # noqa: F401 - ProbabilityBar re-exported
from .colours import label_colour
from .document_plot import DocumentPlot
from .layer_plot import LayerPlot

PIN_SHORTCUT = "Ctrl+Shift+P"
ERROR_COLOUR = "#b00020"  # the label when an analysis failed (no class)


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
        self.bars_box = ClassBars()
        self.bars_box.threshold_edited.connect(self._on_threshold)
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
        lay.addWidget(self.bars_box, 10)  # "Show all": the rows take the height there is (up to all of them)
        plots = QHBoxLayout()  # side by side: a long review's plot takes no height from the docks below
        plots.addWidget(self.document_plot, 1)
        plots.addWidget(self.layer_plot, 1)
        lay.addLayout(plots)
        lay.addWidget(self.details)
        lay.addStretch(1)
        self.prediction = None
        self.device_name = ""
        state.events.info.connect(lambda info: self.set_labels(info.labels, info.device_name))
        state.events.prediction.connect(self._on_prediction)
        state.events.layer_probabilities.connect(self.layer_plot.set_layer_probabilities)
        # the user's "Explain class" (following the prediction: the focus class, "positive" for the bundled model)
        state.task.target_changed.connect(lambda _k: self.layer_plot.set_class(
            -1 if state.task.following else state.task.target))

    @property
    def bars(self) -> dict[str, ProbabilityBar]:
        """Class name -> its probability bar (:attr:`ClassBars.bars`)."""
        return self.bars_box.bars

    def _on_threshold(self, value: float) -> None:
        try:
            self.state.task.set_threshold(value)
        except ValueError as exc:
            self.details.setText(str(exc))

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
        self.bars_box.clear()
        self.details.setText("")

    def _show_label(self, text: str, colour: str) -> None:
        """Set the big label; restyle only when the colour changes (a style sheet change re-polishes)."""
        self.label.setText(text)
        sheet = f"color: {colour};"
        if self.label.styleSheet() != sheet:
            self.label.setStyleSheet(sheet)

    def set_labels(self, labels, device_name: str = "") -> None:
        """Create one probability bar per class name in ``labels``; remember the device's name."""
        self.bars_box.set_labels(labels)
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
        many = pred.num_windows > 1 and bool(pred.labels)
        self.document_plot.setVisible(many)
        if many:
            self.document_plot.set_document(pred, pred.window)
        # the label, bars and details are the whole review's: a window's prediction carries the document's verdict
        self.layer_plot.half_line.setValue(pred.threshold if task_type(pred.task).label_set else 0.5)  # the decision
        if self.bars_box.labels != tuple(pred.labels):
            self.set_labels(pred.labels, self.device_name)
        self._show_verdict(pred)
        self.bars_box.show_prediction(pred)
        trunc = (
            f"<b>truncated</b>: {pred.num_source_tokens:,} word pieces \u2192 {pred.num_tokens:,} tokens "
            f"({'longest first' if pred.is_pair else 'head+tail'})"
            if pred.truncated
            else f"read whole in <b>{pred.num_windows} windows</b>" if pred.num_windows > 1 else "not truncated"
        )
        device = (
            self.device_name
            if self.device_name and pred.device.startswith(self.device_name.split()[0].lower())
            else pred.device.upper()
        )
        cut = {"first": "the first text", "second": "the second text", "both": "both texts"}.get(pred.pair_truncated)
        pair = f"sentence pair ({cut} cut)<br>" if pred.is_pair and cut else "sentence pair<br>" if pred.is_pair else ""
        self.details.setText(
            f"{pair}{pred.document.num_tokens:,} tokens ([CLS] included), {trunc}<br>"
            f"inference {pred.elapsed_s * 1000:.1f} ms on {device}"
        )

    def _show_verdict(self, pred) -> None:
        """The big label: the class (single-label), the labels at or above the threshold (multi-label) or the
        value (regression): :meth:`model.tasks.types.TaskType.headline`, in the colour of its one label if any."""
        if not pred.labels:  # attention-only mode: a bare encoder has no classes to show
            self._show_label("attention only", "palette(mid)")
            return
        kind = task_type(pred.task)
        name = kind.headline_label(pred)
        self._show_label(kind.headline(pred), "palette(text)" if name is None else label_colour(name, pred.labels))
        if kind.label_set:  # a list of labels may not fit one line
            self.label.setWordWrap(True)
