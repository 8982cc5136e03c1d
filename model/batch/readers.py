"""Streaming readers for batch scoring: review files and folders -> :class:`Record` objects.

:func:`~model.batch.walk.iter_records` turns a list of files and folders into a lazy stream of
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
    names another (:class:`Columns`). The second text of a sentence pair is the
    column ``text_pair`` unless ``pair_column`` names another; the gold label
    column is ``label``, ``labels``, ``sentiment`` or ``gold`` unless
    ``label_column`` names another.
``.jsonl`` / ``.ndjson``
    one JSON object per line with a ``text`` field (or ``review``/``content``,
    or ``text_column``), optionally ``text_pair`` and ``label``/``labels``
    (a name, an id, a list of them, or a number), found by the same rules.
``.json``
    one object, or a list of objects, of the same shape.

Each may be compressed (``reviews.jsonl.gz``, ``.xz``, ``.bz2``: :mod:`model.files.compression`); it is read
decompressed, streamed as the plain file is, and a damaged or truncated stream ends the file with a status record
after the rows read before it.

Gold labels are kept raw here (``Record.gold``: the value as text, a list joined
by ``";"``): only the model knows its labels, so :class:`model.batch.gold.GoldReader`
reads them when the rows are scored. A ``.txt`` file's parent folder name is its
folder gold (``gold_source="folder"``): ``pos``/``neg`` (the aclImdb layout of
Maas et al. 2011) or any of the model's class names, in any case.

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
see :func:`~model.files.textio.guess_encoding`). Opening, sniffing and decoding one file is
:mod:`model.batch.opening`'s.

Bad input never raises: the record gets ``text=None`` and a ``status``
naming the reason: not found, permission denied, broken symlink, symlink
loop, binary file (with its kind), empty file, whitespace only, too large,
undecodable bytes, unsupported file type, no text column, invalid JSON, ...
"""

from __future__ import annotations

import csv
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from model.files import compression

from .columns import Columns, pick_columns
from .gold import gold_text, normalize_gold
from .opening import open_stream, os_error_status, read_text_file

DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024  # 10 MB; files read whole (.txt, .json) above this are refused

REVIEW_EXTENSIONS = (".txt",)
TABLE_EXTENSIONS = (".csv", ".tsv")
JSONL_EXTENSIONS = (".jsonl", ".ndjson")
JSON_EXTENSIONS = (".json",)

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
        gold: the raw gold label as text (a class name or id, ``";"``-joined names for multi-label, a number for
            regression; read for the model by :class:`model.batch.gold.GoldReader`): None when the field or column
            is missing (no gold), ``""`` when it is empty (a multi-label model's empty label set).
        status: ``"ok"`` or a short human-readable reason it failed.
        text_pair: the second text of a sentence pair, or None for a single text.
        gold_source: ``"column"`` (a label column or field), ``"folder"`` (the parent folder's name: an unknown one
            is no gold, not a problem) or ``""`` (no gold).
    """

    source: str
    text: str | None
    gold: str | None = None
    status: str = "ok"
    text_pair: str | None = None
    gold_source: str = "column"

    @property
    def ok(self) -> bool:
        """True when ``text`` holds a review to score."""
        return self.status == "ok"


def _fail(source: object, status: str, gold: str | None = None) -> Record:
    return Record(str(source), None, gold, status)


def _natural_key(name: str) -> list:
    """Sort key that orders embedded numbers numerically ("2.txt" < "10.txt")."""
    return [(0, int(p), "") if p.isdigit() else (1, 0, p.lower()) for p in re.split(r"(\d+)", name) if p]



def _text_status(text: object, max_record_bytes: int | None) -> str | None:
    if not isinstance(text, str):
        return f"the text field is {type(text).__name__}, not a string" if text is not None else "no text"
    if not text.strip():
        return "empty text"
    if max_record_bytes is not None and len(text) > max_record_bytes:
        return f"text too long ({len(text):,} characters; the limit is {max_record_bytes:,})"
    return None


def _row_record(source: str, text: object, pair: object, gold: str | None, has_pair: bool,
                max_record_bytes: int | None) -> Record:
    """The record of one row: its text and second text checked (an empty second text is its own status)."""
    bad = _text_status(text, max_record_bytes)
    if bad:
        return _fail(source, bad, gold)
    if has_pair:
        if pair is None or (isinstance(pair, str) and not pair.strip()):
            return _fail(source, "empty second text (sentence pair)", gold)
        if not isinstance(pair, str):
            return _fail(source, f"the second text is {type(pair).__name__}, not a string", gold)
    return Record(source, text, gold, text_pair=pair if has_pair else None)  # type: ignore[arg-type]


def _iter_table(path: str, columns: Columns, max_record_bytes: int | None) -> Iterator[Record]:
    """Rows of a CSV (comma) or TSV (tab) file; see the module docstring."""
    fh, status = open_stream(path)
    if fh is None:
        yield _fail(path, status or "cannot read")
        return
    delimiter = "\t" if compression.split_compression(path)[0] == ".tsv" else ","
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
            at = pick_columns(header, columns)
            if at.problem is not None:
                yield _fail(path, at.problem)
                return
            ti, pi, li = at.text, at.pair, at.label
            for row in reader:
                if not row:  # a blank line is not a row
                    continue
                row_no += 1
                source = f"{path}:row {row_no}"
                gold = gold_text(row[li]) if li is not None and li < len(row) else None
                if max(ti, pi if pi is not None else 0) >= len(row):
                    yield _fail(source, f"row has {len(row)} fields; the text column is #{ti + 1}"
                                + (f", the second text's #{pi + 1}" if pi is not None else ""), gold)
                    continue
                yield _row_record(source, row[ti], row[pi] if pi is not None else None, gold, pi is not None,
                                  max_record_bytes)
        except UnicodeDecodeError as exc:
            yield _fail(f"{path}:row {row_no + 1}", f"undecodable bytes ({exc.reason})")
        except csv.Error as exc:
            yield _fail(f"{path}:row {row_no + 1}", f"malformed CSV: {exc}")
        except compression.READ_ERRORS as exc:
            yield _fail(f"{path}:row {row_no + 1}", os_error_status(exc, path))


def _record_from_object(obj: object, source: str, columns: Columns, max_record_bytes: int | None) -> Record:
    if not isinstance(obj, dict):
        return _fail(source, f"expected a JSON object, got {type(obj).__name__}")
    keys = list(obj.keys())
    at = pick_columns([str(k) for k in keys], columns, "field")
    gold = gold_text(obj[keys[at.label]]) if at.label is not None else None
    if at.text is None:
        name = repr(columns.text) if columns.text is not None else "'text'"
        return _fail(source, f"no {name} field", gold)
    if at.problem is not None:
        return _fail(source, at.problem, gold)
    pair = obj[keys[at.pair]] if at.pair is not None else None
    return _row_record(source, obj[keys[at.text]], pair, gold, at.pair is not None, max_record_bytes)


def _iter_jsonl(path: str, columns: Columns, max_record_bytes: int | None) -> Iterator[Record]:
    fh, status = open_stream(path)
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
                yield _record_from_object(obj, source, columns, max_record_bytes)
        except UnicodeDecodeError as exc:
            yield _fail(f"{path}:line {line_no + 1}", f"undecodable bytes ({exc.reason})")
        except compression.READ_ERRORS as exc:
            yield _fail(f"{path}:line {line_no + 1}", os_error_status(exc, path))
    if not any_line:
        yield _fail(path, "whitespace only")


def _iter_json(path: str, columns: Columns, max_file_bytes: int | None) -> Iterator[Record]:
    text, status = read_text_file(path, max_file_bytes)
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
            yield _record_from_object(obj, f"{path}:row {i}", columns, max_file_bytes)
    else:
        yield _record_from_object(data, path, columns, max_file_bytes)


def _iter_review(path: str, columns: Columns, max_file_bytes: int | None) -> Iterator[Record]:
    """The one review of a ``.txt`` file; its parent folder's name is its folder gold (``pos/``, ``neg/`` or a class
    name; read for the model by :class:`model.batch.gold.GoldReader`)."""
    text, status = read_text_file(path, max_file_bytes)
    gold = os.path.basename(os.path.dirname(path)) or None
    yield (Record(path, text, gold, gold_source="folder") if text is not None
           else Record(path, None, gold, status or "cannot read", gold_source="folder"))


Reader = Callable[[str, Columns, "int | None"], Iterator[Record]]
"""``reader(path, columns, max_file_bytes) -> records`` of one file."""

READERS: dict[str, Reader] = {
    **dict.fromkeys(REVIEW_EXTENSIONS, _iter_review),
    **dict.fromkeys(TABLE_EXTENSIONS, _iter_table),
    **dict.fromkeys(JSONL_EXTENSIONS, _iter_jsonl),
    **dict.fromkeys(JSON_EXTENSIONS, _iter_json),
}
"""The readers, keyed by lower-case file extension (a new format is one entry here)."""

SUPPORTED_EXTENSIONS = tuple(READERS)
SUPPORTED_PATTERNS = tuple(f"*{e}{c}" for c in ("", *compression.COMPRESSIONS) for e in SUPPORTED_EXTENSIONS)
"""File-name patterns of every readable file, plain then compressed (``*.txt`` ... ``*.json.bz2``): file dialogs."""


def is_supported(path: str | os.PathLike) -> bool:
    """True when :func:`read_file` has a reader for ``path``'s name (its format, compressed or not)."""
    return compression.split_compression(path)[0] in READERS


def read_file(path: str, columns: Columns | str | None, max_file_bytes: int | None) -> Iterator[Record]:
    """Records of one file: :data:`READERS` picks the reader by extension (that of the file inside a compressed one);
    other files get one status record. ``columns``: the named columns (a plain string names the text column only;
    None detects them)."""
    if not isinstance(columns, Columns):
        columns = Columns(text=columns)
    ext, packed = compression.split_compression(path)
    reader = READERS.get(ext)
    if reader is None:
        supported = ", ".join(SUPPORTED_EXTENSIONS)
        yield _fail(path, f"unsupported file type {ext + packed or '(no extension)'!r} (supported: {supported}, "
                          f"each may be compressed: {', '.join(compression.COMPRESSIONS)})")
    else:
        yield from reader(path, columns, max_file_bytes)


__all__ = ["DEFAULT_MAX_FILE_BYTES", "READERS", "SUPPORTED_EXTENSIONS", "SUPPORTED_PATTERNS", "Columns", "Record",
           "is_supported", "normalize_gold", "read_file"]
