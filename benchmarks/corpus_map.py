"""Benchmark of the corpus map (issue 42): prints numbers, asserts nothing.

    python -m benchmarks.corpus_map                          # defaults below; IMDB test reviews
    python -m benchmarks.corpus_map --n-score 300 --n-vectors 2000 --n-map 25000 --umap

1. Scoring overhead: the bundled model's ``score_many`` of ``--n-score`` seeded IMDB test reviews (the same reviews
   every run; :mod:`benchmarks.sample`) with and without ``vectors=VectorSpec()``, ``--rounds`` alternating rounds
   each; the best round of each and their ratio.
2. The vectors the map projects: ``--n-vectors`` real reviews scored with vectors kept; to reach ``--n-map`` points
   (25,000, the IMDB test split) without scoring them all (on a shared 2-core machine that takes ~15 minutes), the
   real vectors are repeated with Gaussian noise of 5% of each dimension's standard deviation (said in the output).
3. PCA (:func:`model.corpus.projection.project`, scikit-learn; the import excluded, timed after a warm-up on 100
   points) of the ``--n-map`` vectors.
4. ``--umap``: UMAP on the PCA-50 (fixed seed) through the app's own worker (:class:`desktop_app.workers.jobs.Jobs`,
   :func:`desktop_app.workers.corpus.map_jobs.projection_job`) in an offscreen QApplication, with a 10 ms QTimer
   recording the longest gap between its ticks (the event loop's longest stall) and the progress reports; numba's
   compilation is included when it is the process's first UMAP (said in the output).
5. Redraw of the Map view's plot (:class:`desktop_app.views.corpus.map_plot.CorpusMapPlot`, 1000 x 700 offscreen)
   with ``--n-map`` points: the median of 20 pans (range moved, scene repainted synchronously into a pixmap) and of
   20 hover look-ups (``ScatterPlotItem.pointsAt`` + the tooltip text).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

DEFAULT_DATA = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "imdb", "test.jsonl.gz")


def scoring_overhead(predictor, texts: list[str], rounds: int) -> tuple[float, float]:
    """Best reviews/s of ``score_many`` without and with vectors, alternating rounds."""
    from model.records.vectors import VectorSpec

    plain, kept = [], []
    predictor.score_many(texts[:32])  # warm-up
    for _ in range(rounds):
        for out, spec in ((plain, None), (kept, VectorSpec())):
            t0 = time.perf_counter()
            predictor.score_many(texts, vectors=spec)
            out.append(len(texts) / (time.perf_counter() - t0))
    return max(plain), max(kept)


def map_vectors(predictor, texts: list[str], n_map: int, seed: int = 0):
    """:class:`~model.records.vectors.SentenceVectors` of ``n_map`` points from the real vectors of ``texts``
    (repeated with noise)."""
    from model.records.vectors import SentenceVectors, VectorSpec

    real = np.stack([s.vector for s in predictor.score_many(texts, vectors=VectorSpec()) if s.vector is not None])
    rng = np.random.default_rng(seed)
    reps = real[np.arange(n_map) % len(real)]
    noisy = reps + rng.normal(size=reps.shape) * 0.05 * real.std(axis=0)
    return SentenceVectors(noisy.astype(np.float32), np.arange(n_map)), len(real)


def umap_in_app(vectors) -> dict:
    """UMAP through the app's worker with a 10 ms timer on the GUI thread: seconds, longest tick gap, reports."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from desktop_app.workers.corpus.map_jobs import projection_job
    from desktop_app.workers.jobs import Jobs
    from model.corpus.projection import ProjectionCache

    app = QApplication.instance() or QApplication([])
    jobs = Jobs("corpus-map-bench")
    gaps, reports, done = [], [], {}
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer(interval=10)
    timer.timeout.connect(tick)
    t0 = time.perf_counter()
    timer.start()
    jobs.run(projection_job, vectors, "umap", ProjectionCache(), on_progress=reports.append,
             on_result=lambda p: done.update(result=p), on_error=lambda e: done.update(error=e),
             on_end=lambda: done.update(end=time.perf_counter()))
    while "end" not in done:
        app.processEvents()
        time.sleep(0.002)
    timer.stop()
    jobs.shutdown()
    return {"seconds": done["end"] - t0, "max_gap_ms": 1000 * max(gaps, default=0.0), "reports": len(reports),
            "error": done.get("error")}


def redraw_times(xy: np.ndarray) -> tuple[float, float]:
    """Median ms of a pan (repaint into a pixmap) and of a hover look-up, with ``xy`` points on the Map plot."""
    from PySide6.QtCore import QPointF
    from PySide6.QtWidgets import QApplication

    from desktop_app.views.corpus.map_plot import CorpusMapPlot
    from model.palette import class_colour

    app = QApplication.instance() or QApplication([])
    plot = CorpusMapPlot()
    plot.resize(1000, 700)
    plot.show()
    colours = [class_colour(i % 2) for i in range(len(xy))]
    plot.set_points(xy, colours, [f"text {i}" for i in range(len(xy))])
    app.processEvents()
    plot.grab()
    vb = plot.getPlotItem().getViewBox()
    (x0, x1), _ = vb.viewRange()
    pans, hovers = [], []
    for k in range(20):
        dx = (x1 - x0) * 0.02 * (1 if k % 2 else -1)
        t0 = time.perf_counter()
        vb.setXRange(x0 + dx, x1 + dx, padding=0)
        app.processEvents()
        plot.grab()
        pans.append(1000 * (time.perf_counter() - t0))
        p = xy[k * 997 % len(xy)]
        t0 = time.perf_counter()
        pts = plot.scatter.pointsAt(QPointF(float(p[0]), float(p[1])))
        "\n".join(plot._tip(pt.pos().x(), pt.pos().y(), pt.data()) for pt in pts[:5])
        hovers.append(1000 * (time.perf_counter() - t0))
    plot.close()
    return statistics.median(pans), statistics.median(hovers)


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark (module docstring) and print its numbers."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=DEFAULT_DATA)
    ap.add_argument("--n-score", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--n-vectors", type=int, default=2000)
    ap.add_argument("--n-map", type=int, default=25_000)
    ap.add_argument("--umap", action="store_true", help="also time UMAP through the app's worker")
    args = ap.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import torch

    from benchmarks.sample import seeded_reviews
    from model import Predictor
    from model.corpus.projection import project

    predictor = Predictor.from_pretrained(device="cpu")
    texts = seeded_reviews(args.data, max(args.n_score, args.n_vectors))
    print(f"bundled model, {predictor.precision}, torch threads {torch.get_num_threads()}, {os.cpu_count()} CPUs")
    plain, kept = scoring_overhead(predictor, texts[: args.n_score], args.rounds)
    print(f"scoring {args.n_score} reviews: {plain:.1f} reviews/s without vectors, {kept:.1f} with "
          f"({100 * (plain / kept - 1):+.1f}% time; best of {args.rounds} alternating rounds)")
    t0 = time.perf_counter()
    vectors, n_real = map_vectors(predictor, texts[: args.n_vectors], args.n_map)
    print(f"vectors: {n_real} real reviews scored in {time.perf_counter() - t0:.1f} s, repeated with 5% noise to "
          f"{vectors.count:,} x {vectors.dim} float32 ({vectors.nbytes / 1e6:.1f} MB)")
    from model.records.vectors import SentenceVectors

    project(SentenceVectors(vectors.vectors[:100], np.arange(100)), "pca")  # import and warm-up
    pca = project(vectors, "pca").result
    print(f"PCA of {vectors.count:,}: {pca.elapsed_s:.3f} s")
    if args.umap:
        import importlib.util

        cached = importlib.util.find_spec("umap") is not None
        u = umap_in_app(vectors)
        print(f"UMAP of {vectors.count:,} (PCA-50, seed 42) in the app's worker: {u['seconds']:.1f} s (first UMAP of "
              f"this process: numba compiles{' or loads its cache' if cached else ''}), longest event-loop gap "
              f"{u['max_gap_ms']:.0f} ms, {u['reports']} progress reports, error: {u['error']}")
    pan, hover = redraw_times(pca.coords)
    print(f"Map plot with {vectors.count:,} points: pan redraw median {pan:.1f} ms, hover look-up median {hover:.2f} ms")


if __name__ == "__main__":
    main()
