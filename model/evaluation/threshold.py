"""A multi-label model's decision threshold chosen on the dev split, then reported on test (test chooses nothing).

Usage::

    python -m model.evaluation.threshold --model /work/models/goemotions --data ../shared/data/goemotions

``--data`` is a folder with ``dev`` and ``test`` splits (``.jsonl.gz``, ``.jsonl.xz``, ``.jsonl``, ``.csv``, ``.tsv``:
:mod:`model.datasets.task_data`) whose rows hold ``text`` (and ``text_pair`` for pairs) and ``labels`` (a list of the
model's label names or ids, or a ``;``-separated string). Every split is scored once (``Predictor.score_many``,
the sigmoids); the one global threshold in 0.05..0.50 (steps of 0.05) with the best dev macro-F1 is applied to
test. Prints one JSON object: dev macro- and micro-F1 per threshold, the chosen threshold, test macro/micro-F1 at
it and at 0.5 (scikit-learn ``f1_score``, ``zero_division=0``). Demszky et al. (2020) tune thresholds on dev too.

Raises SystemExit(2) with a message for a missing split or a label the model does not know.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from sklearn.metrics import f1_score

from model.datasets.splits import UsageError
from model.datasets.task_data import read_task_split, targets
from model.predictor.predictor import Predictor

THRESHOLDS = tuple(round(0.05 * k, 2) for k in range(1, 11))


def read_split(data: Path, name: str, labels: tuple[str, ...]) -> tuple[list[str], list[str | None], np.ndarray]:
    """(texts, second texts or None, gold int [N, C] 0/1) of split ``name`` of the folder ``data``, read as the
    training pipeline reads a task's split (:func:`model.datasets.task_data.read_task_split`; the gold labels as
    batch scoring reads them, :class:`model.batch.gold.GoldReader`: names, case-insensitive, or ids).

    Raises:
        FileNotFoundError: a missing split.
        UsageError: (:class:`model.datasets.splits.UsageError`) a missing column or a gold label the model does not
            know (the message names the row).
    """
    split = read_task_split(data, name, ("text", "", "labels"))
    gold = targets("multi_label", split.gold, labels).astype(np.int64)
    return split.texts, split.pairs or [None] * len(split.texts), gold


def sigmoids(predictor: Predictor, texts: list[str], pairs: list[str | None]) -> np.ndarray:
    """float32 [N, C], the model's sigmoid per label (``Score.probabilities``)."""
    scores = predictor.score_many(texts, text_pairs=pairs if any(p is not None for p in pairs) else None)
    return np.stack([s.probabilities for s in scores])


def choose(dev_p: np.ndarray, dev_y: np.ndarray, test_p: np.ndarray, test_y: np.ndarray) -> dict:
    """The threshold of :data:`THRESHOLDS` with the best dev macro-F1 and the test scores it gives."""
    def f1(y, p, t, avg):
        return float(f1_score(y, p >= t, average=avg, zero_division=0))

    dev = {t: {"macro_f1": f1(dev_y, dev_p, t, "macro"), "micro_f1": f1(dev_y, dev_p, t, "micro")} for t in THRESHOLDS}
    best = max(THRESHOLDS, key=lambda t: dev[t]["macro_f1"])
    return {"dev_by_threshold": dev, "chosen_on_dev": best,
            "test_macro_f1": f1(test_y, test_p, best, "macro"), "test_micro_f1": f1(test_y, test_p, best, "micro"),
            "test_macro_f1_at_0.5": f1(test_y, test_p, 0.5, "macro"),
            "test_micro_f1_at_0.5": f1(test_y, test_p, 0.5, "micro")}


def main(argv: list[str] | None = None) -> int:
    """The command line; returns 0, or 2 for bad input (with a message on stderr)."""
    ap = argparse.ArgumentParser(prog="python -m model.evaluation.threshold", description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True, help="a multi-label model folder")
    ap.add_argument("--data", required=True, help="folder with the dev and test splits (e.g. dev.jsonl.gz)")
    args = ap.parse_args(argv)
    predictor = Predictor.from_pretrained(args.model, device="cpu")
    if predictor.task.kind != "multi_label":
        print(f"{args.model} is a {predictor.task.kind} model; this chooses a multi-label threshold", file=sys.stderr)
        return 2
    try:
        splits = {s: read_split(Path(args.data), s, predictor.labels) for s in ("dev", "test")}
    except (OSError, ValueError, KeyError, UsageError) as exc:
        print(f"cannot read the data: {exc}", file=sys.stderr)
        return 2
    probs = {s: sigmoids(predictor, t, p) for s, (t, p, _) in splits.items()}
    print(json.dumps(choose(probs["dev"], splits["dev"][2], probs["test"], splits["test"][2]), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
