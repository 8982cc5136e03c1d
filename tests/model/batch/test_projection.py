"""The corpus map's projections (issue 42): PCA equals scikit-learn's on the same vectors, UMAP is deterministic,
reports progress and stops on Cancel, the cache keys, and the cosine neighbours."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.decomposition import PCA

from model.corpus.projection import ProjectionCache, ProjectionCancelled, nearest, project
from model.records.vectors import MapProjection, SentenceVectors, VectorSpec


def _vectors(n=120, d=64, seed=0, spec=None):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(3, d)) * 4
    v = centres[np.arange(n) % 3] + rng.normal(size=(n, d))
    return SentenceVectors(v.astype(np.float32), np.arange(n), spec or VectorSpec(), "m")


def test_pca_equals_scikit_learn():
    sv = _vectors()
    ours = project(sv, "pca").result
    theirs = PCA(n_components=2, svd_solver="full").fit_transform(sv.vectors.astype(np.float64))
    assert isinstance(ours, MapProjection) and ours.coords.shape == (120, 2) and ours.coords.dtype == np.float32
    np.testing.assert_allclose(ours.coords, theirs, rtol=1e-5, atol=1e-4)
    assert np.array_equal(project(sv, "pca").result.coords, ours.coords)  # the same every run
    assert ours.explained[0] >= ours.explained[1] > 0


def test_pca_places_new_points_like_the_fit():
    sv = _vectors()
    fit = project(sv, "pca")
    np.testing.assert_allclose(fit.place(sv.vectors[:4]), fit.result.coords[:4], atol=1e-4)


@pytest.mark.slow
def test_umap_deterministic_progress_and_cancel():
    pytest.importorskip("umap")
    sv = _vectors(d=80)  # more than 50 dimensions: a PCA-50 first
    seen = []
    a = project(sv, "umap", progress=lambda done, total: seen.append((done, total))).result
    b = project(sv, "umap").result
    assert np.array_equal(a.coords, b.coords) and a.coords.shape == (120, 2)
    assert seen and seen[-1][0] == seen[-1][1] > 0 and len(a.explained) == 1
    # the three clusters stay apart: each point's nearest map neighbour is in its own cluster
    d = np.linalg.norm(a.coords[:, None] - a.coords[None], axis=-1) + np.eye(120) * 1e9
    assert (np.argmin(d, axis=1) % 3 == np.arange(120) % 3).mean() > 0.95
    calls = []
    with pytest.raises(ProjectionCancelled):
        project(sv, "umap", progress=lambda done, total: calls.append(done), should_stop=lambda: len(calls) > 5)
    assert len(calls) < 20


def test_cache_keys_on_rows_model_and_spec():
    cache = ProjectionCache(size=2)
    sv = _vectors()
    first = cache.get(sv, "pca")
    again = cache.get(sv, "pca")
    assert again.result.elapsed_s == 0.0 and np.array_equal(again.result.coords, first.result.coords)
    other = cache.get(_vectors(spec=VectorSpec(layer=0)), "pca")
    assert other.result.elapsed_s > 0  # another layer: another fit
    with pytest.raises(ValueError, match="projection must be"):
        cache.get(sv, "tsne")
    with pytest.raises(ValueError, match="at least"):
        project(SentenceVectors(np.zeros((1, 4), np.float32), [0]), "pca")


def test_nearest_by_cosine():
    v = np.array([[1, 0], [0.9, 0.1], [0, 1], [-1, 0], [2, 0.01]], np.float32)
    assert nearest(v, v[0], 3, exclude=0).tolist() == [4, 1, 2]
    assert nearest(v, np.array([0, 1.0]), 1).tolist() == [2]


def test_umap_points_only_place_a_vector_among_its_neighbours():
    from model.corpus.projection import Projector

    sv = _vectors()
    coords = np.random.default_rng(1).normal(size=(120, 2)).astype(np.float32)
    fit = Projector(None, MapProjection(coords, "umap", 42), sv.vectors)
    q = sv.vectors[7]
    expected = coords[nearest(sv.vectors, q, 15)].mean(axis=0)
    np.testing.assert_allclose(fit.place(q[None])[0], expected, atol=1e-6)


def test_umap_of_too_few_vectors_is_pca_with_a_note():
    """Issue 56: UMAP of 3 texts ended in SciPy's "Cannot use scipy.linalg.eigh for sparse A with k >= N" (its
    spectral initialisation). Below UMAP_MIN_VECTORS the map is PCA, and the note names the minimum."""
    pytest.importorskip("umap")
    UMAP_MIN_VECTORS = 4  # model.corpus.projection's: n_components + 2 (its docstring)

    sv = _vectors(n=UMAP_MIN_VECTORS - 1)
    r = project(sv, "umap").result
    assert r.method == "pca" and f"at least {UMAP_MIN_VECTORS} texts" in r.note and "PCA shown" in r.note
    np.testing.assert_allclose(r.coords, project(sv, "pca").result.coords)
    assert project(sv, "pca").result.note == ""
    four = project(_vectors(n=UMAP_MIN_VECTORS), "umap").result  # the minimum itself is UMAP's
    assert four.method == "umap" and four.note == "" and np.isfinite(four.coords).all()


def test_a_cached_points_only_fit_still_places_a_vector():
    """A UMAP fit made in the app's child process (points only: model None) placed the explored text from its fitted
    vectors; the cache's copy of it dropped them, so the second map of the same rows could not place it."""
    from model.corpus.projection import Projector

    sv = _vectors()
    coords = np.random.default_rng(2).normal(size=(120, 2)).astype(np.float32)
    cache = ProjectionCache()

    def fit(vectors, method, seed, progress, should_stop):
        return Projector(None, MapProjection(coords, method, seed), np.asarray(vectors.vectors))

    first, again = cache.get(sv, "umap", fit=fit), cache.get(sv, "umap", fit=fit)
    assert again.result.elapsed_s == 0.0
    np.testing.assert_allclose(again.place(sv.vectors[:3]), first.place(sv.vectors[:3]))
