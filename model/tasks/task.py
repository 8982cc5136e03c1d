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

import numpy as np

SINGLE_LABEL = "single_label"
MULTI_LABEL = "multi_label"
REGRESSION = "regression"
TASKS = (SINGLE_LABEL, MULTI_LABEL, REGRESSION)
TASK_TITLES = {
    SINGLE_LABEL: "Single-label classification (softmax)",
    MULTI_LABEL: "Multi-label classification (sigmoid per label)",
    REGRESSION: "Regression (the raw output)",
}
PROBLEM_TYPES = {
    SINGLE_LABEL: "single_label_classification",
    MULTI_LABEL: "multi_label_classification",
    REGRESSION: "regression",
}
DEFAULT_THRESHOLD = 0.5


def check_task(kind: str) -> str:
    """``kind`` when it is one of :data:`TASKS`. Raises ValueError naming the known tasks otherwise."""
    if kind not in TASKS:
        raise ValueError(f"unknown task {kind!r}; expected one of {', '.join(TASKS)}")
    return kind


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
    if problem_type == PROBLEM_TYPES[REGRESSION]:
        return REGRESSION
    if problem_type == PROBLEM_TYPES[MULTI_LABEL] or (problem_type != PROBLEM_TYPES[SINGLE_LABEL] and num_labels == 1):
        return MULTI_LABEL
    return SINGLE_LABEL


@dataclass(frozen=True)
class Task:
    """The task a loaded model is read as.

    Attributes:
        kind: one of :data:`TASKS`.
        threshold: the multi-label decision threshold in (0, 1) (kept, unused, for the other tasks).
        source: ``"config"`` (decided from ``config.json``), ``"user"`` (overridden by the user) or ``"bundled"``.
    """

    kind: str = SINGLE_LABEL
    threshold: float = DEFAULT_THRESHOLD
    source: str = "config"

    def __post_init__(self) -> None:
        check_task(self.kind)
        object.__setattr__(self, "threshold", check_threshold(self.threshold))


def probabilities_of(logits: np.ndarray, kind: str) -> np.ndarray:
    """What the task makes of logits: float32 [..., C] softmax (single-label) or sigmoid (multi-label) of
    ``logits`` [..., C]; for regression an empty float32 [..., 0] (the value is the raw output, no probability).
    Numerically stable (max-shifted softmax; sigmoid through ``exp(-|z|)``)."""
    z = np.asarray(logits, dtype=np.float64)
    if kind == REGRESSION:
        return np.zeros(z.shape[:-1] + (0,), np.float32)
    if kind == MULTI_LABEL:
        e = np.exp(-np.abs(z))
        return np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(np.float32)
    e = np.exp(z - z.max(axis=-1, keepdims=True)) if z.shape[-1] else z
    return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32) if z.shape[-1] else z.astype(np.float32)


def predicted_labels(probabilities: np.ndarray, labels: tuple[str, ...], kind: str,
                     threshold: float = DEFAULT_THRESHOLD) -> tuple[str, ...]:
    """The predicted labels: single-label, the argmax class (one name); multi-label, every label whose sigmoid is
    at or above ``threshold``, in the model's label order (possibly none); regression, ``()``."""
    p = np.asarray(probabilities)
    if kind == REGRESSION or p.size == 0:
        return ()
    if kind == MULTI_LABEL:
        return tuple(labels[i] for i in np.flatnonzero(p >= threshold))
    return (labels[int(p.argmax())],)


def label_text(names: tuple[str, ...]) -> str:
    """The one-string form of predicted labels, as the batch table and exports write it: joined by ``";"``."""
    return ";".join(names)
