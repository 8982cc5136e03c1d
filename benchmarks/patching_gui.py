"""The Patching dock's GUI stall (issue 53: the event loop never stalls more than 100 ms). Prints JSON; asserts nothing.

``python -m benchmarks.patching_gui [--data ../shared/data/imdb/test.jsonl.gz] [--tokens 128] [--site resid]
[--method exact] [--repeats 3] [--cancels 6] [--no-minilm] [--no-bundled]``

Opens the real main window (1400 x 860, every panel attached; offscreen unless a display is set) on the bundled model
and on all-MiniLM-L6-v2 with a random 2-class head (:func:`benchmarks.hf.minilm_folders`: the speed of a fine-tuned
MiniLM). For each: an IMDB test review cut to ``--tokens`` tokens is analysed and pinned, its "shifted" What if edit
(:func:`benchmarks.patching.pairs`: an antonym swapped and "Honestly," in front, so every cell of the residual grid is a
patched pass: the worst case) is analysed; once the Explanations dock has explained both (no other job runs), the
Patching dock is raised (the Inside workspace) and the run timed
from the request until the heatmap has drawn the result. Meanwhile a 5 ms QTimer on the GUI thread records when the
event loop turns: ``max_stall_ms`` is the longest gap between two of its ticks (the longest the window did not respond),
``p99_stall_ms`` the 99th percentile. ``job_s`` is the worker's ``PatchingResult.elapsed_s``, ``shown_s`` the
wall time to the drawn heatmap, ``redraw_ms`` the best GUI-thread time of the view's ``redraw()`` of that result.
The first run raises the dock (the Inside workspace is laid out and its other docks draw too):
``first_run_max_stall_ms``; then the best (lowest max stall) of ``--repeats`` runs, each a new request (Run), and
``worst_max_stall_ms`` of those. ``idle_max_stall_ms``: the same probe for 5 s before, with nothing running (on a
shared machine the other processes' share of the CPU). ``job_s_runs``: every timed run's ``job_s`` (the whole grid).

Cancel latency: ``--cancels`` more requests, each cancelled (the dock's Cancel,
:meth:`desktop_app.panels.inside.patching.PatchingPanel.cancel`) at an even spread of moments through the job
(``(k + 0.5) / cancels`` of the best run's ``job_s``); ``cancel_ms`` is the time from ``cancel()`` to the stop reaching
the GUI thread (the dock no longer running, its note "cancelled"). Then
as many requests each overtaken at the same moments by a newer one (Run again: the latest request wins);
``newer_ms`` is the time from the newer request to its job starting on the worker (the old one has stopped).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.batch_cli import DEFAULT_DATA


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            return next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")), platform.processor())
    except OSError:
        return platform.processor()


def _cancel_latencies(app, panel, job_s: float, n: int) -> tuple[list[float], list[float]]:
    """``(cancel_ms, newer_ms)``: ``n`` requests cancelled and ``n`` overtaken by a newer one, at ``(k + 0.5) / n``
    of ``job_s`` into each (module docstring); a request that ended before its moment is left out."""
    import desktop_app.panels.inside.patching as dock
    from benchmarks.head_toggle import _pump

    starts: list[float] = []  # when each patching job started on the worker
    real_job = dock.patching_job
    dock.patching_job = lambda ctx, *a: starts.append(time.perf_counter()) or real_job(ctx, *a)
    cancel_ms, newer_ms = [], []
    try:
        for newer in (False, True):
            for k in range(n):
                before = len(starts)
                panel.request(force=True)
                _pump(app, lambda: len(starts) > before, 60)  # this request's job started
                begin, started = starts[-1], len(starts)
                _pump(app, lambda: time.perf_counter() - begin > job_s * (k + 0.5) / n or not panel.running, 600)
                if not panel.running:
                    continue
                t = time.perf_counter()
                if newer:
                    panel.request(force=True)
                    _pump(app, lambda: len(starts) > started, 600)
                    newer_ms.append(round(1000 * (starts[-1] - t), 1))
                    panel.cancel()
                else:
                    panel.cancel()
                    _pump(app, lambda: not panel.running, 600)
                    cancel_ms.append(round(1000 * (time.perf_counter() - t), 1))
                _pump(app, lambda: not panel.running, 600)
    finally:
        dock.patching_job = real_job
    return cancel_ms, newer_ms


def measure(app, model_dir: Path, name: str, data: str, tokens: int, site: str, method: str, repeats: int,
            cancels: int = 0) -> dict:
    """One model's row (module docstring)."""
    from PySide6.QtCore import QTimer

    import torch

    import desktop_app.panels.inside.patching as dock
    from benchmarks.head_toggle import _pump  # a real event loop (wait_until sleeps 10 ms between turns)
    from benchmarks.patching import pairs
    from build_scripts.screenshots import wait_until
    from desktop_app.app import attach_panels
    from desktop_app.window.main_window import MainWindow

    win = MainWindow(str(model_dir), device="cpu")
    win.persist_settings = False
    explain = attach_panels(win)["explain"]
    win.resize(1400, 860)
    win.show()
    wait_until(app, lambda: win.predictor is not None, 300)
    clean, corrupted = pairs(win.predictor, data, tokens, 1, shifted=True)[0]
    for text in (clean, corrupted):
        win.analyze_text(text)
        wait_until(app, lambda t=text: win.current_prediction is not None
                   and win.current_prediction.document.text == t, 300)
        if text == clean:
            win.state.pin_current()
    win.inside_panels["patching"].apply_settings({"site": site, "method": method})
    wait_until(app, lambda: not explain.is_busy(), 600)  # the explanations of the two texts are done: no other job
    idle: list[float] = []  # the baseline: the same probe for 5 s with nothing running (the machine's own stalls)
    probe = QTimer()
    probe.timeout.connect(lambda: idle.append(time.perf_counter()))
    probe.start(5)
    _pump(app, lambda: len(idle) > 1 and idle[-1] - idle[0] > 5.0, 60)
    probe.stop()
    idle_max = max(b - a for a, b in zip(idle, idle[1:]))
    runs = []
    for i in range(repeats + 1):
        ticks: list[float] = []
        probe = QTimer()
        probe.timeout.connect(lambda: ticks.append(time.perf_counter()))
        probe.start(5)
        t0 = time.perf_counter()
        ticks.append(t0)
        if i == 0:
            win.docks.raise_view("Patching")
        else:
            win.inside_panels["patching"].request(force=True)
        done = _pump(app, lambda: win.state.inside.patching is not None
                     and not win.inside_panels["patching"].view._dirty and win.inside_panels["patching"].view.result is not None, 600)
        shown = time.perf_counter() - t0
        probe.stop()
        gaps = sorted(b - a for a, b in zip(ticks, ticks[1:]))
        result = win.state.inside.patching
        runs.append({"max_stall_ms": round(1000 * gaps[-1], 1),
                     "p99_stall_ms": round(1000 * gaps[int(0.99 * (len(gaps) - 1))], 1), "ticks": len(ticks),
                     "job_s": round(result.elapsed_s, 2) if done else None, "shown_s": round(shown, 2),
                     "passes": result.passes if done else None})
    view = win.inside_panels["patching"].view
    redraws = []
    for _ in range(5):
        t = time.perf_counter()
        view.redraw()
        redraws.append(time.perf_counter() - t)
    first, runs = runs[0], runs[1:]
    best = min(runs, key=lambda r: r["max_stall_ms"])
    cancel_ms, newer_ms = _cancel_latencies(app, win.inside_panels["patching"], best["job_s"], cancels)
    row = {"model": name, "site": site, "method": method, "tokens": len(result.tokens),
           "grid": list(result.effects.shape), **best, "worst_max_stall_ms": max(r["max_stall_ms"] for r in runs),
           "first_run_max_stall_ms": first["max_stall_ms"], "idle_max_stall_ms": round(1000 * idle_max, 1),
           "job_s_runs": [r["job_s"] for r in runs], "cancel_ms": cancel_ms, "newer_ms": newer_ms,
           "redraw_ms": round(1000 * min(redraws), 1), "repeats": repeats, "load": round(os.getloadavg()[0], 2),
           "cpu": _cpu(), "threads": torch.get_num_threads(), "nice": dock.PATCHING_NICE}
    win.shutdown_workers()
    win.close()
    return row


def main(argv: list[str] | None = None) -> None:
    """Print one JSON line per model (module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=str(DEFAULT_DATA))
    p.add_argument("--tokens", type=int, default=128)
    p.add_argument("--site", default="resid", choices=("resid", "head", "ffn"))
    p.add_argument("--method", default="exact", choices=("exact", "attribution"))
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--cancels", type=int, default=6, help="requests cancelled (and as many overtaken) to time it")
    p.add_argument("--no-minilm", action="store_true")
    p.add_argument("--no-bundled", action="store_true")
    p.add_argument("--nice", type=int, default=None, help="the dock worker's niceness (default PATCHING_NICE)")
    args = p.parse_args(argv)
    if args.nice is not None:
        import desktop_app.panels.inside.patching as dock

        dock.PATCHING_NICE = args.nice
    if not os.environ.get("DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("ATTENTION_EXPLORER_SETTINGS", str(Path(tempfile.mkdtemp()) / "settings.ini"))
    from PySide6.QtWidgets import QApplication

    from model.core.paths import default_model_dir

    app = QApplication.instance() or QApplication(sys.argv[:1])
    if not args.no_bundled:
        print(json.dumps(measure(app, default_model_dir(), "bundled", args.data, args.tokens, args.site, args.method,
                                 args.repeats, args.cancels)), flush=True)
    if not args.no_minilm:
        from benchmarks.hf import minilm_folders

        with tempfile.TemporaryDirectory() as tmp:
            _, clf = minilm_folders(Path(tmp))
            print(json.dumps(measure(app, clf, "MiniLM-L6 + random head", args.data, args.tokens, args.site,
                                     args.method, args.repeats, args.cancels)), flush=True)


if __name__ == "__main__":
    main()
