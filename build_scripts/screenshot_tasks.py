"""Screenshots of the task types in the app (issue 30; README, docs/task_types.md), from the real window.

Run under a virtual X server, with the model folders to show::

    xvfb-run -a -s "-screen 0 1600x1000x24" python build_scripts/screenshot_tasks.py \\
        --multi /work/models/goemotions --pair /work/models/mrpc --regression /work/models/stsb [--out DIR]

Each folder is opened as a user would (fresh settings, the default 1400 x 860 layout, the Explanations panel
attached) and one window is saved:

* ``task_multilabel.png`` (``--multi``, e.g. a GoEmotions model: 28 labels): a sentence, the labels' sigmoids
  against the threshold line (set to :data:`MULTI_THRESHOLD` in the spin box) in the prediction panel, every label
  shown ("Show all 28"; the Batch scoring and Corpus docks closed to make room);
* ``task_pair.png`` (``--pair``, e.g. an MRPC paraphrase classifier): the second text box on, a sentence pair, the
  token view's second-text band, the attention links raised showing A -> B; the Batch scoring dock has scored
  :data:`BATCH_ROWS` pairs of ``--pair-data`` (default MRPC test) with their gold labels, so the table shows the
  model's class columns and the Corpus dock its 2 x 2 confusion matrix and per-class scores;
* ``task_regression.png`` (``--regression``, e.g. an STS-B model): a pair, the predicted similarity and its value
  by layer; :data:`BATCH_ROWS` pairs of ``--regression-data`` (default STS-B test) scored: the Value column, the
  predicted-vs-gold scatter.

Any of the three may be left out. Each step waits for the worker's result; nothing is drawn from a stale one.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "build_scripts"))

from screenshot_flow import settle, start  # noqa: E402 - after the path set-up

MULTI_TEXT = "Thank you so much for this, I love it! I was really nervous it would not arrive in time."
MULTI_THRESHOLD = 0.3  # the threshold the multi-label shot uses (the spin box; the default is 0.5)
PAIR = ("The company said its profit rose 10 percent in the third quarter.",
        "Third-quarter profit climbed 10 percent, the company said.")
STS_PAIR = ("A man is playing a guitar on stage.", "A man plays the guitar.")
DATA = Path(os.environ.get("AE_SHARED_DATA", ROOT.parent / "shared" / "data"))
BATCH_ROWS = 40  # rows of the test file scored in the Batch scoring dock


def batch_file(source: str | None, name: str) -> Path | None:
    """The first :data:`BATCH_ROWS` rows of the JSON Lines file ``source`` (.jsonl or .jsonl.gz; fields ``text``,
    ``text_pair``, ``label``) written to a temporary ``name``; None when ``source`` is None or missing."""
    import gzip
    import itertools

    if not source or not Path(source).is_file():
        return None
    opener = gzip.open if source.endswith(".gz") else open
    with opener(source, "rt", encoding="utf-8") as f:
        lines = list(itertools.islice(f, BATCH_ROWS))
    out = Path(tempfile.mkdtemp(prefix="ae-task-batch-")) / name
    out.write_text("".join(lines), encoding="utf-8")
    return out


def score_batch(app, win, path: Path | None) -> None:
    """Score ``path`` in the window's Batch scoring dock and wait for the rows and the Corpus dock's metrics."""
    from screenshots import wait_until

    from desktop_app.panels.batch.panel import BatchPanel
    from desktop_app.panels.corpus.panel import CorpusPanel

    if path is None:
        return
    batch, corpus = win.findChild(BatchPanel), win.findChild(CorpusPanel)
    batch.add_paths([str(path)])
    if not wait_until(app, lambda: not batch.is_running() and len(batch.rows()) >= BATCH_ROWS
                      and corpus.metrics is not None and corpus.metrics.n_rows == len(batch.rows()), 300):
        raise SystemExit(f"{path} was not scored")


def analyse(app, win, text: str, pair: str | None = None) -> None:
    """Put ``text`` (and ``pair`` in the second text box, switched on) in the editor, analyse, wait for the
    prediction and its prediction by layer."""
    from screenshots import wait_until

    if pair is not None:
        win.review_box.set_text_pair(pair)
    win.analyze_text(text)
    ok = wait_until(app, lambda: win.state.prediction is not None and win.state.prediction.text == text
                    and win.state.prediction.text_pair == pair, 120)
    if not ok:
        raise SystemExit(f"no prediction for {text!r}")
    wait_until(app, lambda: win.state.layer_probabilities is not None, 60)
    settle(app, 1.0)


def multi_shot(app, out: Path, folder: str) -> None:
    """task_multilabel.png."""
    from PySide6.QtCore import Qt

    from PySide6.QtWidgets import QDockWidget

    win = start(app, folder)
    win.prediction_panel.bars_box.set_show_all(True)
    win.prediction_panel.bars_box.threshold_box.setValue(MULTI_THRESHOLD)
    analyse(app, win, MULTI_TEXT)
    for dock in win.findChildren(QDockWidget):  # room for the 28 bars: the bottom docks closed
        if dock.windowTitle() in ("Batch scoring", "Corpus"):
            dock.hide()
    settle(app, 0.3)
    win.resizeDocks([win.review_dock, win.prediction_dock], [120, 900], Qt.Vertical)
    settle(app, 0.5)
    win.grab().save(str(out / "task_multilabel.png"))
    win.close()


def pair_shot(app, out: Path, folder: str, texts=PAIR, name: str = "task_pair.png", links: bool = True,
              batch: Path | None = None) -> None:
    """task_pair.png (the links raised, A -> B, last layer) or, with ``links`` False, the heatmap raised; ``batch``:
    a file scored in the Batch scoring dock first."""
    from desktop_app.views.pair_marks import A_TO_B

    win = start(app, folder)
    score_batch(app, win, batch)
    analyse(app, win, *texts)
    if links:
        win.links_dock.raise_()
        win.links_view.pair_filter.set_choice(A_TO_B)
        win.state.set_layer_head(win.state.n_layers - 1, -1)
    else:
        win.heatmap_dock.raise_()
    settle(app, 1.0)
    win.grab().save(str(out / name))
    win.close()


def regression_shot(app, out: Path, folder: str, batch: Path | None = None) -> None:
    """task_regression.png."""
    pair_shot(app, out, folder, STS_PAIR, "task_regression.png", links=False, batch=batch)


def main(argv: list[str] | None = None) -> int:
    """Take the screenshots (module docstring); returns 0."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--multi", help="a multi-label classifier folder (task_multilabel.png)")
    p.add_argument("--pair", help="a sentence-pair classifier folder (task_pair.png)")
    p.add_argument("--regression", help="a sentence-pair regression folder (task_regression.png)")
    p.add_argument("--pair-data", default=str(DATA / "mrpc" / "test.jsonl.gz"),
                   help="JSON Lines pairs with gold labels scored in the pair shot ('' for none)")
    p.add_argument("--regression-data", default=str(DATA / "stsb" / "test.jsonl.gz"),
                   help="JSON Lines pairs with gold scores scored in the regression shot ('' for none)")
    p.add_argument("--out", default=str(ROOT / "docs" / "screenshots"))
    args = p.parse_args(argv)
    os.environ["ATTENTION_EXPLORER_SETTINGS"] = str(Path(tempfile.mkdtemp(prefix="ae-task-shot-")) / "s.ini")
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.multi:
        multi_shot(app, out, args.multi)
    if args.pair:
        pair_shot(app, out, args.pair, batch=batch_file(args.pair_data, "mrpc_test_40.jsonl"))
    if args.regression:
        regression_shot(app, out, args.regression, batch=batch_file(args.regression_data, "stsb_test_40.jsonl"))
    print(f"screenshots in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
