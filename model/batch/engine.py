"""The batch-scoring engine: records in, result rows out, in chunks.

Used by the command line (:mod:`model.scorer.main`) and the GUI's batch panel
(``desktop_app.panels.batch.panel``), so both produce the same rows (:class:`~model.batch.rows.ResultRow`) and
columns (:class:`~model.batch.rows.RowSchema`: the model's labels and task decide them)::

    source, text, [text_pair], label, [confidence], [p_<label>...], [value], num_tokens, truncated, gold, correct,
    status, num_windows, model

:func:`score_records` pulls records from any iterator (usually
:func:`model.batch.walk.iter_records`) ``chunk`` at a time, scores the readable
ones with :meth:`model.Predictor.score_many` (length-bucketed batches, no
attention) and yields each chunk's rows in input order, so memory stays
bounded by one chunk no matter how many reviews stream through.

The rows (:class:`ResultRow`, columns :data:`EXPORT_COLUMNS`) are written by
:mod:`model.batch.export`.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from model.tasks.types import TaskType, task_type
from model.text.inputs import InputSpec

from .gold import GoldReader
from .readers import Record

from .rows import EXPORT_COLUMNS, ResultRow, RowSchema, failed_row, precision_label  # noqa: F401 - re-exported


def model_id(predictor: Any) -> str:
    """How a row names the model that scored it: the absolute path of ``predictor.model_dir`` ("" when the predictor
    was built without a folder)."""
    folder = predictor.model_dir
    return str(Path(folder).resolve()) if folder else ""


@dataclass(frozen=True)
class _Context:
    """What every row of one run shares: the model's labels, task, folder and precision, and its gold-label reader."""

    labels: tuple[str, ...]
    task: TaskType
    model: str
    gold: GoldReader
    inputs: InputSpec
    precision: str


def _context(predictor: Any, options: Any) -> _Context:
    """What the rows of one run share, from the run's options (its task and precision, taken once at its start)."""
    labels = tuple(predictor.labels)
    task = options.task.type
    return _Context(labels, task, model_id(predictor), GoldReader(labels, task.id),
                    InputSpec.of(predictor, "this model"), str(options.precision))


GoldProblem = Callable[[str, str], None]
"""``on_gold_problem(source, problem)``: a gold label the model does not know (the row is kept, without gold)."""


def score_records(
    predictor: Any,
    records: Iterable[Record],
    batch_size: int = 64,
    chunk: int = 512,
    progress: Callable[[int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    long_text: str | None = None,
    on_gold_problem: GoldProblem | None = None,
    vectors: Any = None,
    on_vectors: Callable[[list[Any]], None] | None = None,
    components: bool = False,
) -> Iterator[list[ResultRow]]:
    """Score a stream of records chunk by chunk; yields each chunk's rows in input order.

    Args:
        predictor: a :class:`model.Predictor` (anything with ``labels``, ``options(long_text=...)`` and
            ``score_many(texts, batch_size, progress, should_stop, options=...)``; ``reads_pairs`` and
            ``score_many(..., text_pairs=...)`` are used when present). The run's settings (long-text policy,
            precision, task) are taken once, at its start (``predictor.options``), and every chunk is scored with
            them, so a ``set_task`` or ``use_precision`` while it runs (the GUI's Model menu) reaches the next run.
        records: e.g. :func:`model.batch.iter_records`; consumed lazily, ``chunk`` records at a time. A record with
            ``text_pair`` is scored as a sentence pair; on a model that reads single texts it gets a failed row.
        batch_size: texts per forward pass (passed to ``score_many``).
        chunk: records pulled per step; bounds memory (texts of one chunk) and is the unit of length bucketing.
        progress: called as ``progress(done)`` with the records handled so far (scored or failed), after every batch.
        should_stop: checked before each chunk and (by ``score_many``) before each batch; when it returns True the
            engine yields the rows of the longest fully scored prefix of the current chunk and stops.
        long_text: the long-text policy passed to ``score_many`` (None: its default, ``"windows"``).
        on_gold_problem: called for each record whose gold label the model does not know
            (:class:`model.batch.gold.GoldReader`); its row keeps an empty gold.
        vectors: None, or a :class:`model.records.vectors.VectorSpec`: then each chunk's rows are preceded by
            ``on_vectors(one float32 [d] vector per row, None for a failed row)``, read in the scoring passes.
        components: split each scored row's predicted logit into :attr:`ResultRow.components` (issue 53;
            :meth:`model.Predictor.component_attribution` under the run's options: one more pass per row).

    Yields:
        Non-empty lists of :class:`ResultRow`; concatenated, they follow the record order.

    Raises:
        ValueError: ``batch_size`` < 1 or ``chunk`` < 1.
    """
    if batch_size < 1 or chunk < 1:
        raise ValueError(f"batch_size and chunk must be >= 1, got {batch_size} and {chunk}")
    options = predictor.options(long_text=long_text)  # the run's settings, fixed for the whole run
    options = options if vectors is None else options.replace(vectors=vectors)
    ctx = _context(predictor, options)
    it = iter(records)
    base = 0
    while True:
        if should_stop is not None and should_stop():
            return
        block = _take(it, chunk)
        if not block:
            return
        golds = [_gold(ctx, r, on_gold_problem) for r in block]
        ok_idx = [i for i, r in enumerate(block) if r.ok and ctx.inputs.refusal(r.text_pair) is None]
        texts = [block[i].text for i in ok_idx]

        def chunk_progress(done: int, _total: int, _base: int = base, _failed: int = len(block) - len(ok_idx)) -> None:
            if progress is not None:
                progress(_base + _failed + done)

        kw: dict[str, Any] = {"options": options}
        pairs = [block[i].text_pair for i in ok_idx]
        if any(p is not None for p in pairs):
            kw["text_pairs"] = pairs
        scores = predictor.score_many(texts, batch_size, chunk_progress, should_stop, **kw) if texts else []
        rows = _block_rows(block, score_at := dict(zip(ok_idx, scores)), ctx, golds)
        rows = [_with_components(predictor, r, options) for r in rows] if components else rows
        base += len(block)
        if not texts and progress is not None:
            progress(base)
        if on_vectors is not None and rows:  # rows[j] is block[j]'s row
            on_vectors([score_at[j].vector if r.ok and j in score_at else None for j, r in enumerate(rows)])
        if rows:
            yield rows
        if len(scores) < len(texts):  # stopped
            return


def components_refusal(predictor: Any) -> str | None:
    """Why ``predictor``'s logits cannot be split into components (``--components``: the message of
    :class:`model.records.components.ComponentsNotSupported`, e.g. DeBERTa v1), or None; one short pass, before any
    row is scored."""
    try:
        predictor.component_attribution("a")
    except NotImplementedError as exc:
        return str(exc)
    return None


def _with_components(predictor: Any, row: ResultRow, options: Any) -> ResultRow:
    """``row`` with its predicted logit's components (:attr:`ResultRow.components`) when it was scored: the output the
    row shows (its most probable class or label, as scored, bf16 included; regression: the value), split in float32; a
    text the split refuses (``ValueError``, ``NotImplementedError``: the model's family) keeps none."""
    if not row.ok:
        return row
    target = max(range(len(row.probabilities)), key=row.probabilities.__getitem__) if row.probabilities else 0
    try:
        split = predictor.component_attribution(row.text, target, row.text_pair, options=options)
    except (ValueError, NotImplementedError):
        return row
    return dataclasses.replace(row, components=split.pairs())


def _gold(ctx: _Context, record: Record, on_problem: GoldProblem | None) -> str | None:
    """The record's gold in the model's label names (None when unknown; a multi-label model's empty label set is
    ``""``); a problem goes to ``on_problem``."""
    gold, problem = ctx.gold.read(record.gold, record.gold_source)
    if problem is not None and on_problem is not None:
        on_problem(record.source, problem)
    return gold


def _take(it: Iterator[Record], n: int) -> list[Record]:
    """The next (up to) ``n`` records of ``it``."""
    block: list[Record] = []
    for rec in it:
        block.append(rec)
        if len(block) >= n:
            break
    return block


def _block_rows(block: list[Record], score_at: dict[int, Any], ctx: _Context,
                golds: list[str | None]) -> list[ResultRow]:
    """The rows of one block, in order: a scored row per readable record with a score (``score_at``: block index ->
    :class:`model.Score`), a failed row per unreadable one; stops at the first readable record without a score (the
    scoring stopped: only the scored prefix is kept). ``golds``: each record's gold (:func:`_gold`)."""
    rows: list[ResultRow] = []
    for i, rec in enumerate(block):
        if not rec.ok:
            rows.append(failed_row(rec, gold=golds[i] or ""))
            continue
        refused = ctx.inputs.refusal(rec.text_pair)
        if refused is not None:
            rows.append(failed_row(rec, f"{refused}: drop the second text (--pair-column) or choose a pair model",
                                   golds[i] or ""))
            continue
        if i not in score_at:
            break  # stopped: keep only the scored prefix
        s = score_at[i]
        if s.error is not None:
            rows.append(failed_row(rec, s.error, golds[i] or ""))
            continue
        rows.append(scored_row(rec, s, ctx, golds[i]))
    return rows


def scored_row(rec: Record, s: Any, ctx: _Context, gold: str | None) -> ResultRow:
    """The row of a record scored as :class:`model.Score` ``s`` (its ``task``, ``probabilities``, ``value``);
    ``gold``: :func:`_gold`'s (None: unknown; multi-label ``""``: the empty label set, which sets ``correct``)."""
    task = task_type(s.task)
    value = s.value
    correct = None if gold is None else task.correct(s.label, gold)
    gold = gold or ""
    return ResultRow(
        source=rec.source, text=rec.text or "", label=s.label,
        probabilities=tuple(float(p) for p in s.probabilities) if task.reads_probabilities else (),
        num_tokens=int(s.num_tokens), truncated=bool(s.truncated), gold=gold, correct=correct, status="ok",
        num_windows=int(s.num_windows), model=ctx.model, text_pair=rec.text_pair,
        value=None if value is None else float(value), labels=ctx.labels if task.reads_probabilities else (),
        task=task.id,
        precision=ctx.precision,
    )


@dataclass
class Summary:
    """Running totals over result rows (updated with :meth:`add`).

    Attributes:
        count: rows seen (scored + failed).
        ok: rows scored.
        failed: rows not scored (any status other than "ok").
        positive: scored rows predicted ``"positive"`` (counted when the model has that class, ``has_positive``).
        with_gold: scored rows with a known gold label.
        correct: scored rows whose prediction equals the gold label.
        elapsed_s: wall time of the run in seconds (set by the caller).
        models: scored rows per model that scored them (:attr:`ResultRow.model`), in first-seen order.
        precisions: scored rows per precision they ran in (:attr:`ResultRow.precision`; rows without one not counted).
        failures: the first ``max_failures`` ``(source, status)`` pairs.
        gold_problems: gold labels the model does not know (:meth:`gold_problem`; those rows have no gold).
        gold_examples: the first ``max_failures`` ``(source, problem)`` pairs of them.
    """

    count: int = 0
    ok: int = 0
    failed: int = 0
    positive: int = 0
    with_gold: int = 0
    correct: int = 0
    elapsed_s: float = 0.0
    failures: list[tuple[str, str]] = field(default_factory=list)
    max_failures: int = 200
    models: dict[str, int] = field(default_factory=dict)
    precisions: dict[str, int] = field(default_factory=dict)
    gold_problems: int = 0
    gold_examples: list[tuple[str, str]] = field(default_factory=list)
    has_positive: bool = False  # some scored row's model has a class called "positive" (the share is shown then)

    def gold_problem(self, source: str, problem: str) -> None:
        """Count a gold label the model does not know (the engine's ``on_gold_problem``)."""
        self.gold_problems += 1
        if len(self.gold_examples) < self.max_failures:
            self.gold_examples.append((source, problem))

    def add(self, rows: Iterable[ResultRow]) -> None:
        """Count ``rows`` in."""
        for r in rows:
            self.count += 1
            if not r.ok:
                self.failed += 1
                if len(self.failures) < self.max_failures:
                    self.failures.append((r.source, r.status))
                continue
            self.ok += 1
            self.models[r.model] = self.models.get(r.model, 0) + 1
            if r.precision:
                self.precisions[r.precision] = self.precisions.get(r.precision, 0) + 1
            self.positive += r.label == "positive"
            self.has_positive = self.has_positive or "positive" in r.labels
            if r.correct is not None:
                self.with_gold += 1
                self.correct += bool(r.correct)

    @property
    def positive_share(self) -> float | None:
        """Fraction of scored rows predicted positive, in [0, 1]; None when nothing was scored or the model has no
        class called "positive"."""
        return self.positive / self.ok if self.ok and self.has_positive else None

    @property
    def accuracy(self) -> float | None:
        """Fraction correct among scored rows with a gold label; None when there is none."""
        return self.correct / self.with_gold if self.with_gold else None

    @property
    def reviews_per_s(self) -> float | None:
        """Rows handled per second of ``elapsed_s``; None before any time passed."""
        return self.count / self.elapsed_s if self.elapsed_s > 0 else None

    def line(self) -> str:
        """A one-line human summary, e.g. ``"2,000 reviews · 1,990 scored, 10 failed · 51.2% positive · ..."``."""
        parts = [f"{self.count:,} reviews", f"{self.ok:,} scored" + (f", {self.failed:,} failed" if self.failed else "")]
        if self.positive_share is not None:
            parts.append(f"{100 * self.positive_share:.1f}% positive")
        if self.accuracy is not None:
            parts.append(f"accuracy {100 * self.accuracy:.1f}% on {self.with_gold:,} with gold labels")
        if self.gold_problems:
            parts.append(f"{self.gold_problems:,} gold label(s) not understood (left empty)")
        if self.reviews_per_s is not None:
            parts.append(f"{self.reviews_per_s:,.1f} reviews/s")
        if (precision := precision_label(self.precisions)) is not None:
            parts.append(f"precision {precision}")
        return " · ".join(parts)


# ---------------------------------------------------------------------------------------------------------------
# Export


class Timer:
    """Wall-clock stopwatch (``time.perf_counter``), in seconds."""

    def __init__(self) -> None:
        self.t0 = time.perf_counter()

    @property
    def elapsed_s(self) -> float:
        """Seconds since construction."""
        return time.perf_counter() - self.t0


__all__ = ["EXPORT_COLUMNS", "ResultRow", "Summary", "Timer", "failed_row", "score_records"]
