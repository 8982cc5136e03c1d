"""``score_many`` reviews/s under the two long-text policies, side by side in one run (prints numbers, asserts nothing).

``python -m benchmarks.long_text_speed [--n 2000] [--rounds 3] [--data ../shared/data/imdb/test.jsonl.gz] [--model DIR]
[--device cuda]``

Takes ``--n`` IMDB test reviews (a seeded sample, as many long ones as the file has in proportion) and scores them
with ``long_text="head_tail"`` (today's cut) and ``long_text="windows"`` (docs/long_documents.md) in alternation,
``--rounds`` times each, so both see the same load on a shared host. Prints one JSON object: the best reviews/s of
each policy, their ratio (windows / head_tail; the target is >= 0.8), the share of long reviews and the windows read.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.batch_cli import DEFAULT_DATA


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; returns 0, or 2 when the data file is missing."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--data", type=Path, default=DEFAULT_DATA)
    p.add_argument("--model", type=Path, default=None)
    p.add_argument("--device", default="cpu", help="cpu, cuda, ... (default cpu)")
    args = p.parse_args(argv)
    if not args.data.is_file():
        print(json.dumps({"ok": False, "error": f"no data file {args.data}"}))
        return 2
    import torch

    from model import Predictor
    from model.files.textio import read_labelled

    texts = read_labelled(args.data)[0]
    idx = np.random.default_rng(0).permutation(len(texts))[: args.n]
    sample = [texts[i] for i in idx]
    predictor = Predictor.from_pretrained(args.model, device=args.device)
    best = {"head_tail": 0.0, "windows": 0.0}
    windows = 0
    for _ in range(args.rounds):
        for policy in best:
            t0 = time.perf_counter()
            scores = predictor.score_many(sample, long_text=policy)
            best[policy] = max(best[policy], len(sample) / (time.perf_counter() - t0))
            if policy == "windows":
                windows = sum(s.num_windows for s in scores)
                long = sum(s.num_windows > 1 for s in scores)
    print(json.dumps({
        "reviews": len(sample), "long_reviews": long, "windows_read": windows,
        "head_tail_reviews_per_s": round(best["head_tail"], 1), "windows_reviews_per_s": round(best["windows"], 1),
        "ratio": round(best["windows"] / best["head_tail"], 3), "threads": torch.get_num_threads(),
        "device": predictor.model_info().device_name,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
