"""The corpus map's jobs (issue 42), run on the Map view's :class:`~desktop_app.workers.jobs.Jobs` (thread
"corpus-map"): the projection of the table's sentence vectors, and the explored text's place and neighbours.

* :func:`projection_job`: PCA or UMAP (:mod:`model.corpus.projection`) through the one cache of fitted projections
  (same rows, model and layer: no second fit); UMAP runs in a child process (:mod:`desktop_app.workers.corpus.map_process`:
  its numba code would hold the GIL, and so the GUI, for seconds), reports ``(epochs done, epochs)`` through
  ``ctx.report`` and stops at the next epoch on Cancel (:class:`~desktop_app.workers.jobs.JobStopped`).
* :func:`explored_job`: the explored text's vector (the table row's own when the text is one of them, else one
  ``score_many`` call of the shared Predictor), placed with the fitted projection, and its nearest rows by cosine.
"""

from __future__ import annotations

import multiprocessing
import queue
from dataclasses import dataclass

import numpy as np

from model.corpus.projection import ProjectionCache, ProjectionCancelled, Projector, nearest, project
from model.records.vectors import SentenceVectors, VectorSpec

from desktop_app.workers.corpus.metrics import end_child
from desktop_app.workers.jobs import JobContext, JobStopped
from desktop_app.workers.corpus.map_process import fit_umap

CACHE = ProjectionCache(size=4)
"""The fitted projections of this process (the last four)."""

NEIGHBOURS = 10
UMAP_NICE = 10  # the UMAP child's niceness: the GUI keeps the CPU


def projection_job(ctx: JobContext, vectors: SentenceVectors, method: str, cache: ProjectionCache = CACHE) -> Projector:
    """The fitted ``method`` ("pca", "umap") of ``vectors`` (cached). Raises JobStopped: cancelled; ValueError: too
    few vectors (see :func:`model.corpus.projection.project`)."""
    try:
        return cache.get(vectors, method, progress=lambda done, total: ctx.report((done, total)),
                         should_stop=ctx.should_stop, fit=fit_projection)
    except ProjectionCancelled:
        raise JobStopped from None


def fit_projection(vectors: SentenceVectors, method: str, seed: int, progress, should_stop) -> Projector:
    """The projection ``method`` ("pca", "umap") of ``vectors`` with ``seed``: :func:`model.corpus.projection.project`
    (so too few texts for UMAP get PCA and a note, as on the command line), its UMAP fit in the child process
    (:func:`umap_in_child`).

    Raises:
        ProjectionCancelled: ``should_stop()`` said so; RuntimeError: the child failed or ended."""
    return project(vectors, method, seed, progress, should_stop, umap=umap_in_child)


def umap_in_child(vectors: np.ndarray, seed: int, progress, should_stop) -> tuple[None, np.ndarray, tuple]:
    """:func:`model.corpus.projection.umap_fit` of float32 [N, d] ``vectors`` in the child process (module docstring):
    ``progress(done, total)`` per epoch, ``should_stop()`` polled every 0.1 s. Returns ``(None, coords float32 [N, 2],
    explained)`` (the points only).

    Raises:
        ProjectionCancelled: ``should_stop()`` said so; RuntimeError: the child failed or ended."""
    mp = multiprocessing.get_context("spawn")
    outbox, stop = mp.Queue(), mp.Event()
    child = mp.Process(target=fit_umap, name="corpus-map-umap", daemon=True,
                       args=(np.ascontiguousarray(vectors), seed, outbox, stop, UMAP_NICE))
    child.start()
    try:
        while True:
            if should_stop():
                stop.set()
            try:
                kind, *payload = outbox.get(timeout=0.1)
            except queue.Empty:
                if not child.is_alive():
                    raise RuntimeError(f"the UMAP process ended unexpectedly (exit code {child.exitcode})") from None
                continue
            if kind == "progress":
                progress(*payload)
            elif kind == "result":
                coords, explained = payload
                return None, coords, explained
            elif kind == "cancelled":
                raise ProjectionCancelled("the map's projection was cancelled")
            else:
                raise RuntimeError(f"UMAP failed: {payload[0]}")
    finally:
        end_child(child, stop)


@dataclass(frozen=True)
class Explored:
    """Where the explored text sits on the map.

    Attributes:
        xy: float32 [2], its coordinates under the fitted projection.
        rows: int64 [K]: the table rows of its K nearest texts by cosine similarity of their vectors, nearest first.
        similarity: float [K], their cosine similarities.
        own_row: the table row of the text itself when it is one of them (left out of ``rows``), else None.
    """

    xy: np.ndarray
    rows: np.ndarray
    similarity: np.ndarray
    own_row: int | None


def explored_job(_ctx: JobContext, predictor, text: str, text_pair: str | None, spec: VectorSpec,
                 projector: Projector, vectors: SentenceVectors, own_row: int | None = None,
                 k: int = NEIGHBOURS) -> Explored:
    """The explored text's :class:`Explored` (see the module docstring); ``own_row``: the table row holding that
    text, whose vector is used as it is. Raises what ``score_many`` raises for a bad text."""
    if own_row is not None and own_row in set(vectors.rows.tolist()):
        v = vectors.vectors[int(np.flatnonzero(vectors.rows == own_row)[0])]
    else:
        own_row = None
        score = predictor.score_many([text], text_pairs=None if text_pair is None else [text_pair], vectors=spec)[0]
        if score.vector is None:
            raise ValueError(score.error or "the text has no vector")
        v = score.vector
    exclude = None if own_row is None else int(np.flatnonzero(vectors.rows == own_row)[0])
    idx = nearest(vectors.vectors, v, k, exclude=exclude)
    u = vectors.vectors[idx].astype(np.float64)
    sim = (u @ v) / np.maximum(np.linalg.norm(u, axis=1) * np.linalg.norm(v), 1e-12)
    xy = projector.place(np.asarray(v)[None])[0]
    return Explored(xy, vectors.rows[idx], sim, own_row)
