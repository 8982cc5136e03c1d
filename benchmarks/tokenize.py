"""Tokenization on the scoring path (issue 55, part 3): reviews/s and tokens/s of the encoding with offsets (what the
views need) against the offset-free ids the scorer uses, on the same reviews, with identical ids checked. Prints JSON
lines and a table.

Usage::

    python -m benchmarks.tokenize [--data ../shared/data/imdb/test.jsonl.gz] [--n 3000] [--rounds 5] [--minilm DIR]

Routes, taking turns ``--rounds`` times, best of the rounds (the machine is shared: the load average is printed):

* ``offsets``: ``TextEncoder.encode_batch`` (``tokenizers``' ``encode_batch``: offsets and token strings, what the
  explorer's views read);
* ``ids (scoring path)``: ``TextEncoder.encode_ids_batch`` (``encode_batch_fast``: no offsets), what
  ``Predictor.score_many`` and so the batch table, the command line and the Ray actors run;
* ``encode_batch`` / ``encode_batch_fast``: the Rust calls alone, for reference.

The bundled tokenizer always; with ``--minilm DIR`` also that Hugging Face fast tokenizer (all-MiniLM-L6-v2).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

from model.files.textio import read_labelled
from model.predictor.predictor import Predictor


def best_rate(fn, n: int, rounds: int) -> float:
    """Items/s of ``fn()`` on ``n`` items, best of ``rounds``."""
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return n / min(times)


def measure(name: str, encoder, texts: list[str], rounds: int) -> dict:
    """The four routes' reviews/s on ``texts`` with ``encoder``, the ids checked identical."""
    slow = [e.ids for e in encoder.encode_batch(texts)]
    fast = [ids for ids, _ in encoder.encode_ids_batch(texts)]
    same = len(slow) == len(fast) and all(np.array_equal(a, b) for a, b in zip(slow, fast, strict=True))
    tokens = sum(len(x) for x in fast)
    tk, raw = encoder.tokenizer, list(texts)
    routes = {"offsets": lambda: encoder.encode_batch(texts), "ids (scoring path)": lambda: encoder.encode_ids_batch(texts),
              "encode_batch": lambda: tk.encode_batch(raw, add_special_tokens=False),
              "encode_batch_fast": lambda: tk.encode_batch_fast(raw, add_special_tokens=False)}
    rates = {k: [] for k in routes}
    for _ in range(rounds):  # taking turns: the same load for all
        for k, fn in routes.items():
            rates[k].append(best_rate(fn, len(texts), 1))
    out = {"tokenizer": name, "reviews": len(texts), "tokens": tokens, "ids_identical": bool(same),
           **{f"{k}_reviews_per_s": round(max(v), 1) for k, v in rates.items()},
           "load": os.getloadavg()[0]}
    out["speedup_scoring_path"] = round(out["ids (scoring path)_reviews_per_s"] / out["offsets_reviews_per_s"], 2)
    return out


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns 0."""
    ap = argparse.ArgumentParser(description="Tokenization with offsets against the scorer's offset-free ids.")
    ap.add_argument("--data", default="../shared/data/imdb/test.jsonl.gz")
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--minilm", default=None, help="an all-MiniLM-L6-v2 folder (its fast tokenizer)")
    args = ap.parse_args(argv)
    texts = read_labelled(args.data)[0][: args.n]
    rows = [measure("bundled", Predictor.from_pretrained(device="cpu").encoder, texts, args.rounds)]
    print(json.dumps(rows[-1]), flush=True)
    if args.minilm:
        rows.append(measure("all-MiniLM-L6-v2", Predictor.from_pretrained(args.minilm, device="cpu").encoder, texts,
                            args.rounds))
        print(json.dumps(rows[-1]), flush=True)
    print("\n| tokenizer | offsets reviews/s | ids (scoring path) reviews/s | x | tokens/s (scoring path) | "
          "encode_batch | encode_batch_fast | ids identical | load |\n|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        tps = r["tokens"] / r["reviews"] * r["ids (scoring path)_reviews_per_s"]
        print(f"| {r['tokenizer']} | {r['offsets_reviews_per_s']:,.0f} | {r['ids (scoring path)_reviews_per_s']:,.0f} | "
              f"{r['speedup_scoring_path']:.2f} | {tps:,.0f} | {r['encode_batch_reviews_per_s']:,.0f} | "
              f"{r['encode_batch_fast_reviews_per_s']:,.0f} | {r['ids_identical']} | {r['load']:.1f} |")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
