"""``torch.compile`` (inductor) as a second route to CPU speed (issue 45): the bundled model's forward passes on the
batches ``score_many`` would run, eager against compiled, in float32 and in the product's bfloat16 copy. Prints JSON
lines; asserts nothing.

Usage::

    python -m benchmarks.compile [--data ../shared/data/imdb/test.jsonl.gz] [--n 600] [--rounds 3] [--threads N]

``--n`` seeded IMDB test reviews are tokenized and cut into ``score_many``'s length-sorted batches (64 texts, 4,096
padded tokens; long reviews cut to their first 512 tokens: one window each). Each route runs every batch once per
round, the routes taking turns (the same load for all); a route's time is the median round. Compiling with
``dynamic=True`` (one graph for all batch shapes) is timed separately (the first call of each new shape included),
and each route's largest logit difference from eager float32 is printed. The routes:

* ``fp32`` / ``bf16``: the product (``Predictor.model``, and :func:`model.predictor.precision.bf16_copy` of it);
* ``fp32_compiled`` / ``bf16_compiled``: ``torch.compile(model, dynamic=True)`` of the same modules (inductor, the
  default backend; needs a C++ compiler).

Numbers of this project's machine: docs/performance.md ("torch.compile").
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

from model.text.inputs import token_budget_batches
from model.predictor.precision import bf16_copy
from model.predictor.predictor import Predictor

from .sample import seeded_reviews


def batches(p: Predictor, texts: list[str]) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """``(ids int64 (B, T), mask bool (B, T))`` of ``score_many``'s batches for ``texts`` (head+tail cut to one
    window, so every batch is a plain forward pass)."""
    encoded = [ids for ids, _ in p.encoder.encode_ids_batch(texts)]
    lengths = [len(x) for x in encoded]
    order = np.argsort(lengths, kind="stable")
    out = []
    for idx in token_budget_batches([lengths[i] for i in order], order, 64, 4096):
        ids, mask = p.encoder.pad_ids([encoded[i] for i in idx])
        out.append((torch.from_numpy(ids), torch.from_numpy(mask)))
    return out


@torch.inference_mode()
def run(model, data) -> tuple[float, torch.Tensor]:
    """Seconds for one pass over ``data`` and the float32 logits (N, C)."""
    t = time.perf_counter()
    logits = [model(ids, mask)[0].float() for ids, mask in data]
    return time.perf_counter() - t, torch.cat(logits)


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns 0."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="../shared/data/imdb/test.jsonl.gz")
    ap.add_argument("--n", type=int, default=600)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="torch intra-op threads (default: torch's)")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    sample = seeded_reviews(args.data, args.n)
    p = Predictor.from_pretrained(device="cpu")
    data = batches(p, sample)
    eager = {"fp32": p.model, "bf16": bf16_copy(p.model)}
    routes = dict(eager)
    for name, model in eager.items():
        compiled = torch.compile(model, dynamic=True)
        t = time.perf_counter()
        run(compiled, data)  # compiles, and meets every shape once
        print(json.dumps({"route": f"{name}_compiled", "compile_and_first_pass_s": round(time.perf_counter() - t, 1)}),
              flush=True)
        routes[f"{name}_compiled"] = compiled
    times: dict[str, list[float]] = {r: [] for r in routes}
    ref = run(p.model, data)[1]
    for _ in range(args.rounds):
        for name, model in routes.items():
            times[name].append(run(model, data)[0])
    for name, model in routes.items():
        _, logits = run(model, data)
        print(json.dumps({"route": name, "reviews": len(sample), "batches": len(data), "threads": torch.get_num_threads(),
                          "median_s": round(float(np.median(times[name])), 3),
                          "reviews_per_s": round(len(sample) / float(np.median(times[name]))),
                          "max_logit_diff_from_fp32": round(float((logits - ref).abs().max()), 5),
                          "labels_as_fp32": float((logits.argmax(1) == ref.argmax(1)).float().mean())}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
