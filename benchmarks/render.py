"""Rendering benchmark at 512 tokens: ``python -m benchmarks.render [--model DIR] [--repeats N]``.

Prints one JSON object with, in milliseconds (median and max over the repeats):

* ``head_switch_ms``: select another head -> heatmap shows the new 512 x 512
  matrix and is repainted (``redraw`` + synchronous ``repaint``);
* ``links_redraw_ms``: select another query token -> the links view rebuilds
  its per-head paths and is repainted;
* ``links_all_ms``: the links view with no focus token (strongest links of all queries);
* ``token_view_ms``: token-view recolouring + repaint;
* ``show_switch_ms``: switch the "Show" selector (attention weights -> value-weighted norms -> ALTI -> ...) with the
  flows already computed and cached -> heatmap, token links (all queries, mean of heads) and token view redrawn and
  repainted; ``show_switch_parts_ms`` splits it per view (``state`` is ``set_show`` itself: the flow controller
  hands the cached flow to the state).

Target: < 30 ms each for head switch, link redraw and show switch. It reports; it does not assert.
Uses a random 512-token model (d_model 128, 2 layers, 4 heads) unless ``--model`` is given,
and runs offscreen when no display is set.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time


def _timed(fn, repeats: int) -> dict:
    samples = []
    for k in range(repeats):
        t0 = time.perf_counter()
        fn(k)
        samples.append((time.perf_counter() - t0) * 1000.0)
    return {"median": round(statistics.median(samples), 2), "max": round(max(samples), 2)}


def _show_switch(app, win, repeats: int) -> dict:
    """Time switching the "Show" selector with cached flows: total and per view, median and max in ms."""
    from desktop_app.state import SHOW_CHOICES

    win.state.clear_selection()
    win.state.set_layer_head(0, -1)  # mean of heads: the heatmap's summed norms, every link of every head
    for show in (*SHOW_CHOICES[1:], SHOW_CHOICES[0]):  # compute (and cache) each flow once
        win.state.set_show(show)
        t0 = time.monotonic()
        while show != "attention" and win.state.flow is None and time.monotonic() - t0 < 300:
            app.processEvents()
            time.sleep(0.005)
        if show != "attention" and win.state.flow is None:
            return {"error": f"no {show} flow: {win.state.flow_note}"}
    parts: dict[str, list[float]] = {"state": [], "heatmap": [], "links": [], "token_view": []}
    views = {"heatmap": (win.heatmap, win.heatmap.glw.viewport()),
             "links": (win.links_view, win.links_view.pw.viewport()),
             "token_view": (win.token_view, win.token_view.canvas)}
    totals = []
    for i in range(repeats):
        show = SHOW_CHOICES[(i + 1) % len(SHOW_CHOICES)]
        t0 = time.perf_counter()
        win.state.set_show(show)
        t = time.perf_counter()
        parts["state"].append((t - t0) * 1000.0)
        if show != "attention" and win.state.flow is None:
            return {"error": f"the {show} flow was not cached"}
        for name, (view, painted) in views.items():
            view.flush()
            painted.repaint()
            t, t_prev = time.perf_counter(), t
            parts[name].append((t - t_prev) * 1000.0)
        totals.append((t - t0) * 1000.0)

    def stats(samples: list[float]) -> dict:
        return {"median": round(statistics.median(samples), 2), "max": round(max(samples), 2)}

    return {"show_switch_ms": stats(totals), "show_switch_parts_ms": {k: stats(v) for k, v in parts.items()}}


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print JSON; returns 0 (1 when the model cannot be loaded)."""
    p = argparse.ArgumentParser(description="Attention Explorer rendering benchmark (512 tokens)")
    p.add_argument("--model", default=None, help="model folder with max_len >= 512 (default: a random one)")
    p.add_argument("--repeats", type=int, default=20)
    args = p.parse_args(argv)
    if not os.environ.get("QT_QPA_PLATFORM") and not os.environ.get("DISPLAY"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    os.environ.setdefault("ATTENTION_EXPLORER_SETTINGS", os.path.join(tempfile.mkdtemp(), "settings.ini"))

    from tests.fixtures.tiny_models import SAMPLE_TEXTS

    model_dir = args.model
    if model_dir is None:
        from model import EncoderConfig
        from tests.fixtures.tiny_models import make_random_model_dir

        cfg = EncoderConfig(max_len=512, d_model=128, n_heads=4, n_layers=2, d_ff=512)
        model_dir = str(make_random_model_dir(os.path.join(tempfile.mkdtemp(), "model512"), config=cfg))

    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    from desktop_app.window.main_window import MainWindow

    win = MainWindow(model_dir, device="cpu")
    win.resize(1400, 900)
    win.show()
    t0 = time.monotonic()
    while win.predictor is None and time.monotonic() - t0 < 120:
        app.processEvents()
        time.sleep(0.01)
    if win.predictor is None:
        print(json.dumps({"ok": False, "error": "model did not load"}))
        return 1
    # the longest run of the sample words that fits in the model's 512 tokens: one window, so the prediction's tokens,
    # its attention and the flows the app computes for its text all agree (a longer text is read in windows, and the
    # app shows one window of it at a time)
    words = " ".join(SAMPLE_TEXTS * 20).split()
    lo, hi = 1, len(words)
    while lo < hi:  # the most words whose encoding is not cut
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if not win.predictor.encode(" ".join(words[:mid])).truncated else (lo, mid - 1)
    pred = win.predictor.predict(" ".join(words[:lo]))
    win.state.set_prediction(pred)
    for v in (win.token_view, win.heatmap, win.links_view, win.model_view, win.pe_view):
        v.flush()
    for _ in range(10):
        app.processEvents()
    L, H = pred.attention.shape[:2]
    win.links_dock.show()
    win.heatmap_dock.setFloating(True)  # heatmap and links both visible at once
    win.heatmap_dock.resize(700, 700)
    for _ in range(10):
        app.processEvents()

    def head_switch(i: int) -> None:
        win.state.set_layer_head(i % L, (i + 1) % H)
        win.heatmap.flush()
        win.heatmap.glw.viewport().repaint()

    def links_redraw(i: int) -> None:
        win.state.set_selection([(37 * i + 5) % pred.num_tokens])
        win.links_view.flush()
        win.links_view.pw.viewport().repaint()

    def links_all(i: int) -> None:
        win.state.clear_selection()
        win.state.set_layer_head(i % L, -1)
        win.links_view.flush()
        win.links_view.pw.viewport().repaint()

    def token_view(i: int) -> None:
        win.state.set_selection([(11 * i + 3) % pred.num_tokens])
        win.token_view.flush()
        win.token_view.canvas.repaint()

    out = {
        "ok": True,
        "num_tokens": pred.num_tokens,
        "layers": L,
        "heads": H,
        "repeats": args.repeats,
        "head_switch_ms": _timed(head_switch, args.repeats),
        "links_redraw_ms": _timed(links_redraw, args.repeats),
        "links_all_ms": _timed(links_all, max(3, args.repeats // 4)),
        "token_view_ms": _timed(token_view, args.repeats),
        **_show_switch(app, win, max(args.repeats, 6)),
        "platform": QApplication.platformName(),
    }
    print(json.dumps(out))
    win.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
