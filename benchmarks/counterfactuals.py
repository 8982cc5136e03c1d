"""Counterfactual edits benchmark (issue 43): the five generators and the smallest-flip search on one review of about
200 tokens, and N IMDB reviews through the command line. Prints a table and JSON lines.

Usage::

    python -m benchmarks.counterfactuals [--data ../shared/data/imdb/test.jsonl.gz] [--repeats 3] [--n 100]
        [--cli-generators negation,ablation_flip,hotflip] [--minilm] [--no-cli] [--keep DIR] [--threads 2]

1. The review of the first 300 seeded test reviews whose bundled-model token count is closest to 200: for each
   generator, the median wall time of ``model.counterfactuals.generate`` (its edits made and scored) over
   ``--repeats`` runs after a warm-up; their sum; the smallest-flip search (default budget). With ``--minilm`` the same
   for all-MiniLM-L6-v2 with a random 2-class head (:func:`benchmarks.hf.minilm_folders`: a fine-tuned MiniLM's
   speed; its flips mean nothing). Targets of issue 43 (not asserted): all five <= 2 s together, the search <= 5 s,
   bundled model, 2 cores.
2. ``--n`` seeded test reviews through ``python -m model.scorer.main ... --counterfactuals GENS --counterfactuals-out
   --metrics`` in a subprocess (scoring, the edits and the outputs; no token pass): wall time, reviews/s, edits and
   flip rate per generator. Target: 1,000 reviews through negation, ablation_flip and hotflip in <= 5 minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from .sample import seeded_reviews

DEFAULT_DATA = "../shared/data/imdb/test.jsonl.gz"


def review_near(predictor, texts: list[str], tokens: int = 200) -> str:
    """The text whose token count (``predictor.encode``) is closest to ``tokens``."""
    return min(texts, key=lambda t: abs(len(predictor.encode(t).ids) - tokens))


def time_generators(name: str, predictor, text: str, repeats: int) -> list[dict]:
    """One row per generator (median and min seconds, edits, flips) and for the smallest-flip search."""
    from model.counterfactuals import GENERATORS, generate, smallest_flip

    rows, tokens = [], len(predictor.encode(text).ids)
    generate(predictor, [(text, None)], list(GENERATORS))  # warm-up (hotflip's vocabulary table is built once)
    for gen in GENERATORS:
        times, edits = [], []
        for _ in range(repeats):
            t = time.perf_counter()
            edits = generate(predictor, [(text, None)], [gen])
            times.append(time.perf_counter() - t)
        rows.append({"model": name, "what": gen, "tokens": tokens, "median_s": float(np.median(times)),
                     "min_s": float(np.min(times)), "edits": len(edits), "flipped": sum(bool(e.flipped) for e in edits)})
    rows.append({"model": name, "what": "all five (sum of medians)", "tokens": tokens,
                 "median_s": sum(r["median_s"] for r in rows), "min_s": sum(r["min_s"] for r in rows),
                 "edits": sum(r["edits"] for r in rows), "flipped": sum(r["flipped"] for r in rows)})
    times, result = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        result = smallest_flip(predictor, text)
        times.append(time.perf_counter() - t)
    best = result.best
    rows.append({"model": name, "what": "smallest-flip search", "tokens": tokens, "median_s": float(np.median(times)),
                 "min_s": float(np.min(times)), "edits": len(result.tried), "flipped": int(bool(best and best.flipped)),
                 "best_size": best.size if best else None, "spent": result.spent})
    return rows


def run_cli(data: str, n: int, generators: str, keep: Path | None, threads: int) -> dict:
    """``n`` seeded reviews (with their gold labels) through the scoring command line with ``--counterfactuals``."""
    from model.files.textio import read_labelled

    texts, labels = read_labelled(data)[:2]
    order = np.random.default_rng(0).permutation(len(texts))[:n]
    with tempfile.TemporaryDirectory() as tmp:
        out = keep or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        src = out / "reviews.jsonl"
        src.write_text("".join(json.dumps({"text": texts[i], "label": int(labels[i])}) + "\n" for i in order),
                       encoding="utf-8")
        cmd = [sys.executable, "-m", "model.scorer.main", str(src), "--out", str(out / "rows.csv"), "--no-progress",
               "--label-column", "label", "--counterfactuals", generators, "--counterfactuals-out",
               str(out / "edits.jsonl"), "--metrics", str(out / "metrics.json"), "--report", str(out / "report.html"),
               "--no-token-scores"]
        t = time.perf_counter()
        env = {**os.environ, "OMP_NUM_THREADS": str(threads)}  # torch's intra-op threads in the child
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
        wall = time.perf_counter() - t
        if proc.returncode != 0:
            raise SystemExit(f"the command line failed ({proc.returncode}): {proc.stderr[-2000:]}")
        cf = json.loads((out / "metrics.json").read_text())["counterfactuals"]
    return {"what": f"CLI --counterfactuals {generators}", "reviews": n, "wall_s": wall, "reviews_per_s": n / wall,
            "per_generator": {g: {k: m[k] for k in ("n", "flip_rate", "mean_abs_delta", "mean_jsd")}
                              for g, m in cf.items()}}


def main(argv=None) -> None:
    """Run the benchmark (see the module docstring) and print its rows."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=DEFAULT_DATA)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--n", type=int, default=100, help="reviews through the command line")
    ap.add_argument("--cli-generators", default="negation,ablation_flip,hotflip")
    ap.add_argument("--minilm", action="store_true", help="also time all-MiniLM-L6-v2 with a random 2-class head")
    ap.add_argument("--no-cli", action="store_true")
    ap.add_argument("--keep", type=Path, help="keep the command line's outputs in this folder")
    ap.add_argument("--threads", type=int, default=2, help="torch threads, here and in the command line (2)")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    from model.predictor.predictor import Predictor

    bundled = Predictor.from_pretrained(device="cpu")
    text = review_near(bundled, seeded_reviews(args.data, 300))
    rows = time_generators("bundled", bundled, text, args.repeats)
    if args.minilm:
        from .hf import minilm_folders

        with tempfile.TemporaryDirectory() as tmp:
            _base, classifier = minilm_folders(Path(tmp))
            rows += time_generators("all-MiniLM-L6-v2 (random head)", Predictor.from_pretrained(classifier, "cpu"),
                                    text, args.repeats)
    print(f"{'model':32} {'what':28} {'tokens':>6} {'median s':>9} {'min s':>8} {'edits':>6} {'flipped':>7}")
    for r in rows:
        print(f"{r['model']:32} {r['what']:28} {r['tokens']:6d} {r['median_s']:9.3f} {r['min_s']:8.3f} "
              f"{r['edits']:6d} {r['flipped']:7d}")
    for r in rows:
        print(json.dumps(r))
    if not args.no_cli:
        cli = run_cli(args.data, args.n, args.cli_generators, args.keep, args.threads)
        print(f"\n{cli['what']}: {cli['reviews']} reviews in {cli['wall_s']:.1f} s ({cli['reviews_per_s']:.2f} "
              "reviews/s, model load and scoring included)")
        for g, m in cli["per_generator"].items():
            print(f"  {g:14} {m['n']:6d} edits  flip rate {100 * m['flip_rate']:5.1f} %  mean |delta| "
                  f"{m['mean_abs_delta']:.4f}  mean JSD {m['mean_jsd']:.4f}")
        print(json.dumps(cli))


if __name__ == "__main__":
    main()
