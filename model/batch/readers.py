"""Streaming readers for batch scoring: review files and folders -> :class:`Record` objects.

:func:`iter_records` turns a list of files and folders into a lazy stream of
records, one per review. Nothing is read before it is needed: folders are
walked with :func:`os.scandir` one directory at a time, and multi-review files
(CSV, TSV, JSON Lines) are decoded and parsed row by row, so a folder of
50,000 reviews or a 30 MB JSON Lines file starts scoring at once and memory
does not grow with the number of reviews.

Supported inputs
----------------
``.txt``
    one review per file (the whole file is the text).
``.csv`` / ``.tsv``
    one review per row, read with :mod:`csv` (quoted fields may contain
    newlines). The text column is the one named ``text``, ``review`` or
    ``content`` (case-insensitive, first match wins) unless ``text_column``
    names another. An optional gold-label column is found by the names
    ``label``, ``sentiment`` or ``gold``.
``.jsonl`` / ``.ndjson``
    one JSON object per line with a ``text`` field (or ``review``/``content``,
    or ``text_column``) and optionally a ``label``/``sentiment``/``gold`` field.
``.json``
    one object, or a list of objects, of the same shape.

Gold labels: ``pos``/``positive``/``1``/``true`` -> ``"positive"``;
``neg``/``negative``/``0``/``false`` -> ``"negative"``; anything else
(``-1``, ``unsup``, empty) -> unknown (``None``). A ``.txt`` file whose parent
folder is named ``pos`` or ``neg`` (the aclImdb layout of Maas et al. 2011,
"Learning Word Vectors for Sentiment Analysis") gets that gold label.

Folder rules (decided here, documented for the GUI and the CLI)
----------------------------------------------------------------
* recursive; entries are visited in natural sort order (``2.txt`` before
  ``10.txt``), so the output order is deterministic;
* hidden entries (names starting with ``.``), files with unsupported
  extensions and the aclImdb metadata files (``urls_*.txt``, ``imdbEr.txt``)
  are skipped silently; a file named directly with an unsupported extension
  gets a record with a status instead;
* symlinks are followed; a directory whose real path is already being walked
  (a symlink loop) or was already walked is reported once as a record with a
  status and not entered again; a file reached twice under the same real path
  is reported as ``"duplicate of <first source>"`` and not scored again.

Encodings: UTF-8/UTF-16/UTF-32 when the file starts with their BOM (the BOM is
removed); BOM-less UTF-16 when every other byte is NUL; then strict UTF-8;
otherwise ``charset-normalizer`` guesses the code page (ties go to cp1252,
see :func:`guess_encoding`).

Bad input never raises: the record gets ``text=None`` and a ``status``
naming the reason: not found, permission denied, broken symlink, symlink
loop, binary file (with its kind), empty file, whitespace only, too large,
undecodable bytes, unsupported file type, no text column, invalid JSON, ...
"""

from __future__ import annotations

import csv
import errno
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import IO

from model.textio import SAMPLE_BYTES, binary_kind, decode_bytes, detect_stream_encoding

DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024  # 10 MB; files read whole (.txt, .json) above this are refused

REVIEW_EXTENSIONS = (".txt",)
TABLE_EXTENSIONS = (".csv", ".tsv")
JSONL_EXTENSIONS = (".jsonl", ".ndjson")
JSON_EXTENSIONS = (".json",)

TEXT_COLUMNS = ("text", "review", "content")
LABEL_COLUMNS = ("label", "sentiment", "gold")
POSITIVE_VALUES = {"pos", "positive", "1", "true", "+1"}
NEGATIVE_VALUES = {"neg", "negative", "0", "false"}
GOLD_FOLDERS = {"pos": "positive", "neg": "negative"}
_SKIPPED_NAMES = re.compile(r"^(urls_\w+\.txt|imdbEr\.txt)$", re.IGNORECASE)


@dataclass(frozen=True)
class Record:
    """One review to score, or the reason an input could not be read.

    Attributes:
        source: where it came from: ``path`` for a one-review file,
            ``path:row N`` for the N-th data row of a CSV/TSV file or the N-th
            object of a JSON list (1-based, header excluded), ``path:line N``
            for line N of a JSON Lines file (1-based).
        text: the review text, or None when ``status`` is not ``"ok"``.
        gold: ``"positive"``, ``"negative"`` or None (unknown).
        status: ``"ok"`` or a short human-readable reason it failed.
    """

    source: str
    text: str | None
    gold: str | None = None
    status: str = "ok"

    @property
    def ok(self) -> bool:
        """True when ``text`` holds a review to score."""
        return self.status == "ok"


def _fail(source: object, status: str, gold: str | None = None) -> Record:
    return Record(str(source), None, gold, status)


def normalize_gold(value: object) -> str | None:
    """Map a gold-label value to ``"positive"``, ``"negative"`` or None.

    Accepts (case-insensitive, surrounding spaces ignored): pos, positive, 1,
    true -> positive; neg, negative, 0, false -> negative. Booleans and the
    integers 1/0 work too. Everything else (``-1``, ``unsup``, ``""``, None)
    means unknown.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        return "positive" if value else "negative"
    if isinstance(value, (int, float)):
        return "positive" if value == 1 else "negative" if value == 0 else None
    v = str(value).strip().lower()
    if v in POSITIVE_VALUES:
        return "positive"
    if v in NEGATIVE_VALUES:
        return "negative"
    return None


def _natural_key(name: str) -> list:
    """Sort key that orders embedded numbers numerically ("2.txt" < "10.txt")."""
    return [(0, int(p), "") if p.isdigit() else (1, 0, p.lower()) for p in re.split(r"(\d+)", name) if p]


def _human_bytes(n: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"  # pragma: no cover


def _os_error_status(exc: OSError, path: str) -> str:
    """A short status for an OSError met while opening/statting ``path``."""
    if isinstance(exc, PermissionError) or exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.ELOOP:
        return "symlink loop (too many levels of symbolic links)"
    if exc.errno == errno.ENOENT:
        if os.path.islink(path):
            return f"broken symlink (target {os.readlink(path)!r} does not exist)"
        return "not found"
    if exc.errno == errno.EISDIR:
        return "is a folder"
    return f"cannot read: {exc.strerror or exc}"



def _read_sample(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read(SAMPLE_BYTES)


def _check_file(path: str, max_file_bytes: int | None) -> tuple[bytes | None, str | None, int]:
    """Stat + sniff a file. Returns ``(sample, failure_status, size_bytes)``."""
    try:
        st = os.stat(path)
    except OSError as exc:
        return None, _os_error_status(exc, path), 0
    size = st.st_size
    if max_file_bytes is not None and size > max_file_bytes:
        return None, f"too large ({_human_bytes(size)}; the limit is {_human_bytes(max_file_bytes)})", size
    try:
        sample = _read_sample(path)
    except OSError as exc:
        return None, _os_error_status(exc, path), size
    if not sample:
        return None, "empty file", size
    kind = binary_kind(sample)
    if kind:
        return None, f"binary file ({kind}), not text", size
    return sample, None, size


def _read_text_file(path: str, max_file_bytes: int | None) -> tuple[str | None, str | None]:
    """Read and decode a whole file. Returns ``(text, failure_status)``."""
    _sample, status, _ = _check_file(path, max_file_bytes)
    if status:
        return None, status
    try:
        with open(path, "rb") as fh:
            data = fh.read() if max_file_bytes is None else fh.read(max_file_bytes + 1)
    except OSError as exc:
        return None, _os_error_status(exc, path)
    if max_file_bytes is not None and len(data) > max_file_bytes:
        return None, f"too large (more than {_human_bytes(max_file_bytes)})"
    try:
        text, _ = decode_bytes(data)
    except (UnicodeDecodeError, ValueError, LookupError) as exc:
        return None, f"undecodable bytes ({exc})" if "undecodable" not in str(exc) else str(exc)
    if not text.strip():
        return None, "whitespace only"
    return text, None


def _pick_column(names: list[str], wanted: str | None, candidates: Iterable[str]) -> int | None:
    lowered = [n.strip().lower() for n in names]
    if wanted is not None:
        w = wanted.strip().lower()
        return lowered.index(w) if w in lowered else None
    for c in candidates:
        if c in lowered:
            return lowered.index(c)
    return None


def _open_stream(path: str) -> tuple[IO[str] | None, str | None]:
    """Open a CSV/TSV/JSONL file for streaming text. Returns ``(handle, failure_status)``."""
    sample, status, _ = _check_file(path, None)  # streamed: no whole-file cap
    if status:
        return None, status
    try:
        enc = detect_stream_encoding(path, sample)
        return open(path, "r", encoding=enc, errors="strict", newline=""), None
    except OSError as exc:
        return None, _os_error_status(exc, path)
    except (ValueError, LookupError) as exc:
        return None, str(exc) if "undecodable" in str(exc) else f"undecodable bytes ({exc})"


def _text_status(text: object, max_record_bytes: int | None) -> str | None:
    if not isinstance(text, str):
        return f"the text field is {type(text).__name__}, not a string" if text is not None else "no text"
    if not text.strip():
        return "empty text"
    if max_record_bytes is not None and len(text) > max_record_bytes:
        return f"text too long ({len(text):,} characters; the limit is {max_record_bytes:,})"
    return None


def _iter_table(path: str, text_column: str | None, max_record_bytes: int | None) -> Iterator[Record]:
    """Rows of a CSV (comma) or TSV (tab) file; see the module docstring."""
    fh, status = _open_stream(path)
    if fh is None:
        yield _fail(path, status or "cannot read")
        return
    delimiter = "\t" if path.lower().endswith(".tsv") else ","
    # the csv module refuses fields over 131,072 characters by default; long reviews are legitimate
    csv.field_size_limit(max(csv.field_size_limit(), (max_record_bytes or 0) + 1, 2**31 - 1))
    row_no = 0
    with fh:
        try:
            reader = csv.reader(fh, delimiter=delimiter)
            header = next(reader, None)
            if header is None or not any(h.strip() for h in header):
                yield _fail(path, "empty file" if header is None else "no header row")
                return
            ti = _pick_column(header, text_column, TEXT_COLUMNS)
            if ti is None:
                cols = ", ".join(repr(h) for h in header[:12])
                if text_column is not None:
                    yield _fail(path, f"no column named {text_column!r} (columns: {cols})")
                else:
                    yield _fail(path, f"no text column named text/review/content (columns: {cols}); choose one")
                return
            li = _pick_column(header, None, LABEL_COLUMNS)
            for row in reader:
                if not row:  # a blank line is not a row
                    continue
                row_no += 1
                source = f"{path}:row {row_no}"
                gold = normalize_gold(row[li]) if li is not None and li < len(row) else None
                if ti >= len(row):
                    yield _fail(source, f"row has {len(row)} fields; the text column is #{ti + 1}", gold)
                    continue
                bad = _text_status(row[ti], max_record_bytes)
                yield _fail(source, bad, gold) if bad else Record(source, row[ti], gold)
        except UnicodeDecodeError as exc:
            yield _fail(f"{path}:row {row_no + 1}", f"undecodable bytes ({exc.reason})")
        except csv.Error as exc:
            yield _fail(f"{path}:row {row_no + 1}", f"malformed CSV: {exc}")
        except OSError as exc:
            yield _fail(f"{path}:row {row_no + 1}", _os_error_status(exc, path))


def _record_from_object(obj: object, source: str, text_column: str | None, max_record_bytes: int | None) -> Record:
    if not isinstance(obj, dict):
        return _fail(source, f"expected a JSON object, got {type(obj).__name__}")
    keys = list(obj.keys())
    ti = _pick_column([str(k) for k in keys], text_column, TEXT_COLUMNS)
    li = _pick_column([str(k) for k in keys], None, LABEL_COLUMNS)
    gold = normalize_gold(obj[keys[li]]) if li is not None else None
    if ti is None:
        name = repr(text_column) if text_column is not None else "'text'"
        return _fail(source, f"no {name} field", gold)
    text = obj[keys[ti]]
    bad = _text_status(text, max_record_bytes)
    return _fail(source, bad, gold) if bad else Record(source, text, gold)


def _iter_jsonl(path: str, text_column: str | None, max_record_bytes: int | None) -> Iterator[Record]:
    fh, status = _open_stream(path)
    if fh is None:
        yield _fail(path, status or "cannot read")
        return
    line_no = 0
    any_line = False
    with fh:
        try:
            for line in fh:
                line_no += 1
                if not line.strip():
                    continue
                any_line = True
                source = f"{path}:line {line_no}"
                try:
                    obj = json.loads(line)
                except ValueError as exc:
                    yield _fail(source, f"invalid JSON: {exc}")
                    continue
                yield _record_from_object(obj, source, text_column, max_record_bytes)
        except UnicodeDecodeError as exc:
            yield _fail(f"{path}:line {line_no + 1}", f"undecodable bytes ({exc.reason})")
        except OSError as exc:
            yield _fail(f"{path}:line {line_no + 1}", _os_error_status(exc, path))
    if not any_line:
        yield _fail(path, "whitespace only")


def _iter_json(path: str, text_column: str | None, max_file_bytes: int | None) -> Iterator[Record]:
    text, status = _read_text_file(path, max_file_bytes)
    if text is None:
        yield _fail(path, status or "cannot read")
        return
    try:
        data = json.loads(text)
    except ValueError as exc:
        yield _fail(path, f"invalid JSON: {exc}")
        return
    del text
    if isinstance(data, list):
        if not data:
            yield _fail(path, "empty JSON list")
        for i, obj in enumerate(data, 1):
            yield _record_from_object(obj, f"{path}:row {i}", text_column, max_file_bytes)
    else:
        yield _record_from_object(data, path, text_column, max_file_bytes)


def _gold_from_folder(path: str) -> str | None:
    return GOLD_FOLDERS.get(os.path.basename(os.path.dirname(path)).lower())


def _iter_review(path: str, text_column: str | None, max_file_bytes: int | None) -> Iterator[Record]:
    """The one review of a ``.txt`` file (gold label from a ``pos``/``neg`` parent folder)."""
    text, status = _read_text_file(path, max_file_bytes)
    gold = _gold_from_folder(path)
    yield Record(path, text, gold) if text is not None else _fail(path, status or "cannot read", gold)


Reader = Callable[[str, "str | None", "int | None"], Iterator[Record]]
"""``reader(path, text_column, max_file_bytes) -> records`` of one file."""

READERS: dict[str, Reader] = {
    **dict.fromkeys(REVIEW_EXTENSIONS, _iter_review),
    **dict.fromkeys(TABLE_EXTENSIONS, _iter_table),
    **dict.fromkeys(JSONL_EXTENSIONS, _iter_jsonl),
    **dict.fromkeys(JSON_EXTENSIONS, _iter_json),
}
"""The readers, keyed by lower-case file extension (a new format is one entry here)."""

SUPPORTED_EXTENSIONS = tuple(READERS)


def read_file(path: str, text_column: str | None, max_file_bytes: int | None) -> Iterator[Record]:
    """Records of one file: :data:`READERS` picks the reader by extension; other files get one status record."""
    ext = os.path.splitext(path)[1].lower()
    reader = READERS.get(ext)
    if reader is None:
        supported = ", ".join(SUPPORTED_EXTENSIONS)
        yield _fail(path, f"unsupported file type {ext or '(no extension)'!r} (supported: {supported})")
    else:
        yield from reader(path, text_column, max_file_bytes)


__all__ = ["DEFAULT_MAX_FILE_BYTES", "READERS", "SUPPORTED_EXTENSIONS", "Record", "normalize_gold", "read_file"]
