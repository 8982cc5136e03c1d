"""A folder of Parquet shards for large batch-scoring outputs (``attention-explorer-score --engine ray --out DIR/``).

Each shard is written by :class:`model.batch.RowWriter` (a temporary file in
the folder, then an atomic :func:`os.replace`), so a crash or Ctrl+C never
leaves a half-written file under a ``part-*.parquet`` name.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from .engine import ResultRow
from .rows import RowSchema
from .export import RowWriter, _import_pyarrow


def is_shard_folder(out: str | os.PathLike) -> bool:
    """True when ``--out`` names a shard folder: it ends with a path separator or is an existing folder."""
    s = os.fspath(out)
    return s.endswith(("/", os.sep)) or os.path.isdir(s)


class ShardWriter:
    """Writes rows to a folder of Parquet shards ``part-00000.parquet``, ``part-00001.parquet``, ...

    Same interface as :class:`model.batch.RowWriter` (``write``, ``commit``,
    ``abort``, ``rows_written``). Each shard of up to ``shard_rows`` rows is
    written by a ``RowWriter`` (a temporary name, then an atomic rename), so a
    crash never leaves a half-written file under a ``part-*.parquet`` name; a
    reader sees only complete shards. :meth:`commit` writes the last shard.

    Args:
        folder: created if missing; must not already hold ``part-*.parquet`` files.
        shard_rows: rows per shard (>= 1).

    Raises (constructor):
        OSError: the folder cannot be created, or holds shards from an earlier run.
        RuntimeError: pyarrow is missing.
    """

    def __init__(self, folder: str | os.PathLike, shard_rows: int = 100_000, schema: RowSchema | None = None) -> None:
        _import_pyarrow()
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        if any(self.folder.glob("part-*.parquet")):
            raise OSError(f"{self.folder} already holds part-*.parquet shards; remove them or choose another folder")
        self.shard_rows = max(1, shard_rows)
        self.rows_written = 0
        self.shards: list[Path] = []
        self._buf: list[ResultRow] = []
        self.schema = schema  # the columns of every shard (None: each shard's rows decide)

    def write(self, rows: Iterable[ResultRow]) -> None:
        """Buffer rows; every full ``shard_rows`` become one shard on disk."""
        self._buf.extend(rows)
        while len(self._buf) >= self.shard_rows:
            self._flush(self._buf[: self.shard_rows])
            self._buf = self._buf[self.shard_rows:]

    def _flush(self, rows: list[ResultRow]) -> None:
        path = self.folder / f"part-{len(self.shards):05d}.parquet"
        with RowWriter(path, "parquet", schema=self.schema) as w:
            w.write(rows)
        self.shards.append(path)
        self.rows_written += len(rows)

    def commit(self) -> None:
        """Write the buffered rows as the last shard (an empty run writes one empty shard with the schema)."""
        if self._buf or not self.shards:
            self._flush(self._buf)
            self._buf = []

    def abort(self) -> None:
        """Drop the buffered rows; shards already written stay (each is complete)."""
        self._buf = []


__all__ = ["ShardWriter", "is_shard_folder"]
