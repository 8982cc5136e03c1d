"""Text files in, text out: the one byte decoder of the project (no torch, no Qt).

Used by the batch readers (:mod:`model.batch.readers`) and by the GUI's "Open review" (through
:func:`read_text_file`), so both decode bytes with the same policy:

1. a UTF-8/UTF-16/UTF-32 byte-order mark decides (the BOM is removed);
2. BOM-less UTF-16 when every other byte is NUL;
3. strict UTF-8;
4. otherwise charset-normalizer guesses the code page from at most :data:`DETECT_BYTES`
   bytes, ties within :data:`CP1252_TOLERANCE` going to cp1252 (:func:`guess_encoding`).

:func:`read_labelled_rows` reads ``{"text", "label"}`` JSON Lines (optionally gzip-ed) datasets; :func:`read_labelled`
is the one reader of the 0/1-labelled review sets (the IMDB splits) for the dataset CLIs (:mod:`model.evaluation`), the
benchmarks and the screenshot script.

Binary files are recognised by their magic number (:func:`binary_kind`) and refused.
:func:`read_regular_bytes` is the one reader of small files the user picks (reviews, sessions, model configs):
regular files only, size checked before reading.
Errors: :func:`decode_bytes` raises ValueError (or UnicodeDecodeError, a ValueError) for
undecodable bytes; :func:`read_text_file` raises ValueError with a message for the user.
"""

from __future__ import annotations

import codecs
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

import numpy as np
from charset_normalizer import from_bytes

from .compression import READ_ERRORS, is_damage, open_bytes, open_text, split_compression

SAMPLE_BYTES = 64 * 1024  # bytes sniffed for magic numbers, NUL bytes and the encoding of streamed files
DETECT_BYTES = 4 * 1024 * 1024  # at most this many bytes are given to charset-normalizer
CP1252_TOLERANCE = 0.1  # cp1252 wins ties within this chaos (mess ratio) margin of charset-normalizer's best

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
        EOFError, zlib.error, lzma.LZMAError: a compressed file damaged within the first ``DETECT_BYTES`` of a
            file that is not UTF-8 (:data:`model.files.compression.DECOMPRESSION_ERRORS`); damage after UTF-8 that far
            gives "utf-8", and the reader meets the damage where it is.
    """
    for bom, enc in _BOMS:
        if sample.startswith(bom):
            return enc
    le_be = _bomless_utf16(sample) if b"\x00" in sample else None
    if le_be:
        return le_be
    dec = codecs.getincrementaldecoder("utf-8")("strict")
    try:
        with open_bytes(path) as fh:
            while piece := fh.read(1 << 20):
                dec.decode(piece)
            dec.decode(b"", final=True)
        return "utf-8"
    except UnicodeDecodeError:
        pass
    except READ_ERRORS as exc:
        if not (split_compression(path)[1] and is_damage(exc)):
            raise
        return "utf-8"  # valid as far as a damaged compressed file reads: its reader reports the damage where it is
    with open_bytes(path) as fh:
        head = fh.read(DETECT_BYTES)
    return guess_encoding(head)


def read_regular_bytes(path: str | Path, limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; anything else is refused before it is read.

    A folder, a named pipe (FIFO: reading it would block for good), a socket or a device is refused from
    ``os.stat`` before the file is opened, and so is a file over ``limit`` (nothing is read whole first).

    Raises:
        ValueError: not a regular file, over the limit, or unreadable; the message names the file.
    """
    path = Path(path)
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"{path.name} is not a regular file (a folder, a pipe or a device)")
        if st.st_size > limit:
            raise ValueError(f"{path.name} is {st.st_size:,} bytes; the limit is {limit:,}")
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if len(data) > limit:
        raise ValueError(f"{path.name} is over the limit of {limit:,} bytes")
    return data


def read_text_file(path: str | Path, limit: int) -> str:
    """Read and decode one text file of at most ``limit`` bytes (:func:`decode_bytes`'s policy).

    Returns:
        The text (BOM removed).

    Raises:
        ValueError: the file is missing or unreadable, larger than ``limit`` bytes, binary, or
            undecodable; the message names the file.
    """
    path = Path(path)
    data = read_regular_bytes(path, limit)
    kind = binary_kind(data[:SAMPLE_BYTES])
    if kind:
        raise ValueError(f"{path.name} does not look like a text file ({kind})")
    try:
        text, _ = decode_bytes(data)
    except (ValueError, LookupError) as exc:
        raise ValueError(f"{path.name} does not look like a text file") from exc
    return text


def read_labelled_rows(path: str | Path, label_of: Callable[[dict], int]) -> tuple[list[str], list[int]]:
    """Read ``{"text", "label"}`` rows from ``.jsonl``, ``.jsonl.gz``, ``.jsonl.xz`` or ``.jsonl.bz2`` (UTF-8; blank
    lines skipped).

    Args:
        path: the file.
        label_of: ``label_of(row) -> int``; may raise ValueError/KeyError/TypeError for a bad label.

    Returns:
        ``(texts, labels)``, index-aligned.

    Raises:
        FileNotFoundError: if ``path`` does not exist.
        ValueError: on a malformed row, naming the file and line.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"data file not found: {path}")
    texts: list[str] = []
    labels: list[int] = []
    with open_text(path, "utf-8", newline=None) as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                label = label_of(row)
                texts.append(str(row["text"]))
                labels.append(label)
            except (ValueError, KeyError, TypeError) as exc:
                raise ValueError(f"{path}:{lineno}: bad row: {exc}") from exc
    return texts, labels


def read_labelled(path: str | Path) -> tuple[list[str], np.ndarray]:
    """Read ``{"text", "label"}`` rows (label 0/1) from ``.jsonl`` or ``.jsonl.gz``.

    Returns:
        ``(texts, labels)`` with labels int64 [N].

    Raises:
        FileNotFoundError: if the file is missing.
        ValueError: on a malformed row or a row without a 0/1 label (file and line named).
    """
    texts, labels = read_labelled_rows(path, _binary_label)
    return texts, np.asarray(labels, dtype=np.int64)


def _binary_label(row: dict) -> int:
    label = int(row["label"])
    if label not in (0, 1):
        raise ValueError(f"label must be 0 or 1, got {label}")
    return label
