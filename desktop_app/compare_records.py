"""The records of the Compare view (a pinned analysis beside the current one): NumPy and the standard library only.

No Qt and no torch, so the compare worker (:mod:`desktop_app.workers.compare`) builds them and the Compare view
(:mod:`desktop_app.views.compare_view`) and the layer plot draw them.

* :func:`text_words` splits a text into words (a run of word characters with inner apostrophes, or one punctuation
  mark) and maps each token of a prediction to its word; :func:`word_sums` sums per-token scores into words;
* :func:`align_words` aligns two word sequences with :class:`difflib.SequenceMatcher` (a :class:`WordAlignment`:
  equal, replaced, inserted and deleted words);
* :class:`CompareSide` (one text: prediction, words, per-word importance) and :class:`CompareResult` (pinned vs
  current, the alignment, the differences) are what the worker hands to the view.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

import numpy as np

EQUAL, REPLACE, INSERT, DELETE = "equal", "replace", "insert", "delete"
"""The alignment's row kinds: the same word in both texts, a word replaced by another, a word only in the current
text (inserted), a word only in the pinned text (deleted)."""

OP_TITLES = {EQUAL: "", REPLACE: "replaced", INSERT: "inserted", DELETE: "deleted"}
"""How the view names each row kind."""

WORD_RE = re.compile(r"\w+(?:['\u2019]\w+)*|[^\w\s]")
"""A word: a maximal run of word characters with inner apostrophes (as :mod:`desktop_app.words`), or one punctuation
mark."""


def focus_class(labels, probabilities=None) -> int:
    """The class whose probability the comparison and the layer plot follow: "positive" when the model has it
    (case-insensitive), else the most probable class of ``probabilities`` (float [C]), else 0; -1 without classes."""
    names = [str(n).lower() for n in labels]
    if not names:
        return -1
    if "positive" in names:
        return names.index("positive")
    if probabilities is not None and len(probabilities) == len(names):
        return int(np.argmax(probabilities))
    return 0


@dataclass(frozen=True)
class TextWords:
    """The words of one text that the model saw, and the word of each token.

    Attributes:
        words: the W words as written in the text.
        spans: int64 (W, 2), read-only: character span (start, end) of each word in the text.
        token_word: int64 [T], read-only: the index of each token's word, -1 for a token of no word (``[CLS]``,
            ``[SEP]``: empty character spans).
    """

    words: tuple[str, ...]
    spans: np.ndarray
    token_word: np.ndarray

    def __post_init__(self) -> None:
        self.spans.setflags(write=False)
        self.token_word.setflags(write=False)


def text_words(text: str, offsets) -> TextWords:
    """Split ``text`` into words (:data:`WORD_RE`) and map each token to its word.

    Args:
        text: the analysed text.
        offsets: int [T, 2], each token's character span (start, end) in ``text`` (``Prediction.offsets``); an empty
            span (special tokens) belongs to no word.

    Returns:
        :class:`TextWords` of the words that at least one token overlaps, in text order: words the model never saw
        (cut by head+tail truncation, or markup the tokenizer drops) are left out. A token overlapping several words
        belongs to the one it overlaps most (the first on a tie).
    """
    offsets = np.asarray(offsets, dtype=np.int64).reshape(-1, 2)
    spans = np.array([m.span() for m in WORD_RE.finditer(text)], dtype=np.int64).reshape(-1, 2)
    token_word = np.full(len(offsets), -1, dtype=np.int64)
    if len(spans):
        s, e = offsets[:, :1], offsets[:, 1:]  # (T, 1)
        overlap = np.minimum(e, spans[None, :, 1]) - np.maximum(s, spans[None, :, 0])  # (T, W) characters
        best = overlap.argmax(axis=1)
        hit = overlap[np.arange(len(offsets)), best] > 0
        token_word[hit] = best[hit]
    seen = np.unique(token_word[token_word >= 0])
    remap = np.full(len(spans) + 1, -1, dtype=np.int64)  # last slot: -1 stays -1
    remap[seen] = np.arange(len(seen))
    token_word = remap[token_word]
    kept = spans[seen]
    return TextWords(tuple(text[a:b] for a, b in kept), kept.copy(), token_word)


def word_sums(scores, token_word, n_words: int) -> np.ndarray:
    """Per-word sums of per-token ``scores``.

    Args:
        scores: float [T] per-token scores (aligned with the tokens of ``token_word``).
        token_word: int [T], each token's word index or -1 (:attr:`TextWords.token_word`); -1 tokens are ignored.
        n_words: W.

    Returns:
        float32 [W]: the sum of the scores of each word's tokens (0 for a word without tokens).

    Raises:
        ValueError: ``scores`` and ``token_word`` differ in length.
    """
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    token_word = np.asarray(token_word, dtype=np.int64).reshape(-1)
    if len(scores) != len(token_word):
        raise ValueError(f"{len(scores)} scores for {len(token_word)} tokens")
    keep = token_word >= 0
    return np.bincount(token_word[keep], weights=scores[keep], minlength=n_words)[:n_words].astype(np.float32)


@dataclass(frozen=True)
class WordAlignment:
    """Two word sequences aligned row by row (the pinned text's words "a", the current text's words "b").

    Attributes:
        ops: R row kinds, each :data:`EQUAL`, :data:`REPLACE`, :data:`INSERT` (a word of b only) or :data:`DELETE`
            (a word of a only).
        pinned: int64 [R], read-only: the row's word index in a, -1 for an inserted word.
        current: int64 [R], read-only: the row's word index in b, -1 for a deleted word.
    """

    ops: tuple[str, ...]
    pinned: np.ndarray
    current: np.ndarray

    def __post_init__(self) -> None:
        self.pinned.setflags(write=False)
        self.current.setflags(write=False)

    def __len__(self) -> int:
        """R, the number of rows."""
        return len(self.ops)

    def values(self, a, b) -> np.ndarray:
        """float64 (R, 2): per row the value of its word in ``a`` (float [Wa]) and in ``b`` (float [Wb]); NaN where
        the row has no word on that side."""
        out = np.full((len(self.ops), 2), np.nan)
        for col, (idx, vals) in enumerate(((self.pinned, a), (self.current, b))):
            vals = np.asarray(vals, dtype=np.float64)
            has = idx >= 0
            out[has, col] = vals[idx[has]]
        return out

    def deltas(self, a, b) -> np.ndarray:
        """float64 [R]: current minus pinned per row (``b - a``), an absent word counting 0 (an inserted word's
        delta is its value in b; a deleted word's is minus its value in a)."""
        return np.diff(np.nan_to_num(self.values(a, b), nan=0.0), axis=1)[:, 0]


def align_words(a, b) -> WordAlignment:
    """Align word sequences ``a`` (pinned) and ``b`` (current), compared case-insensitively, with
    :class:`difflib.SequenceMatcher` (no junk heuristic).

    A replaced block of unequal lengths pairs its words in order; its extra words are deleted (extra in a) or
    inserted (extra in b).

    Returns:
        :class:`WordAlignment`, rows in reading order.
    """
    a, b = [str(w) for w in a], [str(w) for w in b]
    matcher = difflib.SequenceMatcher(None, [w.lower() for w in a], [w.lower() for w in b], autojunk=False)
    ops: list[str] = []
    ia: list[int] = []
    ib: list[int] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        n = max(i2 - i1, j2 - j1)
        for k in range(n):
            i = i1 + k if i1 + k < i2 else -1
            j = j1 + k if j1 + k < j2 else -1
            if tag == "equal":
                op = EQUAL
            else:
                op = REPLACE if i >= 0 and j >= 0 else (DELETE if i >= 0 else INSERT)
            ops.append(op)
            ia.append(i)
            ib.append(j)
    return WordAlignment(tuple(ops), np.array(ia, dtype=np.int64), np.array(ib, dtype=np.int64))


@dataclass(frozen=True)
class CompareSide:
    """One side of a comparison: a text's prediction and its word importances.

    Attributes:
        text: the analysed text.
        labels: the C class names.
        probabilities: float32 [C], read-only: the prediction (with ``head_mask`` in force), sums to 1.
        words: the text's :class:`TextWords` (W words).
        importance: float32 [W], read-only: the explanation method's token scores summed per word (the method's
            units: log-odds for the signed methods, shares of 1 for the unsigned rollouts).
        flow: float32 [W], read-only: the ALTI aggregated importance (``AttentionFlow.importance``, shares of 1)
            summed per word; None when ALTI does not cover the model.
        head_mask: float32 (L, H) head mask the text was analysed with, or None (every head on).
    """

    text: str
    labels: tuple[str, ...]
    probabilities: np.ndarray
    words: TextWords
    importance: np.ndarray
    flow: np.ndarray | None
    head_mask: np.ndarray | None = None

    def __post_init__(self) -> None:
        for arr in (self.probabilities, self.importance, self.flow):
            if arr is not None:
                arr.setflags(write=False)

    @property
    def label(self) -> str:
        """The predicted class name ("" without classes)."""
        return self.labels[int(np.argmax(self.probabilities))] if len(self.probabilities) else ""


@dataclass(frozen=True)
class CompareResult:
    """A pinned analysis compared with the current one.

    Attributes:
        pinned: the pinned text's :class:`CompareSide`.
        current: the current text's :class:`CompareSide`.
        alignment: their words aligned (:func:`align_words`; a = pinned, b = current).
        method: the explanation method whose scores ``importance`` holds (``model.explain`` id).
        method_title: its human-readable name.
        signed: whether its scores are signed (positive: evidence for ``target``).
        target: the class index both texts' explanations explain (:func:`focus_class`).
        notes: user-facing remarks, e.g. that DecompX does not cover the model and gradient x input was used.
        names: what the two sides are called in the view: ("pinned", "current"), or ("model B", "model A") when the
            pin reads the current text with the second model (issue 44).
    """

    pinned: CompareSide
    current: CompareSide
    alignment: WordAlignment
    method: str
    method_title: str
    signed: bool
    target: int
    notes: tuple[str, ...] = ()
    names: tuple[str, str] = ("pinned", "current")

    @property
    def labels(self) -> tuple[str, ...]:
        """The C class names."""
        return self.current.labels

    @property
    def target_label(self) -> str:
        """The name of the explained class."""
        return self.labels[self.target] if 0 <= self.target < len(self.labels) else ""

    @property
    def delta_probabilities(self) -> np.ndarray:
        """float64 [C]: current minus pinned probability of each class (probability units, in [-1, 1])."""
        return self.current.probabilities.astype(np.float64) - self.pinned.probabilities.astype(np.float64)

    @property
    def delta_points(self) -> float:
        """Current minus pinned P(:attr:`target`) in percentage points."""
        return float(self.delta_probabilities[self.target] * 100.0) if self.target >= 0 else 0.0

    def importance_rows(self) -> np.ndarray:
        """float64 (R, 3): per aligned row the method's importance in the pinned text, in the current text (NaN where
        the row has no word there) and current minus pinned (an absent word counting 0)."""
        return self._rows(self.pinned.importance, self.current.importance)

    def flow_rows(self) -> np.ndarray | None:
        """float64 (R, 3) like :meth:`importance_rows` for the ALTI importance; None when either side has none."""
        if self.pinned.flow is None or self.current.flow is None:
            return None
        return self._rows(self.pinned.flow, self.current.flow)

    def row_words(self) -> list[tuple[str, str, str]]:
        """R rows of (kind, pinned word or "", current word or "")."""
        pw, cw = self.pinned.words.words, self.current.words.words
        return [(op, pw[i] if i >= 0 else "", cw[j] if j >= 0 else "")
                for op, i, j in zip(self.alignment.ops, self.alignment.pinned, self.alignment.current)]

    def _rows(self, a, b) -> np.ndarray:
        return np.column_stack([self.alignment.values(a, b), self.alignment.deltas(a, b)])
