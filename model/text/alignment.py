"""Two texts' words and tokens aligned: the one home of the word alignment that Compare shows (issue 44's pinned vs
current text) and that activation patching matches positions by (issue 53). NumPy and the standard library only.

* :func:`text_words` splits a text into words (a run of word characters with inner apostrophes, or one punctuation
  mark) and maps each token to its word;
* :func:`align_words` aligns two word sequences with :class:`difflib.SequenceMatcher` (a :class:`WordAlignment`:
  equal, replaced, inserted and deleted words);
* :func:`align_tokens` turns that word alignment into a token-to-token map of two encodings (which position of one
  text stands for which position of the other), for activation patching (:mod:`model.explain.patching`).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

import numpy as np

EQUAL, REPLACE, INSERT, DELETE = "equal", "replace", "insert", "delete"
"""The alignment's row kinds: the same word in both texts, a word replaced by another, a word only in the current
text (inserted), a word only in the pinned text (deleted)."""

WORD_RE = re.compile(r"\w+(?:['\u2019]\w+)*|[^\w\s]")
"""A word: a maximal run of word characters with inner apostrophes (as :mod:`desktop_app.words`), or one punctuation
mark."""


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




def align_tokens(text_a: str, offsets_a, text_b: str, offsets_b) -> np.ndarray:
    """Which token of text a stands for each token of text b, by the word alignment Compare shows.

    Words are matched by :func:`align_words` (case-insensitive :class:`difflib.SequenceMatcher`): an equal or a
    replaced word of b takes its partner's tokens in order (``"good"`` -> ``"bad"``: one token each; a replaced word
    of another length pairs its first tokens, its extra tokens stay unaligned); an inserted word (b only) stays
    unaligned. Tokens of no word (special tokens, empty character spans) are paired in order: those before the first
    word from the start, those after the last word from the end, any others only when both texts have as many.

    Args:
        text_a, text_b: the two texts as tokenized.
        offsets_a: int [Ta, 2], offsets_b: int [Tb, 2]: each token's character span (``Encoded.offsets``).

    Returns:
        int64 [Tb], read-only: the position in a of each position of b, -1 where b's token has no partner. Each
        position of a is used at most once.
    """
    words_a, words_b = text_words(text_a, offsets_a), text_words(text_b, offsets_b)
    tw_a, tw_b = words_a.token_word, words_b.token_word
    out = np.full(len(tw_b), -1, dtype=np.int64)
    alignment = align_words(words_a.words, words_b.words)
    for i, j in zip(alignment.pinned, alignment.current):
        if i >= 0 and j >= 0:
            ta, tb = np.flatnonzero(tw_a == i), np.flatnonzero(tw_b == j)
            n = min(len(ta), len(tb))
            out[tb[:n]] = ta[:n]
    for run, (sa, sb) in enumerate(zip(_no_word_runs(tw_a), _no_word_runs(tw_b))):
        if run < 2 or len(sa) == len(sb):  # the lead and the trail always; the ones between when they agree
            n = min(len(sa), len(sb))
            out[sb[:n]] = sa[:n]
    out.setflags(write=False)
    return out


def _no_word_runs(token_word: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The positions of the tokens of no word (``token_word == -1``) of one text in three runs, each in pairing
    order: before the first word token (from the start), after the last one (from the end, reversed), between."""
    none = np.flatnonzero(token_word < 0)
    words = np.flatnonzero(token_word >= 0)
    if not len(words):
        return none, none[:0], none[:0]
    lead, trail = none[none < words[0]], none[none > words[-1]][::-1]
    return lead, trail, none[(none > words[0]) & (none < words[-1])]
