"""What the dataset CLIs share: opening the model folder and reading the labelled reviews, with one-line errors."""

from __future__ import annotations

import sys


def load_for_cli(model: str | None, device: str | None, data: str, need_head: str | None = None):
    """Open ``model`` (None: the bundled one) on ``device`` and read the labelled reviews of ``data``.

    Args:
        model: a model folder, ours or Hugging Face; None for the bundled model.
        device: "cpu", "cuda", ... or None (CUDA when available).
        data: a ``.jsonl`` / ``.jsonl.gz`` file of ``{"text": ..., "label": ...}`` rows
            (:func:`model.files.textio.read_labelled`).
        need_head: when given, the model must have a classification head; the name of the task goes into the
            error message (:meth:`model.Predictor.require_head`).

    Returns:
        ``(predictor, texts, labels)`` (``labels``: int array of shape (N,)), or None after printing one
        ``error: ...`` line to stderr: a missing or unreadable model folder or data file, a file with no reviews,
        or an attention-only model where ``need_head`` asks for a head. The caller exits with code 2.
    """
    from model.predictor.predictor import Predictor
    from model.files.textio import read_labelled

    try:
        predictor = Predictor.from_pretrained(model, device=device)
        if need_head:
            predictor.require_head(need_head)
        texts, labels = read_labelled(data)
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None
    if not texts:
        print(f"error: {data} holds no reviews", file=sys.stderr)
        return None
    return predictor, texts, labels
