"""float32 against bfloat16 for ``predict`` and ``score_many`` (issues 34 and 45). Prints JSON lines and a table.

Usage::

    python -m benchmarks.precision [--data ../shared/data/imdb/test.jsonl.gz] [--agree 25000] [--n 400] [--rounds 3]
        [--device cuda] [--no-minilm] [--threads N]

* the machine: the CPU's name and the flags that decide ``auto`` (``avx512_bf16``, ``amx_bf16``, ``amx_tile``), what
  ``auto`` picks here (:func:`model.predictor.precision.auto_precision`: the flags only), the float32 / bfloat16 speed of a
  (512 x 2048) @ (2048 x 512) matrix product (measured here, never by the product);
* speed, for the bundled model and all-MiniLM-L6-v2 with a random 2-class head (:func:`benchmarks.hf.minilm_folders`;
  ``--no-minilm`` leaves it out): ``score_many`` reviews/s on ``--n`` seeded reviews and ``predict`` p50 on a review
  of about 250 tokens, four routes taking turns ``--rounds`` times (same load for all): ``fp32``; ``bf16`` (the
  product: the weights converted once, :func:`model.predictor.precision.bf16_copy`); ``autocast`` (float32 weights under
  ``torch.autocast`` to bfloat16: the route of issue 34, removed from the product in issue 45); ``bf16_ln32`` (the
  bf16 copy with its LayerNorms back in float32, a variant that was not kept);
* agreement: the bundled model scores the first ``--agree`` reviews of ``--data`` in fp32 and bf16 (chunks of 1,000
  taking turns); prints the labels that differ and the largest probability difference.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from model.predictor import precision
from model.predictor.predictor import Predictor
from model.files.textio import read_labelled

from .predict import review_of_about

ROUTES = ("fp32", "bf16", "autocast", "bf16_ln32")


def matmul_bf16_speedup() -> float:
    """float32 time / bfloat16 time of a (512 x 2048) @ (2048 x 512) product on the CPU, best of 3."""
    def best(dtype: torch.dtype) -> float:
        a, b = torch.randn(512, 2048, dtype=dtype), torch.randn(2048, 512, dtype=dtype)
        a @ b
        times = []
        for _ in range(3):
            t = time.perf_counter()
            a @ b
            times.append(time.perf_counter() - t)
        return min(times)

    return best(torch.float32) / max(best(torch.bfloat16), 1e-9)


def machine(p: Predictor) -> dict:
    """The CPU's name, the flags that decide ``auto``, what ``auto`` picks and the matrix product's bf16 speed-up."""
    name = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                 if line.startswith("model name")), "?") if Path("/proc/cpuinfo").is_file() else "?"
    flags = precision.cpu_flags()
    return {"cpu": name, "device": p.model_info().device_name,
            **{f: f in flags for f in ("avx512_bf16", "amx_bf16", "amx_tile", "amx_int8")},
            "auto_picks": precision.auto_precision(p.device, p.has_head), "matmul_bf16_speedup": matmul_bf16_speedup(),
            "torch": torch.__version__, "torch_threads": torch.get_num_threads()}


def use_route(p: Predictor, route: str):
    """Set ``p`` up for ``route`` (:data:`ROUTES`); returns the context its calls run under."""
    p.use_precision("fp32" if route in ("fp32", "autocast") else "bf16")
    if route == "bf16_ln32":  # a variant measured, not in the product: reaches into the predictor's bf16 copy
        for m in p._bf16.modules():
            if isinstance(m, torch.nn.LayerNorm):
                m.float()
    if route == "autocast":
        return torch.autocast(p.device.type, dtype=torch.bfloat16)
    return contextlib.nullcontext()


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
    """score_many reviews/s and predict p50 ms of every route of :data:`ROUTES`, taking turns; the largest
    probability difference of each route from fp32 on ``sample``."""
    rate: dict[str, list[float]] = {r: [] for r in ROUTES}
    lat: dict[str, list[float]] = {r: [] for r in ROUTES}
    diff: dict[str, float] = {}
    ref = None
    for route in ROUTES:  # warm-up, and each route's probabilities
        with use_route(p, route):
            probs = np.stack([s.probabilities for s in p.score_many(sample)])
            p.predict(review)
        ref = probs if ref is None else ref
        diff[route] = float(np.abs(probs - ref).max())
    for _ in range(rounds):
        for route in ROUTES:
            with use_route(p, route):
                t = time.perf_counter()
                p.score_many(sample)
                rate[route].append(len(sample) / (time.perf_counter() - t))
                for _ in range(10):
                    t = time.perf_counter()
                    p.predict(review)
                    lat[route].append(1000 * (time.perf_counter() - t))
    p.use_precision("fp32")
    return {"model": name, **{f"score_many_{r}_per_s": float(np.median(rate[r])) for r in ROUTES},
            **{f"predict_p50_{r}_ms": float(np.median(lat[r])) for r in ROUTES},
            **{f"max_diff_{r}": diff[r] for r in ROUTES[1:]}}


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns 0."""
    ap = argparse.ArgumentParser(description="float32 against bfloat16: label agreement and speed.")
    ap.add_argument("--data", default="../shared/data/imdb/test.jsonl.gz")
    ap.add_argument("--agree", type=int, default=25000, help="reviews for the label agreement (0: skip)")
    ap.add_argument("--n", type=int, default=400, help="reviews per score_many timing")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--device", default="cpu", help="cpu, cuda, ... (default cpu)")
    ap.add_argument("--no-minilm", action="store_true", help="the bundled model only")
    ap.add_argument("--threads", type=int, default=0, help="torch intra-op threads (default: torch's)")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    texts, _ = read_labelled(args.data)
    bundled = Predictor.from_pretrained(device=args.device)
    print(json.dumps(machine(bundled)), flush=True)
    sample = [texts[i] for i in np.random.default_rng(0).permutation(len(texts))[:args.n]]
    review = review_of_about(bundled, sample, 250)
    rows = [speed("bundled", bundled, sample, review, args.rounds)]
    print(json.dumps(rows[-1]), flush=True)
    if not args.no_minilm:
        with tempfile.TemporaryDirectory() as tmp:
            from .hf import minilm_folders

            _, clf = minilm_folders(Path(tmp))
            rows.append(speed("MiniLM-L6 + random head", Predictor.from_pretrained(clf, device=args.device), sample,
                              review, args.rounds))
            print(json.dumps(rows[-1]), flush=True)
    print("\n| model | score_many reviews/s: " + " | ".join(ROUTES) + " | predict p50 ms: " + " | ".join(ROUTES)
          + " |\n" + "|---" * (1 + 2 * len(ROUTES)) + "|")
    for r in rows:
        print(f"| {r['model']} | " + " | ".join(f"{r[f'score_many_{k}_per_s']:.0f}" for k in ROUTES) + " | "
              + " | ".join(f"{r[f'predict_p50_{k}_ms']:.1f}" for k in ROUTES) + " |", flush=True)
    if args.agree:
        print(json.dumps({"agreement": agreement(bundled, texts[:args.agree])}), flush=True)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
