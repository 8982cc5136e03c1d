"""The Contribution graph view's GUI-thread cost (issue 53, section 2; desktop_app.views.inside.contribution_graph):
a new graph's arrival (its automatic threshold, redraw and paint); for each slider threshold, the prune and
``GraphItem.setData`` (``redraw``) and the paint (a grab of the plot, which builds the item's picture), offscreen;
and the worker's one computation at the slider's least threshold (best of ``--repeats`` after a warm-up; it is not
on the GUI thread). Prints a table and JSON lines.

Usage::

    QT_QPA_PLATFORM=offscreen python -m benchmarks.graph_view [--data ../shared/data/imdb/test.jsonl.gz]
                                                              [--repeats 3] [--threads 2] [--no-minilm]

Texts: the longest of the first 300 IMDB test reviews cut at a word start to 256 tokens (bundled model) and to 128 and
512 tokens (MiniLM with a random 2-class head, :func:`benchmarks.hf.minilm_folders`). The view is 640 x 560 pixels,
about its size in the Inside workspace at 1400 x 860. Best of ``--repeats`` per threshold. Target (not asserted): the
GUI's event loop never stalls more than 100 ms.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import torch

from benchmarks.flow import longest_review
from model.predictor.predictor import Predictor


def measure(predictor: Predictor, text: str, repeats: int, app) -> list[dict]:
    """The view's redraw and paint milliseconds at each slider threshold for ``text`` (best of ``repeats``)."""
    from desktop_app.state import ExplorerState
    from desktop_app.views.inside.contribution_graph import THRESHOLDS, ContributionGraphView

    graph = predictor.contribution_graph(text, THRESHOLDS[0])  # warm-up
    compute_ms = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        graph = predictor.contribution_graph(text, THRESHOLDS[0])
        compute_ms = min(compute_ms, (time.perf_counter() - t) * 1000)
    arrival_ms = float("inf")  # a new graph reaching a fresh view: its auto threshold, redraw and paint
    for _ in range(repeats):
        state = ExplorerState()
        view = ContributionGraphView(state)
        view.resize(640, 560)
        view.show()
        app.processEvents()
        t = time.perf_counter()
        state.inside.set("graph", graph)
        view.plot.grab()
        arrival_ms = min(arrival_ms, (time.perf_counter() - t) * 1000)
    print(f"# a new graph of {len(graph.tokens)} tokens ({len(graph.edges)} edges at {THRESHOLDS[0]}) opens at "
          f"{view.threshold} (auto) in {arrival_ms:.1f} ms (redraw and paint included)")
    rows = []
    for th in THRESHOLDS:
        best_draw = best_paint = float("inf")
        for _ in range(repeats):
            t = time.perf_counter()
            view.set_threshold(th)
            view.redraw()
            best_draw = min(best_draw, (time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            view.plot.grab()
            best_paint = min(best_paint, (time.perf_counter() - t) * 1000)
        rows.append({"threshold": th, "tokens": len(graph.tokens), "nodes": len(view.graph.nodes),
                     "edges": len(view.graph.edges), "redraw_ms": round(best_draw, 1),
                     "paint_ms": round(best_paint, 1), "compute_ms_at_0.01": round(compute_ms, 1)})
    view.close()
    return rows


def main(argv: list[str] | None = None) -> None:
    from PySide6.QtWidgets import QApplication

    from tests.fixtures.tiny_models import cut_at_word_start

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared/data/imdb/test.jsonl.gz"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--no-minilm", action="store_true")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "")
    print(f"# {cpu}, {args.threads} threads")
    review = longest_review(args.data)
    runs = [("bundled", Predictor.from_pretrained(device="cpu"), (256,))]
    tmp = tempfile.TemporaryDirectory()
    if not args.no_minilm:
        from benchmarks.hf import minilm_folders

        runs.append(("MiniLM", Predictor.from_pretrained(minilm_folders(Path(tmp.name))[1], device="cpu"), (128, 512)))
    print(f"{'model':8} {'T':>4} {'thr':>5} {'nodes':>6} {'edges':>6} {'redraw ms':>9} {'paint ms':>8} "
          f"{'compute ms':>10}")
    for name, predictor, lengths in runs:
        for n in lengths:
            text = cut_at_word_start(predictor, review, n)[0]
            for row in measure(predictor, text, args.repeats, app):
                print(f"{name:8} {row['tokens']:4d} {row['threshold']:5.2f} {row['nodes']:6d} {row['edges']:6d} "
                      f"{row['redraw_ms']:9.1f} {row['paint_ms']:8.1f} {row['compute_ms_at_0.01']:10.1f}")
                print(json.dumps({"model": name, **row}), file=sys.stderr)
    tmp.cleanup()


if __name__ == "__main__":
    main()
