"""GUI responsiveness while one huge review is analysed (prints numbers, asserts nothing).

``python -m benchmarks.long_review [--mb 1.0 | --words 5000] [--data ../shared/data/imdb/test.jsonl.gz] [--model DIR]``

Opens the real main window (offscreen when no display is set), pastes ``--mb`` megabytes of real IMDB test
reviews into the editor as one review, and records, with a 5 ms QTimer, how long the event loop goes without
turning until the analysis is shown and the explanation methods are done. Prints one JSON object: the time
the paste itself took in ``QPlainTextEdit.setPlainText`` (ms, Qt's own work), the largest and 99th-percentile
gap between timer ticks after the paste (ms; the target is < 100 ms), the prediction's token count and
whether it was truncated, how many windows it was read in (docs/long_documents.md), the seconds from the paste to
the displayed prediction, and to the prediction and the cheap explanations of the whole review, and the token view's
layout of the whole review at 700 pixels (ms, best of 3: measuring the pieces and wrapping, and a re-wrap alone).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.batch_cli import DEFAULT_DATA
from benchmarks.batch_gui import open_loaded_window, prepare
from model.files.textio import read_labelled


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; returns 0, 1 if the model did not load, or 2 when the data file is missing."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mb", type=float, default=1.0, help="size of the pasted review in megabytes (10^6 chars)")
    p.add_argument("--words", type=int, default=0, help="paste the first N words instead of --mb megabytes")
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help="IMDB test.jsonl.gz")
    p.add_argument("--model", type=Path, default=None, help="model folder (default: the bundled one)")
    args = p.parse_args(argv)
    if not prepare(args.data):
        return 2
    with tempfile.TemporaryDirectory(prefix="ae-bench-long-") as tmp:
        from desktop_app.window.settings import SETTINGS_ENV

        os.environ[SETTINGS_ENV] = str(Path(tmp) / "settings.ini")  # leave the user's settings alone
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    review = " ".join(read_labelled(args.data)[0])
    review = " ".join(review.split()[: args.words]) if args.words else review[: int(args.mb * 1_000_000)]
    app, window, panels = open_loaded_window(args.model)
    explain = panels["explain"]
    if window.predictor is None:
        print(json.dumps({"ok": False, "error": "the model did not load"}))
        return 1
    shown: list = []
    window.state.events.prediction.connect(lambda pred: shown.append(pred) if pred is not None else None)
    ticks: list[float] = []
    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start()
    t0 = time.perf_counter()
    window.editor.setPlainText(review)
    paste_ms = (time.perf_counter() - t0) * 1000
    ticks.clear()  # gaps from here on: the analysis, not Qt's paste
    first_s = None
    while (not shown or (explain is not None and explain.is_busy())) and time.perf_counter() - t0 < 300:
        app.processEvents()
        if shown and first_s is None:
            first_s = time.perf_counter() - t0
        time.sleep(0.001)
    shown_s = time.perf_counter() - t0
    timer.stop()
    gaps = sorted(b - a for a, b in itertools.pairwise(ticks))
    pred = shown[0] if shown else None
    print(json.dumps({
        "ok": pred is not None,
        "review_chars": len(review),
        "paste_ms": round(paste_ms, 1),
        "max_event_loop_gap_ms": round(gaps[-1] * 1000, 1) if gaps else None,
        "p99_event_loop_gap_ms": round(gaps[int(0.99 * (len(gaps) - 1))] * 1000, 1) if gaps else None,
        "num_tokens": pred.document.num_tokens if pred else None,
        "truncated": bool(pred.truncated) if pred else None,
        "source_word_pieces": int(pred.num_source_tokens) if pred else None,
        "num_windows": int(pred.num_windows) if pred else None,
        "review_words": len(review.split()),
        "paste_to_prediction_shown_s": round(first_s, 2) if first_s is not None else None,
        "paste_to_prediction_and_explanations_s": round(shown_s, 2),
        **(_layout_ms(pred) if pred is not None else {}),
        "platform": QApplication.platformName(),
    }))
    window.close()
    return 0


def _layout_ms(pred) -> dict:
    """The token view's layout of the whole review, best of 3 (ms): measured and wrapped, and re-wrapped alone."""
    from PySide6.QtGui import QFont, QFontMetricsF

    from desktop_app.views.token_layout import layout_tokens, piece_advances, token_pieces

    pieces, fm = token_pieces(pred.document), QFontMetricsF(QFont())
    advances = piece_advances(pieces, fm)
    out = {}
    for key, kept in (("token_layout_ms", None), ("token_rewrap_ms", advances)):
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            layout_tokens(pieces, fm, 700, kept)
            best = min(best, time.perf_counter() - t0)
        out[key] = round(best * 1000, 1)
    return out


if __name__ == "__main__":
    sys.exit(main())
