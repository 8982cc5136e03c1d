"""Speed and memory benchmark of the bundled model. Prints JSON; asserts nothing.

Usage::

    python -m benchmarks.predict [--model DIR] [--data ../shared/data/imdb/test.jsonl.gz] [--n 2000]

Reports:
- ``score_many_reviews_per_s``: batch throughput of ``Predictor.score_many`` on
  ``--n`` IMDB test reviews (a seeded sample; tokenisation included);
- ``predict_p50_ms`` / ``predict_p95_ms``: latency of ``Predictor.predict``
  (attention for every layer and head returned) on a review of about 250
  tokens, over ``--repeats`` calls after warm-up;
- ``peak_rss_mb``: the process's peak resident set size (MiB).
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import sys
import time

import numpy as np
import torch

from model.predictor.predictor import Predictor
from model.files.textio import read_labelled


def review_of_about(predictor: Predictor, texts: list[str], n_tokens: int) -> str:
    """The first text whose encoding is within 10% of ``n_tokens`` tokens (else the closest one)."""
    best, best_gap = texts[0], float("inf")
    for t in texts[:2000]:
        gap = abs(len(predictor.encode(t).ids) - n_tokens)
        if gap <= n_tokens * 0.1:
            return t
        if gap < best_gap:
            best, best_gap = t, gap
    return best


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; prints one JSON object and returns 0."""
    p = argparse.ArgumentParser(description="Benchmark score_many throughput and predict latency.")
    p.add_argument("--model", default=None)
    p.add_argument("--device", default=None)
    p.add_argument("--data", default="../shared/data/imdb/test.jsonl.gz")
    p.add_argument("--n", type=int, default=2000)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--repeats", type=int, default=50)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    predictor = Predictor.from_pretrained(args.model, args.device)
    texts, _ = read_labelled(args.data)
    sel = np.random.default_rng(args.seed).permutation(len(texts))[: args.n]
    sample = [texts[i] for i in sel]

    predictor.score_many(sample[:64], batch_size=args.batch_size)  # warm-up
    t0 = time.perf_counter()
    scores = predictor.score_many(sample, batch_size=args.batch_size)
    batch_s = time.perf_counter() - t0

    review = review_of_about(predictor, sample, 250)
    for _ in range(5):
        predictor.predict(review)
    lat = []
    for _ in range(args.repeats):
        t = time.perf_counter()
        pred = predictor.predict(review)
        lat.append(time.perf_counter() - t)
    lat_ms = np.array(lat) * 1000

    result = {
        "score_many_reviews_per_s": len(sample) / batch_s,
        "score_many_reviews": len(sample),
        "score_many_mean_tokens": float(np.mean([s.num_tokens for s in scores])),
        "predict_tokens": pred.num_tokens,
        "predict_p50_ms": float(np.percentile(lat_ms, 50)),
        "predict_p95_ms": float(np.percentile(lat_ms, 95)),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "device": str(predictor.device),
        "torch_threads": torch.get_num_threads(),
        "cpu": platform.processor() or platform.machine(),
        "batch_size": args.batch_size,
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
