"""Model B's columns in the batch results table (issue 44): rows scored by two models
(:class:`model.records.comparison.ComparedRow`) show B's prediction, B's probability per class (or B's value) and
whether the two agree, after the model's own columns (:class:`~desktop_app.panels.batch.table_model.BatchTableModel`).

No Qt and no torch: the table model asks these functions for each compare column's title, text and sort key. The
"Agree?" column sorts disagreements first (ascending: disagree 0, agree 1, unknown 2), and
:func:`agree_column` finds it for Analysis > Batch: disagreements first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from model.tasks.types import task_type

B_LABEL, B_PROBABILITY, B_VALUE, AGREE = "b_label", "b_p", "b_value", "agree"
"""The kinds of B's columns (``(kind, class name or "")`` entries of the table's own columns)."""
KINDS = (B_LABEL, B_PROBABILITY, B_VALUE, AGREE)


def compare_columns(labels: Sequence[str], task: str) -> list[tuple[str, str]]:
    """B's columns for a model pair with these labels and this task: B's prediction, one "B: P(label)" per class
    (or "B: value" when the task reads no probabilities), "Agree?"."""
    scores = ([(B_PROBABILITY, n) for n in labels] if task_type(task).reads_probabilities else [(B_VALUE, "")])
    return [(B_LABEL, ""), *scores, (AGREE, "")]


def has_model_b(rows: Sequence[Any]) -> bool:
    """True when one of ``rows`` carries model B's row (a compared row)."""
    return any(getattr(r, "b", None) is not None for r in rows)


def title(kind: str, name: str) -> str:
    """The header of a compare column."""
    return {B_LABEL: "B: predicted", B_PROBABILITY: f"B: P({name})", B_VALUE: "B: value", AGREE: "Agree?"}[kind]


def _b(row: Any) -> Any:
    b = getattr(row, "b", None)
    return b if b is not None and b.ok else None


def display(row: Any, kind: str, name: str) -> str:
    """The text of a compare cell ("" where B did not score the row)."""
    if kind == AGREE:
        agree = getattr(row, "agree", None)
        return "" if agree is None else ("yes" if agree else "NO")
    b = _b(row)
    if b is None:
        return "" if kind != B_LABEL or getattr(row, "b", None) is None else row.b.status
    if kind == B_LABEL:
        return b.label
    x = b.value if kind == B_VALUE else b.probability(name)
    return "" if x is None else f"{x:.3f}"


def sort_key(row: Any, kind: str, name: str) -> float | str:
    """The sort key of a compare cell: B's label lower-cased; B's probability or value (-inf when unknown);
    agreement 0 (they disagree), 1 (they agree), 2 (unknown), so ascending puts disagreements first."""
    if kind == AGREE:
        agree = getattr(row, "agree", None)
        return 2.0 if agree is None else float(agree)
    b = _b(row)
    if kind == B_LABEL:
        return "" if b is None else b.label.lower()
    x = None if b is None else (b.value if kind == B_VALUE else b.probability(name))
    return float("-inf") if x is None else float(x)


def agree_column(extra: Sequence[tuple[str, str]], first: int) -> int:
    """The table column of "Agree?" among the model's own columns ``extra`` (which start at column ``first``),
    or -1 when the table has none."""
    return next((first + k for k, (kind, _) in enumerate(extra) if kind == AGREE), -1)


__all__ = ["AGREE", "B_LABEL", "B_PROBABILITY", "B_VALUE", "KINDS", "agree_column", "compare_columns", "display",
           "has_model_b", "sort_key", "title"]
