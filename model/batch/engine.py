"""The batch-scoring engine: records in, result rows out, in chunks.

Used by the command line (:mod:`model.batch.cli`) and the GUI's batch panel
(``desktop_app.batch_panel``), so both produce the same columns::

    source, text, label, p_positive, num_tokens, truncated, gold, correct, status, num_windows, model

:func:`score_records` pulls records from any iterator (usually
:func:`model.batch.walk.iter_records`) ``chunk`` at a time, scores the readable
ones with :meth:`model.Predictor.score_many` (length-bucketed batches, no
attention) and yields each chunk's rows in input order, so memory stays
bounded by one chunk no matter how many reviews stream through.

The rows (:class:`ResultRow`, columns :data:`EXPORT_COLUMNS`) are written by
:mod:`model.batch.export`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from .readers import Record

EXPORT_COLUMNS = ("source", "text", "label", "p_positive", "num_tokens", "truncated", "gold", "correct", "status",
                  "num_windows", "model")


@dataclass(frozen=True, slots=True)
class ResultRow:
    """One exported row: a scored review or the reason an input was not scored.

    Attributes:
        source: where the review came from (see :class:`model.batch.Record`).
        text: the full review text ("" when it could not be read).
        label: the predicted class (``"positive"``/``"negative"``), "" when not scored.
        p_positive: the model's probability of the positive class, in [0, 1]
            (softmax of the logits); None when not scored.
        num_tokens: tokens the model saw, ``[CLS]`` included (0 when not scored).
        truncated: the review was longer than ``max_len`` tokens and cut by
            the head+tail policy.
        gold: the known true label, or "" when unknown.
        correct: ``label == gold`` when both are known, else None.
        status: ``"ok"`` or why the input was not scored.
        num_windows: the windows the review was read in (:mod:`model.windows`; 1 when it fits or was cut, 0 when
            not scored).
        model: the folder of the model that scored the row (absolute path, as :func:`model_id` names it; "" when
            not scored or unknown), so rows scored before a model switch, and exports, say which model it was.
    """

    source: str
    text: str
    label: str
    p_positive: float | None
    num_tokens: int
    truncated: bool
    gold: str
    correct: bool | None
    status: str
    num_windows: int = 1
    model: str = ""

    @property
    def ok(self) -> bool:
        """True when the review was scored."""
        return self.status == "ok"

    def to_dict(self) -> dict[str, Any]:
        """The row as a dict with exactly ``EXPORT_COLUMNS`` as keys, in order."""
        return asdict(self)


assert tuple(f.name for f in fields(ResultRow)) == EXPORT_COLUMNS


def failed_row(record: Record, status: str | None = None) -> ResultRow:
    """The row for a record that was not scored (``status`` overrides the record's)."""
    return ResultRow(record.source, record.text or "", "", None, 0, False, record.gold or "", None,
                     status or record.status, 0)


def model_id(predictor: Any) -> str:
    """How a row names the model that scored it: the absolute path of ``predictor.model_dir`` ("" when the predictor
    has no folder, e.g. a test double)."""
    folder = getattr(predictor, "model_dir", None)
    return str(Path(folder).resolve()) if folder else ""


def _positive_index(labels: tuple[str, ...]) -> int:
    """Index of the class called "positive"; the last class when there is none."""
    return labels.index("positive") if "positive" in labels else len(labels) - 1


def score_records(
    predictor: Any,
    records: Iterable[Record],
    batch_size: int = 64,
    chunk: int = 512,
    progress: Callable[[int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    long_text: str | None = None,
) -> Iterator[list[ResultRow]]:
    """Score a stream of records chunk by chunk; yields each chunk's rows in input order.

    Args:
        predictor: a :class:`model.Predictor` (anything with ``labels`` and
            ``score_many(texts, batch_size, progress, should_stop)``).
        records: e.g. :func:`model.batch.iter_records`; consumed lazily,
            ``chunk`` records at a time.
        batch_size: texts per forward pass (passed to ``score_many``).
        chunk: records pulled per step; bounds memory (texts of one chunk) and
            is the unit of length bucketing.
        progress: called as ``progress(done)`` with the number of records
            handled so far (scored or failed), after every batch.
        should_stop: checked before each chunk and (by ``score_many``) before
            each batch; when it returns True the engine yields the rows of the
            longest fully scored prefix of the current chunk and stops.
        long_text: the long-text policy passed to ``score_many`` (None: its default, ``"windows"``).

    Yields:
        Non-empty lists of :class:`ResultRow`; concatenated, they follow the
        record order.

    Raises:
        ValueError: ``batch_size`` < 1 or ``chunk`` < 1.
    """
    if batch_size < 1 or chunk < 1:
        raise ValueError(f"batch_size and chunk must be >= 1, got {batch_size} and {chunk}")
    pos = _positive_index(tuple(predictor.labels))
    model = model_id(predictor)
    it = iter(records)
    base = 0
    while True:
        if should_stop is not None and should_stop():
            return
        block = _take(it, chunk)
        if not block:
            return
        ok_idx = [i for i, r in enumerate(block) if r.ok]
        texts = [block[i].text for i in ok_idx]

        def chunk_progress(done: int, _total: int, _base: int = base, _failed: int = len(block) - len(ok_idx)) -> None:
            if progress is not None:
                progress(_base + _failed + done)

        policy = {} if long_text is None else {"long_text": long_text}
        scores = predictor.score_many(texts, batch_size, chunk_progress, should_stop, **policy) if texts else []
        rows = _block_rows(block, dict(zip(ok_idx, scores)), pos, model)
        base += len(block)
        if not texts and progress is not None:
            progress(base)
        if rows:
            yield rows
        if len(scores) < len(texts):  # stopped
            return


def _take(it: Iterator[Record], n: int) -> list[Record]:
    """The next (up to) ``n`` records of ``it``."""
    block: list[Record] = []
    for rec in it:
        block.append(rec)
        if len(block) >= n:
            break
    return block


def _block_rows(block: list[Record], score_at: dict[int, Any], pos: int, model: str = "") -> list[ResultRow]:
    """The rows of one block, in order: a scored row per readable record with a score (``score_at``: block index ->
    :class:`model.Score`), a failed row per unreadable one; stops at the first readable record without a score (the
    scoring stopped: only the scored prefix is kept). ``pos`` is the positive class's index; ``model`` names the
    model on the scored rows (:func:`model_id`)."""
    rows: list[ResultRow] = []
    for i, rec in enumerate(block):
        if not rec.ok:
            rows.append(failed_row(rec))
            continue
        if i not in score_at:
            break  # stopped: keep only the scored prefix
        s = score_at[i]
        if s.error is not None:
            rows.append(failed_row(rec, s.error))
            continue
        gold = rec.gold or ""
        rows.append(ResultRow(
            source=rec.source,
            text=rec.text or "",
            label=s.label,
            p_positive=float(s.probabilities[pos]),
            num_tokens=int(s.num_tokens),
            truncated=bool(s.truncated),
            gold=gold,
            correct=(s.label == gold) if gold else None,
            status="ok",
            num_windows=int(getattr(s, "num_windows", 1)),
            model=model,
        ))
    return rows


@dataclass
class Summary:
    """Running totals over result rows (updated with :meth:`add`).

    Attributes:
        count: rows seen (scored + failed).
        ok: rows scored.
        failed: rows not scored (any status other than "ok").
        positive: scored rows predicted ``"positive"``.
        with_gold: scored rows with a known gold label.
        correct: scored rows whose prediction equals the gold label.
        elapsed_s: wall time of the run in seconds (set by the caller).
        models: scored rows per model that scored them (:attr:`ResultRow.model`), in first-seen order.
        failures: the first ``max_failures`` ``(source, status)`` pairs.
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
            self.positive += r.label == "positive"
            if r.correct is not None:
                self.with_gold += 1
                self.correct += bool(r.correct)

    @property
    def positive_share(self) -> float | None:
        """Fraction of scored rows predicted positive, in [0, 1]; None when nothing was scored."""
        return self.positive / self.ok if self.ok else None

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
        if self.reviews_per_s is not None:
            parts.append(f"{self.reviews_per_s:,.1f} reviews/s")
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
