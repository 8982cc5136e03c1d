"""The corpus map's UMAP child process (issue 42; no Qt here: this module is what the child imports).

umap-learn's numba code and pynndescent hold the GIL for long stretches (an epoch, the nearest-neighbour search):
run on a thread of the GUI's process, UMAP of 3,000 texts stalled the event loop for 1,050 ms
(``benchmarks.corpus_map --umap``, before this child existed). So the map fits UMAP in a child process (``spawn``: a
fresh interpreter), which shares no GIL with the GUI, as the corpus dock's word scores do
(:mod:`desktop_app.workers.corpus.words_process`).

Protocol (``multiprocessing``): the child gets the vectors as an argument and puts ``("progress", done, total)`` at
most every :data:`~desktop_app.workers.corpus.words_process.PROGRESS_INTERVAL_S`, then one
``("result", coords, explained)`` (the points only: the fitted reducer of 25,000 texts is tens of megabytes, whose
unpickling would hold the GIL on the receiving side), ``("cancelled",)`` or ``("error", message)``. Setting ``stop``
(an Event) ends the fit at its next epoch.
"""

from __future__ import annotations

from desktop_app.workers.corpus.words_process import _lower_priority, progress_sender


def fit_umap(vectors, seed: int, outbox, stop, nice: int = 0) -> None:
    """The child's entry point: :func:`model.corpus.projection.umap_fit` of float32 [N, d] ``vectors`` with ``seed``,
    messages on ``outbox`` (module docstring); ``nice``: this process's niceness."""
    _lower_priority(nice)
    progress = progress_sender(outbox)
    try:
        from model.corpus.projection import ProjectionCancelled, umap_fit

        _model, coords, explained = umap_fit(vectors, seed, progress, stop.is_set)
        outbox.put(("result", coords, explained))
    except ProjectionCancelled:
        outbox.put(("cancelled",))
    except Exception as exc:  # noqa: BLE001 - the parent shows one line; the child must not die silently
        outbox.put(("error", f"{type(exc).__name__}: {exc}".splitlines()[0]))
