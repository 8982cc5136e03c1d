"""The task a classifier's head was trained for, and what its logits mean (NumPy only; the GUI imports it).

A sequence-classification head outputs C logits. What the app makes of them depends on the task, decided as
``transformers``' text-classification pipeline decides its ``function_to_apply``
(``TextClassificationPipeline.postprocess``):

* ``"regression"`` (``problem_type: regression``): the raw output is the predicted value; no probabilities.
* ``"multi_label"`` (``problem_type: multi_label_classification``, or a single output and no ``problem_type``):
  an independent sigmoid per label; the predicted labels are those at or above a threshold (0.5 by default).
* ``"single_label"`` (anything else): softmax over the C classes; the predicted class is the argmax.

Many shared configs leave ``problem_type`` out, so a user may override the task per model folder
(:class:`Task` ``source="user"``). The bundled IMDB model is single-label (negative, positive).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from model.tasks.types import MULTI_LABEL, REGRESSION, SINGLE_LABEL, TASK_TYPES, TaskType, task_type

TASKS = tuple(TASK_TYPES)
"""The serialisation ids of every task type (:data:`model.tasks.types.TASK_TYPES`), in the menu's order."""
TASK_TITLES = {t.id: t.title for t in TASK_TYPES.values()}
PROBLEM_TYPES = {t.id: t.problem_type for t in TASK_TYPES.values()}
DEFAULT_THRESHOLD = 0.5


def check_task(kind: str) -> str:
    """``kind`` when it is one of :data:`TASKS`. Raises ValueError naming the known tasks otherwise
    (:func:`model.tasks.types.task_type`)."""
    return task_type(kind).id


def check_threshold(threshold: float) -> float:
    """``threshold`` as a float in (0, 1). Raises ValueError otherwise (a multi-label decision threshold)."""
    try:
        t = float(threshold)
    except (TypeError, ValueError):
        raise ValueError(f"the threshold must be a number in (0, 1), got {threshold!r}") from None
    if not 0.0 < t < 1.0:
        raise ValueError(f"the threshold must be in (0, 1), got {t}")
    return t


def task_from_config(problem_type: str | None, num_labels: int) -> str:
    """The task of a head with ``num_labels`` outputs and the config's ``problem_type`` (None when absent).

    Follows ``transformers``' text-classification pipeline: ``regression`` -> regression;
    ``multi_label_classification`` or a single output -> multi-label (sigmoid); otherwise single-label (softmax).
    An unknown ``problem_type`` string is treated as absent.
    """
    by_problem = {t.problem_type: t for t in TASK_TYPES.values()}
    if problem_type in by_problem:
        return by_problem[problem_type].id
    return MULTI_LABEL if num_labels == 1 else SINGLE_LABEL


@dataclass(frozen=True)
class Task:
    """The task a loaded model is read as.

    Attributes:
        kind: one of :data:`TASKS` (a :class:`~model.tasks.types.TaskType` given here is stored as its id).
        threshold: the multi-label decision threshold in (0, 1) (kept, unused, for the other tasks).
        source: ``"config"`` (decided from ``config.json``), ``"user"`` (overridden by the user) or ``"bundled"``.
    """

    kind: str = SINGLE_LABEL
    threshold: float = DEFAULT_THRESHOLD
    source: str = "config"

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", check_task(self.kind))
        object.__setattr__(self, "threshold", check_threshold(self.threshold))

    @property
    def type(self) -> TaskType:
        """The :class:`~model.tasks.types.TaskType` that reads the head (parsed from :attr:`kind`)."""
        return task_type(self.kind)

    def labels_of(self, probabilities: np.ndarray, labels: tuple[str, ...]) -> tuple[str, ...]:
        """The predicted labels of one row of scores [C] under this task and threshold
        (:meth:`model.tasks.types.TaskType.labels_of`)."""
        return self.type.labels_of(probabilities, labels, self.threshold)


def task_of(model: Any) -> Task:
    """The :class:`Task` an object reads its head as: ``model.task`` (a :class:`model.Predictor`'s), or the default
    single-label task for an object without one (a bare encoder's stand-in, a test double). The one place that
    asks."""
    task = getattr(model, "task", None)
    return task if isinstance(task, Task) else Task()


def probabilities_of(logits: np.ndarray, kind: str | TaskType) -> np.ndarray:
    """What the task makes of logits: float32 [..., C] softmax (single-label) or sigmoid (multi-label) of
    ``logits`` [..., C]; for regression an empty float32 [..., 0] (the value is the raw output, no probability).
    Numerically stable (max-shifted softmax; sigmoid through ``exp(-|z|)``). :meth:`TaskType.scores`.

    Raises:
        ValueError: an unknown task id."""
    return task_type(kind).scores(logits)


def predicted_labels(probabilities: np.ndarray, labels: tuple[str, ...], kind: str | TaskType,
                     threshold: float = DEFAULT_THRESHOLD) -> tuple[str, ...]:
    """The predicted labels: single-label, the argmax class (one name); multi-label, every label whose sigmoid is
    at or above ``threshold``, in the model's label order (possibly none); regression, ``()``
    (:meth:`TaskType.labels_of`). Raises ValueError for an unknown task id."""
    return task_type(kind).labels_of(probabilities, labels, threshold)


def label_text(names: tuple[str, ...]) -> str:
    """The one-string form of predicted labels, as the batch table and exports write it: joined by ``";"``."""
    return ";".join(names)


__all__ = ["DEFAULT_THRESHOLD", "MULTI_LABEL", "PROBLEM_TYPES", "REGRESSION", "SINGLE_LABEL", "TASKS", "TASK_TITLES",
           "Task", "TaskType", "check_task", "check_threshold", "label_text", "predicted_labels", "probabilities_of",
           "task_from_config", "task_of", "task_type"]
