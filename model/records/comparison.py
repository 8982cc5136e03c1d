"""The records of two models compared row by row (issue 44; NumPy only, read-only arrays).

* :class:`ComparedRow`: one batch row scored by model A (its own fields, a :class:`~model.records.batch.ResultRow`)
  with model B's row of the same input (:attr:`ComparedRow.b`) and whether they agree (:attr:`ComparedRow.agree`);
  every consumer of A's rows (writers, summaries, corpus metrics, the batch table) reads it as A's row.
* :class:`McNemar` and :class:`ComparisonMetrics`: the paired metrics of a compared corpus (accuracy of each model on
  the same rows, agreement, the A-versus-B confusion, McNemar's exact test), built by
  :func:`model.corpus.comparison.comparison_metrics`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from model.tasks.types import task_type

from .batch import ResultRow


@dataclass(frozen=True, slots=True)
class ComparedRow(ResultRow):
    """Model A's row of one input (all of :class:`ResultRow`'s fields) with model B's row of the same input.

    Attributes:
        b: model B's :class:`ResultRow` of the same record (same ``source``, ``text``, ``gold``), or None when B did
            not score it (the run stopped between the two models).
    """

    b: ResultRow | None = None

    @property
    def agree(self) -> bool | None:
        """Whether A and B predict the same: the task's own test of a prediction against a label
        (:meth:`model.tasks.types.TaskType.correct` with B's label as the gold: the same class, the same label set);
        None when either row was not scored or the task predicts no label (regression)."""
        if self.b is None or not (self.ok and self.b.ok):
            return None
        return task_type(self.task).correct(self.label, self.b.label)


@dataclass(frozen=True)
class McNemar:
    """McNemar's exact test on the rows with a gold label that both models scored.

    Attributes:
        b01: rows A got right and B wrong. b10: rows A got wrong and B right.
        p_value: the two-sided exact binomial p-value of ``b01`` successes in ``b01 + b10`` trials at 1/2, in [0, 1];
            None when ``b01 + b10 == 0`` (no discordant row: nothing to test).
    """

    b01: int
    b10: int
    p_value: float | None


@dataclass(frozen=True)
class ComparisonMetrics:
    """The paired metrics of rows scored by two models (:func:`model.corpus.comparison.comparison_metrics`).

    Attributes:
        a_model, b_model: the two model folders (absolute paths, "" when unknown).
        task: the shared task's id (:data:`model.tasks.types.TASK_TYPES`). labels: the C class names, A's order.
        n_rows: rows seen. n_compared: rows both models scored. n_with_gold: of those, rows with a known gold label
            and a right-or-wrong answer from both (the rows of the accuracies and of McNemar).
        a_accuracy, b_accuracy: fractions right among the ``n_with_gold`` rows, in [0, 1]; None without such rows.
        agreement: the fraction of the compared rows where A and B predict the same (:attr:`ComparedRow.agree`),
            in [0, 1]; None when the task predicts no label (regression) or nothing was compared.
        confusion: int64 [C, C], rows A's predicted class, columns B's (single-label only; None otherwise).
        mcnemar: :class:`McNemar`.
        mean_abs_difference: regression: the mean of ``|A's value - B's value|`` over the compared rows, in the
            output's units; None for classifiers.
        by_length: ``(slice name, ComparisonMetrics)`` per length slice of the Corpus dock (``"1-128"``, ...,
            ``"truncated"``), McNemar per slice; ``()`` when not asked for.
    """

    a_model: str
    b_model: str
    task: str
    labels: tuple[str, ...]
    n_rows: int
    n_compared: int
    n_with_gold: int
    a_accuracy: float | None
    b_accuracy: float | None
    agreement: float | None
    confusion: np.ndarray | None
    mcnemar: McNemar
    mean_abs_difference: float | None = None
    by_length: tuple[tuple[str, ComparisonMetrics], ...] = ()

    def __post_init__(self) -> None:
        if self.confusion is not None:
            self.confusion.setflags(write=False)


__all__ = ["ComparedRow", "ComparisonMetrics", "McNemar"]
