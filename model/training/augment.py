"""Augmented transfer set for knowledge distillation (Tang et al. 2019, "Distilling Task-Specific Knowledge
from BERT into Simple Neural Networks", section 3.2), labelled by a fine-tuned teacher.

Usage::

    python -m model.training.augment --data ../shared/data/imdb --teacher DIR --copies 2 --out aug.jsonl.gz

Each fitting training review and each unlabeled review (never a validation or test review) yields
``--copies`` perturbed texts: with probability ``--p-window`` only a contiguous window of 20-70% of its words
is kept (Tang et al.'s n-gram sampling, at the scale of a review); then every word is replaced by
``[MASK]`` with probability ``--p-mask`` and by a random corpus word with probability ``--p-replace``.
The teacher (a classifier folder from :mod:`model.training.finetune_hf`) scores every text; the output has
one JSON line per text: ``{"text": str, "logits": [float, float]}``. Training-side code only.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path

import numpy as np

from .common import pick_device, read_split, train_split


def augment(words: list[str], pool: list[str], rng: np.random.Generator, p_window: float = 0.5,
            p_mask: float = 0.1, p_replace: float = 0.05) -> str:
    """One perturbed copy of a review given as its words; ``pool`` holds words to draw replacements from."""
    n = len(words)
    if n > 10 and rng.random() < p_window:
        length = int(n * rng.uniform(0.2, 0.7))
        start = int(rng.integers(0, n - length + 1))
        words = words[start : start + length]
    out = list(words)
    roll = rng.random(len(out))
    for i in np.flatnonzero(roll < p_mask + p_replace):
        out[i] = "[MASK]" if roll[i] < p_mask else pool[int(rng.integers(len(pool)))]
    return " ".join(out)


def label_and_write(texts: list[str], teacher: Path, out: Path, max_len: int, device) -> None:
    """Score ``texts`` with the teacher classifier folder and write ``{"text", "logits": [2 floats]}`` JSON lines
    (gzip) to ``out``; texts are cut head+tail to ``max_len`` tokens for the teacher."""
    from ..hf.encoding import encode_head_tail
    from .finetune_hf import load_base, logits_of

    tok, model = load_base(teacher)
    logits = logits_of(model.to(device), encode_head_tail(tok, texts, max_len), tok.pad_token_id or 0, device)
    with gzip.open(out, "wt", encoding="utf-8") as fh:
        for text, z in zip(texts, logits):
            fh.write(json.dumps({"text": text, "logits": [round(float(v), 4) for v in z]}) + "\n")


def main(argv: list[str] | None = None) -> int:
    """Write the augmented, teacher-labelled transfer set; returns the exit code."""
    p = argparse.ArgumentParser(description="Teacher-labelled augmented reviews for distillation.")
    p.add_argument("--data", required=True)
    p.add_argument("--teacher", required=True, help="classifier folder (finetune_hf output)")
    p.add_argument("--out", required=True, help=".jsonl.gz to write")
    p.add_argument("--copies", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    for name, default, what in (("window", 0.5, "keep a random 20-70%% window of the words"),
                                ("mask", 0.1, "replace a word by [MASK]"), ("replace", 0.05, "replace a word by a random one")):
        p.add_argument(f"--p-{name}", type=float, default=default, help=f"probability to {what}")
    p.add_argument("--max-len", type=int, default=512)
    p.add_argument("--device", default="auto")
    args = p.parse_args(argv)
    t0 = time.time()
    train_texts, _, _, fit_idx = train_split(args.data, args.seed)
    unsup_texts, _ = read_split(args.data, "unsup")
    sources = [train_texts[i] for i in fit_idx] + unsup_texts
    rng = np.random.default_rng(args.seed + 17)
    split = [t.replace("<br />", " ").split() for t in sources]
    pool = [w for ws in split[:2000] for w in ws]
    texts = [augment(ws, pool, rng, args.p_window, args.p_mask, args.p_replace) for _ in range(args.copies) for ws in split]
    label_and_write(texts, Path(args.teacher), Path(args.out), args.max_len, pick_device(args.device))
    print(json.dumps({"texts": len(texts), "wall_s": time.time() - t0}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
