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

import codecs
import csv
import errno
import json
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from charset_normalizer import from_bytes

DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024  # 10 MB; files read whole (.txt, .json) above this are refused
SAMPLE_BYTES = 64 * 1024  # bytes sniffed for magic numbers, NUL bytes and the encoding of streamed files
DETECT_BYTES = 4 * 1024 * 1024  # at most this many bytes are given to charset-normalizer
CP1252_TOLERANCE = 0.1  # cp1252 wins ties within this chaos (mess ratio) margin of charset-normalizer's best

REVIEW_EXTENSIONS = (".txt",)
TABLE_EXTENSIONS = (".csv", ".tsv")
JSONL_EXTENSIONS = (".jsonl", ".ndjson")
JSON_EXTENSIONS = (".json",)
SUPPORTED_EXTENSIONS = REVIEW_EXTENSIONS + TABLE_EXTENSIONS + JSONL_EXTENSIONS + JSON_EXTENSIONS

TEXT_COLUMNS = ("text", "review", "content")
LABEL_COLUMNS = ("label", "sentiment", "gold")
POSITIVE_VALUES = {"pos", "positive", "1", "true", "+1"}
NEGATIVE_VALUES = {"neg", "negative", "0", "false"}
GOLD_FOLDERS = {"pos": "positive", "neg": "negative"}
_SKIPPED_NAMES = re.compile(r"^(urls_\w+\.txt|imdbEr\.txt)$", re.IGNORECASE)

# (magic prefix, kind) for common binary formats that must not be scored as text.
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "PNG image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"GIF87a", "GIF image"),
    (b"GIF89a", "GIF image"),
    (b"%PDF-", "PDF document"),
    (b"PK\x03\x04", "ZIP archive (or docx/xlsx/odt)"),
    (b"PK\x05\x06", "ZIP archive"),
    (b"\x1f\x8b", "gzip archive"),
    (b"BZh", "bzip2 archive"),
    (b"\xfd7zXZ\x00", "xz archive"),
    (b"7z\xbc\xaf\x27\x1c", "7-Zip archive"),
    (b"Rar!\x1a\x07", "RAR archive"),
    (b"\x7fELF", "executable (ELF)"),
    (b"MZ", "executable (Windows)"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "Microsoft Office document"),
    (b"PAR1", "Parquet file"),
    (b"SQLite format 3\x00", "SQLite database"),
    (b"RIFF", "RIFF media file"),
    (b"OggS", "Ogg media file"),
    (b"ID3", "MP3 audio"),
)
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),  # before UTF-16 LE: it starts with the same two bytes
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


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


def binary_kind(sample: bytes) -> str | None:
    """Name the binary format of a file from its first bytes, or None if it may be text.

    Args:
        sample: the first bytes of the file (a few KB are enough).

    Returns:
        e.g. ``"PNG image"``; ``"binary data"`` for NUL bytes that are not
        UTF-16/UTF-32 text; None when the bytes may be text.
    """
    if any(sample.startswith(bom) for bom, _ in _BOMS):
        return None
    for magic, kind in _MAGIC:
        if sample.startswith(magic):
            return kind
    if b"\x00" in sample and _bomless_utf16(sample) is None:
        return "binary data"
    return None


def _bomless_utf16(sample: bytes) -> str | None:
    """``"utf-16-le"``/``"utf-16-be"`` when the NUL pattern looks like mostly-ASCII UTF-16."""
    if len(sample) < 4:
        return None
    even, odd = sample[0::2], sample[1::2]
    if odd.count(0) >= 0.9 * len(odd) and even.count(0) <= 0.1 * len(even):
        return "utf-16-le"
    if even.count(0) >= 0.9 * len(even) and odd.count(0) <= 0.1 * len(odd):
        return "utf-16-be"
    return None


def decode_bytes(data: bytes) -> tuple[str, str]:
    """Decode a whole file's bytes to text.

    Order: BOM (UTF-8/16/32), strict UTF-8, BOM-less UTF-16 (NUL pattern),
    then ``charset_normalizer.from_bytes(...).best()``.

    Returns:
        ``(text, encoding_name)``.

    Raises:
        UnicodeDecodeError / ValueError: when no encoding fits ("undecodable").
    """
    for bom, enc in _BOMS:
        if data.startswith(bom):
            return data.decode(enc), enc
    le_be = _bomless_utf16(data[:SAMPLE_BYTES]) if b"\x00" in data[:SAMPLE_BYTES] else None
    if le_be:
        return data.decode(le_be), le_be
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    enc = guess_encoding(data[:DETECT_BYTES])
    return data.decode(enc), enc


def guess_encoding(data: bytes) -> str:
    """Guess the 8-bit code page of non-UTF-8 bytes with charset-normalizer.

    charset-normalizer ranks candidates by "chaos" (mess ratio); on short
    texts several code pages tie (cp1250, cp1252, cp1257 ...). Among the
    candidates within ``CP1252_TOLERANCE`` of the best chaos, cp1252 (the
    Windows Western code page, a superset of latin-1's printable range and
    the usual legacy encoding of English reviews) wins.

    Returns:
        A Python codec name.

    Raises:
        ValueError: no candidate fits ("undecodable bytes ...").
    """
    matches = list(from_bytes(data))
    if not matches:
        raise ValueError("undecodable bytes (not UTF-8, UTF-16 or a known 8-bit code page)")
    best = matches[0]
    for m in matches:
        if m.encoding == "cp1252" and m.chaos <= best.chaos + CP1252_TOLERANCE:
            return "cp1252"
    return best.encoding


def detect_stream_encoding(path: str | Path, sample: bytes) -> str:
    """Pick the encoding of a file that will be streamed (CSV/TSV/JSON Lines).

    A BOM decides at once; otherwise the whole file is checked for strict
    UTF-8 in 1 MB pieces (incremental decoder, constant memory); failing
    that, charset-normalizer looks at the first ``DETECT_BYTES`` bytes.

    Args:
        path: the file.
        sample: its first ``SAMPLE_BYTES`` bytes.

    Returns:
        A Python codec name (``"utf-8-sig"`` for a UTF-8 BOM).

    Raises:
        OSError: the file cannot be read.
        ValueError: no encoding fits.
    """
    for bom, enc in _BOMS:
        if sample.startswith(bom):
            return enc
    le_be = _bomless_utf16(sample) if b"\x00" in sample else None
    if le_be:
        return le_be
    dec = codecs.getincrementaldecoder("utf-8")("strict")
    try:
        with open(path, "rb") as fh:
            while piece := fh.read(1 << 20):
                dec.decode(piece)
            dec.decode(b"", final=True)
        return "utf-8"
    except UnicodeDecodeError:
        pass
    with open(path, "rb") as fh:
        head = fh.read(DETECT_BYTES)
    return guess_encoding(head)


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


def _iter_file(path: str, text_column: str | None, max_file_bytes: int | None) -> Iterator[Record]:
    """Records of one supported file (the extension decides the reader)."""
    ext = os.path.splitext(path)[1].lower()
    if ext in REVIEW_EXTENSIONS:
        text, status = _read_text_file(path, max_file_bytes)
        gold = _gold_from_folder(path)
        yield Record(path, text, gold) if text is not None else _fail(path, status or "cannot read", gold)
    elif ext in TABLE_EXTENSIONS:
        yield from _iter_table(path, text_column, max_file_bytes)
    elif ext in JSONL_EXTENSIONS:
        yield from _iter_jsonl(path, text_column, max_file_bytes)
    elif ext in JSON_EXTENSIONS:
        yield from _iter_json(path, text_column, max_file_bytes)
    else:
        supported = ", ".join(SUPPORTED_EXTENSIONS)
        yield _fail(path, f"unsupported file type {ext or '(no extension)'!r} (supported: {supported})")


class _Walker:
    """State of one :func:`iter_records` call: real paths already seen (files and folders)."""

    def __init__(self, text_column: str | None, max_file_bytes: int | None) -> None:
        self.text_column = text_column
        self.max_file_bytes = max_file_bytes
        self.seen_files: dict[str, str] = {}  # real path -> first source
        self.seen_dirs: dict[str, str] = {}  # real path -> first path walked
        self.stack: set[str] = set()  # real paths of the folders being walked (ancestors)

    def file(self, path: str) -> Iterator[Record]:
        """Records of one file, or one "duplicate of ..." record if its real path was read already."""
        real = os.path.realpath(path)
        first = self.seen_files.get(real)
        if first is not None:
            yield _fail(path, f"duplicate of {first}")
            return
        self.seen_files[real] = path
        yield from _iter_file(path, self.text_column, self.max_file_bytes)

    def folder(self, path: str) -> Iterator[Record]:
        """Records of a folder, recursively, in natural order; loops and repeated folders become one record."""
        real = os.path.realpath(path)
        if real in self.stack:
            yield _fail(path, f"symlink loop (leads back to {self.seen_dirs.get(real, real)}); not entered")
            return
        if real in self.seen_dirs:
            yield _fail(path, f"duplicate of folder {self.seen_dirs[real]}; not entered again")
            return
        self.seen_dirs[real] = path
        try:
            with os.scandir(path) as it:
                entries = sorted(it, key=lambda e: _natural_key(e.name))
        except OSError as exc:
            yield _fail(path, _os_error_status(exc, path))
            return
        self.stack.add(real)
        try:
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                child = entry.path
                try:
                    is_dir = entry.is_dir()  # follows symlinks
                    is_file = not is_dir and entry.is_file()
                except OSError as exc:
                    yield _fail(child, _os_error_status(exc, child))
                    continue
                if is_dir:
                    yield from self.folder(child)
                elif is_file:
                    ext = os.path.splitext(entry.name)[1].lower()
                    if ext in SUPPORTED_EXTENSIONS and not _SKIPPED_NAMES.match(entry.name):
                        yield from self.file(child)
                elif entry.is_symlink():
                    yield _fail(child, self._dangling_status(child))
                # sockets, FIFOs, devices: skipped silently
        finally:
            self.stack.discard(real)

    @staticmethod
    def _dangling_status(path: str) -> str:
        try:
            os.stat(path)
        except OSError as exc:
            return _os_error_status(exc, path)
        return "not a regular file"

    def top(self, path: str) -> Iterator[Record]:
        """Records of one path given by the user (file, folder, dangling link or missing path)."""
        if os.path.isdir(path):
            yield from self.folder(path)
        elif os.path.isfile(path):
            yield from self.file(path)
        elif os.path.lexists(path):
            yield _fail(path, self._dangling_status(path))
        else:
            yield _fail(path, "not found")


def iter_records(
    paths: Iterable[str | os.PathLike],
    text_column: str | None = None,
    max_file_bytes: int | None = DEFAULT_MAX_FILE_BYTES,
) -> Iterator[Record]:
    """Lazily yield one :class:`Record` per review found in ``paths`` (files and/or folders).

    Args:
        paths: files and folders, in the order they should be read.
        text_column: the CSV/TSV column or JSON field holding the text; None
            detects ``text``/``review``/``content`` (case-insensitive).
        max_file_bytes: files read whole (``.txt``, ``.json``) larger than
            this many bytes get a "too large" record; CSV/TSV/JSON Lines files
            are streamed, so the cap applies to each row's text (in
            characters) instead. None disables the cap.

    Yields:
        Records in a deterministic order (arguments in order, folder entries in
        natural sort order). Never raises for bad input: failures are records
        with ``status != "ok"`` (see the module docstring for the rules).
    """
    walker = _Walker(text_column, max_file_bytes)
    for p in paths:
        yield from walker.top(os.fspath(p))


def estimate_count(paths: Iterable[str | os.PathLike], max_file_bytes: int | None = DEFAULT_MAX_FILE_BYTES) -> int:
    """A quick estimate of how many records :func:`iter_records` will yield (for progress bars / ETA).

    Walks folders with the same rules (without decoding anything); a one-review
    file or a JSON file counts 1, a CSV/TSV file its newline count minus the
    header, a JSON Lines file its newline count (counted in 1 MB binary
    pieces). Quoted newlines in CSV fields make it an over-estimate.

    Returns:
        The estimated number of records, >= 0. Never raises.
    """
    total = 0
    seen: set[str] = set()

    def count_file(path: str) -> int:
        ext = os.path.splitext(path)[1].lower()
        if ext not in TABLE_EXTENSIONS + JSONL_EXTENSIONS:
            return 1
        n = 0
        last = b"\n"
        try:
            with open(path, "rb") as fh:
                while piece := fh.read(1 << 20):
                    n += piece.count(b"\n")
                    last = piece[-1:]
        except OSError:
            return 1
        n += last != b"\n"
        return max(1, n - 1) if ext in TABLE_EXTENSIONS else max(1, n)

    def walk(path: str) -> int:
        real = os.path.realpath(path)
        if real in seen:
            return 1
        seen.add(real)
        if not os.path.isdir(path):
            return count_file(path) if os.path.isfile(path) else 1
        n = 0
        try:
            with os.scandir(path) as it:
                for e in it:
                    if e.name.startswith("."):
                        continue
                    try:
                        if e.is_dir():
                            n += walk(e.path)
                        elif e.is_file():
                            ext = os.path.splitext(e.name)[1].lower()
                            if ext in SUPPORTED_EXTENSIONS and not _SKIPPED_NAMES.match(e.name):
                                n += count_file(e.path)
                        elif e.is_symlink():
                            n += 1
                    except OSError:
                        n += 1
        except OSError:
            return 1
        return n

    for p in paths:
        total += walk(os.fspath(p))
    return total


__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "SUPPORTED_EXTENSIONS",
    "Record",
    "binary_kind",
    "decode_bytes",
    "detect_stream_encoding",
    "estimate_count",
    "guess_encoding",
    "iter_records",
    "normalize_gold",
]
