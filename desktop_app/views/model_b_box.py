"""The prediction panel's compact "Model B" section (issue 44): model B's verdict on the text on display and whether
it agrees with model A's.

:class:`ModelBBox` draws what the second-model controller (:mod:`desktop_app.window.second_model`) hands it: A's
prediction (read through ``label``, ``labels``, ``probabilities``, ``value``, ``task``: the whole text's verdict) and
B's :class:`model.records.prediction.Score` of the same text. No torch. The verdict of each task type is one line
(:data:`B_VERDICTS`, selected by :meth:`model.tasks.types.TaskType.pick`); agreement is the task's own test
(:meth:`model.tasks.types.TaskType.correct` with B's label in the gold's place), so a regression pair shows the
difference of the values instead.
"""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout, QWidget

from model.palette import label_colour
from model.tasks.types import MultiLabel, Regression, SingleLabel, task_type

from .widgets import ElidedLabel

AGREE_COLOUR, DISAGREE_COLOUR = "#2e7d32", "#b00020"


def _single(score) -> str:
    return f"{score.label} ({100 * float(score.probabilities.max()):.1f} %)"


def _multi(score) -> str:
    return ", ".join(score.label.split(";")) if score.label else "no label at or above the threshold"


def _value(score) -> str:
    return "no value" if score.value is None else f"value {score.value:.3g}"


B_VERDICTS = {SingleLabel: _single, MultiLabel: _multi, Regression: _value}
"""One line of model B's :class:`~model.records.prediction.Score`, by task type."""


def agreement_text(a_pred, b_score) -> tuple[str, str]:
    """``(text, colour)``: whether A's prediction and B's score of the same text agree, in words."""
    task = task_type(a_pred.task)
    agree = task.correct(a_pred.label, b_score.label)
    if agree is None:  # a value: no labels to agree on
        if a_pred.value is None or b_score.value is None:
            return "", "palette(mid)"
        return f"B \u2212 A = {b_score.value - a_pred.value:+.3g}", "palette(text)"
    if agree:
        return "A and B agree", AGREE_COLOUR
    a_says = a_pred.label.replace(";", ", ") or "no label"
    b_says = b_score.label.replace(";", ", ") or "no label"
    return f"A and B disagree: A says {a_says}, B says {b_says}", DISAGREE_COLOUR


class ModelBBox(QWidget):
    """Model B's verdict right under A's (module docstring), where the user looks: two lines, the title and B's
    verdict, then whether they agree, each one line (elided, the whole text its tooltip), so the box never pushes
    A's bars far down; hidden while no model B is chosen. (Issue 56: under A's details it was below the Prediction
    dock's fold, and loading B changed nothing visible.)

    Attributes:
        title: "Model B: <folder name>". verdict: B's verdict line. agreement: "A and B agree" or how they differ.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("modelBBox")
        self.title = QLabel("")
        self.title.setStyleSheet("color: palette(mid);")
        self.title.setMinimumWidth(40)  # a long folder name is cut, never widens the dock
        self.verdict = ElidedLabel("")
        f = self.verdict.font()
        f.setBold(True)
        f.setPointSizeF(f.pointSizeF() * 1.2)
        self.verdict.setFont(f)
        self.agreement = ElidedLabel("")
        line = QHBoxLayout()
        line.setSpacing(8)
        line.addWidget(self.title)
        line.addWidget(self.verdict, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 4)
        lay.setSpacing(1)
        lay.addLayout(line)
        lay.addWidget(self.agreement)
        self.setVisible(False)

    def set_model(self, name: str | None) -> None:
        """Model B's name (its folder's), or None: no model B (the box hides)."""
        self.setVisible(name is not None)
        self.title.setText(f"Model B: {name}" if name else "")
        self.clear()

    def clear(self, message: str = "") -> None:
        """No verdict (``message`` instead, e.g. "scoring\u2026" or why B cannot be compared)."""
        self.verdict.setText("")
        self.agreement.setText(message)
        self.agreement.setStyleSheet("color: palette(mid);")

    def show_scores(self, a_pred, b_score) -> None:
        """B's ``b_score`` (a :class:`~model.records.prediction.Score`) of the text A predicted as ``a_pred``."""
        if b_score.error is not None:
            self.clear(f"B could not score this text: {b_score.error}")
            return
        task = task_type(a_pred.task)
        self.verdict.setText(task.pick(B_VERDICTS)(b_score))
        colour = label_colour(b_score.label, a_pred.labels) if task.exclusive else "palette(text)"
        self.verdict.setStyleSheet(f"color: {colour};")
        text, colour = agreement_text(a_pred, b_score)
        self.agreement.setText(text)
        self.agreement.setStyleSheet(f"color: {colour};")


__all__ = ["B_VERDICTS", "ModelBBox", "agreement_text"]
