"""The folder walker: files and folders in, :class:`~model.batch.readers.Record` objects out, lazily.

:func:`iter_records` walks folders with :func:`os.scandir` one directory at a time, in natural
sort order, following symlinks but entering a real folder once (loops and repeats become one
status record), and hands every supported file to :func:`model.batch.readers.read_file` (the
reader registry). :func:`estimate_count` walks the same way without decoding anything, for
progress bars. The folder rules are listed in :mod:`model.batch.readers`. Neither raises for bad
input: failures are records with ``status != "ok"``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator

from model.files.compression import READ_ERRORS, open_bytes, split_compression

from .columns import Columns
from .opening import os_error_status
from .readers import (
    _SKIPPED_NAMES,
    DEFAULT_MAX_FILE_BYTES,
    JSONL_EXTENSIONS,
    TABLE_EXTENSIONS,
    Record,
    is_supported,
    read_file,
)
from .readers import _fail as fail
from .readers import _natural_key as natural_key


class _Walker:
    """The folder walker: state of one walk (real paths already seen, files and folders).

    ``on_file(path)`` turns each supported file into items (records for :func:`iter_records`, a count
    for :func:`estimate_count`); everything that cannot be walked becomes one failure record.
    """

    def __init__(self, on_file: Callable[[str], Iterator]) -> None:
        self.on_file = on_file
        self.seen_files: dict[str, str] = {}  # real path -> first source
        self.seen_dirs: dict[str, str] = {}  # real path -> first path walked
        self.stack: set[str] = set()  # real paths of the folders being walked (ancestors)

    def file(self, path: str) -> Iterator:
        """Records of one file, or one "duplicate of ..." record if its real path was read already."""
        real = os.path.realpath(path)
        first = self.seen_files.get(real)
        if first is not None:
            yield fail(path, f"duplicate of {first}")
            return
        self.seen_files[real] = path
        yield from self.on_file(path)

    def folder(self, path: str) -> Iterator:
        """Records of a folder, recursively, in natural order; loops and repeated folders become one record."""
        real = os.path.realpath(path)
        if real in self.stack:
            yield fail(path, f"symlink loop (leads back to {self.seen_dirs.get(real, real)}); not entered")
            return
        if real in self.seen_dirs:
            yield fail(path, f"duplicate of folder {self.seen_dirs[real]}; not entered again")
            return
        self.seen_dirs[real] = path
        try:
            with os.scandir(path) as it:
                entries = sorted(it, key=lambda e: natural_key(e.name))
        except OSError as exc:
            yield fail(path, os_error_status(exc, path))
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
                    yield fail(child, os_error_status(exc, child))
                    continue
                if is_dir:
                    yield from self.folder(child)
                elif is_file:
                    if is_supported(entry.name) and not _SKIPPED_NAMES.match(entry.name):
                        yield from self.file(child)
                elif entry.is_symlink():
                    yield fail(child, self._dangling_status(child))
                # sockets, FIFOs, devices: skipped silently
        finally:
            self.stack.discard(real)

    @staticmethod
    def _dangling_status(path: str) -> str:
        try:
            os.stat(path)
        except OSError as exc:
            return os_error_status(exc, path)
        return "not a regular file"

    def top(self, path: str) -> Iterator:
        """Records of one path given by the user (file, folder, dangling link or missing path)."""
        if os.path.isdir(path):
            yield from self.folder(path)
        elif os.path.isfile(path):
            yield from self.file(path)
        elif os.path.lexists(path):
            yield fail(path, self._dangling_status(path))
        else:
            yield fail(path, "not found")


def iter_records(
    paths: Iterable[str | os.PathLike],
    text_column: str | None = None,
    max_file_bytes: int | None = DEFAULT_MAX_FILE_BYTES,
    pair_column: str | None = None,
    label_column: str | None = None,
) -> Iterator[Record]:
    """Lazily yield one :class:`Record` per review found in ``paths`` (files and/or folders).

    Args:
        paths: files and folders, in the order they should be read.
        text_column: the CSV/TSV column or JSON field holding the text; None
            detects ``text``/``review``/``content`` (case-insensitive).
        pair_column, label_column: the column or field of a sentence pair's second text and of the gold label;
            None detects ``text_pair`` and ``label``/``labels``/``sentiment``/``gold`` (see :mod:`.columns`).
        max_file_bytes: files read whole (``.txt``, ``.json``) larger than
            this many bytes get a "too large" record; CSV/TSV/JSON Lines files
            are streamed, so the cap applies to each row's text (in
            characters) instead. None disables the cap.

    Yields:
        Records in a deterministic order (arguments in order, folder entries in
        natural sort order). Never raises for bad input: failures are records
        with ``status != "ok"`` (see the module docstring for the rules).
    """
    columns = Columns(text_column, pair_column, label_column)
    walker = _Walker(lambda path: read_file(path, columns, max_file_bytes))
    for p in paths:
        yield from walker.top(os.fspath(p))


def estimate_count(paths: Iterable[str | os.PathLike], max_file_bytes: int | None = DEFAULT_MAX_FILE_BYTES) -> int:
    """A quick estimate of how many records :func:`iter_records` will yield (for progress bars / ETA).

    Walks folders with the same walker and rules (without decoding anything); a one-review
    file or a JSON file counts 1, a CSV/TSV file its newline count minus the
    header, a JSON Lines file its newline count (counted in 1 MB binary
    pieces; a compressed file's decompressed, which reads it once more). Quoted newlines in CSV fields make it an
    over-estimate.

    Returns:
        The estimated number of records, >= 0. Never raises.
    """
    def count_file(path: str) -> int:
        ext = split_compression(path)[0]
        if ext not in TABLE_EXTENSIONS + JSONL_EXTENSIONS:
            return 1
        n = 0
        last = b"\n"
        try:
            with open_bytes(path) as fh:
                while piece := fh.read(1 << 20):
                    n += piece.count(b"\n")
                    last = piece[-1:]
        except READ_ERRORS:
            return max(1, n)
        n += last != b"\n"
        return max(1, n - 1) if ext in TABLE_EXTENSIONS else max(1, n)

    walker = _Walker(lambda path: iter((count_file(path),)))
    total = 0
    for p in paths:
        total += sum(item if isinstance(item, int) else 1 for item in walker.top(os.fspath(p)))
    return total
