"""Export of batch results: CSV, JSON Lines or Parquet rows with the columns of :data:`~model.batch.engine.EXPORT_COLUMNS`.

:class:`RowWriter` writes rows incrementally through a temporary file in the destination
folder and an atomic :func:`os.replace` (:mod:`model.atomic`), so a reader never sees a
half-written export; :func:`write_rows` writes a list at once; :func:`read_results` reads an
export back into :class:`~model.batch.engine.ResultRow` objects. Parquet needs pyarrow (the
``parquet`` extra); without it a RuntimeError says how to install it.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import os
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from model.atomic import commit, discard, temp_beside

from .engine import EXPORT_COLUMNS, ResultRow

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
            fd, self._tmp = temp_beside(self.path)
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
        ("num_windows", pa.int64()),
        ("model", pa.string()),
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


OPTIONAL_COLUMNS = {"model", "num_windows"}  # added in issues 33 and 31: exports written before still read back


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
        num_windows=int(d.get("num_windows") or (1 if str(d.get("status") or "") == "ok" else 0)),
        model=str(d.get("model") or ""),
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
        missing = set(EXPORT_COLUMNS) - set(reader.fieldnames or ()) - OPTIONAL_COLUMNS
        if missing:
            raise ValueError(f"{path} is missing the columns {sorted(missing)}")
        return [_row_from_mapping(d) for d in reader]


__all__ = ["DEFAULT_EXCERPT_CHARS", "FORMATS", "SPREADSHEET_CELL_LIMIT", "RowWriter", "excerpt_rows", "format_for_path", "parquet_schema", "read_results", "write_rows"]
