"""Reading the IMDB training data (``{train,test,unsup}.jsonl.gz``). Training-side code only."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from model.textio import read_labelled_rows


def read_jsonl_gz(path: str | Path) -> tuple[list[str], np.ndarray]:
    """Read a ``.jsonl`` or ``.jsonl.gz`` file of ``{"text": str, "label": int}`` rows.

    Returns:
        ``(texts, labels)``: N strings and int64 [N] labels (1 positive,
        0 negative, -1 unlabeled).

    Raises:
        FileNotFoundError: if ``path`` does not exist.
        ValueError: on a malformed row, naming the file and line.
    """
    texts, labels = read_labelled_rows(path, lambda row: int(row.get("label", -1)))
    return texts, np.asarray(labels, dtype=np.int64)


def sha256_file(path: str | Path, chunk_bytes: int = 1 << 20) -> str:
    """Hex sha256 of a file, read in ``chunk_bytes`` chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(chunk_bytes):
            h.update(chunk)
    return h.hexdigest()
