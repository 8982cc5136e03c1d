"""Which batch result rows the table shows: :class:`RowFilter`, one immutable description of every filter.

Pure Python (no Qt, no torch), so the same filter runs in the table's proxy
(:class:`desktop_app.panels.batch.proxy.BatchFilterProxy`) and, as a snapshot, on the corpus worker
(:mod:`desktop_app.workers.corpus.metrics`), which computes the corpus metrics of exactly the rows the table keeps.

The filters, all of which must hold:

* a category (:func:`categories`): all rows, predicted <class> (one per class), misclassified, failed;
* a search string: a case-insensitive substring of the source path, the review text or the status;
* a word (from the corpus dock's "What drives the corpus" lists): the review text contains it as a whole word
  (:mod:`desktop_app.words`: words as the corpus token scores define them);
* a confusion-matrix cell ``(gold, predicted)`` (the corpus dock's drill-down): the row's gold and predicted labels;
* a selection on the corpus map (issue 42): the rows chosen there (``points``: the rows' ``id()``, valid while the
  table holds them).

The table's proxy (:class:`desktop_app.panels.batch.proxy.BatchFilterProxy`) owns the one current filter; Clear and
a new scoring drop every filter (:meth:`~desktop_app.panels.batch.proxy.BatchFilterProxy.reset_filters`).

The corpus dock describes the rows of :meth:`RowFilter.population` (every filter but the cell), so after a cell
click the table shows that cell's rows while the matrix still shows every cell, one click from the next.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from model.tasks.types import SINGLE_LABEL, task_type

from desktop_app.words import contains_word

ALL = "All"
MISCLASSIFIED = "Misclassified"
PREDICTED = "Predicted "
FILTERS = (ALL, "Predicted positive", "Predicted negative", MISCLASSIFIED, "Failed")
"""The categories of the table's filter box for the bundled model, in order; another model's are
:func:`categories` (one "Predicted <class>" per class)."""


def categories(labels, task: str = SINGLE_LABEL) -> tuple[str, ...]:
    """The filter box's categories for a model's class names and task: All, "Predicted <class>" per class (none for
    regression), Misclassified, Failed."""
    per_class = tuple(PREDICTED + str(n) for n in labels) if task_type(task).reads_probabilities else ()
    return (ALL, *per_class, MISCLASSIFIED, "Failed")


def confidence(row) -> float:
    """How sure the model was of a scored row: the predicted class's probability (single-label), the highest sigmoid
    (multi-label); -1 when not scored or for regression (the Misclassified sort key)."""
    return max(row.probabilities) if row.probabilities else -1.0


@dataclass(frozen=True)
class RowFilter:
    """The table's filters (module docstring); immutable, so a snapshot can cross threads.

    Attributes:
        category: one of :data:`FILTERS`.
        needle: the lower-cased search string ("" for none).
        word: a word or bigram the review must contain ("" for none).
        cell: ``(gold label, predicted label)`` of a confusion-matrix cell, or None.
        points: the ``id()`` of each row selected on the corpus map, or None (no map selection); ``points_name``:
            what the selection is called (a slice's name, or "" for "map selection").
    """

    category: str = ALL
    needle: str = ""
    word: str = ""
    cell: tuple[str, str] | None = None
    points: frozenset[int] | None = None
    points_name: str = ""

    def __post_init__(self) -> None:
        if self.category not in FILTERS and not self.category.startswith(PREDICTED):
            raise ValueError(f"unknown filter {self.category!r}; choose one of {FILTERS} or 'Predicted <class>'")

    def is_filtering(self) -> bool:
        """True when some filter hides rows."""
        return (self.category != ALL or bool(self.needle) or bool(self.word) or self.cell is not None
                or self.points is not None)

    def population(self) -> RowFilter:
        """This filter without the confusion-matrix cell: the rows the corpus dock describes."""
        return replace(self, cell=None)

    def accepts(self, r) -> bool:
        """True when :class:`model.batch.ResultRow` ``r`` passes every filter."""
        cat = self.category
        if cat != ALL:
            if cat.startswith(PREDICTED) and cat[len(PREDICTED):] not in r.label.split(";"):
                return False  # multi-label: one of the predicted labels
            if cat == MISCLASSIFIED and r.correct is not False:
                return False
            if cat == "Failed" and r.ok:
                return False
        if self.cell is not None and (not r.ok or (r.gold, r.label) != self.cell):
            return False
        if self.points is not None and id(r) not in self.points:
            return False
        if self.needle:
            n = self.needle
            if not (n in r.source.lower() or n in r.status.lower() or n in r.text.lower()):
                return False
        return not self.word or contains_word(r.text, self.word)

    def describe(self) -> str:
        """A short human description, e.g. ``"Misclassified · word “great” · gold positive → predicted negative"``
        (``"all rows"`` when nothing is filtered)."""
        parts = [] if self.category == ALL else [self.category]
        if self.needle:
            parts.append(f"search \u201c{self.needle}\u201d")
        if self.word:
            parts.append(f"word \u201c{self.word}\u201d")
        if self.cell is not None:
            parts.append(f"gold {self.cell[0]} \u2192 predicted {self.cell[1]}")
        if self.points is not None:
            parts.append(f"{self.points_name or 'map selection'} ({len(self.points):,} texts)")
        return " \u00b7 ".join(parts) if parts else "all rows"
