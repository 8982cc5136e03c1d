"""The state's choices for any task type (issue 30): the class to explain, the multi-label threshold, the second text.

:class:`TaskChoice` lives in :class:`desktop_app.state.ExplorerState` as ``state.task`` (as ``state.windows`` holds
the window choice). One "Explain class" choice serves the explanations, the token colours, DecompX, Compare and the
by-layer plot: it defaults to the predicted class (:attr:`model.records.prediction.Prediction.label_index`, the argmax of the
logits) and follows it from text to text until the user picks a class; then it stays on the user's class until the
model changes or the user picks "predicted" again (``pick(None)``). Qt signals only; no torch.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from PySide6.QtCore import QObject, Signal

from model.tasks.task import label_text
from model.tasks.types import task_type

PREDICTED = None  # ``TaskChoice.pick(PREDICTED)``: follow the predicted class again


def relabelled(pred, threshold: float):
    """``pred`` (a :class:`model.records.prediction.Prediction`) read with another multi-label ``threshold``: a
    ``dataclasses.replace`` with the new ``threshold`` and ``label`` (the labels at or above it, ";"-joined: the
    whole document's verdict, also for one window of a long review); no forward pass (the sigmoids are unchanged). Tasks whose labels do not depend on a
    threshold (:attr:`model.tasks.types.TaskType.label_set` False): ``pred`` unchanged."""
    if pred is None or not task_type(pred.task).label_set:
        return pred
    label = label_text(task_type(pred.task).labels_of(pred.probabilities, pred.labels, threshold))
    return dataclasses.replace(pred, threshold=float(threshold), label=label)


def same_input(a, b) -> bool:
    """True when predictions ``a`` and ``b`` read the same input the same way (the whole text and its tokens, second
    text, task, logits): only their labelling (a multi-label threshold) or the window shown of a long review may
    differ, so their explanations (over the whole review) are the same."""
    if a is None or b is None:
        return a is b
    return a is b or (a.document.text == b.document.text and a.text_pair == b.text_pair and a.task == b.task
                      and a.document.tokens == b.document.tokens and np.array_equal(a.logits, b.logits))


def verdict_text(pred) -> str:
    """One line for the status bar: "positive (97.3 %)" (single-label), "joy, love" or "no label >= 0.50"
    (multi-label), "value 3.42" (regression), "attention only" (no classification head):
    :meth:`model.tasks.types.TaskType.verdict`."""
    return "attention only" if pred.attention_only else task_type(pred.task).verdict(pred)


class TaskChoice(QObject):
    """The class to explain, the multi-label threshold and the second text of a pair (see the module docstring).

    Args:
        state: the :class:`~desktop_app.state.ExplorerState` it belongs to (followed: ``events.prediction``,
            ``events.info``).

    Signals:
        target_changed(int): the class to explain changed (an index into the labels; -1 when there is none).
        threshold_changed(float): the multi-label threshold changed (in (0, 1)).
        text_pair_changed(object): the second text changed (a str, or None: a single text).
    """

    target_changed = Signal(int)
    threshold_changed = Signal(float)
    text_pair_changed = Signal(object)

    def __init__(self, state) -> None:
        super().__init__()  # owned by the state (a plain object, not a QObject parent)
        self.state = state
        self.user: int | None = None  # the user's class, or None: follow the predicted one
        self._target = -1
        self.threshold = 0.5
        self.text_pair: str | None = None
        state.events.prediction.connect(self._follow)
        state.events.info.connect(self._on_model)

    # ---------------------------------------------------------------- the class to explain
    @property
    def target(self) -> int:
        """The class to explain: the user's pick, else the prediction's ``label_index``; -1 with no prediction and no
        pick (or a model without classes)."""
        return self._target

    @property
    def following(self) -> bool:
        """True while the choice follows the predicted class (the user has not picked one)."""
        return self.user is None

    def predicted(self) -> int:
        """The current prediction's default class (``label_index`` of the whole text), or -1."""
        pred = self.state.prediction
        return pred.label_index if pred is not None else -1

    def pick(self, index: int | None) -> None:
        """Explain class ``index`` (0-based) from now on; None (:data:`PREDICTED`): follow the predicted class.

        Raises:
            ValueError: an index outside the model's labels.
        """
        labels = self.labels()
        if index is not None:
            index = int(index)
            if not 0 <= index < max(1, len(labels)):
                raise ValueError(f"class {index} is not one of the model's {len(labels)} classes")
        self.user = index
        self._update()

    def labels(self) -> tuple[str, ...]:
        """The loaded model's class names (empty before a model is known)."""
        info = self.state.info
        return tuple(info.labels) if info is not None else ()

    def _update(self) -> None:
        new = self.user if self.user is not None else self.predicted()
        if new != self._target:
            self._target = new
            self.target_changed.emit(new)

    def _follow(self, _pred) -> None:
        if self.user is None:
            self._update()

    def _on_model(self, info) -> None:
        self.user = None  # another model (or task): its classes are other classes
        self.threshold = float(getattr(info, "threshold", 0.5))
        self._update()

    # ---------------------------------------------------------------- the threshold
    def set_threshold(self, threshold: float) -> None:
        """Use ``threshold`` (in (0, 1)) for the multi-label decision: the prediction on display is re-labelled
        (:func:`relabelled`, no forward pass) and announced through the state.

        Raises:
            ValueError: a threshold outside (0, 1) (:func:`model.tasks.task.check_threshold`).
        """
        from model.tasks.task import check_threshold

        t = check_threshold(threshold)
        if t == self.threshold:
            return
        self.threshold = t
        self.threshold_changed.emit(t)
        pred = self.state.prediction
        new = relabelled(pred, t) if pred is not None and pred.threshold != t else pred
        if new is not pred:
            by_layer = self.state.layer_probabilities  # the sigmoids by layer do not depend on the threshold
            self.state.set_prediction(new)
            self.state.set_layer_probabilities(by_layer)

    def follow_model(self, info) -> None:
        """The predictor now reads its outputs with ``info.threshold`` (``Predictor.set_task(threshold=...)``, the
        task unchanged): ``state.info`` becomes ``info`` without a model change (the views, the class pick and the
        pins stay), and the threshold on display follows it unless the user has moved it since it was asked for."""
        old = self.state.info
        self.state.reread_model(info)
        if old is None or self.threshold == old.threshold:
            self.set_threshold(info.threshold)

    def adopt(self, pred):
        """``pred`` (a new prediction from the worker) read with the user's threshold (:func:`relabelled`), or
        ``pred`` itself when it already is (or is not multi-label)."""
        if pred is not None and pred.threshold != self.threshold:
            return relabelled(pred, self.threshold)
        return pred

    # ---------------------------------------------------------------- the second text
    def set_text_pair(self, text: str | None) -> None:
        """Remember the second text of a pair (None: the text is a single text) and announce a change."""
        if text != self.text_pair:
            self.text_pair = text
            self.text_pair_changed.emit(text)
