"""Benchmark: the same reviews through ``--engine local`` and ``--engine ray``; prints numbers, asserts nothing.

    python -m benchmarks.bench_ray --n 25000                 # IMDB test reviews, the bundled model
    python -m benchmarks.bench_ray --n 2000 --gpu-rate 9000  # paper estimate with a measured GPU worker rate

Steps, all on this machine:

1. sample ``n`` reviews from the IMDB test split (``test.jsonl.gz``, every
   k-th line so both labels appear) into one temporary JSON Lines file;
2. the driver's read rate: :func:`model.batch.iter_records` over that file
   with no scoring (the Ray engine reads on the driver, so this caps it);
3. one worker's rate: :meth:`model.Predictor.score_many` with one torch
   thread in this process, on up to 2,000 of the reviews (what one CPU actor
   with 1 thread can do at best);
4. ``attention-explorer-score FILE --engine local`` and ``--engine ray`` in
   subprocesses (the local engine's summary rate excludes model loading; the
   Ray engine's includes starting Ray and the actor pool, which is what a user
   waits for), and the Ray overhead ratio ``local rate / ray rate``;
5. on paper: N workers give ``min(N x per-worker rate x efficiency, read rate)``
   reviews/s, with the efficiency measured in 4 (Ray's rate per actor over
   the single-thread rate of 3) and the per-worker rate of 3, or ``--gpu-rate``
   (reviews/s of one GPU worker, measured on a GPU machine with
   ``python -m benchmarks.predict --device cuda``, its
   ``score_many_reviews_per_s``) for GPU workers.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.batch_cli import DEFAULT_DATA, run_cli, sample_reviews
from model.batch import iter_records
from model.batch.ray_pool import plan_pool
from model.core.paths import default_model_dir


def driver_read_rate(path: Path) -> tuple[int, float]:
    """Records/s of :func:`model.batch.iter_records` over ``path`` (no scoring). Returns ``(count, rate)``."""
    t0 = time.perf_counter()
    n = sum(1 for _ in iter_records([path]))
    return n, n / (time.perf_counter() - t0)


def single_thread_rate(model_dir: Path, texts: list[str], batch_size: int) -> float:
    """Reviews/s of one Predictor with one torch thread (one CPU actor's best case) on ``texts``."""
    import torch

    from model import Predictor

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        predictor = Predictor.from_pretrained(model_dir, device="cpu")
        predictor.score_many(texts[:64], batch_size)  # warm-up
        t0 = time.perf_counter()
        predictor.score_many(texts, batch_size)
        return len(texts) / (time.perf_counter() - t0)
    finally:
        torch.set_num_threads(threads)


def paper_estimate(workers: int, per_worker: float, efficiency: float, read_rate: float) -> float:
    """Expected reviews/s of ``workers`` actors: ``min(workers x per_worker x efficiency, read_rate)``."""
    return min(workers * per_worker * efficiency, read_rate)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the numbers; returns 0 (1 when the data is missing or a run failed)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=25000, help="reviews (default 25000, the whole IMDB test split)")
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help="IMDB test.jsonl.gz")
    p.add_argument("--model", type=Path, default=default_model_dir(), help="model folder (default: bundled)")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--gpu-rate", type=float, help="reviews/s of one GPU worker, for the GPU paper estimate")
    p.add_argument("--workers", default="1,4,16,64", help="worker counts of the paper estimate (default 1,4,16,64)")
    args = p.parse_args(argv)
    if not args.data.is_file():
        print(f"IMDB data not found: {args.data} (pass --data)", file=sys.stderr)
        return 1
    import torch

    print(f"torch {torch.__version__}, cpus {os.cpu_count()}, cuda {torch.cuda.is_available()}, model {args.model}")
    with tempfile.TemporaryDirectory(prefix="bench_ray_") as tmp:
        tmp = Path(tmp)
        rows = sample_reviews(args.data, args.n)
        jl = tmp / "reviews.jsonl"
        with open(jl, "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps({"text": r["text"], "label": r.get("label")}) + "\n" for r in rows)
        n, read_rate = driver_read_rate(jl)
        print(f"reviews: {n:,} ({jl.stat().st_size / 2**20:.1f} MiB JSON Lines)")
        print(f"driver read rate (iter_records, no scoring): {read_rate:,.0f} reviews/s")
        one = single_thread_rate(args.model, [r["text"] for r in rows[:2000]], args.batch_size)
        print(f"one worker, 1 torch thread (score_many on {min(n, 2000):,}): {one:,.1f} reviews/s")
        local = run_cli([str(jl)], args.model, tmp / "local.csv", args.batch_size)
        ray = run_cli([str(jl), "--engine", "ray"], args.model, tmp / "ray.csv", args.batch_size)
    for name, r in (("local", local), ("ray", ray)):
        rate = f"{r['reviews_per_s']:,.1f}" if r["reviews_per_s"] else "?"
        print(f"--engine {name:<5} rc {r['rc']}  wall {r['wall_s']:7.1f} s  {rate:>8} reviews/s   {r['summary']}")
    if local["rc"] != 0 or ray["rc"] != 0 or not local["reviews_per_s"] or not ray["reviews_per_s"]:
        print("a run failed; no ratio", file=sys.stderr)
        return 1
    workers = plan_pool({"CPU": float(os.cpu_count() or 1)}).num_workers  # what the CLI's local Ray instance starts
    ratio = local["reviews_per_s"] / ray["reviews_per_s"]
    per_actor = ray["reviews_per_s"] / workers
    efficiency = min(1.0, per_actor / one)
    print(f"Ray overhead ratio (local rate / ray rate): {ratio:.2f}x; wall {ray['wall_s'] / local['wall_s']:.2f}x")
    print(f"Ray per actor: {per_actor:,.1f} reviews/s with {workers} actor(s) -> efficiency {efficiency:.2f} "
          f"of the 1-thread rate")
    print("paper estimate, min(N x per-worker rate x efficiency, driver read rate):")
    for label, rate in (("CPU worker (1 core)", one), ("GPU worker", args.gpu_rate)):
        if rate is None:
            print(f"  {label}: pass --gpu-rate R (one GPU worker's reviews/s from benchmarks.predict --device cuda)")
            continue
        est = ", ".join(f"N={w}: {paper_estimate(w, rate, efficiency, read_rate):,.0f}/s"
                        for w in (int(x) for x in args.workers.split(",")))
        print(f"  {label} at {rate:,.0f} reviews/s: {est}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
