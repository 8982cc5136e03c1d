"""The corpus map's projections (issue 42): kept sentence vectors (:class:`model.records.vectors.SentenceVectors`)
to 2-D points, their cache, and the nearest neighbours of one vector.

* PCA: scikit-learn's ``PCA(n_components=2, svd_solver="covariance_eigh")`` on one BLAS thread: the eigenvectors of
  the d x d covariance, scikit-learn's sign convention, deterministic; the same coordinates as its full SVD (to
  ~1e-12) at a fraction of the cost when N >> d (25,000 x 128: 0.03 s against 1 s on a busy 2-core machine, where
  multi-threaded BLAS also waited for the CPU; docs/performance.md).
* UMAP: umap-learn (McInnes et al. 2018) on a PCA-50 of the vectors (when they have more than 50 dimensions), with a
  fixed ``random_state`` (which makes umap-learn run single-threaded and reproducible), ``n_neighbors=15``,
  ``min_dist=0.1``, Euclidean. Progress comes from umap-learn's own epoch loop (its tqdm keywords), and Cancel is
  checked there too: :class:`ProjectionCancelled` leaves the fit. umap-learn compiles with numba on its first use in
  a process (seconds; cached on disk where ``NUMBA_CACHE_DIR`` points).
* Too few texts: a map needs :data:`MIN_VECTORS`; UMAP needs :data:`UMAP_MIN_VECTORS` (its spectral initialisation
  takes the n_components + 1 = 3 smallest eigenvectors of the N x N graph Laplacian, and SciPy's sparse ``eigsh``
  needs fewer than N of them): below that, :func:`project` shows PCA with a note (``MapProjection.note``), for the
  command line and the app alike (issue 56).
* :class:`ProjectionCache`: fitted projections keyed by the method, the seed, the model, the vector spec (layer,
  pooling) and a digest of the vectors' bytes (so the same rows, model and layer never fit twice).

Imports scikit-learn and umap-learn only when called (base dependencies; the GUI imports this module in a worker).
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from model.records.vectors import PROJECTIONS, MapProjection, SentenceVectors

UMAP_SEED = 42
UMAP_PCA_DIMS = 50
UMAP_NEIGHBORS = 15
MIN_VECTORS = 3
"""The fewest texts a map places (the command line leaves x and y empty below it; the app says so)."""
UMAP_MIN_VECTORS = 4
"""The fewest vectors UMAP places (module docstring); :func:`project` shows PCA below it."""

Progress = Callable[[int, int], None]
"""``progress(done, total)``: UMAP's epochs done of its total."""
UmapFit = Callable[..., tuple[Any, np.ndarray, tuple[float, ...]]]
"""``fit(vectors float32 [N, d], seed, progress, should_stop) -> (model or None, coords float32 [N, 2], explained)``:
:func:`umap_fit` here, or the app's child process (which sends back the points only: model None)."""


class ProjectionCancelled(Exception):
    """``should_stop()`` said so while a projection ran (raised out of the fit)."""


class Projector:
    """A fitted projection: :attr:`result` (the N points) and :meth:`place` (new vectors with the same fit).

    Args:
        model: the fitted scikit-learn ``PCA`` (``method="pca"``) or ``(PCA-50 or None, umap.UMAP)``; for UMAP also
            None (a fit made elsewhere, e.g. the app's child process, that sent back its points only).
        result: the :class:`~model.records.vectors.MapProjection` of the vectors it was fitted on.
        fitted: float [N, d], those vectors (for :meth:`place` without a model).
    """

    def __init__(self, model: Any, result: MapProjection, fitted: np.ndarray | None = None) -> None:
        self.model, self.result, self.fitted = model, result, fitted

    def place(self, vectors: np.ndarray) -> np.ndarray:
        """float32 [K, 2] coordinates of new vectors float [K, d] under the fitted projection (PCA: ``transform``;
        UMAP: umap-learn's ``transform``, which places them among the fitted points; without the model, the mean
        coordinates of the :data:`UMAP_NEIGHBORS` nearest fitted vectors by cosine)."""
        v = np.asarray(vectors, np.float32).reshape(len(vectors), -1)
        if self.result.method == "pca":
            return _transform(self.model, v)
        if self.model is None:  # UMAP's points only: the mean place of the nearest fitted vectors (cosine)
            return np.stack([self.result.coords[nearest(self.fitted, q, UMAP_NEIGHBORS)].mean(axis=0) for q in v])
        pca, reducer = self.model
        return reducer.transform(_transform(pca, v) if pca is not None else v).astype(np.float32)


def pca_fit(vectors: np.ndarray, dims: int = 2) -> Any:
    """scikit-learn's ``PCA(n_components=dims, svd_solver="covariance_eigh")`` fitted on float [N, d] ``vectors``
    (float64 maths, one BLAS thread: see the module docstring).

    Raises:
        ValueError: fewer than 2 vectors, or fewer than ``dims`` of them or of their dimensions (named).
    """
    from sklearn.decomposition import PCA
    from threadpoolctl import threadpool_limits

    v = np.asarray(vectors, np.float64)
    if v.ndim != 2 or len(v) < 2 or min(v.shape) < dims:
        raise ValueError(f"a {dims}-D PCA needs at least {max(2, dims)} vectors of at least {dims} dimensions, "
                         f"got shape {v.shape}")
    with threadpool_limits(1):
        return PCA(n_components=dims, svd_solver="covariance_eigh").fit(v)


def _transform(pca: Any, vectors: np.ndarray) -> np.ndarray:
    """float32 [N, k]: ``pca.transform`` of float [N, d] ``vectors`` in float64, on one BLAS thread."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        return pca.transform(np.asarray(vectors, np.float64)).astype(np.float32)


class _EpochSink:
    """The file umap-learn's tqdm bar writes to (``bar_format="{n}/{total}"``): each write reports progress and checks
    Cancel."""

    def __init__(self, progress: Progress | None, should_stop: Callable[[], bool] | None) -> None:
        self.progress, self.should_stop = progress, should_stop

    def write(self, s: str) -> int:
        if (m := re.search(r"(\d+)/(\d+)", s)) is not None and self.progress is not None:
            self.progress(int(m.group(1)), int(m.group(2)))
        if self.should_stop is not None and self.should_stop():
            raise ProjectionCancelled("the map's projection was cancelled")
        return len(s)

    def flush(self) -> None:
        """Nothing to flush."""


def umap_fit(vectors: np.ndarray, seed: int = UMAP_SEED, progress: Progress | None = None,
             should_stop: Callable[[], bool] | None = None) -> tuple[Any, np.ndarray, tuple[float, ...]]:
    """UMAP (umap-learn) of float [N, d] ``vectors`` on their PCA-50 (module docstring).

    Returns:
        ``((pca or None, reducer), coords float32 [N, 2], explained)``: ``explained`` the PCA-50's kept variance share.

    Raises:
        ValueError: fewer than :data:`UMAP_MIN_VECTORS` vectors. ProjectionCancelled: ``should_stop()`` returned
            True (checked before and after the PCA-50 and at every epoch). ImportError: umap-learn is not installed.
    """
    import umap

    v = np.asarray(vectors, np.float32)
    if v.ndim != 2 or len(v) < UMAP_MIN_VECTORS:
        raise ValueError(f"UMAP needs at least {UMAP_MIN_VECTORS} vectors, got shape {v.shape}")
    sink = _EpochSink(progress, should_stop)
    sink.write("")
    pca, explained = None, ()
    if v.shape[1] > UMAP_PCA_DIMS and len(v) > UMAP_PCA_DIMS:
        pca = pca_fit(v, UMAP_PCA_DIMS)
        v = _transform(pca, v)
        explained = (float(pca.explained_variance_ratio_.sum()),)
    sink.write("")
    reducer = umap.UMAP(n_components=2, n_neighbors=min(UMAP_NEIGHBORS, len(v) - 1), min_dist=0.1,
                        random_state=seed, low_memory=True, n_jobs=1,
                        tqdm_kwds={"disable": False, "file": sink, "bar_format": "{n}/{total}", "mininterval": 0,
                                   "miniters": 1, "ascii": True})
    coords = reducer.fit_transform(v).astype(np.float32)
    reducer.tqdm_kwds = {"disable": True}  # let the sink go: the fitted reducer pickles (the app's UMAP child)
    return (pca, reducer), coords, explained


def umap_shortfall(count: int) -> str:
    """Why UMAP cannot place ``count`` vectors, in one line naming the minimum ("" when it can)."""
    if count >= UMAP_MIN_VECTORS:
        return ""
    return f"UMAP needs at least {UMAP_MIN_VECTORS} texts, {count} have vectors: PCA shown instead"


def project(vectors: SentenceVectors, method: str, seed: int = UMAP_SEED, progress: Progress | None = None,
            should_stop: Callable[[], bool] | None = None, umap: UmapFit = umap_fit) -> Projector:
    """Fit ``method`` (one of :data:`model.records.vectors.PROJECTIONS`) on the kept vectors; returns the
    :class:`Projector` (its ``result`` a MapProjection, float32 [N, 2]). PCA ignores ``seed``, ``progress`` and
    ``should_stop`` (it takes well under a second). UMAP of fewer than :data:`UMAP_MIN_VECTORS` vectors is PCA, its
    ``note`` saying why (:func:`umap_shortfall`). ``umap``: the UMAP fit (:data:`UmapFit`; the app's runs in a child
    process).

    Raises:
        ValueError: an unknown method; fewer than 2 vectors (see :func:`pca_fit`).
        ProjectionCancelled: UMAP cancelled.
    """
    if method not in PROJECTIONS:
        raise ValueError(f"projection must be one of {', '.join(PROJECTIONS)}, got {method!r}")
    t0 = time.perf_counter()
    note = umap_shortfall(vectors.count) if method == "umap" else ""
    if method == "pca" or note:
        pca = pca_fit(vectors.vectors)
        coords = _transform(pca, vectors.vectors)
        return Projector(pca, MapProjection(coords, "pca", 0, tuple(float(x) for x in pca.explained_variance_ratio_),
                                            time.perf_counter() - t0, note))
    model, coords, explained = umap(np.asarray(vectors.vectors, np.float32), seed, progress, should_stop)
    return Projector(model, MapProjection(coords, "umap", seed, explained, time.perf_counter() - t0),
                     np.asarray(vectors.vectors) if model is None else None)


def vectors_key(vectors: SentenceVectors, method: str, seed: int = UMAP_SEED) -> tuple:
    """The cache key of a projection: method, seed (UMAP only), model, spec and a SHA-1 of the vectors and rows."""
    digest = hashlib.sha1(np.ascontiguousarray(vectors.vectors).tobytes())
    digest.update(np.ascontiguousarray(vectors.rows).tobytes())
    return (method, seed if method == "umap" else 0, vectors.model, vectors.spec.key(), vectors.vectors.shape,
            digest.hexdigest())


class ProjectionCache:
    """The last ``size`` fitted projections (:class:`Projector`), keyed by :func:`vectors_key`; thread-safe (the GUI's
    map worker and the command line share the code).

    Args:
        size: how many fits are kept (least recently used dropped first).
    """

    def __init__(self, size: int = 4) -> None:
        self.size = size
        self._fits: OrderedDict[tuple, Projector] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, vectors: SentenceVectors, method: str, seed: int = UMAP_SEED, progress: Progress | None = None,
            should_stop: Callable[[], bool] | None = None, fit: Callable[..., Projector] | None = None) -> Projector:
        """The cached :class:`Projector` of these vectors and method (its result's ``elapsed_s`` then 0), else a new
        fit: ``fit(vectors, method, seed, progress, should_stop)`` (default :func:`project`, whose errors it raises;
        the app fits UMAP in a child process)."""
        key = vectors_key(vectors, method, seed)
        with self._lock:
            if (hit := self._fits.get(key)) is not None:
                self._fits.move_to_end(key)
                r = hit.result
                return Projector(hit.model, MapProjection(r.coords, r.method, r.seed, r.explained, 0.0, r.note),
                                 hit.fitted)
        fit = (fit or project)(vectors, method, seed, progress, should_stop)
        with self._lock:
            self._fits[key] = fit
            while len(self._fits) > self.size:
                self._fits.popitem(last=False)
        return fit


def nearest(vectors: np.ndarray, query: np.ndarray, k: int = 10, exclude: int | None = None) -> np.ndarray:
    """The indices of the ``k`` rows of float [N, d] ``vectors`` nearest to float [d] ``query`` by cosine similarity,
    most similar first (ties: the lower index first); ``exclude``: a row left out (the query's own). int64 [min(k, N)].
    """
    v = np.asarray(vectors, np.float64)
    q = np.asarray(query, np.float64).reshape(-1)
    norms = np.linalg.norm(v, axis=1) * max(np.linalg.norm(q), 1e-12)
    sim = (v @ q) / np.maximum(norms, 1e-12)  # [N]
    if exclude is not None and 0 <= exclude < len(sim):
        sim[exclude] = -np.inf
    order = np.lexsort((np.arange(len(sim)), -sim))
    keep = [int(i) for i in order if np.isfinite(sim[i])][:k]
    return np.array(keep, np.int64)
