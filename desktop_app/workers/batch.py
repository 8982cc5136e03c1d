"""The batch worker: scoring jobs (files and folders of reviews) off the GUI thread.

A :class:`~desktop_app.workers.handle.BackgroundWorker` on its own QThread, owned by the batch panel's
:class:`~desktop_app.workers.handle.WorkerHandle` and reniced to :data:`~desktop_app.workers.handle.BATCH_NICE`.
One job per request (:meth:`BatchWorker.run`): it estimates the review count, streams
:func:`model.batch.iter_records` through :func:`model.batch.score_records` and emits the rows chunk by chunk.
Cancel is the worker's abort flag, checked by the engine before every batch; every signal carries the job's
generation (its id) so the panel drops rows of a cleared job.
"""

from __future__ import annotations

import logging
import time
import traceback

from PySide6.QtCore import Signal

from model.batch import DEFAULT_MAX_FILE_BYTES, Columns, Summary, Timer, estimate_count, iter_records, score_records

from .handle import BackgroundWorker

log = logging.getLogger(__name__)

PROGRESS_INTERVAL_S = 0.2  # at most 5 progress updates per second reach the GUI
DEFAULT_BATCH_SIZE = 32
DEFAULT_CHUNK = 128  # rows per chunk sent to the GUI (also the engine's length-bucketing unit)


class BatchWorker(BackgroundWorker):
    """Scores jobs (lists of paths) on a background thread, one at a time.

    Args:
        batch_size: reviews per forward pass.
        chunk: rows per ``rows_ready`` signal (also the engine's length-bucketing unit).
        progress_interval_s: at least this many seconds between two ``progress`` signals.

    Signals (all carry the job id first so the panel can drop stale ones):
        progress(int, int, int): (job, records done, estimated total records).
        rows_ready(int, list): (job, list of :class:`model.batch.ResultRow`), one chunk.
        finished(int, object, bool): (job, :class:`model.batch.Summary` of this
            job with ``elapsed_s`` in seconds, cancelled?).
        failed(int, str): (job, one-line reason) for an unexpected error; rows
            sent before it stay valid.
    """

    progress = Signal(int, int, int)
    rows_ready = Signal(int, list)
    finished = Signal(int, object, bool)
    failed = Signal(int, str)

    def __init__(self, batch_size: int = DEFAULT_BATCH_SIZE, chunk: int = DEFAULT_CHUNK,
                 progress_interval_s: float = PROGRESS_INTERVAL_S) -> None:
        super().__init__()
        self.batch_size = batch_size
        self.chunk = chunk
        self.progress_interval_s = progress_interval_s

    def run(self, job: int, predictor, paths: list[str], columns: Columns | str | None = None,
            max_file_bytes: int | None = DEFAULT_MAX_FILE_BYTES) -> None:
        """Score job ``job``: estimate the count, then stream, score and emit rows; always ends with ``finished``
        (after ``failed`` for an unexpected error). Only the abort flag (Cancel) stops it early.

        ``columns``: the text, second-text and gold-label columns (:class:`model.batch.Columns`; a string names the
        text column only). Gold labels the model does not know are counted in the finished summary
        (``Summary.gold_problems``)."""
        if not isinstance(columns, Columns):
            columns = Columns(text=columns)
        summary = Summary()
        timer = Timer()
        last_emit = [0.0]
        total = [0]
        try:
            total[0] = estimate_count(paths, max_file_bytes)
            self.progress.emit(job, 0, total[0])
            mine = predictor  # the one shared Predictor (issue 41); score_records takes its settings once

            def on_progress(done: int) -> None:
                now = time.monotonic()
                if now - last_emit[0] >= self.progress_interval_s:
                    last_emit[0] = now
                    total[0] = max(total[0], done)
                    self.progress.emit(job, done, total[0])

            records = iter_records(paths, text_column=columns.text, max_file_bytes=max_file_bytes,
                                   pair_column=columns.pair, label_column=columns.label)
            for rows in score_records(mine, records, batch_size=self.batch_size, chunk=self.chunk,
                                      progress=on_progress, should_stop=self.stop_requested,
                                      on_gold_problem=summary.gold_problem):
                summary.add(rows)
                self.rows_ready.emit(job, rows)
        except Exception as exc:  # noqa: BLE001 - never let a traceback reach the event loop
            log.debug("batch job failed:\n%s", traceback.format_exc())
            summary.elapsed_s = timer.elapsed_s
            self.failed.emit(job, f"{type(exc).__name__}: {exc}")
            self.finished.emit(job, summary, True)
            return
        summary.elapsed_s = timer.elapsed_s
        self.progress.emit(job, summary.count, max(total[0], summary.count) if self.stop_requested() else summary.count)
        self.finished.emit(job, summary, self.stop_requested())
