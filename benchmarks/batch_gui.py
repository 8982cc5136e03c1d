"""GUI responsiveness while a large batch is scored and the corpus dock works (prints numbers, asserts nothing).

``python -m benchmarks.batch_gui [--n 25000] [--data ../shared/data/imdb/test.jsonl.gz] [--model DIR] [--tokens-s S]
[--fill] [--slices] [--workspace KEY]``

Opens the real main window (offscreen when no display is set), writes ``--n``
IMDB test reviews with their gold labels to a temporary JSON Lines file and hands it to the batch
panel, as a drop would (the window shows the Corpus workspace when the job starts). While the batch runs on its worker
thread (and the corpus dock recomputes its metrics and plots as rows arrive, at most twice a second, while it is on
screen), a 5 ms QTimer records when the GUI event loop turns, and every ``--type-every``
seconds the review editor gets a new review (as if typed), which the explorer
analyses live. Then the corpus dock's "What drives it" word scores run over every row on their worker
(``--tokens-s``: 0 to the end, > 0 cancelled after so many seconds, < 0 skipped), the ticks and edits going on.
Prints one JSON object: the largest and 99th-percentile gap between timer ticks during the batch and
during the word scores (ms; the target is < 100 ms), how many live analyses
finished during the batch and their median latency from edit to displayed
result (ms), the number of corpus updates and what they cost during the batch (``corpus_gui_ms``: GUI-thread time of
the dock's updates; ``corpus_worker_cpu_ms``: its metrics worker's CPU time), the batch's reviews/s and the word
scores' reviews/s. ``--workspace KEY``
switches to that workspace once the job started (``read``: the Corpus and Batch scoring docks hidden while the batch
runs, as when the user reads texts meanwhile; ``corpus``, the default: they stay on screen), then back to Corpus after
the batch, before the sorting and the word scores.
Then the table is sorted as a user would (P(positive), Confidence, Excerpt, Source, each way; "Misclassified";
back to arrival order): ``sort_max_stall_ms`` is the longest of those GUI-thread stalls (each action's time until
the event loop is free again). ``--fill`` skips the scoring: the rows go straight into the table (the reviews with
their gold labels and a made-up probability), to measure the sorting alone in seconds. ``--slices`` first shows the
Corpus workspace with the Map tab raised and two slices saved (the first 10% and the next 20% of the rows), so the
slices table is on screen while the table is sorted; then a map selection of every other row (``map_selection``, its
stall; ``slices_ready_ms``: until the slices table shows that selection's numbers, computed on its worker) and its
clearing (``clear_selection``).
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
from model.files.textio import read_labelled


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
    p.add_argument("--fill", action="store_true", help="no scoring: fill the table with rows, then measure sorting")
    p.add_argument("--slices", action="store_true",
                   help="the Map tab's slices table on screen while sorting, then a map selection (module docstring)")
    p.add_argument("--workspace", default="corpus",
                   help="the workspace shown while the batch runs (read: the corpus dock hidden; module docstring)")
    p.add_argument("--tokens-s", type=float, default=0.0,
                   help="then run the corpus dock's word scores over every row: 0 to the end, > 0 cancel after so "
                        "many seconds, < 0 skip them")
    args = p.parse_args(argv)
    from desktop_app.window.workspaces import BY_KEY

    if args.workspace not in BY_KEY:
        p.error(f"--workspace: one of {', '.join(BY_KEY)}")
    if not prepare(args.data):
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="ae-bench-"))
    try:
        return _run(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # the review file is tens of MB


def gap_stats(ticks: list[float], prefix: str) -> dict:
    """The largest and 99th-percentile gaps (ms) between consecutive ``ticks`` (seconds), keyed with ``prefix``."""
    gaps = sorted(b - a for a, b in itertools.pairwise(ticks))
    return {
        f"{prefix}max_event_loop_gap_ms": round(gaps[-1] * 1000, 1) if gaps else None,
        f"{prefix}p99_event_loop_gap_ms": round(gaps[int(0.99 * (len(gaps) - 1))] * 1000, 1) if gaps else None,
        f"{prefix}ticks": len(ticks),
    }


def run_until(app, done, timeout_s: float | None = None) -> bool:
    """Turn the event loop until ``done()`` (True) or ``timeout_s`` passed (False)."""
    deadline = None if timeout_s is None else time.perf_counter() + timeout_s
    while not done():
        if deadline is not None and time.perf_counter() > deadline:
            return False
        app.processEvents()
        time.sleep(0.001)
    return True


def _run(args: argparse.Namespace, tmp: Path) -> int:
    """The benchmark proper, with its scratch files in ``tmp``: the batch (the corpus dock updating as rows
    arrive), then the corpus dock's word scores over every row (``--tokens-s`` > 0 cancels them after so long)."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from desktop_app.window.settings import SETTINGS_ENV

    os.environ[SETTINGS_ENV] = str(tmp / "settings.ini")  # leave the user's settings alone
    texts, labels = read_labelled(args.data)
    texts, labels = texts[: args.n], labels[: args.n]
    batch_file = tmp / "reviews.jsonl"  # with gold labels: the corpus dock computes every metric and plot
    batch_file.write_text("".join(json.dumps({"text": t, "label": int(y)}) + "\n" for t, y in zip(texts, labels)),
                          encoding="utf-8")

    corpus_cost = _time_corpus_dock()
    app, window, panels = open_loaded_window(args.model)
    batch, corpus = panels["batch"], panels.get("corpus")
    if window.predictor is None or batch is None:
        print(json.dumps({"ok": False, "error": "the model or the batch panel did not load"}))
        return 1

    ticks: list[float] = []
    edits: list[float] = []
    latencies: list[float] = []
    state = {"done": False, "i": 0, "tokens": None}
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

    typer = QTimer()
    typer.setInterval(int(args.type_every * 1000))
    typer.timeout.connect(type_review)
    window.state.events.prediction.connect(on_prediction)
    batch.scoring_finished.connect(lambda _summary: state.update(done=True))
    if args.workspace != "corpus":  # after the window's own switch to Corpus when the job starts
        batch.scoring_started.connect(lambda _job: window.workspaces.switch(args.workspace))

    if args.fill:
        result = {"ok": True, "reviews": len(texts), **_fill(app, batch, texts, labels)}
        if args.slices:
            _show_slices(app, window, corpus)
        result.update(_sorting(app, batch))
        if args.slices:
            result.update(_map_selection(app, corpus))
        print(json.dumps(result))
        window.close()
        return 0
    t0 = time.perf_counter()
    tick.start()
    typer.start()
    batch.add_paths([str(batch_file)])
    run_until(app, lambda: state["done"])
    wall = time.perf_counter() - t0
    corpus_updates = corpus.updates if corpus is not None else None  # during the batch
    batch_corpus_cost = {f"corpus_{key}": round(value, 1) for key, value in corpus_cost.items()}
    window.workspaces.switch("corpus")
    result = {
        "ok": True,
        "reviews": len(texts),
        "batch_wall_s": round(wall, 1),
        "batch_reviews_per_s": round(len(texts) / wall, 1),
        **gap_stats(ticks, ""),
        "live_edits": len(edits),
        "live_analyses_shown": len(latencies),
        "live_analysis_median_ms": round(statistics.median(latencies) * 1000, 1) if latencies else None,
        "rows": len(batch.rows()),
        "workspace": args.workspace,
        "corpus_updates": corpus_updates,
        **batch_corpus_cost,
        "platform": QApplication.platformName(),
    }
    result.update(_sorting(app, batch))
    if corpus is not None and args.tokens_s >= 0:
        result.update(_word_scores(app, corpus, ticks, args.tokens_s))
    tick.stop()
    typer.stop()
    print(json.dumps(result))
    window.close()
    return 0


def _time_corpus_dock() -> dict:
    """Time the Corpus dock's metric updates from now on (patched into its class and module before the window is
    built, so that the timer's bound slot is timed too): ``gui_ms``, GUI-thread wall time in ``refresh_now`` (the row
    copy, the request) and ``show_metrics`` (the numbers and the plots' data; the plots draw later, when visible);
    ``worker_cpu_ms``, the metrics worker's CPU time in ``corpus_metrics_job``. Returns the running totals."""
    import desktop_app.panels.corpus.panel as panel

    cost = {"gui_ms": 0.0, "worker_cpu_ms": 0.0}

    def timed(function, clock, key: str):
        def run(*args, **kwargs):
            t = clock()
            try:
                return function(*args, **kwargs)
            finally:
                cost[key] += (clock() - t) * 1000

        return run

    panel.CorpusPanel.refresh_now = timed(panel.CorpusPanel.refresh_now, time.perf_counter, "gui_ms")
    panel.CorpusPanel.show_metrics = timed(panel.CorpusPanel.show_metrics, time.perf_counter, "gui_ms")
    panel.corpus_metrics_job = timed(panel.corpus_metrics_job, time.thread_time, "worker_cpu_ms")
    return cost


def _fill(app, batch, texts: list[str], labels: list[int], chunk: int = 256) -> dict:
    """Append one row per review to the batch table, ``chunk`` at a time as the scoring worker sends them (a made-up
    P(positive) from the review's hash, its gold label); the longest append stall (ms)."""
    from model.batch.rows import binary_row

    stalls = []
    for start in range(0, len(texts), chunk):
        part = []
        for i in range(start, min(start + chunk, len(texts))):
            p = (hash(texts[i]) % 1000) / 1000
            label, gold = ("positive" if p >= 0.5 else "negative"), ("positive" if labels[i] else "negative")
            part.append(binary_row(f"reviews.jsonl:line {i + 1}", texts[i], label, p, 256, False, gold, label == gold,
                                  "ok"))
        t = time.perf_counter()
        batch._on_rows(part)
        app.processEvents()
        stalls.append(time.perf_counter() - t)
    return {"rows": batch.table_model.rowCount(), "fill_max_append_stall_ms": round(max(stalls) * 1000, 1)}


def _show_slices(app, window, corpus) -> None:
    """The Corpus workspace, its Map tab raised, two slices saved (the first 10% and the next 20% of the rows) and
    their numbers on screen."""
    window.workspaces.switch("corpus")
    m = corpus.map
    corpus.tabs.setCurrentIndex(corpus.tabs.indexOf(m.parentWidget().parentWidget()))
    rows = m.batch.table_model.rows()
    tenth = len(rows) // 10
    for name, part in (("first tenth", rows[:tenth]), ("next fifth", rows[tenth : 3 * tenth])):
        m.select_rows(part)
        m.slices.save_selection(name)
    m.select_rows([])
    run_until(app, lambda: not getattr(m.slices, "updating", False), 120.0)  # (a tree before the worker: at once)


def _map_selection(app, corpus) -> dict:
    """Select every other row on the map, then clear the selection, the slices table on screen: each action's stall
    (ms) and the time until the slices show the selection's numbers (ms)."""
    m = corpus.map
    rows = m.batch.table_model.rows()
    out = {}
    for name, action in (("map_selection", lambda: m.select_rows(rows[::2])),
                         ("clear_selection", lambda: m.select_rows([]))):
        app.processEvents()
        t = time.perf_counter()
        action()
        app.processEvents()
        out[name] = round((time.perf_counter() - t) * 1000, 1)
        run_until(app, lambda: not getattr(m.slices, "updating", False), 120.0)  # (a tree before the worker: at once)
        if name == "map_selection":
            out["slices_ready_ms"] = round((time.perf_counter() - t) * 1000, 1)
    return {"slices_stalls_ms": out, "slices_shown": [line[:2] for line in m.slices.metrics_rows()]}


def _sorting(app, batch) -> dict:
    """Sort the table as a user would (module docstring); each action's GUI-thread stall (ms) and the longest."""
    from PySide6.QtCore import Qt

    from desktop_app.panels.batch.table_model import CONFIDENCE, EXCERPT, SOURCE

    view, header = batch.ui.view, batch.ui.view.horizontalHeader()
    steps = [(f"{name}_{'desc' if order == Qt.SortOrder.DescendingOrder else 'asc'}",
              lambda c=col, o=order: view.sortByColumn(c, o))
             for name, col in (("p_positive", batch.table_model.column_of("positive")), ("confidence", CONFIDENCE),
                               ("excerpt", EXCERPT),
                               ("source", SOURCE))
             for order in (Qt.SortOrder.DescendingOrder, Qt.SortOrder.AscendingOrder)]
    steps += [("errors_first", batch.navigation.show_errors_first),
              ("all_rows", lambda: batch.ui.category_combo.setCurrentText("All")),
              ("arrival_order", lambda: header.setSortIndicator(-1, Qt.SortOrder.AscendingOrder))]
    stalls = {}
    for name, action in steps:
        app.processEvents()
        t = time.perf_counter()
        action()
        app.processEvents()  # the repaint belongs to the stall
        stalls[name] = round((time.perf_counter() - t) * 1000, 1)
    return {"sort_rows": batch.proxy.rowCount(), "sort_max_stall_ms": max(stalls.values()), "sort_stalls_ms": stalls}


def _word_scores(app, corpus, ticks: list[float], limit_s: float) -> dict:
    """Run the corpus dock's word scores over every row (cancelled after ``limit_s`` when > 0); the event-loop gaps
    meanwhile (the tick timer and the live edits keep running)."""
    words = corpus.words
    corpus.tabs.setCurrentWidget(words)  # as a user would look at it
    out: dict = {}
    words.finished.connect(lambda result: out.update(result=result))
    ticks.clear()
    t0 = time.perf_counter()
    if not words.start():
        return {"tokens_error": words.info_label.text()}
    if not run_until(app, lambda: "result" in out, limit_s if limit_s > 0 else None):
        words.cancel()
        run_until(app, lambda: "result" in out)
    wall = time.perf_counter() - t0
    r = out["result"]
    rate = r.n_explained / wall if wall > 0 else 0.0
    return {
        "tokens_reviews_explained": r.n_explained,
        "tokens_complete": r.complete,
        "tokens_wall_s": round(wall, 1),
        "tokens_reviews_per_s": round(rate, 1),
        "tokens_est_25000_s": round(25000 / rate, 0) if rate else None,
        "tokens_words": len(r),
        **gap_stats(ticks, "tokens_"),
    }


if __name__ == "__main__":
    sys.exit(main())
