"""The distillation transfer set: tokenized reviews and augmented texts with their teachers' soft targets.

:func:`transfer_set` builds what :mod:`model.training.distill` and :mod:`model.training.grow` train on: the
fitting train reviews (teacher soft labels mixed with a share of the gold label), unlabeled reviews (teacher
soft labels) and ``--augmented`` teacher-labelled texts (Hinton et al. 2015; Tang et al. 2019). The seeded
validation split (:func:`model.training.common.validation_split`) is returned apart and never trained on.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from dataclasses import dataclass

import numpy as np
import torch

from ..core.tokenizer import TextEncoder
from .common import read_split, seeded_subset, train_split


def add_transfer_args(p: argparse.ArgumentParser) -> None:
    """The options of the distillation transfer set (:func:`transfer_set`): --teacher, --temperature,
    --gold-weight, --augmented, --no-unsup, --unsup-limit, --limit."""
    p.add_argument("--teacher", action="append", default=[], help="teacher logits .npz (train, unsup); repeatable")
    p.add_argument("--temperature", type=float, default=2.0)
    p.add_argument("--gold-weight", type=float, default=0.3, help="share of the one-hot label in gold targets")
    p.add_argument("--augmented", action="append", default=[],
                   help="teacher-labelled texts (model.training.augment / sentences / counterfactual), one teacher; "
                        "repeatable; FILE:K uses every row K times, FILE%%N a seeded sample of N rows")
    p.add_argument("--no-unsup", action="store_true", help="use no unlabeled reviews (no unsup file needed)")
    p.add_argument("--unsup-limit", type=int, default=0, help="use the first N unlabeled reviews (0: all)")
    p.add_argument("--limit", type=int, default=0, help="use the first N fitting reviews (smoke tests)")


def combine_teachers(paths: list[str], val_idx: np.ndarray, val_y: np.ndarray) -> tuple[dict, dict]:
    """Teacher logits ``{"train": [N, 2], "unsup": [M, 2]}`` combined as w z_1 + (1 - w) z_2, w picked on validation.

    The logits are first put on one scale (divided by their standard deviation on the train split).
    Returns ``(logits, info)``; info records each teacher's validation accuracy and the chosen w.
    """
    teachers = [np.load(p) for p in paths]
    scaled = []
    info = {"files": paths, "validation_accuracy": [], "scales": []}
    for t in teachers:
        z = {k: t[k] - t[k].mean(1, keepdims=True) for k in ("train", "unsup")}
        s = float(z["train"].std()) or 1.0
        info["scales"].append(s)
        scaled.append({k: v / s for k, v in z.items()})
        info["validation_accuracy"].append(float((t["train"][val_idx].argmax(1) == val_y).mean()))
    if len(scaled) == 1:
        info["weights"] = [1.0]
        return scaled[0], info
    if len(scaled) != 2:
        raise ValueError("give one or two --teacher files")
    grid = np.round(np.linspace(0, 1, 21), 2)
    accs = [float(((w * scaled[0]["train"][val_idx] + (1 - w) * scaled[1]["train"][val_idx]).argmax(1) == val_y).mean())
            for w in grid]
    best = max(range(len(grid)), key=lambda i: (accs[i], grid[i]))  # ties: the larger weight of teacher 1
    w = float(grid[best])
    info.update(weights=[w, 1 - w], combined_validation_accuracy=accs[best], grid={str(g): a for g, a in zip(grid, accs)})
    return {k: w * scaled[0][k] + (1 - w) * scaled[1][k] for k in ("train", "unsup")}, info


def read_augmented(spec: str, seed: int = 0) -> tuple[list[str], list[list[float]], int]:
    """Rows of one ``--augmented`` file: ``(texts, logits rows [negative, positive], rows used)``.

    ``spec`` is a ``.jsonl.gz`` path, optionally ``PATH:K`` (every row K times) or ``PATH%N`` (a sample of N
    rows, seeded by ``seed``). Raises ValueError for a malformed suffix, FileNotFoundError for a missing file.
    """
    repeat, sample = 1, 0
    if ":" in spec and spec.rsplit(":", 1)[1].isdigit():
        spec, k = spec.rsplit(":", 1)
        repeat = int(k)
    elif "%" in spec:
        spec, n = spec.rsplit("%", 1)
        if not n.isdigit():
            raise ValueError(f"--augmented {spec}%{n}: N must be a whole number")
        sample = int(n)
    texts, z = [], []
    with gzip.open(spec, "rt", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            texts.append(row["text"])
            z.append(row["logits"])
    if sample and sample < len(texts):
        keep = seeded_subset(len(texts), sample, seed)
        texts, z = [texts[i] for i in keep], [z[i] for i in keep]
    return texts * repeat, z * repeat, len(texts)


@dataclass(frozen=True)
class ReviewSplit:
    """The reviews of a distillation run, tokenized: ``seqs`` (fitting train reviews, then unlabeled ones; int64
    id arrays), ``val_seqs`` and ``val_y`` (int64 [V]) of the seeded validation split, and the indices they came
    from (``train_labels`` int64 [N], ``fit_idx``, ``unsup_idx``, ``val_idx``)."""

    seqs: list
    val_seqs: list
    val_y: np.ndarray
    train_labels: np.ndarray
    fit_idx: np.ndarray
    unsup_idx: np.ndarray
    val_idx: np.ndarray


def review_split(args, encoder: TextEncoder) -> ReviewSplit:
    """Read and tokenize the train split (fitting part, validation part) and ``--unsup-limit`` unlabeled reviews
    (none with ``--no-unsup``). Raises FileNotFoundError when a split file is missing."""
    train_texts, train_labels, val_idx, fit_idx = train_split(args.data, args.seed)
    unsup_texts = [] if args.no_unsup else read_split(args.data, "unsup")[0]
    if args.limit:
        fit_idx = fit_idx[: args.limit]
    unsup_idx = np.arange(min(args.unsup_limit or len(unsup_texts), len(unsup_texts)))
    print("tokenizing ...", file=sys.stderr)
    fit_seqs = [ids for ids, _ in encoder.encode_ids_batch([train_texts[i] for i in fit_idx])]
    unsup_seqs = [ids for ids, _ in encoder.encode_ids_batch([unsup_texts[i] for i in unsup_idx])]
    val_seqs = [ids for ids, _ in encoder.encode_ids_batch([train_texts[i] for i in val_idx])]
    return ReviewSplit(fit_seqs + unsup_seqs, val_seqs, train_labels[val_idx], train_labels, fit_idx, unsup_idx, val_idx)


def transfer_set(args, encoder: TextEncoder, num_classes: int, reviews: ReviewSplit) -> tuple[list, np.ndarray, dict]:
    """The distillation transfer set: ``(seqs, targets float32 [N, C], teacher_info)``.

    ``seqs`` are the reviews' sequences followed by the ``--augmented`` texts'; ``targets`` are softmax(z / T) of
    the (combined) teacher logits, mixed with a ``--gold-weight`` share of the one-hot label for the fitting
    train reviews (Hinton et al. 2015). Augmented logits are centred and put on the teacher's scale.
    Raises SystemExit when no ``--teacher`` is given, or ``--augmented`` with more than one.
    """
    if not args.teacher:
        raise SystemExit("--teacher is required for the distillation stage")
    z, teacher_info = combine_teachers(args.teacher, reviews.val_idx, reviews.val_y)
    T = args.temperature
    fit_idx, unsup_idx = reviews.fit_idx, reviews.unsup_idx
    p_fit = torch.softmax(torch.from_numpy(z["train"][fit_idx]) / T, -1).numpy()
    onehot = np.eye(num_classes, dtype=np.float32)[reviews.train_labels[fit_idx]]
    targets = np.concatenate([args.gold_weight * onehot + (1 - args.gold_weight) * p_fit,
                              torch.softmax(torch.from_numpy(z["unsup"][unsup_idx]) / T, -1).numpy()]).astype(np.float32)
    seqs = list(reviews.seqs)
    if args.augmented:
        if len(args.teacher) != 1:
            raise SystemExit("--augmented needs exactly one --teacher (the one that labelled the augmented texts)")
        aug_texts, aug_z, files = [], [], []
        for spec in args.augmented:
            texts, z_rows, used = read_augmented(spec, args.seed)
            aug_texts += texts
            aug_z += z_rows
            files.append({"spec": spec, "texts": used})
        z_aug = np.asarray(aug_z, np.float32)
        z_aug = (z_aug - z_aug.mean(1, keepdims=True)) / teacher_info["scales"][0]
        seqs += [ids for ids, _ in encoder.encode_ids_batch(aug_texts)]
        targets = np.concatenate([targets, torch.softmax(torch.from_numpy(z_aug) / T, -1).numpy()])
        teacher_info["augmented"] = {"files": files, "texts": len(aug_texts)}
    return seqs, targets, teacher_info
