"""Accuracy of a model folder on a labelled ``.jsonl(.gz)`` file.

Usage::

    python -m model.evaluation.accuracy --data ../shared/data/imdb/test.jsonl.gz [--model DIR]

Prints one JSON line: accuracy, f1 (positive class), count, reviews_per_s,
elapsed_s, model_dir, device.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from model.predictor.predictor import Predictor
from model.files.textio import read_labelled


def evaluate(predictor: Predictor, texts: list[str], labels: np.ndarray, batch_size: int = 64,
             long_text: str | None = None) -> dict:
    """Accuracy and positive-class F1 of ``predictor`` on ``texts``.

    Args:
        long_text: the long-text policy (``"windows"``, the default, or ``"head_tail"``; :mod:`model.text.document_windows`).

    Returns:
        dict with accuracy, f1, count, reviews_per_s, elapsed_s (seconds of
        ``score_many``, tokenisation included), and over the long texts (more tokens than the model's maximum
        length): long_count, long_accuracy, windows (windows read in all).
    """
    positive = predictor.labels.index("positive") if "positive" in predictor.labels else 1
    t0 = time.perf_counter()
    scores = predictor.score_many(texts, batch_size=batch_size, long_text=long_text)
    elapsed = time.perf_counter() - t0
    pred = np.array([int(np.argmax(s.probabilities)) if s.ok else -1 for s in scores])
    y = (labels == 1).astype(np.int64) * positive + (labels == 0).astype(np.int64) * (1 - positive)
    tp = int(((pred == positive) & (y == positive)).sum())
    fp = int(((pred == positive) & (y != positive)).sum())
    fn = int(((pred != positive) & (y == positive)).sum())
    long = np.array([s.truncated or s.num_windows > 1 for s in scores], dtype=bool)
    return {
        "long_count": int(long.sum()),
        "long_accuracy": float((pred == y)[long].mean()) if long.any() else None,
        "windows": int(sum(s.num_windows for s in scores)),
        "accuracy": float((pred == y).mean()),
        "f1": 0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn),
        "count": len(texts),
        "reviews_per_s": len(texts) / elapsed,
        "elapsed_s": elapsed,
    }


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns the exit code (0 ok, 1 error, 2 usage)."""
    p = argparse.ArgumentParser(prog="python -m model.evaluation.accuracy",
                                description="Evaluate the classifier on a labelled jsonl(.gz) file.")
    p.add_argument("--data", required=True)
    p.add_argument("--model", default=None, help="model folder (default: bundled resources/model)")
    p.add_argument("--device", default=None)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--limit", type=int, default=0, help="evaluate on the first N rows only")
    p.add_argument("--long-text", choices=("windows", "head_tail"), default="windows",
                   help="read texts longer than the model's maximum length in side-by-side windows (default) or cut "
                        "them to their head and tail")
    args = p.parse_args(argv)
    try:
        predictor = Predictor.from_pretrained(args.model, args.device)
        texts, labels = read_labelled(args.data)
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.limit:
        texts, labels = texts[: args.limit], labels[: args.limit]
    result = evaluate(predictor, texts, labels, args.batch_size, args.long_text)
    result.update(model_dir=str(predictor.model_dir), device=str(predictor.device), data=str(args.data),
                  long_text=args.long_text)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
