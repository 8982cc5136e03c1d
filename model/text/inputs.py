"""What goes into the model, checked and cut before any forward pass: the text check (:func:`check_text`), the
input spec (:class:`InputSpec`: one text, or a text and a second text), the device choice (:func:`resolve_device`) and the token-budget batches of bulk scoring (:func:`token_budget_batches`).

Used by :class:`model.Predictor`; torch is needed only by :func:`resolve_device`, which imports it (so the batch
and corpus modules that check texts here stay free of torch: the app's window paints before torch is imported).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from model.records.prediction import PairNotSupported

if TYPE_CHECKING:  # pragma: no cover
    import torch

MAX_TEXT_CHARS = 2_000_000  # longer inputs are rejected with ValueError (about 2 MB of text)


def token_budget_batches(
    lengths: Sequence[int], order: Sequence[int], batch_size: int, max_tokens: int
) -> Iterator[np.ndarray]:
    """Cut length-sorted items into batches of at most ``batch_size`` items and ``max_tokens`` padded tokens.

    Args:
        lengths: token count of each item, in the sorted order (ascending).
        order: the item indices, sorted by length (same order as ``lengths``).
        batch_size: most items per batch.
        max_tokens: most ``items * longest`` tokens per batch; an item longer
            than the budget still forms a batch of one.

    Yields:
        int64 index arrays (slices of ``order``).
    """
    order = np.asarray(order, dtype=np.int64)
    start = 0
    for i, n in enumerate(lengths):
        count = i - start + 1
        if i > start and (count > batch_size or count * n > max_tokens):
            yield order[start:i]
            start = i
    if start < len(order):
        yield order[start:]


def check_text(text: object) -> str:
    """Validate one input text; returns it unchanged.

    Raises:
        ValueError: if it is not a string, is empty or whitespace only, or is
            longer than ``MAX_TEXT_CHARS`` characters.
    """
    if not isinstance(text, str):
        raise ValueError(f"expected text as str, got {type(text).__name__}")  # noqa: TRY004 (one error type for bad input)
    if not text.strip():
        raise ValueError("the text is empty")
    if len(text) > MAX_TEXT_CHARS:
        raise ValueError(f"the text has {len(text):,} characters; the limit is {MAX_TEXT_CHARS:,}")
    return text


@dataclass(frozen=True)
class InputSpec:
    """What one model reads: a single text, or a text and a second text (``text_pair``, a sentence pair). The one
    place that decides whether a second text may be given; the Predictor, batch scoring, the command line and the
    Batch scoring dock ask it (each adding what the user can do about it to :meth:`refusal`'s message).

    Attributes:
        reads_pairs: True when the model's tokenizer has a sentence-pair template.
        name: how messages name the model ("this model", "the model in /path/to/folder").
    """

    reads_pairs: bool = False
    name: str = "this model"

    @classmethod
    def of(cls, model: Any, name: str | None = None) -> InputSpec:
        """The spec of a :class:`model.Predictor` (``reads_pairs``; False for an object without it, or None).
        ``name`` overrides the model's name in messages; default "the model in <model_dir>", or "this model"."""
        if name is None:
            folder = getattr(model, "model_dir", None)
            name = f"the model in {folder}" if folder is not None else "this model"
        return cls(bool(getattr(model, "reads_pairs", False)), name)

    def refusal(self, pair: object) -> str | None:
        """Why a second text (``pair``: the text, or the column that holds them; None: none given) cannot be given:
        "<name> reads single texts, not sentence pairs"; None when there is none or the model reads pairs."""
        if pair is None or self.reads_pairs:
            return None
        return f"{self.name} reads single texts, not sentence pairs"

    def allow(self, pair: object) -> None:
        """Nothing when :meth:`refusal` has no objection to ``pair`` (a second text, or None: none given).

        Raises:
            PairNotSupported: a second text for a model that reads single texts (the message names the model).
        """
        refused = self.refusal(pair)
        if refused is not None:
            raise PairNotSupported(f"{refused}: it has no sentence-pair template, so a second text cannot be given")

    def check_pair(self, text_pair: object) -> str | None:
        """``text_pair`` checked (None stays None).

        Raises:
            PairNotSupported: see :meth:`allow`.
            ValueError: an empty or bad second text, "second text: ..." (:func:`check_text`).
        """
        self.allow(text_pair)
        if text_pair is None:
            return None
        try:
            return check_text(text_pair)
        except ValueError as exc:
            raise ValueError(f"second text: {exc}") from None


def resolve_device(device: str | torch.device | None) -> torch.device:
    """``None`` -> CUDA when available, else CPU; strings pass to ``torch.device``.

    Raises:
        ValueError: for an unknown device string or CUDA requested without CUDA.
    """
    import torch

    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except RuntimeError as exc:
        raise ValueError(f"unknown device {device!r}: {exc}") from exc
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("CUDA was requested but is not available")
    return dev


__all__ = ["MAX_TEXT_CHARS", "InputSpec", "check_text", "resolve_device", "token_budget_batches"]
