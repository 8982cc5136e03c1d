"""Whole-word matching of review text, shared by the batch table's word filter and the token view's highlight.

Words are those of the corpus token scores (:mod:`model.corpus.tokens`): a maximal run of word characters
with inner apostrophes (``\\w+(?:['’]\\w+)*``), compared case-insensitively; a bigram is two such words separated by
whitespace only. Python and NumPy (no Qt, no torch), so the views, the panels and the workers can all use it.
"""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np


@lru_cache(maxsize=64)
def word_pattern(word: str) -> re.Pattern[str]:
    """The compiled pattern that finds ``word`` (or a bigram ``"first second"``) as whole words in a text.

    ``"don"`` is not found in ``"don't"`` and ``"great"`` is not found in ``"greatest"``; the words of a bigram may
    be separated by any whitespace. Case-insensitive. An empty ``word`` matches nothing.
    """
    parts = [re.escape(p) for p in str(word).strip().split()]
    body = r"\s+".join(parts) if parts else r"(?!x)x"
    return re.compile(r"(?<!\w)(?<!\w['\u2019])" + body + r"(?!\w)(?!['\u2019]\w)", re.IGNORECASE)


def contains_word(text: str, word: str) -> bool:
    """True when ``text`` contains ``word`` (or the bigram) as whole words (see :func:`word_pattern`)."""
    return word_pattern(word).search(text) is not None


def word_spans(text: str, words) -> list[tuple[int, int]]:
    """Character spans ``(start, end)`` of every occurrence of any of ``words`` in ``text``, in text order."""
    spans = [m.span() for w in words for m in word_pattern(w).finditer(text)]
    return sorted(spans)


def tokens_in_words(text: str, offsets, words) -> np.ndarray:
    """bool [T]: the tokens (character ``offsets`` int [T, 2] into ``text``) that overlap an occurrence of any of
    ``words``; special tokens (empty spans) never do."""
    offsets = np.asarray(offsets).reshape(-1, 2)
    mask = np.zeros(len(offsets), bool)
    for s, e in word_spans(text, sorted(words)):
        mask |= (offsets[:, 0] < e) & (offsets[:, 1] > s) & (offsets[:, 1] > offsets[:, 0])
    return mask
