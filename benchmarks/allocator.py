"""CPU time and page faults per call under the C allocator's settings (issue 41: the memory the allocator keeps).
Prints one JSON line; asserts nothing.

Usage::

    [MALLOC_MMAP_THRESHOLD_=131072] python -m benchmarks.allocator [--model DIR] [--data FILE] [--n 200]

Runs ``predict`` of one review of ``--tokens`` tokens (about; the first seeded test review within 20%) ``--repeats``
times and ``score_many`` of ``--n`` seeded reviews on one torch thread in float32, and reports per call the CPU time
(``time.process_time``: milliseconds, less sensitive to other processes than wall time) and the minor page faults
(``getrusage``). Run it under glibc's default and under ``MALLOC_MMAP_THRESHOLD_=...`` (a fixed mmap threshold: freed
large tensors go back to the system at once, so the peak RSS of ``benchmarks.memory`` falls, and every large tensor is
fresh pages the kernel faults in) to see what that memory costs in CPU time (``docs/performance.md``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns 0."""
    ap = argparse.ArgumentParser(description="CPU time and page faults per call under the allocator's settings.")
    ap.add_argument("--model", default=None, help="model folder (default: the bundled model)")
    ap.add_argument("--data", default="../shared/data/imdb/test.jsonl.gz")
    ap.add_argument("--n", type=int, default=200, help="reviews scored by score_many")
    ap.add_argument("--tokens", type=int, default=250, help="about this many tokens in the predicted review")
    ap.add_argument("--repeats", type=int, default=40)
    args = ap.parse_args(argv)
    import numpy as np
    import torch

    from model.files.textio import read_labelled
    from model.predictor.predictor import Predictor

    torch.set_num_threads(1)
    p = Predictor.from_pretrained(args.model, device="cpu")
    p.use_precision("fp32")
    texts = read_labelled(args.data)[0]
    sample = [texts[i] for i in np.random.default_rng(0).choice(len(texts), args.n, replace=False)]
    review = next((t for t in sample if abs(len(p.encode(t).ids) - args.tokens) <= args.tokens * 0.2), sample[0])

    def measure(run, calls: int) -> tuple[float, int]:
        f0, c0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt, time.process_time()
        run()
        f1, c1 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt, time.process_time()
        return round((c1 - c0) / calls * 1000, 2), round((f1 - f0) / calls)

    for _ in range(5):
        p.predict(review)
    p.score_many(sample[:8])
    predict_ms, predict_faults = measure(lambda: [p.predict(review) for _ in range(args.repeats)], args.repeats)
    score_ms, score_faults = measure(lambda: p.score_many(sample), len(sample))
    print(json.dumps({"model": str(p.model_dir), "malloc_mmap_threshold": os.environ.get("MALLOC_MMAP_THRESHOLD_"),
                      "predict_tokens": len(p.encode(review).ids), "predict_cpu_ms": predict_ms,
                      "predict_faults": predict_faults, "score_many_cpu_ms_per_review": score_ms,
                      "score_many_faults_per_review": score_faults, "n": len(sample)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
