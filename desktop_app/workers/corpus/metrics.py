"""The corpus dock's jobs: the metrics of the batch rows, and the corpus token scores, off the GUI thread.

Both are jobs of :mod:`desktop_app.workers.jobs`, run on the corpus dock's :class:`~desktop_app.workers.jobs.Jobs`:

* :func:`corpus_metrics_job` (thread "corpus-metrics"): keeps the rows a row filter accepts and computes their
  :func:`model.corpus.metrics.corpus_metrics` (about 30 ms for 25,000 rows, most of it Python that would otherwise run
  on the GUI thread twice a second during a job);
* :func:`slice_metrics_job` (thread "corpus-slices"): the same :func:`~model.corpus.metrics.corpus_metrics` of each
  group of rows of the Map tab's slices table (every row, the map selection, each slice), one group after another;
* :func:`corpus_tokens_job` (thread "corpus-tokens"): :func:`model.corpus.metrics.corpus_token_scores` over the reviews
  of those rows (minutes for 25,000 reviews) in a child process (:mod:`desktop_app.workers.corpus.words_process`), progress
  at most :data:`PROGRESS_INTERVAL_S` apart and Cancel (the abort flag, relayed to the child, which checks it before
  every batch).

Stale answers are dropped by the jobs' runner.
"""

from __future__ import annotations

import multiprocessing
import queue
import time
from collections.abc import Callable

from model.corpus.metrics import CorpusTokens, corpus_metrics, corpus_token_scores

from desktop_app.workers.corpus.words_process import score_words
from desktop_app.workers.jobs import InlineContext, JobContext

PROGRESS_INTERVAL_S = 0.2  # at most 5 progress signals per second reach the GUI
TEXT_CHUNK = 500  # texts per message to the word-scoring child
CHILD_EXIT_S = 10.0  # seconds the child gets to end after stop, before it is terminated


def keep_rows(rows: list, keep: Callable[[object], bool] | None) -> list:
    """The rows ``keep`` accepts (all of them when ``keep`` is None)."""
    return list(rows) if keep is None else [r for r in rows if keep(r)]


class WordScoringFailed(RuntimeError):
    """The word-scoring child reported an error; the message is its one-line reason."""


def failure_message(exc: BaseException) -> str:
    """The one line the dock shows for a failed word-scoring job: the child's reason as it is, else "Type: message"
    (first line)."""
    return str(exc) if isinstance(exc, WordScoringFailed) else f"{type(exc).__name__}: {exc}".splitlines()[0]


def corpus_metrics_job(_ctx: JobContext, rows: list, keep: Callable[[object], bool] | None, n_bins: int = 10,
                       labels=None, task: str | None = None) -> tuple:
    """The metrics of the ``rows`` that ``keep`` accepts (a
    :meth:`~desktop_app.panels.batch.row_filter.RowFilter.accepts`). ``labels``, ``task``: the model's, for a table
    without rows (its empty plots then name its classes).

    Returns:
        (:class:`model.corpus.metrics.CorpusMetrics`, rows in the table).
    """
    return corpus_metrics(keep_rows(rows, keep), n_bins=n_bins, labels=labels, task=task), len(rows)


def slice_metrics_job(ctx: JobContext, groups: list) -> list:
    """:func:`~model.corpus.metrics.corpus_metrics` of each group of the slices table, in order.

    Args:
        groups: ``(rows, labels, task)`` per group: its rows and the ``labels``, ``task`` to describe them with
            (:meth:`~desktop_app.panels.batch.table_model.BatchTableModel.metrics_schema`).

    Returns:
        one :class:`model.corpus.metrics.CorpusMetrics` per group (None for a group without rows).

    Raises:
        :class:`~desktop_app.workers.jobs.JobStopped`: a newer request came meanwhile (checked between groups).
    """
    out = []
    for rows, labels, task in groups:
        ctx.check()
        out.append(corpus_metrics(rows, labels=labels, task=task) if rows else None)
    return out


def corpus_tokens_job(ctx: JobContext, predictor, rows: list, keep: Callable[[object], bool] | None,
                      min_count: int = 5, bigrams: bool = True, target: str | None = None, nice: int = 0) -> CorpusTokens:
    """Score the words of the scored reviews among ``rows`` that ``keep`` accepts, toward class ``target`` (None:
    "positive", else the last class): :func:`score_texts` (in a child process reniced to ``nice`` when
    ``predictor`` has a folder). Progress (done, total) reviews goes to ``ctx.report``.

    Returns:
        the :class:`model.corpus.metrics.CorpusTokens` (``complete`` False when cancelled).

    Raises:
        :class:`WordScoringFailed`: the child's error; else what the row filter or the scoring raises.
    """
    texts = [r.text for r in keep_rows(rows, keep) if r.ok and r.text]
    return score_texts(ctx, predictor, texts, min_count, bigrams, target, nice)


def score_texts(ctx, predictor, texts: list[str], min_count: int = 5, bigrams: bool = True,
                target: str | None = None, nice: int = 0) -> CorpusTokens:
    """Score the words of ``texts`` (in the child process when ``predictor`` has a folder, else on this thread with
    the shared predictor); see :func:`corpus_tokens_job`."""
    ctx.report((0, len(texts)))
    if getattr(predictor, "model_dir", None) is not None:
        return _run_in_child(ctx, predictor, texts, min_count, bigrams, target, nice)
    last = [0.0]

    def on_progress(done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] >= PROGRESS_INTERVAL_S or done >= total:
            last[0] = now
            ctx.report((done, total))

    return corpus_token_scores(predictor, texts, min_count=min_count, bigrams=bigrams,
                               should_stop=ctx.should_stop, progress=on_progress, target=target)


def _run_in_child(ctx, predictor, texts: list[str], min_count: int, bigrams: bool, target: str | None,
                  nice: int) -> CorpusTokens:
    """Start the child, feed it the texts in chunks, relay its messages; stop it on Cancel or a newer request."""
    mp = multiprocessing.get_context("spawn")
    inbox, outbox, stop = mp.Queue(), mp.Queue(), mp.Event()
    child = mp.Process(target=score_words, name="corpus-words", daemon=True,
                       args=(str(predictor.model_dir), str(predictor.device), min_count, bigrams, inbox, outbox,
                             stop, nice, target))
    child.start()
    try:
        for i in range(0, len(texts), TEXT_CHUNK):
            inbox.put(texts[i : i + TEXT_CHUNK])
        inbox.put(None)
        return _relay(ctx, child, outbox, stop)
    finally:
        end_child(child, stop)


def end_child(child, stop) -> None:
    """Set the child's ``stop`` Event and wait :data:`CHILD_EXIT_S` for it to end, then terminate it."""
    stop.set()
    child.join(CHILD_EXIT_S)
    if child.is_alive():
        child.terminate()
        child.join(CHILD_EXIT_S)


def _relay(ctx, child, outbox, stop) -> CorpusTokens:
    """Relay the child's messages until its result (returned) or error (raised), or its unexpected end."""
    while True:
        if ctx.should_stop():
            stop.set()
        try:
            kind, *payload = outbox.get(timeout=0.1)
        except queue.Empty:
            if not child.is_alive():
                raise RuntimeError(f"the word-scoring process ended unexpectedly (exit code {child.exitcode})")
            continue
        if kind == "progress":
            ctx.report(tuple(payload))
        elif kind == "result":
            return payload[0]
        else:
            raise WordScoringFailed(str(payload[0]))


def score_words_once(predictor, texts: list[str], min_count: int = 1) -> CorpusTokens:
    """Run the corpus dock's word scores over ``texts`` once, on the calling thread, through the same child process
    as the dock (:func:`score_texts`): the ``--self-test`` uses it to prove that a bundle can start its word-scoring
    child (a frozen executable re-runs itself for it).

    Returns:
        the :class:`model.corpus.metrics.CorpusTokens` of ``texts`` (unigrams only).

    Raises:
        RuntimeError: the child failed or ended; the message is its one-line reason.
    """
    try:
        return score_texts(InlineContext(), predictor, list(texts), min_count=min_count, bigrams=False)
    except Exception as exc:  # the self-test reports one line, whatever failed
        raise RuntimeError(failure_message(exc)) from exc
