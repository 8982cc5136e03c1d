"""The word-scoring child process of the corpus dock (no Qt here: this module is what the child imports).

Corpus token scores (:func:`model.corpus.metrics.corpus_token_scores`) spend much of their time in Python (word
spans, per-review sums) between the model's forward and backward passes. Run on a reniced thread of the GUI's
process, that Python code holds the GIL while the thread waits for a CPU on a busy machine, and the GUI thread
waits with it: 150-700 ms stalls were measured on the 2-core CPU (``benchmarks.batch_gui``). So
:func:`~desktop_app.workers.corpus.metrics.corpus_tokens_job` runs them in a child process (``spawn``: a fresh
interpreter that loads the same model folder), which shares no GIL with the GUI, and only relays messages.

Protocol (``multiprocessing`` queues): the parent puts the texts on ``inbox`` in chunks, then ``None``; the child
puts ``("progress", done, total)`` at most every :data:`PROGRESS_INTERVAL_S`, then one ``("result", CorpusTokens)``
or ``("error", message)``. Setting ``stop`` (an Event) stops the pass before its next batch; the result then covers
the reviews explained so far (``complete=False``).
"""

from __future__ import annotations

import os
import time

PROGRESS_INTERVAL_S = 0.2  # at most 5 progress messages per second


def _lower_priority(nice: int) -> None:
    """Make this process's niceness ``nice`` (POSIX), unless it is already that low; errors are ignored (the scores
    do not depend on the priority). Absolute, not added: the child inherits the niceness of the reniced worker
    thread that started it."""
    if nice <= 0 or not hasattr(os, "getpriority"):
        return
    try:
        if os.getpriority(os.PRIO_PROCESS, 0) < nice:
            os.setpriority(os.PRIO_PROCESS, 0, nice)
    except OSError:
        pass


def progress_sender(outbox):
    """``progress(done, total)`` that puts ``("progress", done, total)`` on ``outbox`` at most every
    :data:`PROGRESS_INTERVAL_S` (and at the end); shared by the children of the corpus dock."""
    last = [0.0]

    def progress(done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] >= PROGRESS_INTERVAL_S or done >= total:
            last[0] = now
            outbox.put(("progress", done, total))

    return progress


def score_words(model_dir: str | None, device: str | None, min_count: int, bigrams: bool, inbox, outbox, stop,
                nice: int = 0, target: str | None = None) -> None:
    """The child's entry point: read the texts, load the model, score the words, send the result (module docstring).

    Args:
        model_dir: the model folder ("" or None: the bundled model).
        device: "cpu", "cuda", ... (None: the default).
        min_count, bigrams: as :func:`model.corpus.metrics.corpus_token_scores`.
        inbox, outbox: ``multiprocessing`` queues (texts in, messages out).
        stop: a ``multiprocessing`` Event; set means stop after the current batch.
        nice: the niceness of this process (the batch thread's, so the GUI keeps the CPU).
        target: the class the scores point to (None: "positive", else the last class).
    """
    _lower_priority(nice)
    texts: list[str] = []
    try:
        while (chunk := inbox.get()) is not None:
            texts.extend(chunk)
        from model import Predictor
        from model.corpus.metrics import corpus_token_scores

        predictor = Predictor.from_pretrained(model_dir or None, device=device)
        progress = progress_sender(outbox)
        outbox.put(("progress", 0, len(texts)))
        result = corpus_token_scores(predictor, texts, min_count=min_count, bigrams=bigrams, should_stop=stop.is_set,
                                     progress=progress, target=target)
        outbox.put(("result", result))
    except Exception as exc:  # noqa: BLE001 - the parent shows one line; the child must not die silently
        outbox.put(("error", f"{type(exc).__name__}: {exc}".splitlines()[0]))
