"""Whole texts: :class:`DocumentWindows` (how a text is read in windows) and :class:`Document` (the whole text a
prediction belongs to, with its windows' logits). NumPy only.

:class:`DocumentWindows` is built by :func:`model.text.document_windows.document_windows` (the windows of the model's
maximum length; see docs/long_documents.md); :class:`Document` by ``Predictor.predict`` (every prediction has one).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class DocumentWindows:
    """How one text is read: its windows in document token indices and in characters.

    Attributes:
        ranges: int64 [W, 2] half-open document-token ranges of the text pieces each window reads (the document's
            tokens are the special prefix, every piece, the special suffix).
        chars: int64 [W, 2] the character span ``text[s:e]`` of each window's pieces.
        prefix: how many special tokens come before the pieces (1, ``[CLS]``, for the bundled model).
        suffix: how many come after them.
        num_tokens: T, the document's tokens.
    """

    ranges: np.ndarray
    chars: np.ndarray
    prefix: int
    suffix: int
    num_tokens: int

    @property
    def count(self) -> int:
        """W, the number of windows."""
        return len(self.ranges)

    def tokens_of(self, w: int) -> np.ndarray:
        """int64 [T_w]: the document token index of each of window w's tokens (special tokens included)."""
        s, e = (int(x) for x in self.ranges[w])
        pre = np.arange(self.prefix)
        suf = np.arange(self.num_tokens - self.suffix, self.num_tokens)
        return np.concatenate([pre, np.arange(s, e), suf]).astype(np.int64)


@dataclass(frozen=True)
class Document:
    """The whole text a :class:`model.records.prediction.Prediction` belongs to: its tokens, the windows it is read in,
    and each window's logits (what the document-level verdict aggregates).

    A text that fits in one window is a one-window document whose tokens and offsets are the prediction's own
    (the same objects). A longer text is read in windows (:mod:`model.text.document_windows`); its prediction is one
    window's (tokens, offsets and attention of that window) and this record holds the rest.

    Attributes:
        text: the whole text.
        tokens: T_doc token strings of the whole text (special tokens at both ends).
        offsets: int64 [T_doc, 2], the character span of each token in ``text`` ((0, 0) for special tokens).
        windows: how the text is read (:class:`DocumentWindows`: W windows in document token indices and characters).
        window_logits: float32 [W, C], each window's logits; the prediction's ``logits`` aggregate them
            (:func:`model.text.document_windows.aggregate`; for one window, equal).
        window_probabilities: float32 [W, C], each window's probabilities as the task reads its logits (softmax,
            sigmoids; [W, 0] for regression and in attention-only mode): the class probability along the document.
        text_pair: a sentence pair's second text (a pair is one window), else None; the offsets of the tokens with
            ``segment_ids == 1`` index it.
        segment_ids: int8 [T_doc] for a pair (0: the first text and the special tokens around it, 1: the second),
            else None.
    """

    text: str
    tokens: list[str]
    offsets: np.ndarray
    windows: DocumentWindows
    window_logits: np.ndarray
    window_probabilities: np.ndarray
    text_pair: str | None = None
    segment_ids: np.ndarray | None = None

    def __post_init__(self) -> None:
        for a in (self.offsets, self.window_logits, self.window_probabilities, self.segment_ids):
            if a is not None:
                a.setflags(write=False)

    @classmethod
    def single(cls, text: str, tokens: list[str], offsets: np.ndarray, logits: np.ndarray,
               probabilities: np.ndarray, windows: DocumentWindows | None = None, text_pair: str | None = None,
               segment_ids: np.ndarray | None = None) -> Document:
        """The one-window document of a text that fits (or was cut, or a pair ``text``, ``text_pair`` with
        ``segment_ids``): ``tokens`` and ``offsets`` shared; ``windows`` its one window (None: every token after the
        first, ``[CLS]``, to the end, over ``text``'s whole span); ``logits`` float [C] and ``probabilities`` float [C]
        become the one window's rows."""
        T = len(tokens)
        if windows is None:
            windows = DocumentWindows(np.array([[min(1, T), T]], np.int64), np.array([[0, len(text)]], np.int64),
                                      min(1, T), 0, T)
        return cls(text, tokens, offsets, windows, np.asarray(logits, np.float32).reshape(1, -1),
                   np.asarray(probabilities, np.float32).reshape(1, -1), text_pair, segment_ids)

    @property
    def num_windows(self) -> int:
        """W, the windows the text is read in (1 for a text that fits)."""
        return self.windows.count

    @property
    def num_tokens(self) -> int:
        """T_doc, the whole text's tokens."""
        return len(self.tokens)

    @property
    def is_pair(self) -> bool:
        """True for a sentence pair (``text_pair`` given)."""
        return self.text_pair is not None

    @property
    def pair_start(self) -> int:
        """Index of the first token of the second text (``segment_ids == 1``), or -1 for a single text."""
        if self.segment_ids is None:
            return -1
        hit = np.flatnonzero(self.segment_ids == 1)
        return int(hit[0]) if len(hit) else -1

    def window_text(self, w: int) -> str:
        """The source text of window ``w``'s pieces (the whole text for a one-window document).

        Raises:
            IndexError: ``w`` outside 0..W-1.
        """
        if not 0 <= int(w) < self.num_windows:
            raise IndexError(f"window {w} out of range for a text read in {self.num_windows} windows")
        if self.num_windows == 1:
            return self.text
        s, e = (int(x) for x in self.windows.chars[w])
        return self.text[s:e]

    def window_of(self, token: int) -> int:
        """The window that reads document token ``token`` farthest from its edges (the most context on both sides; 0
        for a special token)."""
        best, room = 0, -1
        for w, (s, e) in enumerate(self.windows.ranges):
            if s <= token < e and min(token - s, e - 1 - token) > room:
                best, room = w, min(token - s, e - 1 - token)
        return best
