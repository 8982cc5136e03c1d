"""float32 against bfloat16, end to end, and the rule ``auto`` follows (issues 34, 45 and 55). Prints JSON lines and a
table.

Usage::

    python -m benchmarks.precision [--data ../shared/data/imdb/test.jsonl.gz] [--n 3000] [--rounds 3]
        [--model DIR] [--threads N]

What it measures, in one run: the scorer's reviews/s (:func:`model.batch.engine.score_records`, the code of the
command line, the batch table and the Ray actors: tokenization, the forward passes, the read-out and the rows
included) on the first ``--n`` reviews of ``--data``, fp32 and bf16 taking turns ``--rounds`` times (the order
swapped every round, so both see the same load), best of the rounds; the labels that differ and the largest
probability difference between the two; the load average before and after.

What it prints last: the CPU's ``model name``, its class for the rule (:func:`model.predictor.precision.cpu_class`:
``amx``, ``avx512_bf16``, ``none``), the end-to-end speed-up bf16 / fp32, whether it reaches
:data:`model.predictor.precision.BF16_PAYS` (1.5), the figure :data:`~model.predictor.precision.BF16_END_TO_END`
holds for the class and what ``auto`` picks here. A class's figure goes into that table (and docs/performance.md)
from such a run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

from model.batch.engine import score_records
from model.batch.readers import Record
from model.files.textio import read_labelled
from model.predictor import precision
from model.predictor.predictor import Predictor

PRECISIONS = ("fp32", "bf16")


def cpu_name() -> str:
    """``model name`` of the first processor in /proc/cpuinfo ("?" where it cannot be read)."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return "?"
    return next((line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")), "?")


def score_all(p: Predictor, records: list[Record], prec: str) -> tuple[float, list]:
    """(seconds, rows) of the scorer on ``records`` in ``prec``: the batch engine, end to end."""
    p.use_precision(prec)
    t = time.perf_counter()
    rows = [r for chunk in score_records(p, records) for r in chunk]
    return time.perf_counter() - t, rows


def measure(p: Predictor, texts: list[str], rounds: int) -> dict:
    """Best-of-``rounds`` reviews/s per precision (taking turns), label agreement and the largest difference."""
    records = [Record(f"r{i}", t, None) for i, t in enumerate(texts)]
    for prec in PRECISIONS:  # warm-up: the bf16 copy made, the kernels loaded
        score_all(p, records[:200], prec)
    rate: dict[str, list[float]] = {k: [] for k in PRECISIONS}
    rows: dict[str, list] = {}
    for r in range(rounds):
        for prec in PRECISIONS if r % 2 == 0 else PRECISIONS[::-1]:
            seconds, rows[prec] = score_all(p, records, prec)
            rate[prec].append(len(records) / seconds)
            print(json.dumps({"round": r, "precision": prec, "reviews_per_s": round(rate[prec][-1], 1),
                              "load": os.getloadavg()[0]}), flush=True)
    p.use_precision("fp32")
    a, b = rows["fp32"], rows["bf16"]
    return {"reviews": len(records), "rounds": rounds,
            **{f"{k}_reviews_per_s": max(v) for k, v in rate.items()},
            **{f"{k}_all_rounds": [round(x, 1) for x in v] for k, v in rate.items()},
            "labels_differ": int(sum(x.label != y.label for x, y in zip(a, b, strict=True))),
            "max_probability_diff": float(max(np.abs(np.subtract(x.probabilities, y.probabilities)).max()
                                              for x, y in zip(a, b, strict=True)))}


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns 0."""
    ap = argparse.ArgumentParser(description="float32 against bfloat16 end to end, and the rule auto follows.")
    ap.add_argument("--data", default="../shared/data/imdb/test.jsonl.gz")
    ap.add_argument("--n", type=int, default=3000, help="reviews scored per round (the first N of --data)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--model", default=None, help="a model folder (default: the bundled model)")
    ap.add_argument("--threads", type=int, default=0, help="torch intra-op threads (default: torch's)")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    texts = read_labelled(args.data)[0][: args.n]
    p = Predictor.from_pretrained(args.model, device="cpu")
    cls = precision.cpu_class()
    machine = {"cpu": cpu_name(), "cpu_class": cls, "flags": sorted(precision.cpu_flags() & {
        precision.AVX512_BF16_FLAG, precision.AMX_FLAG, "amx_tile", "avx512f"}), "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(), "load_before": os.getloadavg()}
    print(json.dumps(machine), flush=True)
    m = measure(p, texts, args.rounds)
    m["load_after"] = os.getloadavg()
    print(json.dumps(m), flush=True)
    ratio = m["bf16_reviews_per_s"] / m["fp32_reviews_per_s"]
    figure = precision.BF16_END_TO_END.get(cls)
    print(f"\nCPU: {machine['cpu']} (class {cls}; {machine['torch_threads']} torch threads; load "
          f"{machine['load_before'][0]:.1f} -> {m['load_after'][0]:.1f})")
    print(f"scorer, {m['reviews']:,} reviews end to end, best of {args.rounds}: fp32 {m['fp32_reviews_per_s']:.1f} "
          f"reviews/s, bf16 {m['bf16_reviews_per_s']:.1f} reviews/s: bf16 / fp32 = {ratio:.2f}; labels differ "
          f"{m['labels_differ']}, largest probability difference {m['max_probability_diff']:.4f}")
    print(f"rule: auto picks bf16 on a CPU class whose end-to-end bf16 / fp32 is >= {precision.BF16_PAYS}; this run "
          f"{'reaches' if ratio >= precision.BF16_PAYS else 'does not reach'} it; BF16_END_TO_END[{cls!r}] = {figure}; "
          f"auto here: {precision.auto_precision(p.device, p.has_head)}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
