"""The choice of the long-text windows and their aggregation, on the validation split carved from IMDB train.

Usage::

    python -m model.evaluation.window_variants --data ../shared/data/imdb [--model DIR] [--strides 64,128,256,384,511]

The validation split is the training pipeline's (:func:`model.datasets.splits.validation_split`: 1,250 reviews of
the official train split, seed 0, never trained on). Texts that fit in one window get the same result under every
variant, so only the long ones (more pieces than a window holds) are scored. Variants (docs/long_documents.md):

* ``stride``: overlapping windows of the full budget, each stride, every rule of :data:`RULES`, and the mean of
  the windows averaged with the head+tail cut (``mean+head_tail``, the default of issue 31's first version);
* ``partition``: the product's windows (side by side, nearly equal, each piece once), weighted and with the cut;
* ``head_tail+middle``: the head+tail cut plus the middle it drops, read in side-by-side windows, the views' logits
  weighted by the pieces each reads (every piece once, the cut kept whole).

Prints one JSON line per variant: policy, stride, aggregation, accuracy on the long validation reviews and on all
1,250, and the pieces read (the cost: each model input's pieces, specials excluded). Never reads the test split.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from model.core.tokenizer import head_tail_keep
from model.text.document_windows import window_inputs
from model.text.document_windows import aggregate, window_ranges


def _weights(ranges: np.ndarray, rule: str) -> np.ndarray:
    """Window weights of the mean rules: ``mean`` equal, ``weighted`` by pieces, ``fresh`` by pieces the window
    before did not read, ``ends`` the first and last windows, ``ends_half`` those 1 and the others 0.5."""
    lengths = (ranges[:, 1] - ranges[:, 0]).astype(np.float64)
    if rule == "mean":
        w = np.ones_like(lengths)
    elif rule == "weighted":
        w = np.maximum(lengths, 1.0)
    elif rule == "fresh":
        seen = np.concatenate([[ranges[0, 0]], ranges[:-1, 1]])
        w = np.maximum(ranges[:, 1] - np.maximum(ranges[:, 0], seen), 1).astype(np.float64)
    else:
        w = np.full(len(lengths), 0.0 if rule == "ends" else 0.5)
        w[[0, -1]] = 1.0
    return w / w.sum()


def combine(z: np.ndarray, ranges: np.ndarray, rule: str) -> np.ndarray:
    """float64 [C]: one rule of :data:`RULES` over window logits ``z`` [W, C]."""
    z = z.astype(np.float64)
    if rule == "mean_prob":  # log of the mean softmax
        p = np.exp(z - z.max(1, keepdims=True))
        return np.log((p / p.sum(1, keepdims=True)).mean(0))
    if rule == "max_margin":  # the window most sure of its class
        top2 = np.sort(z, axis=1)[:, -2:]
        return z[int(np.argmax(top2[:, -1] - top2[:, 0]))]
    return _weights(ranges, rule) @ z


RULES = ("mean", "weighted", "fresh", "mean_prob", "max_margin", "ends", "ends_half")


def _middle_inputs(ids: np.ndarray, encoder) -> tuple[list[np.ndarray], np.ndarray]:
    """The ``head_tail+middle`` views of one whole encoding: the pieces the head+tail cut drops, in side-by-side
    windows (specials added), and their piece counts."""
    P, S = encoder.specials
    pieces, budget = ids[P : len(ids) - S], encoder.max_len - P - S
    kept = head_tail_keep(len(pieces), budget)
    head = int(np.argmax(np.diff(kept) > 1)) + 1  # pieces kept before the gap
    lo, hi = int(kept[head - 1]) + 1, int(kept[head])
    r = window_ranges(hi - lo, budget) + lo
    return [np.concatenate([ids[:P], pieces[s:e], ids[len(ids) - S :]]) for s, e in r], (r[:, 1] - r[:, 0])


def _accuracy(pred: list[int], y: np.ndarray) -> int:
    return int(sum(p == t for p, t in zip(pred, y, strict=True)))


def variants(predictor, texts: list[str], labels: np.ndarray, strides: list[int]) -> list[dict]:
    """Accuracy of head+tail and of every variant on ``texts`` (the long validation reviews).

    Returns:
        one dict per variant: ``policy``, ``stride``, ``aggregation``, ``correct``, ``pieces`` (read, specials
        excluded).
    """
    positive = predictor.labels.index("positive") if "positive" in predictor.labels else 1
    y = np.where(labels == 1, positive, 1 - positive)
    P, S = predictor.encoder.specials
    budget = predictor.encoder.max_len - P - S
    whole = predictor.encoder.encode_ids_batch(texts, whole=True)
    cut = predictor.window_logits([ids for ids, _ in predictor.encoder.encode_ids_batch(texts)]).numpy()
    cut = cut.astype(np.float64)  # [N, C] the head+tail cut's logits
    rows = [{"policy": "head_tail", "stride": None, "aggregation": None, "pieces": budget * len(texts),
             "correct": _accuracy(list(cut.argmax(1)), y)}]
    for stride in [*strides, None]:
        per_text = [window_inputs(predictor.encoder, ids, stride) for ids, _ in whole]
        flat = [x for inputs, _ in per_text for x in inputs]
        z = predictor.window_logits(flat).numpy()
        bounds = np.cumsum([0] + [len(inputs) for inputs, _ in per_text])
        pieces = sum(len(x) - P - S for x in flat)
        zs = [(z[bounds[k] : bounds[k + 1]], r) for k, (_, r) in enumerate(per_text)]
        policy = "stride" if stride else "partition"
        for rule in RULES if stride else ("weighted",):
            pred = [int(np.argmax(combine(zk, r, rule))) for zk, r in zs]
            rows.append({"policy": policy, "stride": stride, "aggregation": rule, "pieces": pieces,
                         "correct": _accuracy(pred, y)})
        both = [int(np.argmax(combine(zk, r, "mean" if stride else "weighted") + cut[k]))
                for k, (zk, r) in enumerate(zs)]
        rows.append({"policy": policy, "stride": stride, "aggregation": "mean+head_tail",
                     "pieces": pieces + budget * len(texts), "correct": _accuracy(both, y)})
    middles = [_middle_inputs(ids, predictor.encoder) for ids, _ in whole]
    z = predictor.window_logits([x for inputs, _ in middles for x in inputs]).numpy().astype(np.float64)
    bounds = np.cumsum([0] + [len(inputs) for inputs, _ in middles])
    pred = [int(np.argmax((budget * cut[k] + n @ z[bounds[k] : bounds[k + 1]]) / (budget + n.sum())))
            for k, (_, n) in enumerate(middles)]
    rows.append({"policy": "head_tail+middle", "stride": None, "aggregation": "weighted", "correct": _accuracy(pred, y),
                 "pieces": int(budget * len(texts) + sum(n.sum() for _, n in middles))})
    assert np.allclose([aggregate(zk, r) for zk, r in zs], [combine(zk, r, "weighted") for zk, r in zs], atol=1e-5)
    return rows


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns the exit code (0 ok, 2 usage or data error)."""
    from model.datasets.splits import read_split, validation_split
    from model.predictor.predictor import Predictor

    p = argparse.ArgumentParser(prog="python -m model.evaluation.window_variants", description=__doc__.split("\n\n")[0])
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
    base = predictor.score_many(val, long_text="head_tail")
    long_idx = [i for i, s in zip(val_idx, base, strict=True) if s.truncated]
    positive = predictor.labels.index("positive") if "positive" in predictor.labels else 1
    short_correct = int(sum(int(np.argmax(s.probabilities)) == (positive if t == 1 else 1 - positive)
                            for s, t in zip(base, labels[val_idx], strict=True) if not s.truncated))
    rows = variants(predictor, [texts[i] for i in long_idx], labels[long_idx], [int(s) for s in args.strides.split(",")])
    for r in rows:
        r.update(long_count=len(long_idx), long_accuracy=r["correct"] / len(long_idx), count=len(val),
                 accuracy=(r["correct"] + short_correct) / len(val))
        print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
