"""The batch-scoring engine: records in, result rows out, in chunks; plus the export schema and writers.

Used by the command line (:mod:`model.score`) and the GUI's batch panel
(``desktop_app.batch_panel``), so both produce the same columns::

    source, text, label, p_positive, num_tokens, truncated, gold, correct, status

:func:`score_records` pulls records from any iterator (usually
:func:`model.readers.iter_records`) ``chunk`` at a time, scores the readable
ones with :meth:`model.Predictor.score_many` (length-bucketed batches, no
attention) and yields each chunk's rows in input order, so memory stays
bounded by one chunk no matter how many reviews stream through.

Writers (:class:`RowWriter`, :func:`write_rows`) write CSV, JSON Lines or
Parquet through a temporary file in the destination folder and an atomic
:func:`os.replace`, so a reader never sees a half-written export.
"""

from __future__ import annotations

import csv
import json
import math
import os
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import IO, Any

from .readers import Record

EXPORT_COLUMNS = ("source", "text", "label", "p_positive", "num_tokens", "truncated", "gold", "correct", "status")
FORMATS = ("csv", "jsonl", "parquet")
_EXTENSIONS = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet", ".pq": "parquet"}


@dataclass(frozen=True, slots=True)
class ResultRow:
    """One exported row: a scored review or the reason an input was not scored.

    Attributes:
        source: where the review came from (see :class:`model.readers.Record`).
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
                     status or record.status)


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
) -> Iterator[list[ResultRow]]:
    """Score a stream of records chunk by chunk; yields each chunk's rows in input order.

    Args:
        predictor: a :class:`model.Predictor` (anything with ``labels`` and
            ``score_many(texts, batch_size, progress, should_stop)``).
        records: e.g. :func:`model.readers.iter_records`; consumed lazily,
            ``chunk`` records at a time.
        batch_size: texts per forward pass (passed to ``score_many``).
        chunk: records pulled per step; bounds memory (texts of one chunk) and
            is the unit of length bucketing.
        progress: called as ``progress(done)`` with the number of records
            handled so far (scored or failed), after every batch.
        should_stop: checked before each chunk and (by ``score_many``) before
            each batch; when it returns True the engine yields the rows of the
            longest fully scored prefix of the current chunk and stops.

    Yields:
        Non-empty lists of :class:`ResultRow`; concatenated, they follow the
        record order.

    Raises:
        ValueError: ``batch_size`` < 1 or ``chunk`` < 1.
    """
    if batch_size < 1 or chunk < 1:
        raise ValueError(f"batch_size and chunk must be >= 1, got {batch_size} and {chunk}")
    labels = tuple(predictor.labels)
    pos = _positive_index(labels)
    it = iter(records)
    base = 0
    while True:
        if should_stop is not None and should_stop():
            return
        block: list[Record] = []
        for rec in it:
            block.append(rec)
            if len(block) >= chunk:
                break
        if not block:
            return
        ok_idx = [i for i, r in enumerate(block) if r.ok]
        texts = [block[i].text for i in ok_idx]

        def chunk_progress(done: int, _total: int, _base: int = base, _failed: int = len(block) - len(ok_idx)) -> None:
            if progress is not None:
                progress(_base + _failed + done)

        scores = predictor.score_many(texts, batch_size, chunk_progress, should_stop) if texts else []
        stopped = len(scores) < len(texts)
        rows: list[ResultRow] = []
        score_at = dict(zip(ok_idx, scores))
        for i, rec in enumerate(block):
            if rec.ok:
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
                ))
            else:
                rows.append(failed_row(rec))
        base += len(block)
        if not texts and progress is not None:
            progress(base)
        if rows:
            yield rows
        if stopped:
            return


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


def format_for_path(path: str | os.PathLike, fmt: str | None = None) -> str:
    """The export format: ``fmt`` when given, else inferred from the file extension.

    Returns:
        ``"csv"``, ``"jsonl"`` or ``"parquet"``.

    Raises:
        ValueError: an unknown ``fmt``, or no ``fmt`` and an unknown extension.
    """
    if fmt is not None:
        if fmt not in FORMATS:
            raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
        return fmt
    ext = Path(path).suffix.lower()
    if ext not in _EXTENSIONS:
        raise ValueError(f"cannot tell the format from {Path(path).name!r}; use .csv, .jsonl or .parquet")
    return _EXTENSIONS[ext]


def _import_pyarrow() -> Any:
    try:
        import pyarrow as pa
        import pyarrow.parquet
    except ImportError as exc:
        raise RuntimeError(
            "Parquet export needs pyarrow, which is not installed: pip install 'attention-explorer[parquet]' "
            "(or export CSV / JSON Lines instead)"
        ) from exc
    return pa


def _csv_value(name: str, v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    return str(v)


class RowWriter:
    """Writes result rows incrementally to CSV, JSON Lines or Parquet, atomically.

    Rows go to a temporary file beside ``path``; :meth:`commit` renames it over
    ``path`` (:func:`os.replace`, atomic on one filesystem), :meth:`abort`
    deletes it. As a context manager it commits on success and aborts on an
    exception. With ``path=None`` (CSV/JSON Lines only) rows go straight to
    ``stream`` (e.g. ``sys.stdout``).

    CSV cells: booleans ``true``/``false``, unknown values empty, floats in
    full precision (``repr``). JSON Lines/Parquet keep native types (null
    for unknown).

    Raises (constructor):
        ValueError: unknown format, or Parquet without a path.
        RuntimeError: Parquet requested but pyarrow is missing.
        OSError: the destination folder is not writable.
    """

    def __init__(self, path: str | os.PathLike | None, fmt: str | None = None, stream: IO[str] | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self.format = format_for_path(self.path, fmt) if self.path is not None else (fmt or "csv")
        if self.format not in FORMATS:
            raise ValueError(f"unknown format {self.format!r}; choose one of {', '.join(FORMATS)}")
        self.rows_written = 0
        self._tmp: str | None = None
        self._fh: IO | None = None
        self._pq = None
        self._pa = None
        if self.path is None:
            if self.format == "parquet":
                raise ValueError("Parquet is a binary format: give an output file (--out results.parquet)")
            if stream is None:
                raise ValueError("give a path or a stream")
            self._fh = stream
        else:
            if self.format == "parquet":
                self._pa = _import_pyarrow()
            fd, self._tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp")
            if self.format == "parquet":
                os.close(fd)
            else:
                self._fh = os.fdopen(fd, "w", encoding="utf-8", newline="")
        self._csv = csv.writer(self._fh, lineterminator="\n") if self.format == "csv" else None
        if self._csv is not None:
            self._csv.writerow(EXPORT_COLUMNS)

    def write(self, rows: Iterable[ResultRow]) -> None:
        """Append rows (a Parquet writer writes one row group per call)."""
        rows = list(rows)
        if not rows:
            return
        if self.format == "csv":
            for r in rows:
                self._csv.writerow([_csv_value(k, getattr(r, k)) for k in EXPORT_COLUMNS])
        elif self.format == "jsonl":
            for r in rows:
                self._fh.write(json.dumps(r.to_dict(), ensure_ascii=False) + "\n")
        else:
            pa = self._pa
            table = pa.Table.from_pylist([r.to_dict() for r in rows], schema=parquet_schema(pa))
            if self._pq is None:
                self._pq = pa.parquet.ParquetWriter(self._tmp, table.schema)
            self._pq.write_table(table)
        self.rows_written += len(rows)
        if self.path is None:
            self._fh.flush()

    def commit(self) -> None:
        """Finish the file and move it into place (no-op for a stream apart from flushing)."""
        if self.path is None:
            self._fh.flush()
            return
        if self.format == "parquet":
            pa = self._pa
            if self._pq is None:  # no rows: still write a valid, empty file with the schema
                self._pq = pa.parquet.ParquetWriter(self._tmp, parquet_schema(pa))
            self._pq.close()
        else:
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()
        os.replace(self._tmp, self.path)
        self._tmp = None

    def abort(self) -> None:
        """Drop the temporary file; ``path`` is left as it was."""
        if self.path is None or self._tmp is None:
            return
        try:
            if self._pq is not None:
                self._pq.close()
            elif self._fh is not None:
                self._fh.close()
        finally:
            Path(self._tmp).unlink(missing_ok=True)
            self._tmp = None

    def __enter__(self) -> RowWriter:  # noqa: PYI034
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()


def parquet_schema(pa: Any) -> Any:
    """The Arrow schema of the export (``pa`` is the imported ``pyarrow`` module)."""
    return pa.schema([
        ("source", pa.string()),
        ("text", pa.string()),
        ("label", pa.string()),
        ("p_positive", pa.float64()),
        ("num_tokens", pa.int64()),
        ("truncated", pa.bool_()),
        ("gold", pa.string()),
        ("correct", pa.bool_()),
        ("status", pa.string()),
    ])


def write_rows(path: str | os.PathLike, rows: Iterable[ResultRow], fmt: str | None = None) -> int:
    """Write all ``rows`` to ``path`` atomically in ``fmt`` (inferred from the extension when None).

    Returns:
        The number of rows written.

    Raises:
        ValueError: unknown format. RuntimeError: Parquet without pyarrow.
        OSError: the file cannot be written (``path`` is then untouched).
    """
    with RowWriter(path, fmt) as w:
        buf: list[ResultRow] = []
        for r in rows:
            buf.append(r)
            if len(buf) >= 4096:
                w.write(buf)
                buf = []
        w.write(buf)
    return w.rows_written


def _parse_bool(v: Any) -> bool | None:
    if v is None or v == "":
        return None
    if isinstance(v, bool):
        return v
    return str(v).strip().lower() == "true"


def _row_from_mapping(d: dict[str, Any]) -> ResultRow:
    p = d.get("p_positive")
    p = None if p is None or p == "" or (isinstance(p, float) and math.isnan(p)) else float(p)
    return ResultRow(
        source=str(d.get("source") or ""),
        text=str(d.get("text") or ""),
        label=str(d.get("label") or ""),
        p_positive=p,
        num_tokens=int(d.get("num_tokens") or 0),
        truncated=bool(_parse_bool(d.get("truncated"))),
        gold=str(d.get("gold") or ""),
        correct=_parse_bool(d.get("correct")),
        status=str(d.get("status") or ""),
    )


def read_results(path: str | os.PathLike, fmt: str | None = None) -> list[ResultRow]:
    """Read an export written by :class:`RowWriter` back into rows (for tests and re-loading).

    Raises:
        ValueError: unknown format or missing columns. OSError: unreadable file.
        RuntimeError: Parquet without pyarrow.
    """
    fmt = format_for_path(path, fmt)
    if fmt == "parquet":
        pa = _import_pyarrow()
        return [_row_from_mapping(d) for d in pa.parquet.read_table(str(path)).to_pylist()]
    with open(path, encoding="utf-8", newline="") as fh:
        if fmt == "jsonl":
            return [_row_from_mapping(json.loads(line)) for line in fh if line.strip()]
        reader = csv.DictReader(fh)
        missing = set(EXPORT_COLUMNS) - set(reader.fieldnames or ())
        if missing:
            raise ValueError(f"{path} is missing the columns {sorted(missing)}")
        return [_row_from_mapping(d) for d in reader]


class Timer:
    """Wall-clock stopwatch (``time.perf_counter``), in seconds."""

    def __init__(self) -> None:
        self.t0 = time.perf_counter()

    @property
    def elapsed_s(self) -> float:
        """Seconds since construction."""
        return time.perf_counter() - self.t0


__all__ = [
    "EXPORT_COLUMNS",
    "FORMATS",
    "ResultRow",
    "RowWriter",
    "Summary",
    "Timer",
    "failed_row",
    "format_for_path",
    "parquet_schema",
    "read_results",
    "score_records",
    "write_rows",
]
