"""GUI responsiveness while a large batch is scored (prints numbers, asserts nothing).

``python -m benchmarks.batch_gui [--n 25000] [--data ../shared/data/imdb/test.jsonl.gz] [--model DIR]``

Opens the real main window (offscreen when no display is set), writes ``--n``
IMDB test reviews to a temporary JSON Lines file and hands it to the batch
panel, as a drop would. While the batch runs on its worker thread, a 5 ms
QTimer records when the GUI event loop turns, and every ``--type-every``
seconds the review editor gets a new review (as if typed), which the explorer
analyses live. Prints one JSON object: the largest and 99th-percentile gap
between timer ticks (ms; the target is < 100 ms), how many live analyses
finished during the batch and their median latency from edit to displayed
result (ms), and the batch's reviews/s.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.batch_cli import DEFAULT_DATA
from model.textio import read_labelled


def prepare(data: Path) -> bool:
    """Common start of the GUI benchmarks: False (with a message) if ``data`` is missing; offscreen if no display."""
    if not data.is_file():
        print(f"data file not found: {data}", file=sys.stderr)
        return False
    if not os.environ.get("DISPLAY") and not os.environ.get("QT_QPA_PLATFORM"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    return True


def open_loaded_window(model: Path | None, timeout_s: float = 120.0):
    """The real main window with its panels, 1600 x 1000, shown, after the model loaded (or ``timeout_s`` passed).

    Returns:
        ``(app, window, panels)``; ``window.predictor`` is None if the model did not load in time.
    """
    from PySide6.QtCore import QCoreApplication
    from PySide6.QtWidgets import QApplication

    from desktop_app.app import attach_panels
    from desktop_app.window.main_window import MainWindow

    QCoreApplication.setApplicationName("Attention Explorer bench")
    app = QApplication.instance() or QApplication(sys.argv[:1])
    window = MainWindow(str(model) if model else None, None)
    panels = attach_panels(window)
    window.resize(1600, 1000)
    window.show()
    deadline = time.perf_counter() + timeout_s
    while window.predictor is None and time.perf_counter() < deadline:
        app.processEvents()
        time.sleep(0.01)
    return app, window, panels


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; returns 0, or 2 when the data file is missing."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=25000, help="reviews to batch-score")
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help="IMDB test.jsonl.gz")
    p.add_argument("--model", type=Path, default=None, help="model folder (default: the bundled one)")
    p.add_argument("--type-every", type=float, default=1.0, help="seconds between simulated edits")
    args = p.parse_args(argv)
    if not prepare(args.data):
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="ae-bench-"))
    try:
        return _run(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # the review file is tens of MB


def _run(args: argparse.Namespace, tmp: Path) -> int:
    """The benchmark proper, with its scratch files in ``tmp``."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from desktop_app.window.settings import SETTINGS_ENV

    os.environ[SETTINGS_ENV] = str(tmp / "settings.ini")  # leave the user's settings alone
    texts = read_labelled(args.data)[0][: args.n]
    batch_file = tmp / "reviews.jsonl"
    batch_file.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), encoding="utf-8")

    app, window, panels = open_loaded_window(args.model)
    batch = panels["batch"]
    if window.predictor is None or batch is None:
        print(json.dumps({"ok": False, "error": "the model or the batch panel did not load"}))
        return 1

    ticks: list[float] = []
    edits: list[float] = []
    latencies: list[float] = []
    state = {"done": False, "summary": None, "i": 0}
    tick = QTimer()
    tick.setInterval(5)
    tick.timeout.connect(lambda: ticks.append(time.perf_counter()))

    def type_review() -> None:
        state["i"] += 1
        edits.append(time.perf_counter())
        window.editor.setPlainText(texts[(state["i"] * 97) % len(texts)])

    def on_prediction(pred) -> None:
        if pred is not None and edits:
            latencies.append(time.perf_counter() - edits[-1])

    def on_finished(summary) -> None:
        state["done"], state["summary"] = True, summary

    typer = QTimer()
    typer.setInterval(int(args.type_every * 1000))
    typer.timeout.connect(type_review)
    window.state.prediction_changed.connect(on_prediction)
    batch.scoring_finished.connect(on_finished)

    t0 = time.perf_counter()
    tick.start()
    typer.start()
    batch.add_paths([str(batch_file)])
    while not state["done"]:
        app.processEvents()
        time.sleep(0.001)
    wall = time.perf_counter() - t0
    tick.stop()
    typer.stop()
    gaps = sorted(b - a for a, b in itertools.pairwise(ticks))
    result = {
        "ok": True,
        "reviews": len(texts),
        "batch_wall_s": round(wall, 1),
        "batch_reviews_per_s": round(len(texts) / wall, 1),
        "max_event_loop_gap_ms": round(gaps[-1] * 1000, 1) if gaps else None,
        "p99_event_loop_gap_ms": round(gaps[int(0.99 * (len(gaps) - 1))] * 1000, 1) if gaps else None,
        "ticks": len(ticks),
        "live_edits": len(edits),
        "live_analyses_shown": len(latencies),
        "live_analysis_median_ms": round(statistics.median(latencies) * 1000, 1) if latencies else None,
        "rows": len(batch.rows()),
        "platform": QApplication.platformName(),
    }
    print(json.dumps(result))
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
