"""Speed of two model folders measured in one run, alternating, on the same host (``benchmarks.predict`` each time).

Usage::

    python -m benchmarks.compare_models --model resources/model --baseline OLD_DIR [--rounds 3]

Each round runs ``python -m benchmarks.predict --model DIR`` for the baseline, then for the model, in fresh
processes, so both see the same machine load over the run. Prints one JSON line per run and a summary with
the medians of ``score_many_reviews_per_s``, ``predict_p50_ms`` and ``peak_rss_mb`` per folder. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

KEYS = ("score_many_reviews_per_s", "predict_p50_ms", "predict_p95_ms", "peak_rss_mb")


def main(argv: list[str] | None = None) -> int:
    """Run the alternating benchmark; returns the exit code."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True)
    p.add_argument("--baseline", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--data", default="../shared/data/imdb/test.jsonl.gz")
    args = p.parse_args(argv)
    runs: dict[str, list[dict]] = {args.baseline: [], args.model: []}
    for r in range(args.rounds):
        for folder in (args.baseline, args.model):
            out = subprocess.run([sys.executable, "-m", "benchmarks.predict", "--model", folder, "--data", args.data],
                                 capture_output=True, text=True, check=True).stdout
            result = json.loads(out.strip().splitlines()[-1])
            runs[folder].append(result)
            print(json.dumps({"round": r + 1, "model": folder, **{k: result[k] for k in KEYS}}), flush=True)
    summary = {folder: {k: statistics.median(x[k] for x in results) for k in KEYS} for folder, results in runs.items()}
    print(json.dumps({"medians": summary, "rounds": args.rounds}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
