"""Time :func:`model.corpus.corpus_metrics` on 25,000 hand-made rows of each task (issue 30): the bundled
negative/positive model, a 28-class single-label model, a 28-label multi-label model and a regression model.

    python -m benchmarks.corpus_metrics_tasks [--n 25000] [--repeat 7]

Prints one JSON line: the median milliseconds per task. The corpus dock recomputes the metrics at most twice a
second while rows arrive (``desktop_app/panels/corpus/panel.py``), on a worker thread.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from model.batch import ResultRow
from model.corpus import corpus_metrics
from model.batch.rows import binary_row

LABELS = tuple(f"class_{k}" for k in range(28))


def make_rows(task: str, n: int, seed: int = 0) -> list[ResultRow]:
    """``n`` scored rows of ``task`` ("binary", "single_label", "multi_label", "regression"), two thirds with gold."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        has_gold = i % 3 != 2
        if task == "binary":
            p = float(rng.random())
            label = "positive" if p >= 0.5 else "negative"
            gold = ("negative", "positive")[i % 2] if has_gold else ""
            out.append(binary_row(f"r{i}", "t", label, p, 100, False, gold, (label == gold) if gold else None, "ok"))
        elif task == "regression":
            v = float(rng.uniform(0, 5))
            out.append(ResultRow(f"r{i}", "t", "", (), 100, False, repr(v + 0.3) if has_gold else "", None, "ok",
                                 value=v, task="regression"))
        else:
            p = rng.random(len(LABELS)) if task == "multi_label" else rng.dirichlet(np.ones(len(LABELS)))
            label = (";".join(n for n, q in zip(LABELS, p) if q >= 0.5) if task == "multi_label"
                     else LABELS[int(p.argmax())])
            gold = LABELS[int(rng.integers(len(LABELS)))] if has_gold else ""
            out.append(ResultRow(f"r{i}", "t", label, tuple(float(q) for q in p), 100, False, gold,
                                 (label == gold) if gold else None, "ok", labels=LABELS, task=task))
    return out


def main() -> None:
    """Print the median time of ``corpus_metrics`` per task (JSON)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=25000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    result = {"rows": args.n}
    for task in ("binary", "single_label", "multi_label", "regression"):
        rows = make_rows(task, args.n)
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            corpus_metrics(rows)
            times.append(time.perf_counter() - t0)
        result[f"{task}_ms"] = round(1000 * float(np.median(times)), 1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
