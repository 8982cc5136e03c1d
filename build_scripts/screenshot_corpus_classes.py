"""Screenshot of the Batch table and the Corpus dock for a 28-class model (issue 30): the GoEmotions labels.

Run under a virtual X server::

    xvfb-run -a -s "-screen 0 1600x1000x24" python build_scripts/screenshot_corpus_classes.py [--n 2000]

The texts and their gold labels are GoEmotions test comments with exactly one label
(``../shared/data/goemotions/test.jsonl.gz``, Demszky et al. 2020); the predictions are NOT a model's: they are
drawn at random (right 55 % of the time, else a class near the gold one, Dirichlet probabilities with the predicted
class on top), so the picture shows what the dock draws for 28 classes, not how well any model does. The batch
panel and the corpus dock are the app's own widgets (``BatchPanel``, ``CorpusPanel``) side by side at 1600 x 900;
the script clicks one confusion-matrix cell (the table then shows exactly its rows) and saves
``docs/screenshots/corpus_classes.png``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "data" / "goemotions"


def simulated_rows(n: int, seed: int = 0):
    """``n`` rows of GoEmotions test texts with their one gold label and a random prediction (module docstring)."""
    from model.batch import ResultRow

    labels = tuple((DATA / "labels.txt").read_text().split())
    rng = np.random.default_rng(seed)
    rows = []
    with gzip.open(DATA / "test.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            if len(d["labels"]) != 1:
                continue
            gold = labels.index(d["labels"][0])
            pred = gold if rng.random() < 0.55 else int(np.clip(gold + rng.integers(-3, 4), 0, len(labels) - 1))
            probs = np.sort(rng.dirichlet(np.full(len(labels), 0.3)))[::-1]
            order = np.concatenate([[pred], rng.permutation([k for k in range(len(labels)) if k != pred])])
            p = np.empty(len(labels))
            p[order] = probs
            rows.append(ResultRow(f"goemotions/test.jsonl:line {len(rows) + 1}", d["text"], labels[pred],
                                  tuple(float(x) for x in p), 24, False, labels[gold], pred == gold, "ok",
                                  labels=labels))
            if len(rows) >= n:
                break
    return labels, rows


class _Model:
    """What the panels read of a predictor: labels, task, reads_pairs, model_dir (none: no folder)."""

    def __init__(self, labels):
        from model.tasks.task import Task

        self.labels, self.task, self.reads_pairs = labels, Task("single_label"), False
        self.model_dir = None  # model.batch.engine.model_id names it ""


def main(argv: list[str] | None = None) -> int:
    """Draw, click a cell, save the PNG; returns 0."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=2000)
    p.add_argument("--out", default=str(ROOT / "docs" / "screenshots" / "corpus_classes.png"))
    args = p.parse_args(argv)
    from PySide6.QtWidgets import QApplication, QSplitter

    from desktop_app.panels.batch.panel import BatchPanel
    from desktop_app.panels.corpus.panel import CorpusPanel

    app = QApplication.instance() or QApplication([])
    labels, rows = simulated_rows(args.n)
    batch = BatchPanel()
    corpus = CorpusPanel(batch, throttle_ms=50)
    split = QSplitter()
    split.addWidget(batch)
    split.addWidget(corpus)
    split.resize(1600, 900)
    split.setSizes([640, 960])
    split.show()
    batch.set_predictor(_Model(labels))
    corpus.words.set_predictor(_Model(labels))
    batch.table_model.append_rows(rows)
    t0 = time.monotonic()
    while (corpus.metrics is None or corpus.metrics.n_rows != len(rows)) and time.monotonic() - t0 < 60:
        app.processEvents()
        time.sleep(0.01)
    gold, pred = labels.index("anger"), labels.index("annoyance")
    corpus.confusion.cell_clicked.emit(gold, pred)  # what a click on the cell does
    t0 = time.monotonic()
    while time.monotonic() - t0 < 2.0:
        app.processEvents()
        time.sleep(0.02)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    split.grab().save(args.out)
    m = corpus.metrics
    print(f"{len(rows)} rows, {len(labels)} classes, accuracy {m.accuracy:.3f}, macro-F1 {m.macro_f1:.3f}, "
          f"table rows shown {batch.proxy.rowCount()}", flush=True)
    corpus.shutdown()
    batch.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
