"""The records of the Compare view (a pinned analysis beside the current one): NumPy and the standard library only.

No Qt and no torch, so the compare worker (:mod:`desktop_app.workers.compare`) builds them and the Compare view
(:mod:`desktop_app.views.compare_view`) and the layer plot draw them.

* the words of a text and their alignment (:func:`text_words`, :func:`align_words`, :class:`WordAlignment`) live in
  :mod:`model.text.alignment`, shared with activation patching; :func:`word_sums` sums per-token scores into words;
* :class:`CompareSide` (one text: prediction, words, per-word importance) and :class:`CompareResult` (pinned vs
  current, the alignment, the differences) are what the worker hands to the view.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from model.text.alignment import (  # noqa: F401 - the Compare view's names, re-exported
    DELETE, EQUAL, INSERT, REPLACE, WORD_RE, TextWords, WordAlignment, align_words, text_words)

OP_TITLES = {EQUAL: "", REPLACE: "replaced", INSERT: "inserted", DELETE: "deleted"}
"""How the view names each row kind."""


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
