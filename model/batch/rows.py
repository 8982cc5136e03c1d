"""The columns of batch scoring's result rows, which depend on the model (issue 30; docs/batch_schema.md).

One record, :class:`model.records.batch.ResultRow` (defined there, imported here), holds every task's result: the
predicted label(s), the class probabilities in the model's label order (``labels``), the regression ``value``, the
second text of a pair. One schema,
:class:`RowSchema` (the model's labels, its task, whether texts are pairs), names the exported columns::

    source, text, [text_pair], label, [confidence], [p_<label> per class], [value],
    num_tokens, truncated, gold, correct, status, num_windows, model, precision, [top_components]

``text_pair`` only when texts are pairs; ``confidence`` only for single-label models; ``p_<label>`` for single- and
multi-label models (the bundled model writes ``p_negative, p_positive``); ``value`` only for regression;
``top_components`` only with ``--components`` (issue 53). Every
writer (:mod:`model.batch.export`, :mod:`model.batch.shards`, the Ray engine) and reader goes through
:meth:`RowSchema.values` and :func:`row_from_mapping`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from model.records.batch import BLOCK_FIELDS, ResultRow
from model.records.components import top_text
from model.tasks.task import task_of
from model.tasks.types import PROBABILITY_PREFIX, SINGLE_LABEL, task_type, task_type_of_columns

from .readers import Record

BINARY_LABELS = ("negative", "positive")


def precision_of(rows: Sequence[ResultRow]) -> str | None:
    """What the scored ``rows`` ran in (:attr:`ResultRow.precision`), as :func:`precision_label` says it."""
    counts: dict[str, int] = {}
    for r in rows:
        if r.ok and r.precision:
            counts[r.precision] = counts.get(r.precision, 0) + 1
    return precision_label(counts)


def precision_label(counts: dict[str, int]) -> str | None:
    """``"fp32"`` or ``"bf16"`` when every counted row ran in one precision (``counts``: rows per precision),
    ``"bf16 (3), fp32 (5)"`` (by name) when they differ (a Ray cluster of different CPUs), None when empty."""
    if len(counts) <= 1:
        return next(iter(counts), None)
    return ", ".join(f"{name} ({n:,})" for name, n in sorted(counts.items()))


def failed_row(record: Record, status: str | None = None, gold: str = "") -> ResultRow:
    """The row for a record that was not scored (``status`` overrides the record's; ``gold`` the resolved one)."""
    return ResultRow(record.source, record.text or "", "", (), 0, False, gold, None, status or record.status, 0,
                     text_pair=record.text_pair)


def binary_row(source: str, text: str, label: str, p_positive: float | None, num_tokens: int, truncated: bool,
               gold: str, correct: bool | None, status: str, **kw: Any) -> ResultRow:
    """A row of a negative/positive model given P(positive) (``probabilities = (1 - p, p)``; ``()`` for None), as
    the rows were written before issue 30: for tests, benchmarks and hand-made rows."""
    probs = () if p_positive is None else (1.0 - float(p_positive), float(p_positive))
    return ResultRow(source, text, label, probs, num_tokens, truncated, gold, correct, status,
                     **{"labels": BINARY_LABELS if probs else (), **kw})


@dataclass(frozen=True)
class RowSchema:
    """The exported columns of one model's rows (module docstring).

    Attributes:
        labels: the model's class names, in order. task: :data:`model.tasks.task.TASKS`.
        pairs: the rows hold sentence pairs (a ``text_pair`` column); None: not known yet (a writer decides from the
            first rows it writes, :class:`model.batch.export.RowWriter`).
        components: a last ``top_components`` column (``--components``, issue 53): each row's five largest parts of
            its predicted logit, :func:`model.records.components.top_text` (written only; read back as no parts).
    """

    labels: tuple[str, ...] = BINARY_LABELS
    task: str = SINGLE_LABEL
    pairs: bool | None = False
    components: bool = False

    @classmethod
    def of_rows(cls, rows: Sequence[ResultRow]) -> RowSchema:
        """The schema of ``rows``: the labels and task of the first scored row (the bundled model's when none),
        pairs when any row has a second text."""
        first = next((r for r in rows if r.ok), None)
        pairs, parts = any(r.text_pair is not None for r in rows), any(r.components for r in rows)
        return cls(first.labels, first.task, pairs, parts) if first else cls(pairs=pairs, components=parts)

    @classmethod
    def of_predictor(cls, predictor: Any, pairs: bool | None = False, components: bool = False) -> RowSchema:
        """The schema of a :class:`model.Predictor`'s rows (its labels and ``task.kind``; single-label without)."""
        return cls(tuple(predictor.labels), task_of(predictor).kind, pairs, components)

    @cached_property
    def _score_columns(self) -> tuple[str, ...]:
        return task_type(self.task).score_columns(self.labels)

    @property
    def columns(self) -> tuple[str, ...]:
        """The column names, in order (the task's own: :meth:`model.tasks.types.TaskType.score_columns`)."""
        cols = ["source", "text"] + (["text_pair"] if self.pairs else []) + ["label"]
        return (*cols, *self._score_columns, "num_tokens", "truncated", "gold", "correct", "status", "num_windows",
                "model", "precision", *(("top_components",) if self.components else ()))

    def values(self, row: ResultRow) -> dict[str, Any]:
        """``row`` as a dict keyed by :attr:`columns`, in order (None for unknown values)."""
        out: dict[str, Any] = {"source": row.source, "text": row.text}
        if self.pairs:
            out["text_pair"] = row.text_pair
        out["label"] = row.label
        out.update(task_type(self.task).score_values(row, self.labels))
        out.update(num_tokens=row.num_tokens, truncated=row.truncated, gold=row.gold, correct=row.correct,
                   status=row.status, num_windows=row.num_windows, model=row.model, precision=row.precision)
        if self.components:
            out["top_components"] = top_text(row.components)
        return out

    def arrow_schema(self, pa: Any) -> Any:
        """The Arrow schema of :attr:`columns` (``pa`` is the imported ``pyarrow`` module)."""
        types = {"num_tokens": pa.int64(), "num_windows": pa.int64(), "truncated": pa.bool_(), "correct": pa.bool_(),
                 "confidence": pa.float64(), "value": pa.float64()}
        return pa.schema([(c, pa.float64() if c.startswith(PROBABILITY_PREFIX) else types.get(c, pa.string()))
                          for c in self.columns])


def _parse_bool(v: Any) -> bool | None:
    if v is None or v == "":
        return None
    if isinstance(v, bool):
        return v
    return str(v).strip().lower() == "true"


def _float(v: Any) -> float | None:
    if v is None or v == "":
        return None
    x = float(v)
    return None if math.isnan(x) else x


def row_from_mapping(d: dict[str, Any]) -> ResultRow:
    """A :class:`ResultRow` from an exported row (CSV strings or native JSON/Parquet values). The labels are the
    ``p_<label>`` columns in order; the task is regression with a ``value`` column, multi-label without a
    ``confidence`` column, else single-label. Exports written before issue 30 (one ``p_positive`` column) read as
    the bundled model's rows. Raises ValueError on a value of the wrong type."""
    names = tuple(k[len(PROBABILITY_PREFIX):] for k in d if k.startswith(PROBABILITY_PREFIX))
    status = str(d.get("status") or "")
    probs = tuple(_float(d.get(PROBABILITY_PREFIX + n)) for n in names)
    if names == ("positive",) and "confidence" not in d:  # before issue 30: P(positive) of the bundled model
        names, probs = BINARY_LABELS, ((None if probs[0] is None else 1.0 - probs[0]), probs[0])
    task = task_type_of_columns(tuple(d), names, BINARY_LABELS).id
    pair = d.get("text_pair")
    return ResultRow(
        source=str(d.get("source") or ""), text=str(d.get("text") or ""), label=str(d.get("label") or ""),
        probabilities=() if any(p is None for p in probs) else tuple(probs),  # type: ignore[arg-type]
        num_tokens=int(d.get("num_tokens") or 0), truncated=bool(_parse_bool(d.get("truncated"))),
        gold=str(d.get("gold") or ""), correct=_parse_bool(d.get("correct")), status=status,
        num_windows=int(d.get("num_windows") or (1 if status == "ok" else 0)), model=str(d.get("model") or ""),
        text_pair=str(pair) if pair else None,
        value=_float(d.get("value")), labels=names if status == "ok" else (),
        task=task if status == "ok" else SINGLE_LABEL, precision=str(d.get("precision") or ""),
    )


EXPORT_COLUMNS = RowSchema().columns
"""The bundled model's columns: ``source, text, label, confidence, p_negative, p_positive, num_tokens, truncated,
gold, correct, status, num_windows, model, precision``."""

__all__ = ["BLOCK_FIELDS", "EXPORT_COLUMNS", "PROBABILITY_PREFIX", "ResultRow", "RowSchema", "binary_row", "failed_row", "precision_label", "precision_of",
           "row_from_mapping"]
