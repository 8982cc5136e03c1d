"""The inference results: :class:`Prediction` (one analysed text) and :class:`Score` (one batch-scored text).

Immutable records of NumPy arrays and plain Python values (no torch), so they may cross threads and
reach the GUI's views. Every array is made read-only on construction (``setflags(write=False)``);
code that needs to change one works on a copy.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from model.tasks.types import SINGLE_LABEL, task_type

from .document import Document


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
        label: the prediction as one string: single-label, the predicted class name; multi-label, the labels at
            or above ``threshold`` joined by ``";"`` (possibly ""); regression, "" (see ``value``); "" in
            attention-only mode.
        labels: all class names (multi-label: label names; regression: the output's name), index-aligned with
            ``logits``; empty for a model without a classification head (attention-only mode).
        probabilities: float32 [C] (:func:`model.tasks.task.probabilities_of`): single-label, softmax of ``logits``
            (sums to 1); multi-label, the sigmoid of each logit; shape (0,) for regression and in attention-only
            mode.
        logits: float32 [C] (shape (0,) in attention-only mode).
        attention: float32 [L, H, T, T]; ``attention[l, h, i, j]`` is how much
            query token i attends to key token j in layer l, head h. Rows sum to 1. ``tokens``, ``offsets`` and
            ``attention`` always describe the same T tokens: for a text read in windows, one window's.
        truncated: True when the text was longer than the model's maximum
            length and the head+tail policy dropped tokens (never with the windows policy).
        num_source_tokens: word pieces in the whole text before truncation.
        elapsed_s: wall time of tokenisation + forward passes, in seconds.
        device: where the model ran, e.g. "cpu" or "cuda:0".
        pooling: how the head reads the sequence: "mean" or "cls".
        document: the whole text (:class:`model.records.document.Document`: its tokens, windows and each window's
            logits). Always set (built from this record when not given): for a text that fits, a one-window document
            sharing ``tokens`` and ``offsets``; for a text read in windows (``num_windows > 1``) this record is
            window ``window`` of it: ``text`` is that window's text (``document.window_text(window)``), ``tokens``,
            ``offsets`` and ``attention`` that window's, while ``label``, ``probabilities`` and ``logits`` are the
            whole document's verdict (its windows' logits aggregated; ``document.window_logits[window]`` is this
            window's own).
        window: which window of ``document`` this record shows (0 for a text that fits).
        document_index: int64 [T], the document token index of each of this record's tokens (-1 where the document has
            no such token, e.g. a piece a tokenizer splits differently at a window's edge); ``arange(T)`` for a text
            that fits.
        task: :data:`model.tasks.task.TASKS`: ``"single_label"``, ``"multi_label"`` or ``"regression"``.
        threshold: the multi-label decision threshold used for ``label`` (in (0, 1)).
        text_pair: the second text of a sentence pair, or None for a single text. Offsets of the second text's
            tokens index ``text_pair`` (``segment_ids`` says which text a token's offsets index).
        segment_ids: int8 [T], for a pair: 0 for the first text's tokens and the special tokens before and
            around it, 1 for the second text's tokens and the special tokens after it (the model's
            ``token_type_ids`` where it has them); None for a single text.
        pair_truncated: which side of a pair the longest-first truncation cut: "" (none), "first", "second" or
            "both".
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
    document: Document | None = None
    window: int = 0
    document_index: np.ndarray | None = None
    task: str = SINGLE_LABEL
    threshold: float = 0.5
    text_pair: str | None = None
    segment_ids: np.ndarray | None = None
    pair_truncated: str = ""

    def __post_init__(self) -> None:
        if self.document is None:  # not given: the one-window document of this text
            doc = Document.single(self.text, self.tokens, self.offsets, self.logits, self.probabilities, None,
                                  self.text_pair, self.segment_ids)
            object.__setattr__(self, "document", doc)
        if self.document_index is None:
            object.__setattr__(self, "document_index", np.arange(len(self.tokens), dtype=np.int64))
        freeze_arrays(self)

    def to_document_token(self, i: int) -> int:
        """The document token index of this record's token ``i`` (``i`` itself for a text that fits; -1 for none)."""
        return int(self.document_index[i])

    def from_document_token(self, j: int) -> int | None:
        """This record's index of the document's token ``j``, or None when this window does not read it."""
        hit = np.flatnonzero(self.document_index == j)
        return int(hit[0]) if len(hit) else None

    @property
    def num_windows(self) -> int:
        """W, the windows the whole text is read in (1 for a text that fits): ``document.num_windows``."""
        return self.document.num_windows

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
        """The default class to explain: the argmax of ``logits`` (single-label: the predicted class; multi-label:
        the most probable label; regression: 0, the output); -1 in attention-only mode."""
        return int(np.argmax(self.logits)) if len(self.logits) else -1

    @property
    def is_pair(self) -> bool:
        """True for a sentence pair (``text_pair`` given)."""
        return self.text_pair is not None

    @property
    def pair_start(self) -> int:
        """Index of the first token of the second text's segment (``segment_ids == 1``), or -1 for a single text
        (a pair is never read in windows, so its document's: :attr:`model.records.document.Document.pair_start`)."""
        return self.document.pair_start

    @property
    def value(self) -> float | None:
        """Regression: the predicted value (the raw output, ``logits[0]``); None for the other tasks."""
        return task_type(self.task).value_of(self.logits)

    @property
    def predicted_labels(self) -> tuple[str, ...]:
        """Single-label: ``(label,)``; multi-label: the labels at or above ``threshold`` (model order); regression
        and attention-only mode: ``()`` (:meth:`model.tasks.types.TaskType.labels_of`)."""
        return task_type(self.task).labels_of(self.probabilities, self.labels, self.threshold)

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
            "window": self.window,
            "windows": self.document.windows.ranges.tolist(),
            "window_probabilities": self.document.window_probabilities.tolist(),
            "task": self.task,
            "threshold": self.threshold,
            "text_pair": self.text_pair,
            "segment_ids": None if self.segment_ids is None else self.segment_ids.tolist(),
            "pair_truncated": self.pair_truncated,
            "value": self.value,
        }


class PairNotSupported(ValueError):
    """Raised when a sentence pair (``text_pair``) is given to a model that reads single texts (the bundled model,
    or a tokenizer without a pair template); the message names the model."""


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
        label: the prediction as one string, as :attr:`Prediction.label` (single-label: the class; multi-label: the
            labels at or above the threshold joined by ``";"``; regression: ""), or "" when ``error`` is set.
        probabilities: float32 [C] as :attr:`Prediction.probabilities` (softmax or sigmoids; shape (0,) for
            regression; all zeros when ``error`` is set).
        truncated: the text was cut (head+tail for a single text, longest-first for a pair).
        num_tokens: tokens the model saw, ``[CLS]`` included (0 on error); the whole text's under the windows
            policy.
        error: None, or why the text could not be scored (e.g. "empty text").
        num_windows: the windows the text was read in (1 for a text that fits or one cut; 0 on error).
        task: :data:`model.tasks.task.TASKS`, as :attr:`Prediction.task`.
        value: regression, the predicted value (the raw output); None otherwise and on error.
        pair_truncated: which side of a pair was cut, as :attr:`Prediction.pair_truncated`.
        vector: float32 [d], the text's sentence vector when the call kept them (``PredictOptions.vectors``; see
            :mod:`model.records.vectors`), else None (and on error).
    """

    label: str
    probabilities: np.ndarray
    truncated: bool
    num_tokens: int
    error: str | None = None
    num_windows: int = 1
    task: str = SINGLE_LABEL
    value: float | None = None
    pair_truncated: str = ""
    vector: np.ndarray | None = None

    def __post_init__(self) -> None:
        freeze_arrays(self)

    @property
    def ok(self) -> bool:
        """True when the text was scored."""
        return self.error is None
