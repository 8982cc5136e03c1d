"""Task types as types: one class per way of reading a classification head's C logits (NumPy only; the GUI imports it).

As LIT's output types (``lit_nlp.api.types``: ``MulticlassPreds``, ``SparseMultilabelPreds``, ``RegressionScore``),
each :class:`TaskType` owns what differs between the tasks, so that the rest of the code asks the type instead of
comparing strings, and adding a task kind means adding one subclass here:

* how logits become scores (:meth:`~TaskType.scores` on NumPy, :meth:`~TaskType.torch_scores` on tensors for
  :mod:`model.tasks.readout`), what a faithfulness measure reads (:meth:`~TaskType.measured_values`);
* how scores become labels (:meth:`~TaskType.labels_of`, with the multi-label threshold), the value
  (:meth:`~TaskType.value_of`), the one-line texts of a prediction (:meth:`~TaskType.verdict`,
  :meth:`~TaskType.headline`) and whether a prediction is right (:meth:`~TaskType.correct`);
* the exported columns of a batch row (:meth:`~TaskType.score_columns`, :meth:`~TaskType.score_values`, read back by
  :func:`task_type_of_columns`), the metrics keys (:attr:`~TaskType.metric_keys`) and the Corpus plots that apply
  (:attr:`~TaskType.corpus_plots`);
* which target an explanation takes (:attr:`~TaskType.explains_log_odds`, :meth:`~TaskType.class_scores`).

The ids (``"single_label"``, ``"multi_label"``, ``"regression"``) are serialisation ids only (config, sessions,
JSON, command-line values and the records' ``task`` fields): :func:`task_type` parses one into its type. Code that
needs behaviour still spread outside (the corpus metrics of :mod:`model.corpus.metrics`, the report's cards) selects
it with :meth:`TaskType.pick` from a table keyed by the type's class; the tests check every table covers every type.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, ClassVar, TypeVar

import numpy as np

PROBABILITY_PREFIX = "p_"
"""The exported column of one class's probability is ``p_<label>`` (:meth:`TaskType.score_columns`)."""
V = TypeVar("V")
_REGISTRY: dict[str, TaskType] = {}


class TaskType:
    """How one task reads a head's C logits (see the module docstring); subclasses are stateless singletons,
    registered under their :attr:`id` when defined (:data:`TASK_TYPES`; a subclass without its own ``id`` is a shared
    base, not registered). Instances compare equal when they are of the same class.

    Raises:
        ValueError: (when a subclass is defined) its ``id`` is registered already.

    Attributes:
        id: the serialisation id (config, session, JSON, ``--task``).
        title: the long name ("Single-label classification (softmax)").
        menu_title: the Model > Task menu entry, with its ``&`` shortcut.
        problem_type: ``config.json``'s ``problem_type`` for this task (as ``transformers`` names it).
        reads_probabilities: True when the scores are a probability per label (bars, ``p_<label>`` columns,
            per-class filters); False when the head's raw output is a value (no probabilities: shape (0,)).
        exclusive: True when exactly one class is predicted (the argmax): the explained score is the class's log-odds
            against the others, a batch row has a ``confidence``, the corpus has a confusion matrix and an ECE.
        label_set: True when the predicted labels are a set chosen by a threshold (maybe empty; the threshold box).
        measured: what faithfulness measures for this task, in words (the explanations' table tooltip).
        metric_keys: the keys ``metrics.json`` adds for this task (:mod:`model.report.report`).
        corpus_plots: the Corpus dock's plots for this task, in order (names of ``CorpusPanel`` plot attributes).
    """

    id: ClassVar[str]
    title: ClassVar[str]
    menu_title: ClassVar[str]
    problem_type: ClassVar[str]
    reads_probabilities: ClassVar[bool] = True
    exclusive: ClassVar[bool] = False
    label_set: ClassVar[bool] = False
    measured: ClassVar[str]
    metric_keys: ClassVar[tuple[str, ...]]
    corpus_plots: ClassVar[tuple[str, ...]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "id" not in cls.__dict__:  # a shared base of several kinds, not a kind itself
            return
        if cls.id in _REGISTRY:
            raise ValueError(f"task id {cls.id!r} is registered twice")
        _REGISTRY[cls.id] = cls()

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self))

    # ------------------------------------------------------------------ dispatch
    def pick(self, table: Mapping[type[TaskType], V]) -> V:
        """``table``'s entry for this type (a table of behaviour kept beside its consumer, keyed by type class).

        Raises:
            LookupError: the table has no entry for this type (a new task kind not added there yet).
        """
        try:
            return table[type(self)]
        except KeyError:
            raise LookupError(f"no entry for the task {self.id!r} in this table") from None

    # ------------------------------------------------------------------ logits -> scores
    def scores(self, logits: np.ndarray) -> np.ndarray:
        """float32 [..., C'] scores of ``logits`` [..., C]: softmax, a sigmoid per label, or [..., 0] (no
        probabilities) for a value. Numerically stable."""
        raise NotImplementedError

    def torch_scores(self, logits: Any) -> Any:
        """The same on a torch tensor (B, C) -> (B, C') (tensor methods only: this module never imports torch);
        :func:`model.tasks.readout.probabilities`."""
        raise NotImplementedError

    def torch_outputs(self, logits: Any) -> Any:
        """What the task reads on a tensor (B, C): :meth:`torch_scores`, or the logits themselves (the predicted
        value) when the task reads no probabilities; :func:`model.tasks.readout.outputs`."""
        return self.torch_scores(logits) if self.reads_probabilities else logits

    def measured_values(self, logits: np.ndarray, probabilities: np.ndarray) -> np.ndarray:
        """What a faithfulness measure reads from one prediction's float [C] ``logits`` and their ``probabilities``:
        the probabilities, or the logits (the value) when the task reads no probabilities."""
        return probabilities if self.reads_probabilities else logits

    def score_width(self, n_outputs: int) -> int:
        """The length of the scores of a head with ``n_outputs`` outputs (``n_outputs``, or 0 for a value)."""
        return n_outputs if self.reads_probabilities else 0

    def check_outputs(self, n_outputs: int) -> None:
        """Raises ValueError when a head with ``n_outputs`` outputs cannot be read as this task (default: any)."""

    # ------------------------------------------------------------------ scores -> labels
    def labels_of(self, probabilities: np.ndarray, labels: Sequence[str], threshold: float) -> tuple[str, ...]:
        """The predicted label names of one row of scores [C] (the model's ``labels`` order); ``()`` when the scores
        are empty (a value, or no head)."""
        raise NotImplementedError

    def value_of(self, logits: np.ndarray) -> float | None:
        """The predicted value of one row of float [C] logits, or None (a classifier, or no head)."""
        return None

    def correct(self, label: str, gold: str) -> bool | None:
        """Whether a predicted ``label`` (``";"``-joined for label sets) equals the known ``gold``; None when the
        task has no right label (a value)."""
        return label == gold

    def verdict(self, pred: Any) -> str:
        """One line for the status bar about ``pred`` (a :class:`model.records.prediction.Prediction`)."""
        raise NotImplementedError

    def headline(self, pred: Any) -> str:
        """The prediction panel's big label for ``pred`` (a prediction with classes)."""
        return pred.label

    def headline_label(self, pred: Any) -> str | None:
        """The one label whose colour the big label wears (:meth:`headline`), or None: a neutral colour."""
        return pred.label

    # ------------------------------------------------------------------ explanations
    explains_log_odds: ClassVar[bool] = False
    """True when an explanation of class c explains its log-odds against the other classes (a softmax); False when
    it explains the output c itself (a sigmoid's logit is its log-odds; a regression's output is its value)."""

    def class_scores(self, contributions: np.ndarray, target: int) -> np.ndarray:
        """Signed token scores float32 [T] for class ``target`` from per-class contributions float [T, C]: the
        contribution to output ``target`` minus the mean contribution to the others when :attr:`explains_log_odds`
        (and C > 1), else the contribution to that output itself."""
        c = np.asarray(contributions, dtype=np.float64)
        if not self.explains_log_odds or c.shape[1] == 1:
            return c[:, target].astype(np.float32)
        others = np.delete(c, target, axis=1)
        return (c[:, target] - others.mean(axis=1)).astype(np.float32)

    # ------------------------------------------------------------------ exported columns
    def score_columns(self, labels: Sequence[str]) -> tuple[str, ...]:
        """The exported columns of a batch row's scores for a model with these ``labels`` (between ``label`` and
        ``num_tokens``; :class:`model.batch.rows.RowSchema`)."""
        return _probability_columns(tuple(labels))

    def score_values(self, row: Any, labels: Sequence[str]) -> dict[str, Any]:
        """``row``'s (a :class:`model.batch.rows.ResultRow`) values of :meth:`score_columns` (None where unknown)."""
        labels = tuple(labels)
        if tuple(row.labels) == labels and row.probabilities:  # the usual case: no lookup per class
            return dict(zip(_probability_columns(labels), row.probabilities))
        return {PROBABILITY_PREFIX + n: row.probability(n) for n in labels}


@lru_cache(maxsize=64)
def _probability_columns(labels: tuple[str, ...]) -> tuple[str, ...]:
    """``p_<label>`` for each label (cached: every exported row asks)."""
    return tuple(PROBABILITY_PREFIX + name for name in labels)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    e = np.exp(-np.abs(z))
    return np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


class SingleLabel(TaskType):
    """Softmax over the C classes; the predicted class is the argmax (``MulticlassPreds``)."""

    id = "single_label"
    title = "Single-label classification (softmax)"
    menu_title = "&Single-label (softmax)"
    problem_type = "single_label_classification"
    exclusive = True
    explains_log_odds = True
    measured = "p(class)"
    metric_keys = ("macro_f1", "weighted_f1", "per_class")
    corpus_plots = ("confusion", "per_class", "histogram", "reliability", "slices")

    def scores(self, logits: np.ndarray) -> np.ndarray:
        z = np.asarray(logits, dtype=np.float64)
        if not z.shape[-1]:
            return z.astype(np.float32)
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)

    def torch_scores(self, logits: Any) -> Any:
        return logits.softmax(-1)

    def labels_of(self, probabilities: np.ndarray, labels: Sequence[str], threshold: float) -> tuple[str, ...]:
        p = np.asarray(probabilities)
        return (labels[int(p.argmax())],) if p.size else ()

    def verdict(self, pred: Any) -> str:
        return f"{pred.label} ({pred.probabilities.max() * 100:.1f} %)"

    def score_columns(self, labels: Sequence[str]) -> tuple[str, ...]:
        return ("confidence", *super().score_columns(labels))

    def score_values(self, row: Any, labels: Sequence[str]) -> dict[str, Any]:
        return {"confidence": row.confidence, **super().score_values(row, labels)}


class MultiLabel(TaskType):
    """An independent sigmoid per label; the predicted labels are those at or above a threshold, maybe none
    (``SparseMultilabelPreds``)."""

    id = "multi_label"
    title = "Multi-label classification (sigmoid per label)"
    menu_title = "&Multi-label (sigmoid per label)"
    problem_type = "multi_label_classification"
    label_set = True
    measured = "the label's sigmoid p(label)"
    metric_keys = ("micro_f1", "macro_f1", "subset_accuracy", "hamming_loss", "per_class")
    corpus_plots = ("per_class", "histogram", "slices")

    def scores(self, logits: np.ndarray) -> np.ndarray:
        return _sigmoid(np.asarray(logits, dtype=np.float64)).astype(np.float32)

    def torch_scores(self, logits: Any) -> Any:
        return logits.sigmoid()

    def labels_of(self, probabilities: np.ndarray, labels: Sequence[str], threshold: float) -> tuple[str, ...]:
        return tuple(labels[i] for i in np.flatnonzero(np.asarray(probabilities) >= threshold))

    def correct(self, label: str, gold: str) -> bool | None:
        return set(filter(None, label.split(";"))) == set(filter(None, gold.split(";")))

    def verdict(self, pred: Any) -> str:
        return self.headline(pred)

    def headline(self, pred: Any, most: int = 3) -> str:
        """The labels at or above the threshold, most probable first, at most ``most`` named ("joy, love, gratitude
        +4 more"), or "no label >= 0.50"."""
        names = pred.predicted_labels
        if not names:
            return f"no label \u2265 {pred.threshold:.2f}"
        probs = dict(zip(pred.labels, pred.probabilities.tolist()))
        names = sorted(names, key=lambda n: -probs[n])
        extra = f" +{len(names) - most} more" if len(names) > most else ""
        return ", ".join(names[:most]) + extra

    def headline_label(self, pred: Any) -> str | None:
        chosen = pred.predicted_labels
        return chosen[0] if len(chosen) == 1 else None


class Regression(TaskType):
    """The head's one raw output is the predicted value; no probabilities, no labels (``RegressionScore``)."""

    id = "regression"
    title = "Regression (the raw output)"
    menu_title = "&Regression (the raw value)"
    problem_type = "regression"
    reads_probabilities = False
    measured = "the predicted value (in the output's units, not a probability)"
    metric_keys = ("mae", "rmse", "pearson", "spearman")
    corpus_plots = ("scatter", "histogram", "slices")

    def scores(self, logits: np.ndarray) -> np.ndarray:
        z = np.asarray(logits)
        return np.zeros(z.shape[:-1] + (0,), np.float32)

    def torch_scores(self, logits: Any) -> Any:
        return logits[..., :0]

    def check_outputs(self, n_outputs: int) -> None:
        if n_outputs != 1:
            raise ValueError(f"regression reads one output, and this model has {n_outputs}")

    def labels_of(self, probabilities: np.ndarray, labels: Sequence[str], threshold: float) -> tuple[str, ...]:
        return ()

    def value_of(self, logits: np.ndarray) -> float | None:
        return float(logits[0]) if len(logits) else None

    def correct(self, label: str, gold: str) -> bool | None:
        return None

    def verdict(self, pred: Any) -> str:
        return f"value {pred.value:.3g}"

    def headline(self, pred: Any) -> str:
        name = pred.labels[0] if pred.labels and pred.labels[0] not in ("LABEL_0", "") else "value"
        return f"{name} = {pred.value:.3g}"

    def headline_label(self, pred: Any) -> str | None:
        return None

    def score_columns(self, labels: Sequence[str]) -> tuple[str, ...]:
        return ("value",)

    def score_values(self, row: Any, labels: Sequence[str]) -> dict[str, Any]:
        return {"value": row.value}


TASK_TYPES: Mapping[str, TaskType] = _REGISTRY
"""Every task type by its id, in the order they were defined (the menu's order)."""
SINGLE_LABEL, MULTI_LABEL, REGRESSION = SingleLabel.id, MultiLabel.id, Regression.id


def task_type(kind: str | TaskType) -> TaskType:
    """The :class:`TaskType` of a serialisation id (``"single_label"``, ...); a type is returned as it is.

    Raises:
        ValueError: an unknown id; the message names the known ones.
    """
    if isinstance(kind, TaskType):
        return kind
    found = _REGISTRY.get(kind) if isinstance(kind, str) else None
    if found is None:
        raise ValueError(f"unknown task {kind!r}; expected one of {', '.join(_REGISTRY)}")
    return found


def task_type_of_columns(columns: Sequence[str], labels: Sequence[str], exclusive_labels: Sequence[str] = ()) -> TaskType:
    """The task whose :meth:`~TaskType.score_columns` an exported row's ``columns`` hold (the inverse of the
    export): the type whose own columns (besides ``p_<label>``) are all present, the most such columns winning
    (a ``value`` column: regression; ``confidence``: single-label; neither: multi-label; a tie goes to the type
    defined last). ``labels`` equal to
    ``exclusive_labels`` (the bundled model's two classes, written before there were tasks) read as single-label."""
    present = set(columns)

    def fit(t: TaskType) -> int:
        own = set(t.score_columns(labels)) - {PROBABILITY_PREFIX + n for n in labels}
        return len(own) if own <= present else -1

    best = max(reversed(list(_REGISTRY.values())), key=fit)
    if exclusive_labels and tuple(labels) == tuple(exclusive_labels) and fit(best) == 0:
        return task_type(SINGLE_LABEL)
    return best


__all__ = ["MULTI_LABEL", "PROBABILITY_PREFIX", "REGRESSION", "SINGLE_LABEL", "TASK_TYPES", "MultiLabel", "Regression",
           "SingleLabel", "TaskType", "task_type", "task_type_of_columns"]
