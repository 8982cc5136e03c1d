"""Soft labels from one of our own student models: a "learning without forgetting" anchor for a later stage.

Usage::

    python -m model.training.relabel --data ../shared/data/imdb --model runs/step4 \
        --reviews runs/step4_logits.npz --unsup-limit 10000 --scale-to model/training/artifacts/teacher_minilm_logits.npz
    python -m model.training.relabel --data ../shared/data/imdb --model runs/step7 \
        --sentences runs/sentences_step7.jsonl.gz --max-sentences 40000 \
        --scale-to model/training/artifacts/teacher_minilm_logits.npz

When a fine-tuning stage teaches the student something new (reading negation), it also drifts on what it
already did well (whole reviews). Learning without Forgetting (Li & Hoiem 2017, "Learning without
Forgetting", eq. 2) counters this by distilling the model's *own* earlier outputs on the old task while
the new data is learned. This writes such targets in the formats :mod:`model.training.distill` reads:

* ``--reviews FILE.npz``: ``{"train": float32 [25000, 2], "unsup": float32 [M, 2]}`` logits of the student
  on every training review (validation reviews included, as in a teacher file: distillation never trains on
  them) and on the first M = ``--unsup-limit`` unlabeled reviews; ``distill --teacher FILE.npz`` reads it.
* ``--sentences FILE.jsonl.gz``: the sentences of the fitting training reviews
  (:func:`model.training.sentences.fit_sentences`), one ``{"text", "logits"}`` line each;
  ``distill --augmented FILE`` reads it.

``--scale-to TEACHER.npz`` multiplies the logits by std(teacher train logits) / std(student train logits),
so that files mixed with that teacher's augmented sets (whose logits ``distill`` divides by the teacher
file's standard deviation) keep the teacher's sharpness. Training-side code only.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path

import numpy as np

from ..core.encoder import TransformerClassifier
from ..core.tokenizer import TextEncoder, load_tokenizer
from ..core.weights import TOKENIZER_FILE, load_model
from .common import pick_device, read_split, seeded_subset, train_split
from .distill import predict
from .sentences import fit_sentences


def load_student(model_dir: str | Path, device) -> tuple[TransformerClassifier, TextEncoder]:
    """The model of the folder ``model_dir`` (eval mode, on ``device``) and its text encoder (``max_len`` tokens).

    Raises FileNotFoundError / ValueError (from :func:`model.core.weights.load_model` and the tokenizer) for a
    missing or broken folder.
    """
    model = load_model(model_dir, device)
    return model, TextEncoder(load_tokenizer(Path(model_dir) / TOKENIZER_FILE), model.config.max_len)


def student_logits(model: TransformerClassifier, encoder: TextEncoder, texts: list[str], device) -> np.ndarray:
    """float32 [N, C] logits of ``model`` for ``texts`` (cut by ``encoder`` to the model's ``max_len`` tokens)."""
    return predict(model, [ids for ids, _ in encoder.encode_ids_batch(texts)], device)


def centred_std(z: np.ndarray) -> float:
    """The standard deviation of row-centred logits [N, C] (the scale ``transfer.combine_teachers`` divides by)."""
    return float((z - z.mean(1, keepdims=True)).std()) or 1.0


def main(argv: list[str] | None = None) -> int:
    """Write the requested label files; returns the exit code (2 for a bad model folder or data folder)."""
    p = argparse.ArgumentParser(description="Soft labels from one of our student models (LwF anchor).")
    p.add_argument("--data", required=True)
    p.add_argument("--model", required=True, help="student model folder (config.json, model.safetensors, tokenizer)")
    p.add_argument("--reviews", default="", help=".npz of train + unsup logits to write")
    p.add_argument("--unsup-limit", type=int, default=0, help="first N unlabeled reviews (0: none)")
    p.add_argument("--sentences", default="", help=".jsonl.gz of labelled training sentences to write")
    p.add_argument("--max-sentences", type=int, default=0, help="keep a seeded sample of N sentences (0: all)")
    p.add_argument("--scale-to", default="", help="teacher .npz whose logit scale to match")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto")
    args = p.parse_args(argv)
    if not (args.reviews or args.sentences):
        p.error("give --reviews and/or --sentences")
    t0, device = time.time(), pick_device(args.device)
    try:
        model, encoder = load_student(args.model, device)  # a bad folder fails here, before the reviews are read
        texts, _, _, fit_idx = train_split(args.data, args.seed)
    except (FileNotFoundError, ValueError) as exc:
        print(f"relabel: {exc}", file=sys.stderr)
        return 2
    z_train = student_logits(model, encoder, texts, device)  # (25000, C): also gives the scale
    scale = 1.0
    if args.scale_to:
        scale = centred_std(np.load(args.scale_to)["train"]) / centred_std(z_train)
    report = {"model": args.model, "scale": scale}
    if args.reviews:
        unsup = read_split(args.data, "unsup")[0][: args.unsup_limit] if args.unsup_limit else []
        z_unsup = student_logits(model, encoder, unsup, device) if unsup else np.zeros((0, z_train.shape[1]), np.float32)
        np.savez_compressed(args.reviews, train=z_train * scale, unsup=z_unsup * scale)
        report.update(reviews=args.reviews, train=len(z_train), unsup=len(z_unsup))
    if args.sentences:
        sentences = fit_sentences(texts, fit_idx)
        if args.max_sentences:
            sentences = [sentences[i] for i in seeded_subset(len(sentences), args.max_sentences, args.seed)]
        z = student_logits(model, encoder, sentences, device) * scale
        with gzip.open(args.sentences, "wt", encoding="utf-8") as fh:
            for text, row in zip(sentences, z):
                fh.write(json.dumps({"text": text, "logits": [round(float(v), 4) for v in row]}) + "\n")
        report.update(sentences=args.sentences, sentence_count=len(sentences))
    report["wall_s"] = time.time() - t0
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
