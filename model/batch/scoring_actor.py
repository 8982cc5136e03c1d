"""The actor side of the Ray engine (:mod:`model.batch.ray_engine`): the Arrow blocks that travel between the driver
and the actors, and the actor that scores them.

An input block is a table of :class:`~model.batch.readers.Record` fields (:func:`records_to_table`); an output block
is a table of every :class:`~model.batch.engine.ResultRow` field, with the sentence vectors as a last column when kept
(:func:`rows_to_table`). Each :class:`ScoringActor` loads one :class:`model.Predictor` and scores a block with the
local engine's code (:func:`score_block`); a block whose scoring raises is re-scored one review at a time.

Imports no Ray (the driver does); torch is imported when an actor starts.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .engine import ResultRow, failed_row, score_records
from .export import _import_pyarrow
from .readers import Record
from .rows import BLOCK_FIELDS

# Test hook (not a CLI option): the path of a marker file; the first actor to reach its second block creates it and
# exits the process (os._exit) before returning, once per marker, so tests can check that a dead actor is retried.
TEST_CRASH_ENV = "ATTENTION_EXPLORER_RAY_TEST_CRASH_MARKER"
VECTOR_COLUMN = "vector"  # an output block's sentence vectors (issue 42), when kept
_INPUT_COLUMNS = ("source", "text", "gold", "status", "text_pair", "gold_source")


# ---------------------------------------------------------------------------------------------------------------
# Blocks: records <-> Arrow tables <-> rows


def records_to_table(records: Sequence[Record]) -> Any:
    """The input block of ``records``: an Arrow table with the columns of :data:`_INPUT_COLUMNS` (strings, nullable).

    Raises:
        RuntimeError: pyarrow is missing (it comes with Ray Data).
    """
    pa = _import_pyarrow()
    return pa.table({c: pa.array([getattr(r, c) for r in records], pa.string()) for c in _INPUT_COLUMNS})


def table_to_records(table: Any) -> list[Record]:
    """Records back from an input block made by :func:`records_to_table`."""
    cols = [table.column(c).to_pylist() for c in _INPUT_COLUMNS]
    return [Record(*values) for values in zip(*cols, strict=True)]


def _block_schema(pa: Any) -> Any:
    """The Arrow schema of an output block: every :class:`ResultRow` field (probabilities and labels as lists), so
    the driver gets the same rows as the local engine whatever the model's labels and task."""
    types = {"probabilities": pa.list_(pa.float64()), "labels": pa.list_(pa.string()), "num_tokens": pa.int64(),
             "num_windows": pa.int64(), "truncated": pa.bool_(), "correct": pa.bool_(), "value": pa.float64(),
             "components": pa.list_(pa.struct([("name", pa.string()), ("value", pa.float64())]))}
    return pa.schema([(f, types.get(f, pa.string())) for f in BLOCK_FIELDS])


def rows_to_table(rows: Sequence[ResultRow], vectors: Sequence[Any] | None = None) -> Any:
    """An output block: the rows as an Arrow table of every :class:`ResultRow` field (:func:`_block_schema`); with
    ``vectors`` (one float32 [d] or None per row) a last column ``vector`` (list of float32, null for none)."""
    pa = _import_pyarrow()
    table = pa.Table.from_pylist([{f: getattr(r, f) for f in BLOCK_FIELDS} for r in rows], schema=_block_schema(pa))
    if vectors is None:
        return table
    column = pa.array([None if v is None else v.tolist() for v in vectors], type=pa.list_(pa.float32()))
    return table.append_column(VECTOR_COLUMN, column)


def table_to_rows(table: Any, on_vectors: Callable[[list[Any]], None] | None = None) -> list[ResultRow]:
    """Result rows back from an output block made by :func:`rows_to_table`; its ``vector`` column, if any, goes to
    ``on_vectors`` (:func:`table_vectors`)."""
    if VECTOR_COLUMN in table.column_names:
        if on_vectors is not None:
            on_vectors(table_vectors(table))
        table = table.drop_columns([VECTOR_COLUMN])
    return [ResultRow(**{**d, "probabilities": tuple(d["probabilities"] or ()), "labels": tuple(d["labels"] or ()),
                         "components": tuple((c["name"], c["value"]) for c in d["components"] or ())})
            for d in table.to_pylist()]


def table_vectors(table: Any) -> list[np.ndarray | None]:
    """The ``vector`` column of an output block: float32 [d] per row, None for a row without one."""
    return [None if v is None else np.asarray(v, np.float32) for v in table.column(VECTOR_COLUMN).to_pylist()]


def score_block(predictor: Any, records: Sequence[Record], batch_size: int = 64, vectors: Any = None,
                vectors_out: list | None = None, components: bool = False) -> list[ResultRow]:
    """Score one block with the local engine's :func:`model.batch.score_records`; one row per record, in order.

    If scoring the block raises, the block is scored again one record at a time, and a record whose scoring still
    raises gets the status ``"scoring failed: <error type>: <message>"``: one bad review never loses its block.

    Args:
        predictor: a :class:`model.Predictor` (or anything ``score_records`` accepts).
        records: the block's records (unreadable ones pass through as their status rows).
        batch_size: texts per forward pass.
        vectors, vectors_out: a :class:`model.records.vectors.VectorSpec` to keep, and the list that gets one entry
            per row (float32 [d], or None for a failed row), as :func:`model.batch.score_records` gives them.
        components: each row's components, as :func:`model.batch.score_records` gives them (issue 53).

    Returns:
        ``len(records)`` rows.
    """
    records = list(records)
    if not records:
        return []
    kept: list = []
    kw = {"components": components, **({} if vectors is None else {"vectors": vectors, "on_vectors": kept.extend})}
    try:
        out = [r for rows in score_records(predictor, records, batch_size, chunk=len(records), **kw) for r in rows]
    except Exception as exc:  # noqa: BLE001 - isolate the failing review below
        logging.getLogger(__name__).warning("a block of %d failed (%s); scoring it one by one", len(records), exc)
        out, kept[:] = [], []
        for rec in records:
            try:
                out.extend(r for rows in score_records(predictor, [rec], 1, chunk=1, **kw) for r in rows)
            except Exception as exc:  # noqa: BLE001 - becomes the review's status
                out.append(failed_row(rec, f"scoring failed: {type(exc).__name__}: {exc}"))
                kept.append(None)
    if vectors_out is not None:
        vectors_out.extend(kept)
    return out


class ScoringActor:
    """A Ray Data ``map_batches`` callable class: one :class:`model.Predictor` per actor.

    Args:
        model_dir: a model folder every node can read (absolute path, or a shared mount).
        batch_size: texts per forward pass.
        device: ``"cpu"``, ``"cuda"``, ...; ``"cuda"`` falls back to the CPU where no GPU is visible.
        torch_threads: intra-op threads of this actor (see :func:`model.batch.ray_pool.plan_pool`).
        task: ``(kind, threshold)`` passed to :meth:`model.Predictor.set_task` (None keeps the config's).
        precision: passed to :meth:`model.Predictor.use_precision` (``auto``: each node's own CPU class; each row says
            what it ran in; in one precision the rows equal the local engine's within 1e-5, issue 55).
        vectors: None, or the :class:`model.records.vectors.VectorSpec` whose vectors each block's table carries
            (:func:`rows_to_table`'s ``vector`` column). components: each row's components (:func:`score_block`).
    """

    def __init__(self, model_dir: str, batch_size: int, device: str, torch_threads: int,
                 task: tuple[str | None, float | None] = (None, None), precision: str = "auto",
                 vectors: Any = None, components: bool = False) -> None:
        import torch

        from model.predictor.predictor import Predictor

        torch.set_num_threads(max(1, int(torch_threads)))
        if device.startswith("cuda") and not torch.cuda.is_available():
            device = "cpu"
        self.predictor = Predictor.from_pretrained(model_dir, device=device)
        if task != (None, None):  # the driver's --task / --threshold (checked there)
            self.predictor.set_task(*task)
        self.predictor.use_precision(precision)
        self.batch_size, self.vectors, self.components = batch_size, vectors, components
        self.calls = 0

    def __call__(self, batch: Any) -> Any:
        """Score one input block (Arrow table of :func:`records_to_table`) -> output block (:func:`rows_to_table`)."""
        self.calls += 1
        kept: list | None = None if self.vectors is None else []
        rows = score_block(self.predictor, table_to_records(batch), self.batch_size, self.vectors, kept,
                           self.components)
        _maybe_crash_for_test(self.calls)
        return rows_to_table(rows, kept)


def _maybe_crash_for_test(calls: int) -> None:
    """The :data:`TEST_CRASH_ENV` hook: exit the actor's process once, on its second block, after scoring it."""
    marker = os.environ.get(TEST_CRASH_ENV)
    if not marker or calls < 2:
        return
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return
    os.close(fd)
    os._exit(1)


__all__ = ["TEST_CRASH_ENV", "ScoringActor", "records_to_table", "rows_to_table", "score_block", "table_to_records",
           "table_to_rows"]
