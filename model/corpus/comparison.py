"""Two models scored row by row (issue 44): the check that they can be compared, B's columns, the paired metrics.

* :func:`comparison_problem` / :func:`check_comparable`: both models must read their heads as the same task type and
  know the same labels; otherwise a ValueError names both model folders and what differs.
* :func:`score_compared`: each chunk of records is scored by A and then by B with the batch engine's own code
  (:func:`model.batch.engine.score_records`, the path of the GUI, the command line and the Ray actors), and the two
  rows of each input are joined into one :class:`~model.records.comparison.ComparedRow` (:func:`pair_rows`).
* :class:`CompareSchema`: A's exported columns (:class:`~model.batch.rows.RowSchema`) followed by B's::

      b_label, b_<each of the task's score columns>, b_status, agree

  (single-label ``b_confidence, b_p_<label>...``; multi-label ``b_p_<label>...``; regression ``b_value``: the
  names come from :meth:`model.tasks.types.TaskType.score_columns`).
* :func:`comparison_metrics`: accuracies of both models on the same gold rows, agreement, the A-versus-B confusion
  (single-label), McNemar's exact test (:func:`mcnemar_exact`); :func:`comparison_dict` is its ``metrics.json`` entry.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from model.records.batch import ResultRow
from model.records.comparison import ComparedRow, ComparisonMetrics, McNemar
from model.tasks.task import task_of
from model.tasks.types import TaskType, task_type

from model.corpus.metrics import LENGTH_EDGES
from model.batch.engine import score_records
from model.batch.readers import Record
from model.batch.rows import RowSchema

B_PREFIX = "b_"
"""Model B's exported columns are A's names with this prefix (``b_label``, ``b_p_<label>``, ``b_value``)."""
AGREE_COLUMN = "agree"


def _folder(predictor: Any) -> str:
    """How messages name a model: its folder, or "the model without a folder"."""
    folder = getattr(predictor, "model_dir", None)
    return str(folder) if folder else "the model without a folder"


def comparison_problem(a: Any, b: Any) -> str | None:
    """Why models ``a`` and ``b`` (:class:`model.Predictor` s) cannot be compared row by row, in one sentence naming
    both folders and what differs (the task type, the labels), or None when they can (the same task type and the
    same set of labels; B's probabilities are then read by A's label names)."""
    ta, tb = task_of(a).type, task_of(b).type
    if ta != tb:
        return (f"model A ({_folder(a)}) reads its outputs as {ta.title.lower()} and model B ({_folder(b)}) as "
                f"{tb.title.lower()}: both must have the same task to be compared row by row")
    la, lb = tuple(a.labels), tuple(b.labels)
    if set(la) != set(lb) or len(la) != len(lb):
        only_a = [n for n in la if n not in lb] or ["none"]
        only_b = [n for n in lb if n not in la] or ["none"]
        return (f"model A ({_folder(a)}) and model B ({_folder(b)}) have different labels (only A: "
                f"{', '.join(only_a)}; only B: {', '.join(only_b)}; A: {', '.join(la)}; B: {', '.join(lb)}): both "
                "must know the same labels to be compared row by row")
    return None


def check_comparable(a: Any, b: Any) -> None:
    """Nothing when :func:`comparison_problem` finds none.

    Raises:
        ValueError: the models differ in task type or labels (the message names both folders and the difference).
    """
    problem = comparison_problem(a, b)
    if problem is not None:
        raise ValueError(problem)


# ---------------------------------------------------------------------------------------------------------------
# Rows


def compared(a_row: ResultRow, b_row: ResultRow | None) -> ComparedRow:
    """``a_row`` with B's row of the same input attached (a :class:`ComparedRow`)."""
    values = {f.name: getattr(a_row, f.name) for f in dataclasses.fields(ResultRow)}
    return ComparedRow(**values, b=b_row)


def pair_rows(a_rows: Sequence[ResultRow], b_rows: Sequence[ResultRow]) -> list[ComparedRow]:
    """Join the rows two models made of the same records, in order (the shorter side decides how many).

    Raises:
        ValueError: a pair of rows comes from different inputs (``source`` or ``text`` differ): the two runs did not
            read the same records in the same order.
    """
    out = []
    for a, b in zip(a_rows, b_rows):
        if a.source != b.source or a.text != b.text:
            raise ValueError(f"model B's row of {b.source!r} is paired with model A's row of {a.source!r}: the two "
                             "runs did not read the same inputs in the same order")
        out.append(compared(a, b))
    return out


def score_compared(a: Any, b: Any, records: Iterable[Record], *, chunk: int = 512,
                   progress: Callable[[int], None] | None = None, should_stop: Callable[[], bool] | None = None,
                   on_gold_problem: Callable[[str, str], None] | None = None,
                   **scoring: Any) -> Iterator[list[ComparedRow]]:
    """Score a stream of records with two models, chunk by chunk; yields each chunk's :class:`ComparedRow` s in order.

    Each chunk of ``chunk`` records is scored by ``a`` and then by ``b`` with :func:`model.batch.engine.score_records`
    (B's rows equal those of a run of B alone with the same settings), so memory stays bounded by one chunk.

    Args:
        a, b: two :class:`model.Predictor` s that :func:`check_comparable` accepts.
        records: e.g. :func:`model.batch.walk.iter_records`, consumed lazily.
        chunk: records scored by both models per step.
        progress: ``progress(done)``: records handled so far, a record counting half when one model has scored it.
        should_stop: checked before each chunk and by ``score_records``; a stop keeps the rows both models scored.
        on_gold_problem: gold labels A does not know (B knows the same labels: reported once).
        scoring: ``batch_size`` and ``long_text``, passed to ``score_records`` for both models; ``vectors`` and
            ``on_vectors`` (the sentence vectors of the corpus map) to model A's only.

    Raises:
        ValueError: the models cannot be compared (:func:`check_comparable`), or ``batch_size``/``chunk`` < 1.
    """
    check_comparable(a, b)
    if chunk < 1:
        raise ValueError(f"chunk must be >= 1, got {chunk}")
    it = iter(records)
    base = 0
    while not (should_stop is not None and should_stop()):
        block = [r for _, r in zip(range(chunk), it)]
        if not block:
            return
        rows: list[list[ResultRow]] = []
        only_a = {k: scoring.pop(k) for k in ("vectors", "on_vectors") if k in scoring}
        for k, (model, gold_problem) in enumerate(((a, on_gold_problem), (b, None))):
            def half(done: int, _k: int = k, _base: int = base) -> None:
                if progress is not None:
                    progress(_base + (_k * len(block) + done) // 2)

            rows.append([r for part in score_records(model, block, chunk=len(block), progress=half,
                                                     should_stop=should_stop, on_gold_problem=gold_problem, **scoring,
                                                     **(only_a if k == 0 else {}))
                         for r in part])
        base += len(block)
        paired = pair_rows(*rows)
        if paired:
            yield paired
        if len(paired) < len(block):  # stopped inside the chunk
            return


# ---------------------------------------------------------------------------------------------------------------
# Columns


def compare_columns(task: str | TaskType, labels: Sequence[str]) -> tuple[str, ...]:
    """B's exported columns for a model pair of this task and these labels (module docstring)."""
    own = task_type(task).score_columns(tuple(labels))
    return (B_PREFIX + "label", *(B_PREFIX + c for c in own), B_PREFIX + "status", AGREE_COLUMN)


def compare_values(row: ResultRow, task: str | TaskType, labels: Sequence[str]) -> dict[str, Any]:
    """``row``'s values of :func:`compare_columns` (None where unknown: a plain row, B did not score the input)."""
    b = getattr(row, "b", None)
    t = task_type(task)
    if b is None:
        return dict.fromkeys(compare_columns(t, labels))
    own = {B_PREFIX + k: v for k, v in t.score_values(b, tuple(labels)).items()} if b.ok else \
        {B_PREFIX + c: None for c in t.score_columns(tuple(labels))}
    return {B_PREFIX + "label": b.label, **own, B_PREFIX + "status": b.status, AGREE_COLUMN: row.agree}


@dataclasses.dataclass(frozen=True)
class CompareSchema(RowSchema):
    """A :class:`RowSchema` (A's columns) followed by B's :func:`compare_columns`; every writer takes it."""

    @classmethod
    def of(cls, schema: RowSchema) -> CompareSchema:
        """The compare schema of A's ``schema`` (same labels, task and pairs)."""
        return cls(schema.labels, schema.task, schema.pairs)

    @property
    def columns(self) -> tuple[str, ...]:
        """A's columns, then B's (:func:`compare_columns`)."""
        return (*super().columns, *compare_columns(self.task, self.labels))

    def values(self, row: ResultRow) -> dict[str, Any]:
        """``row`` (a :class:`ComparedRow`) as a dict keyed by :attr:`columns`, in order."""
        return {**super().values(row), **compare_values(row, self.task, self.labels)}

    def arrow_schema(self, pa: Any) -> Any:
        """A's Arrow schema with B's columns (floats for B's scores, bool ``agree``, strings otherwise)."""
        base = RowSchema(self.labels, self.task, self.pairs).arrow_schema(pa)  # A's columns only
        types = {AGREE_COLUMN: pa.bool_()}
        for name in compare_columns(self.task, self.labels):
            a_name = name[len(B_PREFIX):] if name.startswith(B_PREFIX) else name
            if name not in types:
                types[name] = base.field(a_name).type if a_name in base.names and a_name != "label" else pa.string()
        return pa.schema([*base, *((n, types[n]) for n in compare_columns(self.task, self.labels))])


def schema_of_rows(rows: Sequence[ResultRow]) -> RowSchema:
    """The columns to export ``rows`` with: :meth:`RowSchema.of_rows`, as a :class:`CompareSchema` when a row carries
    model B's (a :class:`ComparedRow`)."""
    schema = RowSchema.of_rows(rows)
    return CompareSchema.of(schema) if any(getattr(r, "b", None) is not None for r in rows) else schema


# ---------------------------------------------------------------------------------------------------------------
# Metrics


def mcnemar_exact(b01: int, b10: int) -> float | None:
    """The two-sided exact McNemar p-value (McNemar 1947; the exact binomial form): ``b01`` successes in
    ``n = b01 + b10`` Bernoulli(1/2) trials, ``scipy.stats.binomtest(b01, n, 0.5).pvalue`` (twice the smaller tail, at
    most 1). None when ``n == 0``.

    Raises:
        ValueError: a negative count.
    """
    from scipy.stats import binomtest

    if b01 < 0 or b10 < 0:
        raise ValueError(f"counts must be >= 0, got b01={b01}, b10={b10}")
    n = b01 + b10
    if n == 0:
        return None
    return float(binomtest(int(b01), int(n), 0.5).pvalue)


class ComparisonTally:
    """Running counts of compared rows (:meth:`add` chunk by chunk, like :class:`model.batch.engine.Summary`), read
    as :class:`ComparisonMetrics` by :meth:`metrics`; plain rows count as not compared.

    Args:
        labels: the C class names (A's order): the confusion's rows and columns.
        task: the shared task (id or type).
        a_model, b_model: the folders, recorded as they are.
        by_length: also count each length slice (:class:`SliceTallies`; :attr:`ComparisonMetrics.by_length`).
    """

    def __init__(self, labels: Sequence[str], task: str | TaskType, a_model: str = "", b_model: str = "",
                 by_length: bool = False) -> None:
        self.slices = SliceTallies(labels, task, a_model, b_model) if by_length else None
        self.task = task_type(task)
        self.labels = tuple(labels)
        self.models = (a_model, b_model)
        self._index = {n: k for k, n in enumerate(self.labels)}
        self.confusion = np.zeros((len(self.labels),) * 2, np.int64) if self.task.exclusive else None
        self.n_rows = self.n_compared = self.n_gold = self.a_right = self.b_right = 0
        self.b01 = self.b10 = self.agreed = self.n_agree = 0
        self._diff_sum, self._n_diff = 0.0, 0

    def add(self, rows: Iterable[ResultRow]) -> None:
        """Count ``rows`` in."""
        if self.slices is not None:
            rows = list(rows)
            self.slices.add(rows)
        for r in rows:
            self.n_rows += 1
            b = getattr(r, "b", None)
            if b is None or not (r.ok and b.ok):
                continue
            self.n_compared += 1
            if (agree := r.agree) is not None:
                self.n_agree += 1
                self.agreed += agree
            if self.confusion is not None and r.label in self._index and b.label in self._index:
                self.confusion[self._index[r.label], self._index[b.label]] += 1
            if r.value is not None and b.value is not None:
                self._diff_sum += abs(r.value - b.value)
                self._n_diff += 1
            if r.correct is not None and b.correct is not None:
                self.n_gold += 1
                self.a_right += r.correct
                self.b_right += b.correct
                self.b01 += r.correct and not b.correct
                self.b10 += b.correct and not r.correct

    def metrics(self) -> ComparisonMetrics:
        """The :class:`ComparisonMetrics` of the rows counted so far."""
        n = self.n_gold
        return ComparisonMetrics(
            *self.models, self.task.id, self.labels, self.n_rows, self.n_compared, n,
            self.a_right / n if n else None, self.b_right / n if n else None,
            self.agreed / self.n_agree if self.n_agree else None,
            None if self.confusion is None else self.confusion.copy(),
            McNemar(int(self.b01), int(self.b10), mcnemar_exact(int(self.b01), int(self.b10))),
            self._diff_sum / self._n_diff if self._n_diff else None,
            () if self.slices is None else tuple(self.slices.metrics()))


def comparison_metrics(rows: Iterable[ResultRow], labels: Sequence[str], task: str | TaskType,
                       a_model: str = "", b_model: str = "", by_length: bool = False) -> ComparisonMetrics:
    """The paired metrics of compared rows (:class:`ComparisonMetrics`; :class:`ComparisonTally`'s arguments).

    Args:
        rows: :class:`ComparedRow` s (e.g. from :func:`score_compared`).
    """
    tally = ComparisonTally(labels, task, a_model, b_model, by_length)
    tally.add(rows)
    return tally.metrics()


def length_slice(num_tokens: int, truncated: bool) -> str:
    """The Corpus dock's length slice of a row (:data:`model.corpus.metrics.LENGTH_EDGES`: ``"1-128"``, ...,
    ``"1025+"`` for longer texts read whole, ``"truncated"``)."""
    if truncated:
        return "truncated"
    edges = (0, *LENGTH_EDGES)
    return next((f"{lo + 1}-{hi}" for lo, hi in zip(edges[:-1], edges[1:]) if num_tokens <= hi), f"{edges[-1] + 1}+")


class SliceTallies:
    """A :class:`ComparisonTally` per length slice (:func:`length_slice` of A's row; rows A did not score are left
    out), for McNemar per slice. Same arguments as :class:`ComparisonTally`."""

    def __init__(self, labels: Sequence[str], task: str | TaskType, a_model: str = "", b_model: str = "") -> None:
        self._args = (tuple(labels), task, a_model, b_model)
        self.tallies: dict[str, ComparisonTally] = {}

    def add(self, rows: Iterable[ResultRow]) -> None:
        """Count ``rows`` in, each in its slice."""
        for r in rows:
            if r.ok:
                name = length_slice(r.num_tokens, r.truncated)
                self.tallies.setdefault(name, ComparisonTally(*self._args)).add((r,))

    def metrics(self) -> list[tuple[str, ComparisonMetrics]]:
        """``(slice, ComparisonMetrics)`` of each slice with rows, shortest texts first, "truncated" last."""
        order = [length_slice(n, False) for n in (*LENGTH_EDGES, LENGTH_EDGES[-1] + 1)] + ["truncated"]
        return [(name, self.tallies[name].metrics()) for name in order if name in self.tallies]


def _paired(m: ComparisonMetrics) -> dict[str, Any]:
    return {"a_accuracy": m.a_accuracy, "b_accuracy": m.b_accuracy, "agreement": m.agreement,
            "mcnemar": {"b01": m.mcnemar.b01, "b10": m.mcnemar.b10, "p_value": m.mcnemar.p_value}}


def comparison_dict(m: ComparisonMetrics) -> dict[str, Any]:
    """``metrics.json``'s ``"comparison"`` entry: ``a_accuracy``, ``b_accuracy``, ``agreement``, ``mcnemar``
    (``b01``, ``b10``, ``p_value``), then ``a_model``, ``b_model``, ``n_compared``, ``n_with_gold``, ``confusion``
    (``{"labels", "matrix"}``, rows A, columns B; null unless single-label), ``mean_abs_difference`` (regression)
    and ``by_length`` (per length slice: ``slice``, the four paired keys, ``n_compared``, ``n_with_gold``)."""
    confusion = None if m.confusion is None else {"labels": list(m.labels), "matrix": m.confusion.tolist()}
    return {**_paired(m), "a_model": m.a_model, "b_model": m.b_model, "n_compared": m.n_compared,
            "n_with_gold": m.n_with_gold, "confusion": confusion, "mean_abs_difference": m.mean_abs_difference,
            "by_length": [{"slice": name, **_paired(s), "n_compared": s.n_compared, "n_with_gold": s.n_with_gold}
                          for name, s in m.by_length]}


__all__ = ["AGREE_COLUMN", "B_PREFIX", "CompareSchema", "ComparisonTally", "SliceTallies", "check_comparable",
           "compare_columns", "compare_values", "compared", "comparison_dict", "comparison_metrics",
           "comparison_problem", "length_slice", "mcnemar_exact", "pair_rows", "schema_of_rows", "score_compared"]
