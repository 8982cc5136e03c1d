"""Compressed input files: ``.gz``, ``.xz`` and ``.bz2`` read as the file inside them (no torch, no Qt).

A file's name says what it holds and how it is packed: ``reviews.jsonl.gz`` is JSON Lines compressed with gzip.
:func:`split_compression` splits the two (``(".jsonl", ".gz")``), :func:`open_bytes` and :func:`open_text` open the
decompressed stream (the standard library's :mod:`gzip`, :mod:`lzma` and :mod:`bz2`), so every reader streams a
compressed file as it streams a plain one, with memory that does not grow with the file. The batch readers
(:mod:`model.batch.readers`), the dataset readers (:mod:`model.files.textio`, :mod:`model.datasets.task_data`) and the
window's file sorting share them. A single ``.gz`` member or several concatenated members are both read whole.

Errors: a damaged or truncated stream raises, while it is read, one of :data:`DECOMPRESSION_ERRORS` or an
:class:`OSError` (``gzip.BadGzipFile`` for a file that is not gzip at all); :func:`describe_error` turns either into a
message for the user.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import zlib
from collections.abc import Callable
from typing import IO

COMPRESSIONS: dict[str, tuple[str, Callable[..., IO[bytes]]]] = {
    ".gz": ("gzip", gzip.open),
    ".xz": ("xz", lzma.open),
    ".bz2": ("bzip2", bz2.open),
}
"""Compression suffix (lower case) -> (its name for messages, the opener of its decompressed bytes)."""

DECOMPRESSION_ERRORS: tuple[type[BaseException], ...] = (EOFError, zlib.error, lzma.LZMAError)
"""Raised while reading a damaged or truncated compressed stream, besides :class:`OSError` (which bad gzip headers and
bzip2's "Invalid data stream" raise)."""

READ_ERRORS: tuple[type[BaseException], ...] = (OSError, *DECOMPRESSION_ERRORS)
"""Everything reading a plain or compressed file may raise for the file's or the system's sake (:func:`is_damage`
tells which)."""


def is_damage(exc: BaseException) -> bool:
    """True when ``exc``, raised reading a compressed file, is the file's damage (:data:`DECOMPRESSION_ERRORS`, or an
    OSError without an errno: a bad gzip header or CRC, bzip2's invalid stream) rather than the system's."""
    return isinstance(exc, DECOMPRESSION_ERRORS) or (isinstance(exc, OSError) and exc.errno is None)


def split_compression(path: str | os.PathLike) -> tuple[str, str]:
    """The lower-case format extension and compression suffix of ``path``'s name.

    ``"a/Reviews.JSONL.gz"`` -> ``(".jsonl", ".gz")``; ``"a/b.csv"`` -> ``(".csv", "")``; ``"notes.gz"`` ->
    ``("", ".gz")``; ``"x.tar.xz"`` -> ``(".tar", ".xz")``. Never raises.
    """
    stem, ext = os.path.splitext(os.path.basename(os.fspath(path)))
    ext = ext.lower()
    if ext in COMPRESSIONS:
        return os.path.splitext(stem)[1].lower(), ext
    return ext, ""


def open_bytes(path: str | os.PathLike) -> IO[bytes]:
    """``path`` opened for reading bytes, decompressed when its name ends in a :data:`COMPRESSIONS` suffix.

    Raises:
        OSError: the file cannot be opened (not found, permission denied, ...). A compressed file's damage shows when
        it is read (:data:`DECOMPRESSION_ERRORS`, or OSError).
    """
    compression = split_compression(path)[1]
    if compression:
        return COMPRESSIONS[compression][1](os.fspath(path), "rb")
    return open(path, "rb")


def open_text(path: str | os.PathLike, encoding: str, errors: str = "strict", newline: str | None = "") -> IO[str]:
    """``path`` as text in ``encoding`` (decompressed as :func:`open_bytes` does); ``newline`` as for :func:`open`
    (``""``, the default, leaves line ends untranslated, which :mod:`csv` needs).

    Raises:
        OSError: the file cannot be opened.
        LookupError: an unknown ``encoding``.
    """
    fh = open_bytes(path)
    try:
        return io.TextIOWrapper(fh, encoding=encoding, errors=errors, newline=newline)
    except BaseException:
        fh.close()
        raise


def describe_error(exc: BaseException, path: str | os.PathLike) -> str:
    """A message for the user about ``exc``, raised while reading the compressed file ``path``: e.g. ``"damaged
    gzip file (Compressed file ended before the end-of-stream marker was reached)"``."""
    compression = split_compression(path)[1]
    name = COMPRESSIONS[compression][0] if compression else "compressed"
    return f"damaged {name} file ({exc})"


__all__ = ["COMPRESSIONS", "DECOMPRESSION_ERRORS", "READ_ERRORS", "describe_error", "is_damage", "open_bytes",
           "open_text", "split_compression"]
