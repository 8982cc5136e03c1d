"""A data folder's splits: the files, the reviews and labels of one split, the seeded validation split.

A data folder holds ``train``, ``test``, ``unsup`` (and for other tasks ``dev``) as ``.jsonl.gz``, ``.jsonl.xz`` or
``.jsonl`` of ``{"text", "label"}`` rows (:mod:`.task_data` also reads ``.csv`` and ``.tsv``). The validation split
is 1,250 reviews of the official train split, a seeded permutation's first rows, never trained on: the training
pipeline chooses on it and ``model.evaluation.window_variants`` measures on it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from model.files.textio import read_labelled_rows

VAL_SIZE = 1250  # reviews of the official train split held out for validation (seeded; never trained on)
JSONL_SUFFIXES = (".jsonl.gz", ".jsonl.xz", ".jsonl")
TABLE_SUFFIXES = (*JSONL_SUFFIXES, ".csv", ".tsv")  # the split files of any task (:mod:`.task_data`)


class UsageError(Exception):
    """Bad input from the user (missing data folder or column, bad label, recipe or option): the training and
    evaluation commands print it on one line and exit 2."""


def split_file(data: str | Path, name: str, suffixes: tuple[str, ...] = JSONL_SUFFIXES) -> Path:
    """The file of split ``name`` (train, dev, test, unsup) in ``data``: ``NAME`` plus the first of ``suffixes``
    that exists (default ``.jsonl.gz``, ``.jsonl.xz``, ``.jsonl``); FileNotFoundError when none exists."""
    for path in (Path(data) / f"{name}{suffix}" for suffix in suffixes):
        if path.is_file():
            return path
    raise FileNotFoundError(f"no {name}{suffixes[0]} (or {' / '.join(suffixes[1:])}) in {data}")


def check_data(data: str | Path, splits: tuple[str, ...] = ("train",),
               suffixes: tuple[str, ...] = JSONL_SUFFIXES) -> Path:
    """``data`` as a Path; raises UsageError unless it is a folder with one of ``splits`` (default a train split)
    in one of ``suffixes`` (see :func:`split_file`)."""
    if not any((Path(data) / f"{name}{suffix}").is_file() for name in splits for suffix in suffixes):
        raise UsageError(f"data folder not found or without {' or '.join(splits)}{suffixes[0]} "
                         f"({', '.join(suffixes[1:])}): {data}")
    return Path(data)


def read_split(data: str | Path, name: str) -> tuple[list[str], np.ndarray]:
    """Texts and int64 [N] labels (1 positive, 0 negative, -1 unlabeled) of one split; see :func:`split_file`.

    Raises FileNotFoundError for a missing split, ValueError for a malformed row (naming file and line)."""
    texts, labels = read_labelled_rows(split_file(data, name), lambda row: int(row.get("label", -1)))
    return texts, np.asarray(labels, dtype=np.int64)


def validation_split(n_train: int, seed: int = 0, val_size: int = VAL_SIZE) -> tuple[np.ndarray, np.ndarray]:
    """``(val_idx, fit_idx)``: int64 index arrays into the train split (a seeded permutation, first ``val_size``)."""
    perm = np.random.default_rng(seed).permutation(n_train)
    return perm[:val_size], perm[val_size:]


def train_split(data: str | Path, seed: int = 0) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """``(texts, labels int64 [N], val_idx, fit_idx)`` of the train split with its seeded validation split."""
    texts, labels = read_split(data, "train")
    val_idx, fit_idx = validation_split(len(texts), seed)
    return texts, labels, val_idx, fit_idx


def seeded_subset(n: int, k: int, seed: int = 0) -> np.ndarray:
    """Sorted int64 indices of a seeded random sample of ``k`` of ``n`` rows (all ``n`` when ``k >= n``)."""
    return np.sort(np.random.default_rng(seed).permutation(n)[:k])
