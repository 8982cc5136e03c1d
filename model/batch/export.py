"""Export of batch results: CSV, JSON Lines or Parquet rows with the columns of a :class:`~model.batch.rows.RowSchema`
(the model's labels and task decide them; docs/batch_schema.md).

:class:`RowWriter` writes rows incrementally through a temporary file in the destination
folder and an atomic :func:`os.replace` (:mod:`model.files.atomic`), so a reader never sees a
half-written export; :func:`write_rows` writes a list at once; :func:`read_results` reads an
export back into :class:`~model.batch.engine.ResultRow` objects. Parquet needs pyarrow (the
``parquet`` extra); without it a RuntimeError says how to install it.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from model.files.atomic import commit, discard, temp_beside

from .rows import ResultRow, RowSchema, row_from_mapping

FORMATS = ("csv", "jsonl", "parquet")
SPREADSHEET_CELL_LIMIT = 32_767
"""Characters per cell that Excel and LibreOffice Calc keep; longer CSV cells are cut when opened there."""
DEFAULT_EXCERPT_CHARS = 1_000
_EXTENSIONS = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet", ".pq": "parquet"}


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

    The columns are ``schema``'s (:class:`~model.batch.rows.RowSchema`); without one, the first rows written
    decide them (:meth:`RowSchema.of_rows`); a schema whose ``pairs`` is None takes it from the first rows written
    (a ``text_pair`` column when one of them has a second text).

    Raises (constructor):
        ValueError: unknown format, or Parquet without a path.
        RuntimeError: Parquet requested but pyarrow is missing.
        OSError: the destination folder is not writable.
    """

    def __init__(self, path: str | os.PathLike | None, fmt: str | None = None, stream: IO[str] | None = None,
                 schema: RowSchema | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self.format = format_for_path(self.path, fmt) if self.path is not None else (fmt or "csv")
        if self.format not in FORMATS:
            raise ValueError(f"unknown format {self.format!r}; choose one of {', '.join(FORMATS)}")
        self.rows_written = 0
        self.schema: RowSchema | None = None  # the columns, once fixed (:meth:`_start`)
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
            fd, self._tmp = temp_beside(self.path)
            if self.format == "parquet":
                os.close(fd)
            else:
                self._fh = os.fdopen(fd, "w", encoding="utf-8", newline="")
        self._csv = csv.writer(self._fh, lineterminator="\n") if self.format == "csv" else None
        if schema is not None and schema.pairs is not None:
            self._start(schema)
        self._pending = schema if schema is not None and schema.pairs is None else None

    def _start(self, schema: RowSchema) -> None:
        """Fix the columns (the CSV header goes out now)."""
        self.schema = schema
        if self._csv is not None:
            self._csv.writerow(schema.columns)

    def write(self, rows: Iterable[ResultRow]) -> None:
        """Append rows (a Parquet writer writes one row group per call)."""
        rows = list(rows)
        if not rows:
            return
        if self.schema is None:
            if self._pending is not None:
                self._start(dataclasses.replace(self._pending, pairs=any(r.text_pair is not None for r in rows)))
            else:
                self._start(RowSchema.of_rows(rows))
        schema = self.schema
        if self.format == "csv":
            for r in rows:
                self._csv.writerow([_csv_value(k, v) for k, v in schema.values(r).items()])
        elif self.format == "jsonl":
            for r in rows:
                self._fh.write(json.dumps(schema.values(r), ensure_ascii=False) + "\n")
        else:
            pa = self._pa
            table = pa.Table.from_pylist([schema.values(r) for r in rows], schema=schema.arrow_schema(pa))
            if self._pq is None:
                self._pq = pa.parquet.ParquetWriter(self._tmp, table.schema)
            self._pq.write_table(table)
        self.rows_written += len(rows)
        if self.path is None:
            self._fh.flush()

    def commit(self) -> None:
        """Finish the file and move it into place (no-op for a stream apart from flushing)."""
        if self.schema is None:  # no rows: the schema's columns without pairs, else the bundled model's
            self._start(dataclasses.replace(self._pending, pairs=False) if self._pending else RowSchema())
        if self.path is None:
            self._fh.flush()
            return
        if self.format == "parquet":
            pa = self._pa
            if self._pq is None:  # no rows: still write a valid, empty file with the schema
                self._pq = pa.parquet.ParquetWriter(self._tmp, self.schema.arrow_schema(pa))
            self._pq.close()
        else:
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()
        commit(self._tmp, self.path, synced=self.format != "parquet")
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
            discard(self._tmp)
            self._tmp = None

    def __enter__(self) -> RowWriter:  # noqa: PYI034
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()


def write_rows(path: str | os.PathLike, rows: Iterable[ResultRow], fmt: str | None = None,
               schema: RowSchema | None = None) -> int:
    """Write all ``rows`` to ``path`` atomically in ``fmt`` (inferred from the extension when None); the columns are
    ``schema``'s, else those of all the rows (:meth:`RowSchema.of_rows`).

    Returns:
        The number of rows written.

    Raises:
        ValueError: unknown format. RuntimeError: Parquet without pyarrow.
        OSError: the file cannot be written (``path`` is then untouched).
    """
    rows = list(rows)
    with RowWriter(path, fmt, schema=schema or RowSchema.of_rows(rows)) as w:
        buf: list[ResultRow] = []
        for r in rows:
            buf.append(r)
            if len(buf) >= 4096:
                w.write(buf)
                buf = []
        w.write(buf)
    return w.rows_written


def excerpt_rows(rows: Iterable[ResultRow], max_chars: int = DEFAULT_EXCERPT_CHARS) -> list[ResultRow]:
    """Copies of ``rows`` whose ``text`` is cut to at most ``max_chars`` characters (ending in "…" when cut).

    For spreadsheet-safe CSV exports: spreadsheet programs cut cells at :data:`SPREADSHEET_CELL_LIMIT`
    characters, silently. Raises ValueError when ``max_chars < 1``.
    """
    if max_chars < 1:
        raise ValueError("max_chars must be at least 1")
    out = []
    for r in rows:
        if len(r.text) > max_chars:
            r = dataclasses.replace(r, text=r.text[: max_chars - 1] + "…")
        out.append(r)
    return out


OPTIONAL_COLUMNS = {"model", "num_windows", "precision"}  # added in issues 33, 31, 45: older exports still read back
REQUIRED_COLUMNS = ("source", "text", "label", "num_tokens", "truncated", "gold", "correct", "status")


def read_results(path: str | os.PathLike, fmt: str | None = None) -> list[ResultRow]:
    """Read an export written by :class:`RowWriter` back into rows (for tests and re-loading).

    Raises:
        ValueError: unknown format or missing columns. OSError: unreadable file.
        RuntimeError: Parquet without pyarrow.
    """
    fmt = format_for_path(path, fmt)
    if fmt == "parquet":
        pa = _import_pyarrow()
        return [row_from_mapping(d) for d in pa.parquet.read_table(str(path)).to_pylist()]
    with open(path, encoding="utf-8", newline="") as fh:
        if fmt == "jsonl":
            return [row_from_mapping(json.loads(line)) for line in fh if line.strip()]
        reader = csv.DictReader(fh)
        missing = set(REQUIRED_COLUMNS) - set(reader.fieldnames or ())
        if missing:
            raise ValueError(f"{path} is missing the columns {sorted(missing)}")
        return [row_from_mapping(d) for d in reader]


__all__ = ["DEFAULT_EXCERPT_CHARS", "FORMATS", "SPREADSHEET_CELL_LIMIT", "RowWriter", "excerpt_rows", "format_for_path", "read_results", "write_rows"]
