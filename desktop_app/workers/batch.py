"""The batch job: scoring files and folders of reviews off the GUI thread.

A job of :mod:`desktop_app.workers.jobs`, run on the batch panel's :class:`~desktop_app.workers.jobs.Jobs` (thread
"batch-scoring", reniced to :data:`~desktop_app.workers.handle.BATCH_NICE`). One job per request
(:func:`batch_job`): it estimates the review count, streams :func:`model.batch.iter_records` through
:func:`model.batch.score_records` and yields the rows chunk by chunk, and its progress. Cancel is the abort flag,
checked by the engine before every batch; a job the panel has cleared (a newer generation) stops too, and its rows
are dropped.
"""

from __future__ import annotations

import time
from functools import partial
from dataclasses import dataclass, field

from model.batch import DEFAULT_MAX_FILE_BYTES, Columns, Summary, Timer, estimate_count, iter_records, score_records
from model.corpus.comparison import score_compared
from model.records.vectors import VectorSpec

from .jobs import JobContext

PROGRESS_INTERVAL_S = 0.2  # at most 5 progress updates per second reach the GUI
DEFAULT_BATCH_SIZE = 32
DEFAULT_CHUNK = 128  # rows per chunk sent to the GUI (also the engine's length-bucketing unit)


@dataclass(frozen=True)
class BatchProgress:
    """Progress of a batch job: ``done`` records scored out of ``total`` (estimated until the job ends)."""

    done: int
    total: int


@dataclass(frozen=True)
class ChunkVectors:
    """The sentence vectors of the next chunk of rows a batch job yields (issue 42, the corpus map): one float32 [d]
    per row, None for a row not scored (:mod:`model.records.vectors`)."""

    vectors: list


@dataclass
class BatchRun:
    """One job's totals: filled on the batch thread, read on the GUI thread once the job has ended.

    Attributes:
        summary: the :class:`model.batch.Summary` of the job (``elapsed_s`` in seconds).
        cancelled: True unless the job ran to its end (Cancel, a newer job, or an error stopped it).
    """

    summary: Summary = field(default_factory=Summary)
    cancelled: bool = True


def batch_job(ctx: JobContext, predictor, paths: list[str], run: BatchRun, columns: Columns | str | None = None,
              max_file_bytes: int | None = DEFAULT_MAX_FILE_BYTES, batch_size: int = DEFAULT_BATCH_SIZE,
              chunk: int = DEFAULT_CHUNK, progress_interval_s: float = PROGRESS_INTERVAL_S, second=None,
              vectors: VectorSpec | None = None):
    """Score ``paths``: estimate the count, then stream, score and yield rows into ``run``.

    A generator: yields :class:`BatchProgress` (at least ``progress_interval_s`` apart while scoring) and each chunk
    of ``chunk`` rows (a list of :class:`model.batch.ResultRow`), and fills ``run`` (its summary whatever happens,
    ``cancelled`` False when it ran to its end). ``columns``: the text, second-text and gold-label columns
    (:class:`model.batch.Columns`; a string names the text column only). Gold labels the model does not know are
    counted in the summary (``Summary.gold_problems``). ``batch_size``: reviews per forward pass. ``second``: model B
    (issue 44), which scores every record too: the rows are then :class:`model.records.comparison.ComparedRow` s
    (:func:`model.corpus.comparison.score_compared`; both are the one shared Predictor of each model).
    ``vectors``: keep
    each row's sentence vector (read in the scoring passes, model A's): each chunk of rows is then preceded by its
    :class:`ChunkVectors`.

    Raises:
        whatever reading or scoring raises unexpectedly (rows sent before it stay valid).
    """
    if not isinstance(columns, Columns):
        columns = Columns(text=columns)
    summary, timer = run.summary, Timer()
    last_emit = [0.0]
    total = [0]
    try:
        total[0] = estimate_count(paths, max_file_bytes)
        yield BatchProgress(0, total[0])
        mine = predictor  # the one shared Predictor (its settings taken once, at the run's start)

        def on_progress(done: int) -> None:
            now = time.monotonic()
            if now - last_emit[0] >= progress_interval_s:
                last_emit[0] = now
                total[0] = max(total[0], done)
                ctx.report(BatchProgress(done, total[0]))

        records = iter_records(paths, text_column=columns.text, max_file_bytes=max_file_bytes,
                               pair_column=columns.pair, label_column=columns.label)
        kept: list = []
        score = partial(score_records, mine) if second is None else partial(score_compared, mine, second)
        for rows in score(records, batch_size=batch_size, chunk=chunk, progress=on_progress,
                          should_stop=ctx.should_stop, on_gold_problem=summary.gold_problem, vectors=vectors,
                          on_vectors=kept.extend):
            summary.add(rows)
            if vectors is not None:
                yield ChunkVectors(kept[:])
                kept.clear()
            yield rows
    finally:
        summary.elapsed_s = timer.elapsed_s
    stopped = ctx.should_stop()
    yield BatchProgress(summary.count, max(total[0], summary.count) if stopped else summary.count)
    run.cancelled = stopped
