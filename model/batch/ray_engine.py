"""The Ray engine for batch scoring: the same records, rows and writers as the local engine, scored on a Ray cluster.

``attention-explorer-score PATH... --engine ray`` (see :mod:`model.scorer.main`) calls
:func:`score_paths_ray`, which

1. reads the inputs on the driver with the same reader as the local engine
   (:func:`model.batch.walk.iter_records`), so every input gets the same source,
   gold label and status, and cuts the record stream into blocks of
   ``block_rows`` records (Arrow tables);
2. scores the blocks with Ray Data ``map_batches`` over an actor pool: each
   actor (:class:`model.batch.scoring_actor.ScoringActor`) loads a :class:`model.Predictor` once from a
   model folder that every node can read, and scores a block with
   :func:`model.batch.score_records` (the local engine's code);
3. yields the result rows to the caller in input order (Ray Data's
   ``preserve_order``), who writes them with :class:`model.batch.RowWriter` or,
   for ``--out DIR/``, a :class:`model.batch.shards.ShardWriter` (a folder of Parquet shards).

The record stream is processed in windows of ``window_rows`` records (one Ray Dataset and one actor pool per window),
so the driver's memory is bounded by a window whatever the input size.

Pool sizing: :func:`model.batch.ray_pool.plan_pool` (one CPU of the cluster kept
free for Ray Data and the driver, the rest shared among the actors).

Faults: an actor that dies (OOM kill, lost node) is restarted and its block retried (``max_restarts`` /
``max_task_retries``); a block whose scoring raises is re-scored one review at a time, so only the review that fails
gets a ``"scoring failed: ..."`` status (:func:`model.batch.scoring_actor.score_block`).

This module is the driver; the blocks and the actor that scores them are :mod:`model.batch.scoring_actor`'s.

Ray is imported only inside the functions that need it: this module imports without the ``cluster`` extra, and
:func:`import_ray` names the extra when it is missing.
"""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from .engine import ResultRow
from .gold import GoldReader
from .ray_pool import PoolPlan, plan_pool
from .readers import Record
from .scoring_actor import TEST_CRASH_ENV, ScoringActor, records_to_table, table_to_rows
from .walk import iter_records

CLUSTER_HINT = "the Ray engine needs the 'cluster' extra: pip install 'attention-explorer[cluster]'"
MAX_RESTARTS = 3  # per actor; each restart reloads the model
MAX_TASK_RETRIES = 3  # per block, on an actor that died


def import_ray() -> Any:
    """Import and return the ``ray`` module (with ``ray.data``).

    Raises:
        RuntimeError: Ray or Ray Data is not installed; the message names the ``cluster`` extra.
    """
    try:
        import ray
        import ray.data
    except ImportError as exc:
        raise RuntimeError(f"{CLUSTER_HINT} ({exc})") from exc
    return ray


def _blocks(records: Iterable[Record], block_rows: int) -> Iterator[list[Record]]:
    block: list[Record] = []
    for rec in records:
        block.append(rec)
        if len(block) >= block_rows:
            yield block
            block = []
    if block:
        yield block


def _init_ray(ray: Any, address: str | None, num_cpus: int | None) -> bool:
    """Connect to (``address``) or start (None) Ray unless it is running in this process; True when we started it."""
    if ray.is_initialized():
        return False
    kwargs: dict[str, Any] = {"include_dashboard": False, "logging_level": logging.WARNING,
                              "log_to_driver": True}
    if address:
        ray.init(address=address, **kwargs)
    else:
        ray.init(address="local", num_cpus=num_cpus, **kwargs)
    return True


def score_paths_ray(
    paths: Iterable[str | os.PathLike],
    model_dir: str | os.PathLike,
    *,
    text_column: str | None = None,
    pair_column: str | None = None,
    label_column: str | None = None,
    max_file_bytes: int | None = None,
    batch_size: int = 64,
    address: str | None = None,
    num_workers: int | None = None,
    gpus_per_worker: float = 0.0,
    device: str | None = None, num_cpus: int | None = None,
    block_rows: int | None = None, window_rows: int = 100_000,
    progress: Callable[[int], None] | None = None,
    on_plan: Callable[[PoolPlan], None] | None = None,
    gold: tuple[GoldReader, Callable[[str, str], None]] | None = None,
    task: tuple[str | None, float | None] = (None, None),
    precision: str = "auto",
    vectors: Any = None, on_vectors: Callable[[list[Any]], None] | None = None, components: bool = False,
) -> Iterator[list[ResultRow]]:
    """Score every review in ``paths`` on Ray; yields lists of rows that, concatenated, follow the input order.

    The rows equal the local engine's (:func:`model.batch.score_records` over :func:`model.batch.walk.iter_records`),
    up to float rounding of probabilities (~1e-7) from different batch compositions.

    Args:
        paths: files and folders, as for :func:`model.batch.walk.iter_records`.
        model_dir: the model folder; must be readable at the same path on every node.
        text_column, pair_column, label_column, max_file_bytes: passed to :func:`model.batch.walk.iter_records`.
        batch_size: texts per forward pass inside an actor.
        address: None starts a local Ray instance (``num_cpus`` CPUs, default all); ``"auto"`` or
            ``"ray://host:port"`` joins a running cluster. If Ray is already initialised in this process it is reused.
        num_workers, gpus_per_worker: the pool (see :func:`model.batch.ray_pool.plan_pool`).
        device: the actors' torch device; default ``"cuda"`` when ``gpus_per_worker`` > 0, else ``"cpu"``.
        block_rows: records per block (one actor call); default ``4 * batch_size``.
        window_rows: records per Ray Dataset (bounds the driver's memory).
        progress: called as ``progress(done)`` with the rows received so far.
        on_plan: called once with the :class:`~model.batch.ray_pool.PoolPlan` chosen.
        gold: ``(reader, on_gold_problem)``: the driver reads each record's gold label with the model's
            :class:`~model.batch.gold.GoldReader` and reports the ones the model does not know, as the local engine
            does (the actors' rows leave those golds empty).
        task, precision: every actor's :meth:`model.Predictor.set_task` ``(kind, threshold)`` (``(None, None)``: the
            config's) and :meth:`model.Predictor.use_precision` (:data:`model.predictor.precision.PRECISIONS`).
        vectors, on_vectors, components: sentence vectors and parts, as :func:`model.batch.score_records` keeps them.

    Raises:
        RuntimeError: Ray is not installed (:data:`CLUSTER_HINT`).
        ValueError: bad pool arguments (see :func:`model.batch.ray_pool.plan_pool`).
        ray.exceptions.RayError: the cluster failed beyond the retries.

    The Ray instance this call started is shut down when the generator finishes or is closed (also on Ctrl+C).
    """
    ray = import_ray()
    block_rows = block_rows or 4 * batch_size
    started = _init_ray(ray, address, num_cpus)
    try:
        node_cpus = [n.get("Resources", {}).get("CPU", 0.0) for n in ray.nodes() if n.get("Alive")]
        plan = plan_pool(ray.cluster_resources(), num_workers, gpus_per_worker, max(node_cpus, default=None))
        if on_plan is not None:
            on_plan(plan)
        _quiet_ray_data(ray)
        ctor = {"model_dir": str(Path(model_dir).resolve()), "batch_size": batch_size,
                "device": device or ("cuda" if gpus_per_worker > 0 else "cpu"), "torch_threads": plan.torch_threads,
                "task": task, "precision": precision, "vectors": vectors, "components": components}
        options = _map_options(plan, ctor)
        records = _checked_gold(iter_records(paths, text_column=text_column, max_file_bytes=max_file_bytes,
                                             pair_column=pair_column, label_column=label_column), gold)
        done = 0
        for tables in _windows(_blocks(records, block_rows), block_rows, window_rows):
            ds = _score_window(ray, tables, plan, options)
            for table in ds.iter_batches(batch_size=None, batch_format="pyarrow"):
                rows = table_to_rows(table, on_vectors)
                done += len(rows)
                if progress is not None:
                    progress(done)
                yield rows
    finally:
        if started:
            ray.shutdown()


def _checked_gold(records: Iterable[Record], gold: tuple[GoldReader, Callable[[str, str], None]] | None
                  ) -> Iterator[Record]:
    """``records`` unchanged; with ``gold = (reader, on_problem)`` each gold label the model does not know goes to
    ``on_problem(source, problem)``."""
    for rec in records:
        problem = None if gold is None else gold[0].read(rec.gold, rec.gold_source)[1]
        if problem is not None:
            gold[1](rec.source, problem)
        yield rec


def _quiet_ray_data(ray: Any) -> None:
    """Ray Data in this process: results in input order, no progress bars or banners of its own (ours run)."""
    ctx = ray.data.DataContext.get_current()
    ctx.execution_options.preserve_order = True
    ctx.enable_progress_bars = False
    ctx.print_on_execution_start = False
    logging.getLogger("ray.data").setLevel(logging.WARNING)
    logging.getLogger("ray.data._internal.progress").setLevel(logging.ERROR)  # "progress bars disabled": ours run


def _windows(blocks: Iterator[list[Record]], block_rows: int, window_rows: int) -> Iterator[list[Any]]:
    """The input blocks as Arrow tables, grouped into windows of about ``window_rows`` records (one Ray Dataset each);
    a window is read from ``blocks`` only when the previous one has been scored."""
    while True:
        tables = []
        for block in blocks:
            tables.append(records_to_table(block))
            if len(tables) * block_rows >= window_rows:
                break
        if not tables:
            return
        yield tables


def _map_options(plan: PoolPlan, ctor: dict[str, Any]) -> dict[str, Any]:
    """The ``map_batches`` options of every window but the pool size: resources, actor arguments, retries."""
    crash_marker = os.environ.get(TEST_CRASH_ENV)
    return {"num_cpus": plan.cpus_per_worker, "num_gpus": plan.gpus_per_worker or None, "fn_constructor_kwargs": ctor,
            "runtime_env": {"env_vars": {TEST_CRASH_ENV: crash_marker}} if crash_marker else None,
            # bounded (Ray Data's default is -1: a review that kills its process every time would loop forever)
            "max_restarts": MAX_RESTARTS, "max_task_retries": MAX_TASK_RETRIES}


def _score_window(ray: Any, tables: list[Any], plan: PoolPlan, options: dict[str, Any]) -> Any:
    """The Ray Dataset that scores one window's ``tables`` on an actor pool of :class:`ScoringActor` (lazy)."""
    with warnings.catch_warnings():  # max_restarts/max_task_retries: "ray_remote_args is deprecated" (2.60)
        warnings.simplefilter("ignore", DeprecationWarning)
        return ray.data.from_arrow(tables).map_batches(
            ScoringActor, batch_size=None, batch_format="pyarrow", zero_copy_batch=True,
            compute=ray.data.ActorPoolStrategy(size=min(plan.num_workers, len(tables))), **options)


__all__ = ["CLUSTER_HINT", "import_ray", "score_paths_ray"]
