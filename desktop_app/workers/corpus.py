"""The corpus dock's workers: the metrics of the batch rows, and the corpus token scores, off the GUI thread.

Both are :class:`~desktop_app.workers.handle.BackgroundWorker` s owned by the corpus dock's
:class:`~desktop_app.workers.handle.WorkerHandle` s:

* :class:`CorpusMetricsWorker` (:meth:`~CorpusMetricsWorker.compute`): keeps the rows a row filter accepts and
  computes their :func:`model.batch.corpus.corpus_metrics` (about 30 ms for 25,000 rows, most of it Python that
  would otherwise run on the GUI thread twice a second during a job);
* :class:`CorpusTokensWorker` (:meth:`~CorpusTokensWorker.run`): :func:`model.batch.corpus.corpus_token_scores`
  over the reviews of those rows (minutes for 25,000 reviews) in a child process
  (:mod:`desktop_app.workers.corpus_process`), progress at most :data:`PROGRESS_INTERVAL_S` apart and Cancel (the
  abort flag, relayed to the child, which checks it before every batch).

Every signal carries the request's generation so the dock drops stale answers.
"""

from __future__ import annotations

import logging
import multiprocessing
import queue
import time
import traceback
from collections.abc import Callable

from PySide6.QtCore import Signal

from model.batch.corpus import CorpusTokens, corpus_metrics, corpus_token_scores

from .corpus_process import score_words
from .handle import BackgroundWorker

log = logging.getLogger(__name__)

PROGRESS_INTERVAL_S = 0.2  # at most 5 progress signals per second reach the GUI
TEXT_CHUNK = 500  # texts per message to the word-scoring child
CHILD_EXIT_S = 10.0  # seconds the child gets to end after stop, before it is terminated


def keep_rows(rows: list, keep: Callable[[object], bool] | None) -> list:
    """The rows ``keep`` accepts (all of them when ``keep`` is None)."""
    return list(rows) if keep is None else [r for r in rows if keep(r)]


class CorpusMetricsWorker(BackgroundWorker):
    """Computes corpus metrics of filtered rows.

    Signals:
        ready(int, object, int): (generation, :class:`model.batch.corpus.CorpusMetrics`, rows in the table).
        failed(int, str): (generation, one-line reason).
    """

    ready = Signal(int, object, int)
    failed = Signal(int, str)

    def compute(self, generation: int, rows: list, keep: Callable[[object], bool] | None, n_bins: int = 10,
                labels=None, task: str | None = None) -> None:
        """The metrics of the ``rows`` that ``keep`` accepts (a :meth:`RowFilter.accepts`); skipped when stale.
        ``labels``, ``task``: the model's, for a table without rows (its empty plots then name its classes)."""
        if self.is_stale(generation):
            return
        try:
            metrics = corpus_metrics(keep_rows(rows, keep), n_bins=n_bins, labels=labels, task=task)
        except Exception as exc:  # noqa: BLE001 - never let a traceback reach the event loop
            log.debug("corpus metrics failed:\n%s", traceback.format_exc())
            self.failed.emit(generation, f"{type(exc).__name__}: {exc}")
            return
        self.ready.emit(generation, metrics, len(rows))


class CorpusTokensWorker(BackgroundWorker):
    """Computes corpus token scores (which words push the model's decisions) over filtered rows.

    The pass runs in a child process (:mod:`desktop_app.workers.corpus_process`: no GIL shared with the GUI) that
    loads the predictor's model folder; this worker's thread feeds it the texts and relays its messages. A
    predictor without a folder (a test double) is run on this thread instead, on the shared predictor.

    Signals:
        progress(int, int, int): (generation, reviews done, reviews in the job).
        finished(int, object): (generation, :class:`model.batch.corpus.CorpusTokens`; ``complete`` False when
            cancelled).
        failed(int, str): (generation, one-line reason); no ``finished`` follows.
    """

    progress = Signal(int, int, int)
    finished = Signal(int, object)
    failed = Signal(int, str)

    def __init__(self, nice: int = 0) -> None:
        super().__init__()
        self.nice = nice

    def run(self, generation: int, predictor, rows: list, keep: Callable[[object], bool] | None,
            min_count: int = 5, bigrams: bool = True, target: str | None = None) -> None:
        """Score the words of the scored reviews among ``rows`` that ``keep`` accepts, toward class ``target`` (None:
        "positive", else the last class); see the class docstring."""
        if self.is_stale(generation):
            return
        try:
            texts = [r.text for r in keep_rows(rows, keep) if r.ok and r.text]
        except Exception as exc:  # noqa: BLE001 - a row filter that fails becomes a message
            self.failed.emit(generation, f"{type(exc).__name__}: {exc}".splitlines()[0])
            return
        self.score_texts(generation, predictor, texts, min_count, bigrams, target)

    def score_texts(self, generation: int, predictor, texts: list[str], min_count: int = 5,
                    bigrams: bool = True, target: str | None = None) -> None:
        """Score the words of ``texts`` (in the child process when ``predictor`` has a folder); emits ``finished``
        or ``failed`` with ``generation``."""
        try:
            self.progress.emit(generation, 0, len(texts))
            if getattr(predictor, "model_dir", None) is not None:
                self._run_in_child(generation, predictor, texts, min_count, bigrams, target)
            else:
                self._run_here(generation, predictor, texts, min_count, bigrams, target)
        except Exception as exc:  # noqa: BLE001 - never let a traceback reach the event loop
            log.debug("corpus token scores failed:\n%s", traceback.format_exc())
            self.failed.emit(generation, f"{type(exc).__name__}: {exc}".splitlines()[0])

    def _run_here(self, generation: int, predictor, texts: list[str], min_count: int, bigrams: bool,
                  target: str | None = None) -> None:
        last = [0.0]

        def on_progress(done: int, total: int) -> None:
            now = time.monotonic()
            if now - last[0] >= PROGRESS_INTERVAL_S or done >= total:
                last[0] = now
                self.progress.emit(generation, done, total)

        result = corpus_token_scores(predictor, texts, min_count=min_count, bigrams=bigrams,
                                     should_stop=lambda: self.should_stop(generation), progress=on_progress,
                                     target=target)
        self.finished.emit(generation, result)

    def _run_in_child(self, generation: int, predictor, texts: list[str], min_count: int, bigrams: bool,
                      target: str | None = None) -> None:
        """Start the child, feed it the texts in chunks, relay its messages; stop it on Cancel or a newer request."""
        ctx = multiprocessing.get_context("spawn")
        inbox, outbox, stop = ctx.Queue(), ctx.Queue(), ctx.Event()
        child = ctx.Process(target=score_words, name="corpus-words", daemon=True,
                            args=(str(predictor.model_dir), str(predictor.device), min_count, bigrams, inbox, outbox,
                                  stop, self.nice, target))
        child.start()
        try:
            for i in range(0, len(texts), TEXT_CHUNK):
                inbox.put(texts[i : i + TEXT_CHUNK])
            inbox.put(None)
            self._relay(generation, child, outbox, stop)
        finally:
            stop.set()
            child.join(CHILD_EXIT_S)
            if child.is_alive():
                child.terminate()
                child.join(CHILD_EXIT_S)

    def _relay(self, generation: int, child, outbox, stop) -> None:
        """Relay the child's messages until its result or error (or its unexpected end)."""
        while True:
            if self.should_stop(generation):
                stop.set()
            try:
                kind, *payload = outbox.get(timeout=0.1)
            except queue.Empty:
                if not child.is_alive():
                    raise RuntimeError(f"the word-scoring process ended unexpectedly (exit code {child.exitcode})")
                continue
            if kind == "progress":
                self.progress.emit(generation, *payload)
            elif kind == "result":
                self.finished.emit(generation, payload[0])
                return
            else:
                self.failed.emit(generation, str(payload[0]))
                return


def score_words_once(predictor, texts: list[str], min_count: int = 1) -> CorpusTokens:
    """Run the corpus dock's word scores over ``texts`` once, on the calling thread, through the same child process
    as the dock (:meth:`CorpusTokensWorker.score_texts`): the ``--self-test`` uses it to prove that a bundle can start
    its word-scoring child (a frozen executable re-runs itself for it).

    Returns:
        the :class:`model.batch.corpus.CorpusTokens` of ``texts`` (unigrams only).

    Raises:
        RuntimeError: the child failed or ended; the message is its one-line reason.
    """
    worker = CorpusTokensWorker()
    out: dict = {}
    worker.finished.connect(lambda _generation, result: out.setdefault("result", result))
    worker.failed.connect(lambda _generation, message: out.setdefault("error", message))
    worker.score_texts(worker.latest, predictor, list(texts), min_count=min_count, bigrams=False)
    if "result" not in out:
        raise RuntimeError(out.get("error", "the word scores gave no result"))
    return out["result"]
