"""Atomic file writes, the one implementation for the whole project (no torch, no Qt).

A file is written to a temporary name in the destination folder, flushed and fsync-ed, given
its final permissions and moved over the destination with :func:`os.replace` (atomic on one
filesystem), so a reader sees the old file or the new one, never a half-written one. On any
error the temporary file is removed and the destination is left as it was.

Permissions: a new file gets ``0o666 & ~umask`` (what :func:`open` would give it, not
:func:`tempfile.mkstemp`'s 0o600); an existing file keeps its mode. A destination that is a
symlink stays one: the file it points to is replaced (:func:`destination`).

Entry points:

* :func:`atomic_write_bytes`: ``bytes`` in one call;
* :func:`atomic_path`: a context manager yielding a temporary *path*, for writers that open
  files themselves (safetensors, pyarrow, Qt image exporters);
* :func:`temp_beside` + :func:`commit` / :func:`discard`: for streaming writers
  (:class:`model.batch.export.RowWriter`).

Errors: OSError from the filesystem propagates unchanged.
"""

from __future__ import annotations

import os
import stat
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_UMASK_LOCK = threading.Lock()


def current_umask() -> int:
    """The process umask (read from /proc on Linux; elsewhere set and restored under a lock)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def final_mode(path: str | os.PathLike) -> int:
    """The permission bits ``path`` should get: its current ones if it exists, else ``0o666 & ~umask``."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return 0o666 & ~current_umask()


def destination(path: str | os.PathLike) -> Path:
    """The file an atomic write to ``path`` replaces: ``path`` itself, or the target of a symlink (resolved)."""
    path = Path(path)
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def temp_beside(path: str | os.PathLike, suffix: str = ".tmp") -> tuple[int, str]:
    """Create an empty temporary file next to ``path`` (hidden name, ending in ``suffix``); returns ``(fd, temp path)``."""
    path = destination(path)
    return tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=suffix)


def _fsync_file(name: str) -> None:
    fd = os.open(name, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def commit(tmp: str | os.PathLike, path: str | os.PathLike, synced: bool = False) -> None:
    """fsync ``tmp`` (unless ``synced``), give it ``path``'s final mode and move it over ``path``."""
    if not synced:
        _fsync_file(os.fspath(tmp))
    path = destination(path)
    os.chmod(tmp, final_mode(path))
    os.replace(tmp, path)


def discard(tmp: str | os.PathLike | None) -> None:
    """Remove a temporary file if it is still there."""
    if tmp is not None:
        Path(tmp).unlink(missing_ok=True)


@contextmanager
def atomic_path(path: str | os.PathLike, suffix: str = ".tmp") -> Iterator[str]:
    """Yield a temporary path beside ``path``; on normal exit it replaces ``path`` (see module doc).

    The temporary file exists (empty) when the block starts; the block may overwrite it. ``suffix``
    ends its name (writers that pick the format by extension need the real one).
    """
    fd, tmp = temp_beside(path, suffix)
    os.close(fd)
    try:
        yield tmp
        commit(tmp, path)
    except BaseException:
        discard(tmp)
        raise


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see the module docstring for permissions and errors)."""
    fd, tmp = temp_beside(path)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        commit(tmp, path, synced=True)
    except BaseException:
        discard(tmp)
        raise
