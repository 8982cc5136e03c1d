"""The choice of the long-text windows' stride and aggregation, on the validation split carved from IMDB train.

Usage::

    python -m model.evaluation.windows --data ../shared/data/imdb [--model DIR] [--strides 64,128,256,384,511]

The validation split is the training pipeline's (:func:`model.training.common.validation_split`: 1,250 reviews of
the official train split, seed 0, never trained on). Texts that fit in one window get the same result under every
variant, so only the long ones (more pieces than a window holds) are scored: each stride's windows once, every
aggregation (:func:`model.windows.aggregate`) on the same window logits, beside today's head+tail cut. Prints one
JSON line per variant: stride, aggregation, accuracy on the long validation reviews and on all 1,250, windows read.
Never reads the test split.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from ..long_text import forward_logits, window_inputs
from ..windows import aggregate

AGGREGATIONS = ("mean", "weighted", "fresh", "mean_prob", "max_margin", "ends", "ends_half")
WITH_HEAD_TAIL = "mean+head_tail"  # the windows' mean logits and the head+tail cut's log-probabilities, averaged


def variants(predictor, texts: list[str], labels: np.ndarray, strides: list[int]) -> list[dict]:
    """Accuracy of head+tail and of every (stride, aggregation) on ``texts`` (the long validation reviews).

    Returns:
        one dict per variant: ``policy``, ``stride``, ``aggregation``, ``correct``, ``count``, ``windows``.
    """
    positive = predictor.labels.index("positive") if "positive" in predictor.labels else 1
    y = np.where(labels == 1, positive, 1 - positive)
    cut = predictor.score_many(texts, long_text="head_tail")
    rows = [{"policy": "head_tail", "stride": None, "aggregation": None, "windows": len(texts),
             "correct": int(sum(int(np.argmax(s.probabilities)) == t for s, t in zip(cut, y, strict=True)))}]
    whole = predictor.encoder.encode_ids_batch(texts, whole=True)
    for stride in strides:
        per_text = [window_inputs(predictor.encoder, ids, stride, head_tail=False) for ids, _ in whole]
        flat = [x for inputs, _ in per_text for x in inputs]
        logits = forward_logits(predictor, flat).numpy()
        bounds = np.cumsum([0] + [len(inputs) for inputs, _ in per_text])
        for rule in AGGREGATIONS:
            pred = [int(np.argmax(aggregate(logits[bounds[k] : bounds[k + 1]], ranges, rule)))
                    for k, (_, ranges) in enumerate(per_text)]
            rows.append({"policy": "windows", "stride": stride, "aggregation": rule, "windows": len(flat),
                         "correct": int(sum(p == t for p, t in zip(pred, y, strict=True)))})
        both = [int(np.argmax(aggregate(logits[bounds[k] : bounds[k + 1]], ranges, "mean")
                              + np.log(np.maximum(cut[k].probabilities, 1e-12))))
                for k, (_, ranges) in enumerate(per_text)]
        rows.append({"policy": "windows", "stride": stride, "aggregation": WITH_HEAD_TAIL, "windows": len(flat) + len(texts),
                     "correct": int(sum(p == t for p, t in zip(both, y, strict=True)))})
    return rows


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns the exit code (0 ok, 2 usage or data error)."""
    from ..predictor import Predictor
    from ..training.common import read_split, validation_split

    p = argparse.ArgumentParser(prog="python -m model.evaluation.windows", description=__doc__.split("\n\n")[0])
    p.add_argument("--data", required=True, help="the folder holding train.jsonl.gz")
    p.add_argument("--model", default=None)
    p.add_argument("--device", default="cpu")
    p.add_argument("--strides", default="64,128,256,384,511")
    args = p.parse_args(argv)
    try:
        predictor = Predictor.from_pretrained(args.model, args.device)
        texts, labels = read_split(args.data, "train")
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    val_idx, _ = validation_split(len(texts))
    val = [texts[i] for i in val_idx]
    cut = [s.truncated for s in predictor.score_many(val, long_text="head_tail")]
    long_idx = [i for i, c in zip(val_idx, cut, strict=True) if c]
    base = predictor.score_many(val, long_text="head_tail")
    y = labels[val_idx]
    positive = predictor.labels.index("positive") if "positive" in predictor.labels else 1
    short_correct = int(sum(int(np.argmax(s.probabilities)) == (positive if t == 1 else 1 - positive)
                            for s, t, c in zip(base, y, cut, strict=True)
                            if not c))
    rows = variants(predictor, [texts[i] for i in long_idx], labels[long_idx], [int(s) for s in args.strides.split(",")])
    for r in rows:
        r.update(long_count=len(long_idx), long_accuracy=r["correct"] / len(long_idx), count=len(val),
                 accuracy=(r["correct"] + short_correct) / len(val))
        print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
