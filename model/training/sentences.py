"""Sentence-level transfer set for distillation: single sentences of real reviews, labelled by the teacher.

Usage::

    python -m model.training.sentences --data ../shared/data/imdb --teacher DIR --out sentences.jsonl.gz

A review's label is decided by its whole text; a sentence such as "The acting was not bad at all." carries its
own sentiment, which a student trained on whole reviews rarely sees in isolation. This splits the fitting
training reviews (never validation or test reviews) into sentences of 4 to 40 words, and the teacher (a
classifier folder from :mod:`model.training.finetune_hf`) scores each one. One JSON line per sentence:
``{"text": str, "logits": [float, float]}`` (the format of :mod:`model.training.augment`; ``python -m
model.training.distill --augmented FILE`` reads either). Training-side code only.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

import numpy as np

from .augment import label_and_write
from .common import pick_device, train_split

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|<br\s*/?>")


def review_sentences(text: str, min_words: int = 4, max_words: int = 40) -> list[str]:
    """The sentences of one review with ``min_words`` to ``max_words`` words (split after . ! ? and at <br />)."""
    out = []
    for s in _SENTENCE_END.split(text):
        s = s.strip()
        if min_words <= len(s.split()) <= max_words:
            out.append(s)
    return out


def fit_sentences(texts: list[str], fit_idx: np.ndarray) -> list[str]:
    """The sentences (:func:`review_sentences`) of the fitting training reviews ``texts[fit_idx]``, in order."""
    return [s for i in fit_idx for s in review_sentences(texts[i])]


def main(argv: list[str] | None = None) -> int:
    """Write the teacher-labelled sentences; returns the exit code."""
    p = argparse.ArgumentParser(description="Teacher-labelled review sentences for distillation.")
    p.add_argument("--data", required=True)
    p.add_argument("--teacher", required=True, help="classifier folder (finetune_hf output)")
    p.add_argument("--out", required=True, help=".jsonl.gz to write")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-sentences", type=int, default=0, help="keep the first N sentences (0: all)")
    p.add_argument("--device", default="auto")
    args = p.parse_args(argv)
    t0 = time.time()
    texts, _, _, fit_idx = train_split(args.data, args.seed)
    sentences = fit_sentences(texts, fit_idx)
    if args.max_sentences:
        sentences = sentences[: args.max_sentences]
    label_and_write(sentences, Path(args.teacher), Path(args.out), 128, pick_device(args.device))
    print(json.dumps({"sentences": len(sentences), "wall_s": time.time() - t0}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
