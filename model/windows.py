"""Whole documents: the long-text policy, overlapping windows of the model's maximum length and their aggregation.

A text longer than the model's maximum length is read in overlapping windows (policy ``"windows"``, the default)
or cut to its first quarter and its last three quarters of the budget (policy ``"head_tail"``, Sun et al. 2019,
section 5.3.1; :func:`model.core.tokenizer.head_tail_keep`).

Windows (:func:`window_ranges`): the n word pieces of the text are read ``budget`` at a time (``budget`` = the
model's maximum length less its special tokens), window k starting ``stride`` pieces after window k-1; a start that
falls inside a word moves forward to the word's first piece (so a window's text, tokenized alone, gives the same
pieces); the last window ends at the last piece. Every window gets the model's special tokens (``[CLS]`` ...).
A text that fits in one window is one window: exactly today's input, and exactly today's result.

The document's logits (:func:`aggregate`, rule :data:`AGGREGATION`) are the mean of two views of it: the mean of the
windows' logits, and the logits of the head+tail cut (the one extra input a long text costs beyond its windows). The
rule and the stride were chosen on the validation split carved from IMDB train (``python -m model.evaluation.windows``;
docs/long_documents.md lists every variant tried). The same weights merge per-view token scores into one score per
document token (:func:`merge_token_scores`, :func:`view_weights`): a token's score is the weighted sum of its scores
in the views that read it (0 in the others), which is the exact attribution of the aggregated logits for additive
methods (gradient x input, integrated gradients, DecompX).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

POLICIES = ("windows", "head_tail")
DEFAULT_POLICY = "windows"
STRIDE_FRACTION = 1.0  # stride = the budget: windows side by side, the last one ending at the text's end (validation)
AGGREGATION = "mean+head_tail"  # (mean of the windows' logits + the head+tail cut's logits) / 2 (validation)


def check_policy(policy: str | None) -> str:
    """``policy`` or the default (None); ValueError naming the policies for an unknown one."""
    policy = DEFAULT_POLICY if policy is None else policy
    if policy not in POLICIES:
        raise ValueError(f"unknown long-text policy {policy!r}; choose one of {', '.join(POLICIES)}")
    return policy


def default_stride(budget: int) -> int:
    """The stride (pieces) used for a window of ``budget`` pieces: ``STRIDE_FRACTION`` of it, at least 1."""
    return max(1, int(budget * STRIDE_FRACTION))


def window_ranges(n: int, budget: int, stride: int | None = None, word_start: np.ndarray | None = None) -> np.ndarray:
    """The piece ranges of the windows over a text of ``n`` word pieces.

    Args:
        n: word pieces in the text (special tokens excluded), >= 0.
        budget: pieces one window holds (the model's maximum length less its special tokens), >= 1.
        stride: pieces from one window's start to the next (default :func:`default_stride`), 1..budget.
        word_start: optional bool [n], True where a piece begins a word; a window start inside a word moves forward
            to the next word start, as long as no piece is left unread.

    Returns:
        int64 [W, 2] half-open ``(start, end)`` piece ranges, W >= 1, starts increasing, every piece in at least one
        window, each window at most ``budget`` pieces, the last one ending at n; ``[[0, n]]`` when n <= budget.

    Raises:
        ValueError: ``budget`` < 1 or ``stride`` outside 1..budget.
    """
    if budget < 1:
        raise ValueError(f"a window must hold at least one piece, got budget {budget}")
    stride = default_stride(budget) if stride is None else int(stride)
    if not 1 <= stride <= budget:
        raise ValueError(f"the stride must be within 1..{budget} pieces, got {stride}")
    if n <= budget:
        return np.array([[0, n]], dtype=np.int64)
    ranges: list[tuple[int, int]] = []
    for c in [*range(0, n - budget, stride), n - budget]:
        start = c
        if ranges and word_start is not None:
            prev_end = ranges[-1][1]
            while start < prev_end and not word_start[start]:
                start += 1
            start = start if start < prev_end else c  # no word start in the part already read: keep c
        if not ranges or start > ranges[-1][0]:
            ranges.append((start, min(start + budget, n)))
    return np.array(ranges, dtype=np.int64)


def window_weights(ranges: np.ndarray, rule: str = "mean") -> np.ndarray:
    """float64 [W] window weights summing to 1: ``"mean"`` equal; ``"weighted"`` proportional to the pieces each
    window reads; ``"fresh"`` proportional to the pieces it reads that the window before did not (every piece
    counted once); ``"ends"`` the first and the last window only, ``"ends_half"`` those two 1, the others 0.5.

    Raises:
        ValueError: an unknown rule.
    """
    lengths = (ranges[:, 1] - ranges[:, 0]).astype(np.float64)
    if rule == "mean":
        w = np.ones_like(lengths)
    elif rule == "weighted":
        w = np.maximum(lengths, 1.0)
    elif rule in ("ends", "ends_half"):  # the first and last windows (where reviews state their verdict) first
        w = np.full(len(lengths), 0.0 if rule == "ends" else 0.5)
        w[[0, -1]] = 1.0
    elif rule == "fresh":
        seen = np.concatenate([[ranges[0, 0]], ranges[:-1, 1]])
        w = np.maximum(ranges[:, 1] - np.maximum(ranges[:, 0], seen), 1).astype(np.float64)
    else:
        raise ValueError(f"unknown aggregation {rule!r}")
    return w / w.sum()


def aggregate(window_logits: np.ndarray, ranges: np.ndarray, rule: str = AGGREGATION,
              head_tail: np.ndarray | None = None) -> np.ndarray:
    """The document's logits from its windows' logits.

    Args:
        window_logits: float [W, C], one row per window.
        ranges: int64 [W, 2] the windows' piece ranges (:func:`window_ranges`).
        rule: ``"mean"`` (mean of logits), ``"weighted"`` / ``"fresh"`` (weighted means, :func:`window_weights`),
            ``"mean_prob"`` (log of the mean of the softmax probabilities), ``"max_margin"`` (the window most sure
            of its class) or ``"mean+head_tail"`` (the default: the mean of the windows' mean logits and
            ``head_tail``).
        head_tail: float [C], the logits of the text's head+tail cut (needed by ``"mean+head_tail"``).

    Returns:
        float32 [C]; for one window exactly its logits (the same bits).

    Raises:
        ValueError: an unknown rule, or ``"mean+head_tail"`` without ``head_tail``.
    """
    logits = np.asarray(window_logits)
    if len(logits) == 1:
        return logits[0]
    if rule == "mean+head_tail":
        if head_tail is None:
            raise ValueError("the mean+head_tail aggregation needs the head+tail cut's logits")
        return (0.5 * logits.astype(np.float64).mean(0) + 0.5 * np.asarray(head_tail, np.float64)).astype(np.float32)
    if rule in ("mean", "weighted", "fresh", "ends", "ends_half"):
        return (window_weights(ranges, rule) @ logits.astype(np.float64)).astype(np.float32)
    if rule == "mean_prob":
        z = logits.astype(np.float64)
        p = np.exp(z - z.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        return np.log(p.mean(0)).astype(np.float32)
    if rule == "max_margin":
        top2 = np.sort(logits, axis=1)[:, -2:] if logits.shape[1] > 1 else logits
        return logits[int(np.argmax(top2[:, -1] - top2[:, 0]))].astype(np.float32)
    raise ValueError(f"unknown aggregation {rule!r}")


def view_weights(num_windows: int, rule: str = AGGREGATION) -> np.ndarray:
    """float64 [V] weights of a long text's views in :data:`AGGREGATION`: its W windows, then (``"mean+head_tail"``)
    its head+tail cut; [1.0] for a text that fits."""
    if num_windows == 1:
        return np.ones(1)
    if rule == "mean+head_tail":
        return np.array([0.5 / num_windows] * num_windows + [0.5])
    return np.full(num_windows, 1.0 / num_windows)


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
