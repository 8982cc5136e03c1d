"""float32 against bfloat16 autocast for ``predict`` and ``score_many`` (issue 34). Prints JSON lines and a table.

Usage::

    python -m benchmarks.precision [--data ../shared/data/imdb/test.jsonl.gz] [--agree 25000] [--n 400] [--rounds 3]
        [--device cuda]

* agreement: the bundled model scores the first ``--agree`` reviews of ``--data`` in both precisions (chunks of 1,000
  taking turns); prints the share of labels that differ and the largest probability difference;
* speed, for the bundled model and all-MiniLM-L6-v2 with a random 2-class head (:func:`benchmarks.hf.minilm_folders`):
  ``score_many`` reviews/s on ``--n`` seeded reviews and ``predict`` p50 on a review of about 250 tokens, the two
  precisions taking turns ``--rounds`` times (same load for both);
* the machine: whether the CPU reports AVX512-BF16 / AMX, the float32 / bfloat16 speed of a matrix product
  (:func:`model.precision.cpu_bf16_speedup`) and what ``auto`` picks.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from model import precision
from model.predictor import Predictor
from model.textio import read_labelled

from .predict import review_of_about


def agreement(p: Predictor, texts: list[str], chunk: int = 1000) -> dict:
    """Labels and probabilities of ``texts`` in fp32 and bf16 (chunks taking turns); the predictor is left in fp32."""
    diff, max_diff, seconds = 0, 0.0, {"fp32": 0.0, "bf16": 0.0}
    for s in range(0, len(texts), chunk):
        out = {}
        for prec in ("fp32", "bf16"):
            p.use_precision(prec)
            t = time.perf_counter()
            out[prec] = p.score_many(texts[s:s + chunk])
            seconds[prec] += time.perf_counter() - t
        diff += sum(a.label != b.label for a, b in zip(out["fp32"], out["bf16"]))
        max_diff = max(max_diff, max(float(np.abs(a.probabilities - b.probabilities).max())
                                     for a, b in zip(out["fp32"], out["bf16"])))
    p.use_precision("fp32")
    return {"reviews": len(texts), "labels_differ": int(diff), "disagreement": diff / max(1, len(texts)),
            "max_probability_diff": max_diff, **{f"{k}_reviews_per_s": len(texts) / v for k, v in seconds.items()}}


def speed(name: str, p: Predictor, sample: list[str], review: str, rounds: int) -> dict:
    """score_many reviews/s and predict p50 ms in both precisions, taking turns."""
    rate: dict[str, list[float]] = {"fp32": [], "bf16": []}
    lat: dict[str, list[float]] = {"fp32": [], "bf16": []}
    for prec in rate:  # warm-up
        p.use_precision(prec)
        p.score_many(sample[:32])
        p.predict(review)
    for _ in range(rounds):
        for prec in rate:
            p.use_precision(prec)
            t = time.perf_counter()
            p.score_many(sample)
            rate[prec].append(len(sample) / (time.perf_counter() - t))
            for _ in range(10):
                t = time.perf_counter()
                p.predict(review)
                lat[prec].append(1000 * (time.perf_counter() - t))
    p.use_precision("fp32")
    r = {k: float(np.median(v)) for k, v in rate.items()}
    return {"model": name, "score_many_fp32_per_s": r["fp32"], "score_many_bf16_per_s": r["bf16"],
            "speedup": r["bf16"] / r["fp32"], "predict_p50_fp32_ms": float(np.median(lat["fp32"])),
            "predict_p50_bf16_ms": float(np.median(lat["bf16"]))}


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns 0."""
    ap = argparse.ArgumentParser(description="float32 against bfloat16 autocast: label agreement and speed.")
    ap.add_argument("--data", default="../shared/data/imdb/test.jsonl.gz")
    ap.add_argument("--agree", type=int, default=25000, help="reviews for the label agreement (0: skip)")
    ap.add_argument("--n", type=int, default=400, help="reviews per score_many timing")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--device", default="cpu", help="cpu, cuda, ... (default cpu)")
    args = ap.parse_args(argv)
    texts, _ = read_labelled(args.data)
    bundled = Predictor.from_pretrained(device=args.device)
    machine = {"device": bundled.model_info().device_name, "cpu_reports_bf16": precision.cpu_reports_bf16(), "matmul_bf16_speedup": precision.cpu_bf16_speedup(),
               "auto_picks": bundled.use_precision("auto"), "torch_threads": torch.get_num_threads()}
    bundled.use_precision("fp32")
    print(json.dumps(machine), flush=True)
    sample = [texts[i] for i in np.random.default_rng(0).permutation(len(texts))[:args.n]]
    review = review_of_about(bundled, sample, 250)
    rows = [speed("bundled", bundled, sample, review, args.rounds)]
    print(json.dumps(rows[-1]), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        from .hf import minilm_folders

        _, clf = minilm_folders(Path(tmp))
        rows.append(speed("MiniLM-L6 + random head", Predictor.from_pretrained(clf, device=args.device), sample, review,
                          args.rounds))
        print(json.dumps(rows[-1]), flush=True)
    print("\n| model | score_many fp32 /s | bf16 /s | bf16 / fp32 | predict p50 fp32 ms | bf16 ms |\n|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['score_many_fp32_per_s']:.0f} | {r['score_many_bf16_per_s']:.0f} | "
              f"{r['speedup']:.2f} | {r['predict_p50_fp32_ms']:.1f} | {r['predict_p50_bf16_ms']:.1f} |", flush=True)
    if args.agree:
        print(json.dumps({"agreement": agreement(bundled, texts[:args.agree])}), flush=True)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
