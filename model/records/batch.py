"""The record of one batch-scored input: :class:`ResultRow` (plain Python values; no torch, no NumPy arrays).

Built by :mod:`model.batch.engine` (``scored_row``, ``failed_row``), shown by the GUI's batch table, written and read
back by :mod:`model.batch.rows`' :class:`~model.batch.rows.RowSchema` (the columns a model's rows export; see
docs/batch_schema.md).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from model.tasks.types import SINGLE_LABEL, task_type


@dataclass(frozen=True, slots=True)
class ResultRow:
    """One exported row: a scored text (or pair) or the reason an input was not scored.

    Attributes:
        source: where the text came from (see :class:`model.batch.Record`).
        text: the full text ("" when it could not be read).
        label: the prediction: the class (single-label), the labels at or above the threshold joined by ``";"``
            (multi-label, maybe ""), "" for regression and when not scored.
        probabilities: float [C] as a tuple, in the order of ``labels``: softmax (single-label) or independent
            sigmoids (multi-label); ``()`` for regression and when not scored.
        num_tokens: tokens the model saw, ``[CLS]`` included (0 when not scored).
        truncated: the text was longer than ``max_len`` tokens and cut (head+tail; a pair: longest side first).
        gold: the known true label in the model's names (multi-label ``";"``-joined; regression the value as text),
            or "" when unknown; a multi-label row whose gold is the empty label set also has "" (:attr:`has_gold`).
        correct: single-label ``label == gold``; multi-label the exact set (subset accuracy); None for regression
            and when the gold is unknown.
        status: ``"ok"`` or why the input was not scored.
        num_windows: the windows the text was read in (:mod:`model.text.document_windows`; 1 when it fits or was cut, 0 when
            not scored).
        model: the folder of the model that scored the row (absolute path; "" when not scored or unknown).
        text_pair: the second text of a sentence pair, or None.
        value: the regression output (raw), or None.
        labels: the model's C class names (``Predictor.labels``), naming ``probabilities``; ``()`` for regression
            and when not scored.
        task: :data:`model.tasks.task.TASKS`.
        precision: what the model ran in when it scored the row, ``"fp32"`` or ``"bf16"``
            (:mod:`model.predictor.precision`; "" when not scored or unknown).
        components: with ``--components`` (issue 53), every part of the predicted output's logit as ``(name, value)``
            pairs in the model's part order (:class:`model.records.components.ComponentAttribution`); ``()`` without.
    """

    source: str
    text: str
    label: str
    probabilities: tuple[float, ...]
    num_tokens: int
    truncated: bool
    gold: str
    correct: bool | None
    status: str
    num_windows: int = 1
    model: str = ""
    text_pair: str | None = None
    value: float | None = None
    labels: tuple[str, ...] = ()
    task: str = SINGLE_LABEL
    precision: str = ""
    components: tuple[tuple[str, float], ...] = ()

    @property
    def ok(self) -> bool:
        """True when the text was scored."""
        return self.status == "ok"

    @property
    def has_gold(self) -> bool:
        """True when the row's gold label is known: a non-empty ``gold``, or a scored multi-label row whose gold is
        the empty label set (``gold`` "" with ``correct`` set: an explicit ``[]`` or empty label cell, issue 46)."""
        return bool(self.gold) or (task_type(self.task).label_set and self.correct is not None)

    def probability(self, name: str) -> float | None:
        """The probability of class ``name`` (softmax or sigmoid), or None (not scored, regression, no such class)."""
        if not self.probabilities or name not in self.labels:
            return None
        return self.probabilities[self.labels.index(name)]

    @property
    def confidence(self) -> float | None:
        """Single-label: the predicted class's probability (the top one); None otherwise."""
        if not task_type(self.task).exclusive or not self.probabilities:
            return None
        return max(self.probabilities)


BLOCK_FIELDS = ("source", "text", "label", "probabilities", "num_tokens", "truncated", "gold", "correct", "status",
                "num_windows", "model", "text_pair", "value", "labels", "task", "precision",
                "components")
"""Every :class:`ResultRow` field, in order (the Ray engine's blocks carry them all)."""
assert tuple(f.name for f in fields(ResultRow)) == BLOCK_FIELDS
