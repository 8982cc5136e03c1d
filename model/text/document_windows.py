"""Whole documents: the long-text policy, the windows of the model's maximum length and their aggregation.

A text longer than the model's maximum length is read in windows (policy ``"windows"``, the default) or cut to its
first quarter and its last three quarters of the budget (policy ``"head_tail"``, Sun et al. 2019, section 5.3.1;
:func:`model.core.tokenizer.head_tail_keep`).

Windows (:func:`window_ranges`): the n word pieces of the text are split into the fewest windows that hold them,
``ceil(n / budget)`` (``budget`` = the model's maximum length less its special tokens), of nearly equal length, side
by side: every piece is read exactly once. Each boundary moves to the nearest word start (so a window's text,
tokenized alone, gives the same pieces) as long as every window still fits. Every window gets the model's special
tokens (``[CLS]`` ...). A text that fits in one window is one window: exactly today's input, and exactly today's
result. (With a ``stride``, :func:`window_ranges` gives overlapping windows instead: the variants tried on
validation.)

The document's logits (:func:`aggregate`) are the mean of the windows' logits weighted by
the pieces each reads (each piece counts once). The placement and the rule were chosen on the validation split
carved from IMDB train (``python -m model.evaluation.window_variants``; docs/long_documents.md lists every variant tried).
The same weights merge per-window token scores into one score per document token (:func:`merge_token_scores`,
:func:`window_weights`): a token's score is its score in the window that reads it, times that window's weight, which is
the exact attribution of the aggregated logits for additive methods (gradient x input, integrated gradients, DecompX).
"""

from __future__ import annotations

import numpy as np

from model.records.document import DocumentWindows

POLICIES = ("windows", "head_tail")
DEFAULT_POLICY = "windows"
WORD_SEARCH = 64  # pieces a window boundary may move to reach a word start


def check_policy(policy: str | None) -> str:
    """``policy`` or the default (None); ValueError naming the policies for an unknown one."""
    policy = DEFAULT_POLICY if policy is None else policy
    if policy not in POLICIES:
        raise ValueError(f"unknown long-text policy {policy!r}; choose one of {', '.join(POLICIES)}")
    return policy


def window_ranges(n: int, budget: int, stride: int | None = None, word_start: np.ndarray | None = None) -> np.ndarray:
    """The piece ranges of the windows over a text of ``n`` word pieces.

    Args:
        n: word pieces in the text (special tokens excluded), >= 0.
        budget: pieces one window holds (the model's maximum length less its special tokens), >= 1.
        stride: None (the product's windows): ``ceil(n / budget)`` windows of nearly equal length side by side, each
            piece in exactly one; else overlapping windows of ``budget`` pieces, window k starting ``stride`` pieces
            after window k-1 and the last one ending at n (1..budget; the variants tried on validation).
        word_start: optional bool [n], True where a piece begins a word: a boundary moves to the nearest word start
            (at most :data:`WORD_SEARCH` pieces) where every window still fits; a stride window's start moves
            forward to one, as long as no piece is left unread.

    Returns:
        int64 [W, 2] half-open ``(start, end)`` piece ranges, W >= 1, starts increasing, every piece in at least one
        window (exactly one without a stride), each window at most ``budget`` pieces, the last one ending at n;
        ``[[0, n]]`` when n <= budget.

    Raises:
        ValueError: ``budget`` < 1 or ``stride`` outside 1..budget.
    """
    if budget < 1:
        raise ValueError(f"a window must hold at least one piece, got budget {budget}")
    if stride is not None and not 1 <= int(stride) <= budget:
        raise ValueError(f"the stride must be within 1..{budget} pieces, got {stride}")
    if n <= budget:
        return np.array([[0, n]], dtype=np.int64)
    if stride is None:
        return _partition(n, budget, word_start)
    ranges: list[tuple[int, int]] = []
    for c in [*range(0, n - budget, int(stride)), n - budget]:
        start = c
        if ranges and word_start is not None:
            prev_end = ranges[-1][1]
            while start < prev_end and not word_start[start]:
                start += 1
            start = start if start < prev_end else c  # no word start in the part already read: keep c
        if not ranges or start > ranges[-1][0]:
            ranges.append((start, min(start + budget, n)))
    return np.array(ranges, dtype=np.int64)


def _partition(n: int, budget: int, word_start: np.ndarray | None) -> np.ndarray:
    """``ceil(n / budget)`` side-by-side windows of nearly equal length (:func:`window_ranges` without a stride)."""
    k = -(-n // budget)
    cuts = [0]
    for i in range(1, k):
        c = round(i * n / k)
        lo, hi = max(cuts[-1] + 1, n - (k - i) * budget), min(cuts[-1] + budget, n - 1)  # both sides still fit
        if word_start is not None:
            near = [x for d in range(WORD_SEARCH + 1) for x in (c - d, c + d) if lo <= x <= hi and word_start[x]]
            c = near[0] if near else c
        cuts.append(min(max(c, lo), hi))
    cuts.append(n)
    return np.array([cuts[:-1], cuts[1:]], dtype=np.int64).T


def window_weights(ranges: np.ndarray) -> np.ndarray:
    """float64 [W] the windows' weights in :func:`aggregate`: proportional to the pieces each reads, summing to 1
    ([1.0] for a text that fits). Source: the choice on validation, docs/long_documents.md."""
    lengths = np.maximum(np.asarray(ranges)[:, 1] - np.asarray(ranges)[:, 0], 1).astype(np.float64)
    return lengths / lengths.sum()


def aggregate(window_logits: np.ndarray, ranges: np.ndarray) -> np.ndarray:
    """The document's logits: the windows' logits weighted by the pieces each reads (:func:`window_weights`).

    Args:
        window_logits: float [W, C], one row per window.
        ranges: int64 [W, 2] the windows' piece ranges (:func:`window_ranges`).

    Returns:
        float32 [C]; for one window exactly its logits (the same bits).
    """
    logits = np.asarray(window_logits)
    if len(logits) == 1:
        return logits[0]
    return (window_weights(ranges) @ logits.astype(np.float64)).astype(np.float32)


def merge_token_scores(window_scores: list[np.ndarray], window_tokens: list[np.ndarray], num_tokens: int,
                       weights: np.ndarray) -> np.ndarray:
    """One score per document token from per-window token scores.

    Rule: score(j) = sum over windows w of weights[w] * s_w(j), where s_w(j) is token j's score in window w and 0 when
    window w does not read token j (the special tokens, read by every window, get the weighted mean). For additive
    attributions of each window's logits this is the attribution of the aggregated logits (:func:`aggregate`).

    Args:
        window_scores: W float arrays, window w's scores [T_w].
        window_tokens: W int arrays [T_w], the document token index of each of window w's tokens (-1: none).
        num_tokens: T, tokens of the document.
        weights: float [W] (:func:`window_weights`).

    Returns:
        float32 [T].
    """
    out = np.zeros(num_tokens, dtype=np.float64)
    for w, (scores, idx) in enumerate(zip(window_scores, window_tokens, strict=True)):
        keep = idx >= 0
        np.add.at(out, idx[keep], weights[w] * np.asarray(scores, np.float64)[keep])
    return out.astype(np.float32)


def document_windows(offsets: np.ndarray, special: np.ndarray, budget: int, stride: int | None = None,
                     word_start: np.ndarray | None = None) -> DocumentWindows:
    """The windows of a document from its whole encoding.

    Args:
        offsets: int64 [T, 2] character spans of the document's tokens.
        special: bool [T], the special tokens (a prefix and a suffix of the sequence).
        budget, stride: as :func:`window_ranges`.
        word_start: optional bool [n] over the pieces, as :func:`window_ranges`.

    Returns:
        :class:`DocumentWindows`.
    """
    T = len(offsets)
    prefix = int(np.argmin(special)) if not special.all() else T
    suffix = int(np.argmin(special[::-1])) if not special.all() else 0
    n = T - prefix - suffix
    pieces = window_ranges(n, budget, stride, word_start)
    ranges = pieces + prefix
    chars = np.array([[offsets[s, 0], offsets[e - 1, 1]] if e > s else [0, 0] for s, e in ranges], dtype=np.int64)
    return DocumentWindows(ranges, chars.reshape(-1, 2), prefix, suffix, T)


def window_inputs(encoder, ids: np.ndarray, stride: int | None = None) -> tuple[list[np.ndarray], np.ndarray]:
    """The model inputs of a whole encoding's windows.

    Args:
        encoder: the predictor's text encoder (``specials``, ``max_len``, ``word_starts``).
        ids: int64 [T] the whole document's ids (special prefix, every piece, special suffix).
        stride: None (the product's side-by-side windows) or the overlapping windows' stride
            (:func:`model.text.document_windows.window_ranges`).

    Returns:
        (W int64 id arrays, each the special prefix + the window's pieces + the suffix; int64 [W, 2] the windows'
        piece ranges). One window that fits is ``ids`` itself (the same array).
    """
    P, S = encoder.specials
    pieces = ids[P : len(ids) - S]
    budget = encoder.max_len - P - S
    if len(pieces) <= budget:
        return [ids], np.array([[0, len(pieces)]], dtype=np.int64)
    ranges = window_ranges(len(pieces), budget, stride, encoder.word_starts(pieces))
    pre, suf = ids[:P], ids[len(ids) - S :]
    return [np.concatenate([pre, pieces[s:e], suf]) for s, e in ranges], ranges
