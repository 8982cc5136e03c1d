"""Opening one input file for a batch reader: stat and size cap, the binary sniff, decoding it whole or opening it
as a text stream (plain or compressed).

The readers of :mod:`model.batch.readers` (one per file format) call these first; every failure comes back as a
short status (``"not found"``, ``"permission denied"``, ``"binary file (PNG image), not text"``, ``"too large
(...)"``, ``"undecodable bytes (...)"``), never as an exception. Bytes are decoded by :mod:`model.files.textio`;
compressed files are opened by :mod:`model.files.compression`.
"""

from __future__ import annotations

import errno
import os
from typing import IO

from model.files import compression
from model.files.textio import SAMPLE_BYTES, binary_kind, decode_bytes, detect_stream_encoding


def human_bytes(n: float) -> str:
    """``n`` bytes as a short size for a status (``"512 bytes"``, ``"9.8 MB"``)."""
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"  # pragma: no cover


def os_error_status(exc: BaseException, path: str) -> str:
    """A short status for an error of :data:`model.files.compression.READ_ERRORS` met while opening, statting or
    reading ``path`` (a compressed file's damage, :func:`model.files.compression.is_damage`, is described as such)."""
    if not isinstance(exc, OSError) or (compression.split_compression(path)[1] and compression.is_damage(exc)):
        return compression.describe_error(exc, path)
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


def read_sample(path: str) -> bytes:
    """The first ``SAMPLE_BYTES`` bytes of ``path`` (decompressed), for the binary sniff and the encoding guess.

    Raises: an error of :data:`model.files.compression.READ_ERRORS` when the file cannot be opened or read."""
    with compression.open_bytes(path) as fh:
        return fh.read(SAMPLE_BYTES)


def check_file(path: str, max_file_bytes: int | None) -> tuple[bytes | None, str | None, int]:
    """Stat + sniff a file. Returns ``(sample, failure_status, size_bytes)``."""
    try:
        st = os.stat(path)
    except OSError as exc:
        return None, os_error_status(exc, path), 0
    size = st.st_size
    if max_file_bytes is not None and size > max_file_bytes:
        return None, f"too large ({human_bytes(size)}; the limit is {human_bytes(max_file_bytes)})", size
    try:
        sample = read_sample(path)
    except compression.READ_ERRORS as exc:
        return None, os_error_status(exc, path), size
    if not sample:
        return None, "empty file", size
    kind = binary_kind(sample)
    if kind:
        return None, f"binary file ({kind}), not text", size
    return sample, None, size


def read_text_file(path: str, max_file_bytes: int | None) -> tuple[str | None, str | None]:
    """Read and decode a whole file. Returns ``(text, failure_status)``."""
    _sample, status, _ = check_file(path, max_file_bytes)
    if status:
        return None, status
    try:
        with compression.open_bytes(path) as fh:  # a compressed file's cap is on what it decompresses to
            data = fh.read() if max_file_bytes is None else fh.read(max_file_bytes + 1)
    except compression.READ_ERRORS as exc:
        return None, os_error_status(exc, path)
    if max_file_bytes is not None and len(data) > max_file_bytes:
        return None, f"too large (more than {human_bytes(max_file_bytes)})"
    try:
        text, _ = decode_bytes(data)
    except (UnicodeDecodeError, ValueError, LookupError) as exc:
        return None, f"undecodable bytes ({exc})" if "undecodable" not in str(exc) else str(exc)
    if not text.strip():
        return None, "whitespace only"
    return text, None


def open_stream(path: str) -> tuple[IO[str] | None, str | None]:
    """Open a CSV/TSV/JSONL file (plain or compressed) for streaming text. Returns ``(handle, failure_status)``."""
    sample, status, _ = check_file(path, None)  # streamed: no whole-file cap
    if status:
        return None, status
    try:
        enc = detect_stream_encoding(path, sample)
        return compression.open_text(path, enc), None
    except compression.READ_ERRORS as exc:
        return None, os_error_status(exc, path)
    except (ValueError, LookupError) as exc:
        return None, str(exc) if "undecodable" in str(exc) else f"undecodable bytes ({exc})"
