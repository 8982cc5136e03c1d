"""``attention-explorer-score --embeddings FILE.npy --projection pca|umap``: the corpus map on the command line
(issue 42).

* ``--embeddings FILE.npy``: the scored texts' sentence vectors (:mod:`model.records.vectors`), float32 (N, d), row
  i the vector of the i-th *scored* row of ``--out`` (failed inputs have no row in it), written atomically after
  scoring. ``--embedding-layer`` and ``--embedding-pooling`` choose the layer (default the last, the read-out's
  input) and the pooling (default the read-out's own; ``mean``).
* ``--projection pca|umap``: the rows gain ``x`` and ``y`` columns, the 2-D map coordinates
  (:mod:`model.corpus.projection`; empty for failed rows). The rows are then written once all are scored (the
  projection needs every vector), and ``--report`` draws the map (:mod:`model.report.corpus_map`).

The vectors are read in the scoring passes themselves (no second pass). Memory: N x d x 4 bytes (25,000 x 768 =
77 MB), plus the rows when ``--projection`` holds them back.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

from model.files.atomic import atomic_path
from model.records.vectors import POOLINGS, PROJECTIONS, MapProjection, SentenceVectors, VectorSpec, stack_vectors

from model.batch.rows import ResultRow, RowSchema
from model.batch.shards import is_shard_folder

MAP_COLUMNS = ("x", "y")


def add_map_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--embeddings``, ``--embedding-layer``, ``--embedding-pooling`` and ``--projection``."""
    g = parser.add_argument_group("corpus map", "Keep each scored text's sentence vector (the vector the model's "
                                  "read-out uses) and place the texts on a 2-D map.")
    g.add_argument("--embeddings", metavar="FILE.npy", help="write the scored rows' vectors, float32 (N, d); row i "
                   "is the i-th scored row of --out (failed inputs have none)")
    g.add_argument("--embedding-layer", type=int, metavar="L", help="the layer to read (0-based, negative from the "
                   "last; default: the last layer, the read-out's input)")
    g.add_argument("--embedding-pooling", choices=POOLINGS, default="readout",
                   help="readout: the model's own pooling ([CLS] / first token, or the bundled model's); mean: the "
                   "mean over the tokens (default %(default)s)")
    g.add_argument("--projection", choices=PROJECTIONS, help="add x and y columns: PCA, or UMAP on a PCA-50 (fixed "
                   "seed); the rows are written once all are scored; --report draws the map")


def wants_vectors(args: argparse.Namespace) -> bool:
    """True when ``--embeddings`` or ``--projection`` was given."""
    return bool(args.embeddings or args.projection)


def map_error(args: argparse.Namespace) -> str | None:
    """Why the corpus-map options cannot run (one line), or None; checked before the model loads."""
    if not wants_vectors(args):
        if args.embedding_layer is not None:
            return "--embedding-layer needs --embeddings or --projection"
        return None
    if getattr(args, "engine", "local") == "ray" and args.out and is_shard_folder(args.out):
        return "--embeddings and --projection write one --out file, not a folder of shards"
    if getattr(args, "compare_model", None):
        return "--embeddings and --projection map one model's vectors: run them without --compare-model"
    if args.embeddings:
        path = Path(args.embeddings)
        parent = path.parent if str(path.parent) else Path(".")
        if path.is_dir() or args.embeddings.endswith(("/", os.sep)):
            return f"--embeddings {args.embeddings}: is a folder; give a file name"
        if not parent.is_dir():
            return f"--embeddings {args.embeddings}: folder {parent} does not exist"
        if args.out and os.path.abspath(args.out) == os.path.abspath(args.embeddings):
            return f"--embeddings {args.embeddings}: the same file as --out"
    return None


@dataclasses.dataclass(frozen=True)
class MapSchema(RowSchema):
    """A :class:`~model.batch.rows.RowSchema` with the map's ``x`` and ``y`` columns last; its rows are
    :class:`PlacedRow`\\ s."""

    @property
    def columns(self) -> tuple[str, ...]:
        """The row columns, then ``x``, ``y``."""
        return (*super().columns, *MAP_COLUMNS)

    def values(self, row: Any) -> dict[str, Any]:
        """``row`` (a :class:`PlacedRow`) as a dict keyed by :attr:`columns` (x, y None for an unplaced row)."""
        return {**super().values(row.row), "x": row.x, "y": row.y}

    def arrow_schema(self, pa: Any) -> Any:
        """The Arrow schema: the rows' types, ``x`` and ``y`` float64."""
        return pa.schema([pa.field(f.name, pa.float64()) if f.name in MAP_COLUMNS else f
                          for f in super().arrow_schema(pa)])


@dataclasses.dataclass(frozen=True)
class PlacedRow:
    """A :class:`ResultRow` with its map coordinates (None when it has none: not scored); other attributes are the
    row's."""

    row: ResultRow
    x: float | None = None
    y: float | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.row, name)


class MapWriter:
    """Wraps the command line's row writer: collects the vectors (``on_vectors``, from
    :func:`model.batch.score_records`), and on :meth:`commit` writes ``--embeddings``, projects (``--projection``) and
    writes the held-back rows with their coordinates.

    Args:
        writer: the :class:`~model.batch.export.RowWriter` (its schema a :class:`MapSchema` with ``--projection``).
        args: the parsed command line. model: the model folder (for the record).
    """

    def __init__(self, writer: Any, args: argparse.Namespace, model: str = "") -> None:
        self.writer, self.args, self.model = writer, args, model
        self.spec = VectorSpec(args.embedding_layer, args.embedding_pooling)
        self.rows: list[ResultRow] = []
        self.row_vectors: list[np.ndarray | None] = []
        self.vectors: SentenceVectors | None = None
        self.projection: MapProjection | None = None

    @property
    def rows_written(self) -> int:
        """Rows written so far (all of them after :meth:`commit`)."""
        return self.writer.rows_written

    def on_vectors(self, vectors: list[np.ndarray | None]) -> None:
        """One chunk's vectors (one entry per row, in order)."""
        self.row_vectors.extend(vectors)

    def write(self, rows: list[ResultRow]) -> None:
        """Hold the rows back (``--projection``) or write them through."""
        if self.args.projection:
            self.rows.extend(rows)
        else:
            self.writer.write(rows)

    def commit(self) -> None:
        """Write ``--embeddings``, project, write the held rows, commit the row writer. Raises OSError."""
        self.vectors = stack_vectors(self.row_vectors, self.spec, self.model)
        if self.args.embeddings:
            with atomic_path(self.args.embeddings, suffix=".npy") as tmp:
                np.save(tmp, self.vectors.vectors)
            print(f"wrote {self.vectors.count:,} vectors of {self.vectors.dim} floats to {self.args.embeddings} "
                  f"({self.spec.describe()})", file=sys.stderr)
        if self.args.projection:
            self.writer.write(self._placed())
        self.writer.commit()

    def _placed(self) -> list[PlacedRow]:
        """The held rows with their coordinates (none when fewer than :data:`~model.corpus.projection.MIN_VECTORS` texts
        were scored; UMAP of too few texts is PCA, with a note)."""
        from model.corpus.projection import MIN_VECTORS, project

        xy: dict[int, tuple[float, float]] = {}
        if self.vectors.count >= MIN_VECTORS:
            self.projection = project(self.vectors, self.args.projection).result
            xy = {int(r): (float(a), float(b)) for r, (a, b) in zip(self.vectors.rows, self.projection.coords)}
            note = f" ({self.projection.note})" if self.projection.note else ""
            print(f"{self.projection.method.upper()} of {self.vectors.count:,} vectors in "
                  f"{self.projection.elapsed_s:.1f} s{note}", file=sys.stderr)
        else:
            print(f"--projection: {self.vectors.count} text(s) scored, too few for a map; x and y left empty",
                  file=sys.stderr)
        return [PlacedRow(r, *xy.get(i, (None, None))) for i, r in enumerate(self.rows)]

    def abort(self) -> None:
        """Abort the row writer (nothing is written)."""
        self.writer.abort()


def map_schema(args: argparse.Namespace, schema: RowSchema) -> RowSchema:
    """``schema`` with the map's columns when ``--projection`` was given."""
    return MapSchema(schema.labels, schema.task, schema.pairs, schema.components) if args.projection else schema


def map_writer(args: argparse.Namespace, writer: Any, model: str = "") -> Any:
    """``writer`` wrapped in a :class:`MapWriter` when the map options were given, else ``writer``."""
    return MapWriter(writer, args, model) if wants_vectors(args) else writer


def map_kwargs(writer: Any) -> dict[str, Any]:
    """The :func:`model.batch.score_records` keywords that keep the vectors for a :class:`MapWriter` (else {})."""
    return {"vectors": writer.spec, "on_vectors": writer.on_vectors} if isinstance(writer, MapWriter) else {}


def map_sections(writer: Any) -> list[str]:
    """The report's map section (:func:`model.report.corpus_map.map_section`) when the rows were projected."""
    if not isinstance(writer, MapWriter) or writer.projection is None:
        return []
    from model.report.corpus_map import map_section

    return [map_section(writer.rows, writer.vectors.rows, writer.projection)]
