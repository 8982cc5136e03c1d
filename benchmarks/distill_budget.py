"""The CPU time of a recipe's ``distill`` stage, estimated from real batches before it runs (no teacher needed).

Usage::

    python -m benchmarks.distill_budget --data ../shared/data/imdb [--recipe cpu_distill] [--stage student]
        [--batches 24] [--threads 0] [--precision fp32]

Builds the stage's training sequences as :func:`model.training.distill.distill` does (the fitting reviews, the
unlabeled ones unless ``no_unsup``, each ``augmented`` set with its ``:K`` / ``%N``), with texts only: an
``augment`` or ``sentences`` stage's texts are regenerated (:func:`model.training.transfer.augmented_texts`, the
sentences of the fitting reviews), a ``negations`` stage is stood in for by the committed
``model/training/artifacts/negations.jsonl.gz`` (about as many rows). Cuts them into the first epoch's batches
(:func:`model.training.common.length_bucketed_batches`), times ``--batches`` of them (one
training step each, the better of two, in the stage's precision, the ``init`` folder's weights) and prints one JSON
line: sequences, batches per epoch, the padded tokens, the measured seconds per step (mean, min, max) and the
estimated seconds of the stage's epochs (the mean step times the batches), plus the measured tokenization seconds.
The timed batches are spread evenly over the batches sorted by padded size, a systematic sample of a cost that runs
from 0.03 s (64 short sentences) to several seconds (64 reviews of 512 tokens). Asserts nothing.

``--stand-in PATH`` instead writes a teacher artifact with seeded random logits for every review of ``--data`` and
every text the recipe's ``augment`` and ``sentences`` stages regenerate, so that the CPU stages before the
distillation can be timed before the real artifact exists (docs/retraining.md)::

    python -m benchmarks.distill_budget --data ../shared/data/imdb --stand-in /tmp/standin.npz
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from model.core.config import EncoderConfig
from model.core.encoder import TransformerClassifier
from model.core.tokenizer import TextEncoder, load_tokenizer
from model.core.weights import TOKENIZER_FILE, load_state
from model.datasets.splits import read_split, seeded_subset, train_split
from model.datasets.task_data import read_table
from model.training import common as c
from model.training.pipeline import ARTIFACTS, KINDS, _read, find_recipe
from model.training.teacher_artifact import SPLITS, write_artifact
from model.training.transfer import augmented_texts, parse_spec, review_sentences, review_split


def stage_options(stages: dict, name: str):
    """Stage ``name``'s options dataclass, its inputs unchecked (the teacher artifact need not exist yet)."""
    table = stages[name]
    return c.make_options(KINDS[table["kind"]].options,
                          {k: v for k, v in table.items() if k not in ("kind", "threads")}, f"stage {name}")


def spec_texts(stages: dict, spec: str, data: Path, seed: int) -> list[str]:
    """The texts of one ``augmented`` entry (a stage of ``stages`` or a file) with its repeat and sample applied."""
    path, repeat, sample = parse_spec(spec)
    table = stages.get(path)
    if table is None:
        texts = [r["text"] for r in read_table(Path(path))]
    elif table["kind"] == "augment":
        texts = augmented_texts(data, stage_options(stages, path))
    elif table["kind"] == "sentences":
        train_texts, _, _, fit_idx = train_split(data, stage_options(stages, path).seed)
        texts = [s for i in fit_idx for s in review_sentences(train_texts[i])]
    else:  # negations: the committed set stands in
        texts = [r["text"] for r in read_table(ARTIFACTS / "negations.jsonl.gz")]
    if sample and sample < len(texts):
        texts = [texts[i] for i in seeded_subset(len(texts), sample, seed)]
    return texts * repeat


def write_stand_in(stages: dict, data: Path, path: Path) -> dict:
    """A teacher artifact with seeded random logits (normal, scale 3) for the reviews and the regenerated texts."""
    texts = [t for split in SPLITS for t in read_split(data, split)[0]]
    for name, table in stages.items():
        if table["kind"] in ("augment", "sentences"):
            texts += spec_texts(stages, name, data, 0)
    logits = np.random.default_rng(0).normal(0, 3, (len(texts), 2))
    return write_artifact(path, texts, logits, {"stand_in": "random logits for timing (benchmarks.distill_budget)"})


def main(argv: list[str] | None = None) -> int:
    """Estimate and print the JSON line; returns the exit code."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", required=True)
    p.add_argument("--recipe", default="cpu_distill")
    p.add_argument("--stage", default="student")
    p.add_argument("--batches", type=int, default=24, help="batches timed (chosen at random from the first epoch)")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--precision", default="", help="auto, bf16 or fp32 (default: the stage's)")
    p.add_argument("--stand-in", default="", help="write a stand-in artifact here and exit")
    args = p.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    path = find_recipe(args.recipe)
    stages = _read(path)["stages"]
    if args.stand_in:
        print(json.dumps(write_stand_in(stages, Path(args.data), Path(args.stand_in))))
        return 0
    opts, data = stage_options(stages, args.stage), Path(args.data)
    init = Path(opts.init)
    config = EncoderConfig.from_json(init / "config.json")
    encoder = TextEncoder(load_tokenizer(init / TOKENIZER_FILE), config.max_len)
    t0 = time.perf_counter()
    seqs = list(review_split(data, opts, encoder).seqs)
    extra = [t for spec in opts.augmented for t in spec_texts(stages, spec, data, opts.seed)]
    seqs += [ids for ids, _ in encoder.encode_ids_batch(extra)]
    tokenize_s = time.perf_counter() - t0
    lengths = np.array([len(s) for s in seqs])
    batches = c.length_bucketed_batches(lengths, opts.batch_size, np.random.default_rng(opts.seed * 1000))
    model = TransformerClassifier(config)
    model.load_state_dict(load_state(init / "model.safetensors"))
    model.train()
    opt, device = c.adamw(model, 1e-5, 0.01), torch.device("cpu")
    precision = c.resolve_precision(args.precision or opts.precision, device)
    sizes = np.array([len(b) * int(lengths[b].max()) for b in batches])  # padded tokens per batch
    order = np.argsort(sizes, kind="stable")
    pick = order[np.linspace(0, len(order) - 1, min(args.batches, len(order))).round().astype(int)]
    times = []
    for i in pick:  # each the better of two steps (the machine may be shared)
        ids, mask = c.pad_batch([seqs[j] for j in batches[i]], config.pad_id)
        target = torch.full((ids.shape[0], config.num_classes), 1.0 / config.num_classes)
        best = float("inf")
        for _ in range(2):
            t = time.perf_counter()
            with c.autocast(device, precision):
                logits, _ = model(ids, mask)
            c.optimizer_step(F.cross_entropy(logits.float(), target), opt, model.parameters())
            best = min(best, time.perf_counter() - t)
        times.append(best)
    padded = int(sizes.sum())
    print(json.dumps({"recipe": path.name, "stage": args.stage, "sequences": len(seqs),
                      "batches_per_epoch": len(batches), "epochs": opts.epochs, "padded_tokens_per_epoch": padded,
                      "s_per_step": {"mean": round(float(np.mean(times)), 3), "min": round(min(times), 3),
                                     "max": round(max(times), 3), "timed": len(times)},
                      "estimated_train_s": round(float(np.mean(times)) * len(batches) * opts.epochs),
                      "tokenize_s": round(tokenize_s, 1), "precision": precision,
                      "threads": torch.get_num_threads()}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
