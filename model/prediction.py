"""The inference results: :class:`Prediction` (one analysed text) and :class:`Score` (one batch-scored text).

Immutable records of NumPy arrays and plain Python values (no torch), so they may cross threads and
reach the GUI's views. Every array is made read-only on construction (``setflags(write=False)``);
code that needs to change one works on a copy.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np


def freeze_arrays(record: object) -> None:
    """Make every NumPy array field of a dataclass ``record`` read-only (in place; views stay views)."""
    for f in fields(record):
        value = getattr(record, f.name)
        if isinstance(value, np.ndarray):
            value.setflags(write=False)


@dataclass(frozen=True)
class Prediction:
    """The result of analysing one text; immutable, NumPy only (no torch).

    T is the number of tokens the model saw (the classification token
    included), L layers, H heads, C classes.

    Attributes:
        text: the input text as given.
        tokens: T token strings (WordPiece pieces; ``[CLS]`` first).
        offsets: int64 [T, 2], character span (start, end) of each token in
            ``text``; ``text[s:e]`` is the token's source. ``[CLS]`` is (0, 0).
        label: the predicted class name ("" in attention-only mode).
        labels: all class names, index-aligned with ``probabilities``; empty for a model without a
            classification head (attention-only mode).
        probabilities: float32 [C], softmax of ``logits``, sums to 1; shape (0,) in attention-only mode.
        logits: float32 [C] (shape (0,) in attention-only mode).
        attention: float32 [L, H, T, T]; ``attention[l, h, i, j]`` is how much
            query token i attends to key token j in layer l, head h. Rows sum to 1.
        truncated: True when the text was longer than the model's maximum
            length and the head+tail policy dropped tokens.
        num_source_tokens: word pieces in the whole text before truncation.
        elapsed_s: wall time of tokenisation + forward pass, in seconds.
        device: where the model ran, e.g. "cpu" or "cuda:0".
        pooling: how the head reads the sequence: "mean" or "cls".
    """

    text: str
    tokens: list[str]
    offsets: np.ndarray
    label: str
    labels: tuple[str, ...]
    probabilities: np.ndarray
    logits: np.ndarray
    attention: np.ndarray
    truncated: bool
    num_source_tokens: int
    elapsed_s: float
    device: str = "cpu"
    pooling: str = "mean"

    def __post_init__(self) -> None:
        freeze_arrays(self)

    @property
    def num_tokens(self) -> int:
        """T, the number of tokens the model saw."""
        return len(self.tokens)

    @property
    def attention_only(self) -> bool:
        """True for a model without a classification head: ``labels`` is empty, ``probabilities`` shape (0,)."""
        return len(self.labels) == 0

    @property
    def label_index(self) -> int:
        """Index of ``label`` in ``labels`` (argmax of ``probabilities``); -1 in attention-only mode."""
        return int(np.argmax(self.probabilities)) if len(self.probabilities) else -1

    def classification_attention(self, layer: int) -> np.ndarray:
        """Attention that the classification read-out pays to each token, mean of heads.

        For ``pooling == "cls"`` this is row 0 (the ``[CLS]`` query); for mean
        pooling, every position feeds the head equally, so it is the mean of
        all query rows.

        Returns:
            float32 [T], sums to 1.
        """
        a = self.attention[layer].mean(axis=0)  # (T, T)
        return (a[0] if self.pooling == "cls" else a.mean(axis=0)).astype(np.float32)

    def to_json_dict(self) -> dict:
        """Everything as JSON-serialisable Python types (for export)."""
        return {
            "text": self.text,
            "tokens": list(self.tokens),
            "offsets": self.offsets.tolist(),
            "label": self.label,
            "labels": list(self.labels),
            "probabilities": self.probabilities.tolist(),
            "logits": self.logits.tolist(),
            "attention": self.attention.tolist(),
            "attention_shape": list(self.attention.shape),
            "truncated": self.truncated,
            "num_source_tokens": self.num_source_tokens,
            "elapsed_s": self.elapsed_s,
            "device": self.device,
            "pooling": self.pooling,
        }


class NoClassificationHead(ValueError):
    """Raised when a prediction, explanation or score is asked of a model without a classification head
    (a bare encoder opened in attention-only mode)."""


@dataclass(frozen=True)
class NoPositionalMatrix:
    """The typed answer of ``Predictor.positional_encoding`` for a model that adds no positional matrix to its
    embeddings (relative-position models such as DeBERTa-v2/v3): there is nothing to plot.

    Attributes:
        kind: the positional-encoding kind, e.g. ``"relative (disentangled attention)"``.
        explanation: one or two sentences for the positional-encoding view.
    """

    kind: str
    explanation: str


@dataclass(frozen=True)
class Score:
    """One text's batch-scoring result (no attention).

    Attributes:
        label: predicted class name, or "" when ``error`` is set.
        probabilities: float32 [C] (all zeros when ``error`` is set).
        truncated: the text was cut by the head+tail policy.
        num_tokens: tokens the model saw, ``[CLS]`` included (0 on error).
        error: None, or why the text could not be scored (e.g. "empty text").
    """

    label: str
    probabilities: np.ndarray
    truncated: bool
    num_tokens: int
    error: str | None = None

    def __post_init__(self) -> None:
        freeze_arrays(self)

    @property
    def ok(self) -> bool:
        """True when the text was scored."""
        return self.error is None
