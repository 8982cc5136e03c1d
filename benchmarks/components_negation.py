"""Which components carry negation (issue 53, docs/components.md): What-if-style negation pairs from real reviews.

Usage::

    python -m benchmarks.components_negation [--data ../shared/data/imdb/test.jsonl.gz] [--model DIR] [--pairs 300]
                                             [--adjectives good,great,...] [--top 8]

From the test reviews, every sentence (split at ``.!?``, 4-40 words) that holds ``not`` directly before one of
:data:`ADJECTIVES` gives a pair: the sentence, and the sentence with that ``not`` deleted (the edit What if's
negation makes, reversed). Each side is split by ``Predictor.component_attribution`` for both logits of a two-class
model; the part of the margin (logit of the last class minus the first: positive minus negative for the bundled
model) is the difference of the two splits (exact: both are linear in the same frozen pass). Printed: the mean margin
of each side, and the parts whose mean change (negated minus plain) is largest, with the share of each head's change
read from the ``not`` token itself (its ``by_position`` column).
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys

import numpy as np

from model.predictor.predictor import Predictor

ADJECTIVES = ("good", "great", "bad", "funny", "interesting", "worth", "terrible", "boring", "scary", "impressed",
              "disappointed", "awful", "entertaining", "believable", "enjoyable")


def negation_pairs(path: str, limit: int, adjectives=ADJECTIVES) -> list[tuple[str, str]]:
    """Up to ``limit`` (negated sentence, the sentence without its ``not``) pairs, in file order."""
    pattern = re.compile(r"\bnot (" + "|".join(adjectives) + r")\b", re.IGNORECASE)
    out = []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            for sentence in re.split(r"(?<=[.!?])\s+", json.loads(line)["text"].replace("<br />", " ")):
                m = pattern.search(sentence)
                if m and 4 <= len(sentence.split()) <= 40:
                    out.append((sentence, sentence[:m.start()] + sentence[m.start() + 4:]))
                    if len(out) >= limit:
                        return out
    return out


def margin_parts(predictor: Predictor, text: str) -> tuple[np.ndarray, np.ndarray, tuple[str, ...], tuple[str, ...]]:
    """``(values [K], by_position [K, T], names, tokens)`` of the margin (last logit minus first)."""
    hi = predictor.component_attribution(text, target=len(predictor.labels) - 1)
    lo = predictor.component_attribution(text, target=0)
    return hi.values - lo.values, hi.by_position - lo.by_position, hi.names, hi.tokens


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="../shared/data/imdb/test.jsonl.gz")
    ap.add_argument("--model", default=None)
    ap.add_argument("--pairs", type=int, default=300)
    ap.add_argument("--top", type=int, default=8)
    ap.add_argument("--adjectives", help="comma-separated words after 'not' (default: ADJECTIVES)")
    args = ap.parse_args(argv)
    predictor = Predictor.from_pretrained(args.model, device="cpu")
    pairs = negation_pairs(args.data, args.pairs, args.adjectives.split(",") if args.adjectives else ADJECTIVES)
    deltas, from_not, margins = [], [], []
    for negated, plain in pairs:
        v_neg, pos_neg, names, tokens = margin_parts(predictor, negated)
        v_plain, _, _, _ = margin_parts(predictor, plain)
        deltas.append(v_neg - v_plain)
        margins.append((float(v_neg.sum()), float(v_plain.sum())))
        at = [i for i, t in enumerate(tokens) if t.lower().lstrip("\u0120\u2581#") == "not"]
        from_not.append(pos_neg[:, at].sum(-1) if at else np.zeros(len(names)))
    d, f, m = np.array(deltas), np.array(from_not), np.array(margins)
    flipped = float(np.mean(np.sign(m[:, 0]) != np.sign(m[:, 1])))
    print(f"{len(pairs)} pairs; mean margin negated {m[:, 0].mean():+.3f}, plain {m[:, 1].mean():+.3f}; "
          f"verdict flipped in {100 * flipped:.1f}% of pairs")
    print("part            mean change (negated - plain)   [95% interval]    read from 'not' (heads)")
    order = np.argsort(-np.abs(d.mean(0)))[: args.top]
    for k in order:
        half = 1.96 * d[:, k].std(ddof=1) / np.sqrt(len(d))
        note = f"{f[:, k].mean():+.3f}" if names[k].split(".")[-1].startswith("H") else ""
        print(f"{names[k]:<15} {d[:, k].mean():+8.3f}                       [{d[:, k].mean() - half:+.3f}, "
              f"{d[:, k].mean() + half:+.3f}]   {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
