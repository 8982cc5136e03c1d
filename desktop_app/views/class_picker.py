"""The "Explain class" selector: a combo box bound to the state's class choice (:mod:`desktop_app.task_choice`).

The first entry, "Predicted (name)", follows the predicted class from text to text (``state.task.pick(None)``); the
others fix one class (``state.task.pick(k)``) until the model changes or "Predicted" is chosen again. The choice is
used by the explanations, the token colours, DecompX, Compare and the by-layer plot. A regression model has one
output (the value): the selector shows it, disabled.
"""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox

from model.tasks.types import task_type

PREDICTED_DATA = -1  # the "Predicted (...)" entry's data


class ClassPicker(QComboBox):
    """The "Explain class" combo box (see the module docstring).

    Args:
        state: the :class:`desktop_app.state.ExplorerState`.
    """

    def __init__(self, state, parent=None) -> None:
        super().__init__(parent)
        self.state = state
        self.setObjectName("classPicker")
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.setToolTip("The class the explanations, token colours, DecompX, Compare and the by-layer plot explain: "
                        "the predicted one (it follows each new text) or one you pick (it stays)")
        self._labels: tuple[str, ...] = ()
        self.activated.connect(self._on_activated)
        state.events.info.connect(lambda _info: self.refill())
        state.task.target_changed.connect(lambda _k: self.refill())
        self.refill()

    def refill(self) -> None:
        """Fill the entries from the model's labels and show the state's choice."""
        task = self.state.task
        labels = task.labels()
        predicted = task.predicted()
        self.blockSignals(True)
        if labels != self._labels:
            self.clear()
            self.addItem("Predicted", PREDICTED_DATA)
            for i, name in enumerate(labels):
                self.addItem(name, i)
            self._labels = labels
        name = labels[predicted] if 0 <= predicted < len(labels) else "\u2014"
        self.setItemText(0, f"Predicted ({name})")
        self.setCurrentIndex(0 if task.following else task.target + 1)
        info = self.state.info
        self.setEnabled(bool(labels) and (info is None or task_type(info.task).reads_probabilities))
        self.blockSignals(False)

    def _on_activated(self, index: int) -> None:
        data = self.itemData(index)
        self.state.task.pick(None if data == PREDICTED_DATA or data is None else int(data))
