"""Benchmark of corpus-level token importance and corpus metrics (prints numbers, asserts nothing; issue 23).

``python -m benchmarks.corpus_tokens [--n 2000] [--batch-size 32] [--threads 2] [--model DIR] [--data PATH]``

Explains the first ``--n`` reviews of the IMDB test split (``../shared/data/imdb/test.jsonl.gz``) with
:func:`model.corpus.corpus_token_scores` (batched gradient x input, words and bigrams) on the CPU and prints
reviews/s and the projected time for all 25,000 (target: within 5 minutes on a 2-core CPU for the bundled model).
Then times :func:`model.corpus.corpus_metrics` on 25,000 result rows (target: well under 50 ms). The load average
is printed too: other work on the machine slows the numbers down.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import time
from pathlib import Path

import numpy as np
import torch

from model import Predictor
from model.batch import ResultRow
from model.corpus import corpus_metrics, corpus_token_scores
from model.batch.rows import binary_row

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "imdb" / "test.jsonl.gz"


def _texts(path: Path, n: int) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line)["text"] for _, line in zip(range(n), fh)]


def _rows(n: int) -> list[ResultRow]:
    rng = np.random.default_rng(0)
    rows = []
    for i in range(n):
        p = float(rng.random())
        gold = ("negative", "positive", "")[i % 3]
        label = "positive" if p >= 0.5 else "negative"
        rows.append(binary_row(f"r{i}", "", label, p, int(rng.integers(5, 513)), bool(rng.random() < 0.1), gold,
                              (label == gold) if gold else None, "ok" if i % 200 else "unreadable"))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000, help="reviews explained (default 2000; 25000 = the whole split)")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    ap.add_argument("--model", help="model folder (default: the bundled model)")
    ap.add_argument("--data", type=Path, default=DATA)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    predictor = Predictor.from_pretrained(args.model, device="cpu")
    texts = _texts(args.data, args.n)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; torch threads {args.threads}")
    t0 = time.perf_counter()
    tokens = corpus_token_scores(predictor, texts, batch_size=args.batch_size)
    dt = time.perf_counter() - t0
    rate = tokens.n_explained / dt
    print(f"corpus_token_scores: {tokens.n_explained:,} reviews in {dt:.1f} s = {rate:.1f} reviews/s; "
          f"projected for 25,000: {25_000 / rate:.0f} s ({25_000 / rate / 60:.1f} min); {len(tokens):,} tokens kept")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("top toward positive:", ", ".join(t for t, _, _ in tokens.top(10, "positive")))
    print("top toward negative:", ", ".join(t for t, _, _ in tokens.top(10, "negative")))
    rows = _rows(25_000)
    corpus_metrics(rows)
    times = []
    for _ in range(10):
        t0 = time.perf_counter()
        corpus_metrics(rows)
        times.append(time.perf_counter() - t0)
    print(f"corpus_metrics on 25,000 rows: median {1000 * np.median(times):.1f} ms, max {1000 * max(times):.1f} ms")


if __name__ == "__main__":
    main()
