"""Corpus-level token importance: which words push a model's decisions over a pile of reviews (issue 23, section 2).

:func:`corpus_token_scores` explains every review once with a fast gradient method, reassembles whole words from
the word pieces, and averages each word's signed attribution over the reviews that contain it. The result is an
immutable :class:`CorpusTokens` (NumPy arrays and plain types) with ranked lists (:meth:`CorpusTokens.top`).

Definitions:

* the attribution: gradient x input on the embedding output (:func:`model.explain.gradients.gradient_x_input`,
  Shrikumar et al. 2016) of f = the log-odds of the *positive class* (the class called ``"positive"``, else the
  last class; :func:`model.explain.gradients.class_log_odds`), computed for padded, length-sorted batches in one
  forward + backward pass each (:func:`~model.explain.gradients.gradient_x_input_batch`). Units: log-odds.
  ``method="integrated_gradients"`` uses integrated gradients instead (Sundararajan et al. 2017; one review at a
  time, about ``n_steps`` times slower).
* a word: a maximal run of word characters with inner apostrophes in the review text (``\\w+(?:['’]\\w+)*``),
  lower-cased; its score in a review is the sum of the scores of the word pieces whose last character lies in
  it (special tokens excluded). Only words the model saw count: a word cut away by truncation, or markup the
  tokenizer drops (``<br />``), is not in the review for this purpose.
* a bigram: two consecutive words separated by whitespace only (punctuation breaks a bigram), written
  ``"first second"``; its score is the sum of the two words' scores.
* per review, a word's (bigram's) value is the mean over its occurrences in that review; the corpus score is the
  mean of those values over the reviews that contain it, and its count is the number of those reviews. Words and
  bigrams in fewer than ``min_count`` reviews are left out.
* toward positive: the score as defined. Toward negative: minus it. For two classes this is exactly the
  attribution toward the negative class (log-odds(negative) = -log-odds(positive), and gradient x input is
  linear in f); for more classes it is the evidence *against* the positive class.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence

import numpy as np

from model.text.inputs import check_text, token_budget_batches
from model.records.corpus import CorpusTokens

WORD_RE = re.compile(r"\w+(?:['\u2019]\w+)*")
METHODS = ("grad_x_input", "integrated_gradients")
_BIGRAM = np.int64(1) << 62  # bigram codes: _BIGRAM + first * 2**31 + second; word codes: the word's id
_SHIFT = np.int64(1) << 31
_WINDOW = 1024  # texts tokenized and length-sorted together
_COMPACT_AT = 1 << 20  # pending (code, value) pairs before they are summed up



class _Accumulator:
    """Sums per-review values per word / bigram code; keeps the vocabulary of words seen."""

    def __init__(self) -> None:
        self.word_id: dict[str, int] = {}
        self.words: list[str] = []
        self.pending: list[tuple[np.ndarray, np.ndarray]] = []
        self.n_pending = 0
        self.codes = np.zeros(0, np.int64)
        self.sums = np.zeros(0, np.float64)
        self.counts = np.zeros(0, np.int64)

    def ids(self, words: list[str]) -> np.ndarray:
        """int64 ids of ``words`` (new words get new ids)."""
        get, table = self.word_id.get, self.word_id
        out = np.empty(len(words), np.int64)
        for i, w in enumerate(words):
            j = get(w)
            if j is None:
                j = table[w] = len(self.words)
                self.words.append(w)
            out[i] = j
        return out

    def add_review(self, codes: np.ndarray, values: np.ndarray) -> None:
        """One review's occurrences: its per-occurrence ``codes`` and ``values``, averaged per code first."""
        if not len(codes):
            return
        uniq, inv = np.unique(codes, return_inverse=True)
        mean = np.bincount(inv, weights=values, minlength=len(uniq)) / np.bincount(inv, minlength=len(uniq))
        self.pending.append((uniq, mean))
        self.n_pending += len(uniq)
        if self.n_pending >= _COMPACT_AT:
            self.compact()

    def compact(self) -> None:
        """Fold the pending per-review values into the running sums and counts."""
        if not self.pending:
            return
        codes = np.concatenate([self.codes, *(c for c, _ in self.pending)])
        vals = np.concatenate([self.sums, *(v for _, v in self.pending)])
        ones = np.concatenate([self.counts, *(np.ones(len(c), np.int64) for c, _ in self.pending)])
        self.codes, inv = np.unique(codes, return_inverse=True)
        self.sums = np.bincount(inv, weights=vals, minlength=len(self.codes))
        self.counts = np.bincount(inv, weights=ones, minlength=len(self.codes)).astype(np.int64)
        self.pending, self.n_pending = [], 0

    def name(self, code: int) -> str:
        if code >= _BIGRAM:
            rest = code - int(_BIGRAM)
            return f"{self.words[rest // int(_SHIFT)]} {self.words[rest % int(_SHIFT)]}"
        return self.words[code]


def review_occurrences(
    text: str, offsets: np.ndarray, special: np.ndarray, scores: np.ndarray, acc: _Accumulator, bigrams: bool
) -> tuple[np.ndarray, np.ndarray]:
    """The word (and bigram) occurrences of one explained review: ``(codes int64 [K], values float64 [K])``.

    Args:
        text: the review as given to the encoder (offsets index it).
        offsets: int64 [T, 2], character spans of the model's tokens.
        special: bool [T], the special tokens (ignored).
        scores: float [T], the token attributions.
        acc: the accumulator whose vocabulary gives the word ids.
        bigrams: add the bigram occurrences too.
    """
    spans = [(m.start(), m.end()) for m in WORD_RE.finditer(text)]
    if not spans:
        return np.zeros(0, np.int64), np.zeros(0)
    starts = np.fromiter((a for a, _ in spans), np.int64, len(spans))
    ends = np.fromiter((b for _, b in spans), np.int64, len(spans))
    last = offsets[:, 1] - 1  # the last character of each piece
    valid = ~special & (offsets[:, 1] > offsets[:, 0])
    w = np.searchsorted(ends, last, side="right")  # first word ending after the piece's last character
    valid &= w < len(spans)
    w = np.where(valid, w, 0)
    valid &= starts[w] <= last
    n = len(spans)
    word_score = np.bincount(w[valid], weights=np.asarray(scores, np.float64)[valid], minlength=n)
    seen = np.flatnonzero(np.bincount(w[valid], minlength=n) > 0)
    ids = acc.ids([text[starts[i]:ends[i]].lower() for i in seen])
    codes, values = [ids], [word_score[seen]]
    if bigrams and len(seen) > 1:
        pair = np.flatnonzero(np.diff(seen) == 1)
        pair = [j for j in pair if text[ends[seen[j]]:starts[seen[j + 1]]].isspace()]
        if pair:
            p = np.asarray(pair, np.int64)
            codes.append(_BIGRAM + ids[p] * _SHIFT + ids[p + 1])
            values.append(word_score[seen[p]] + word_score[seen[p + 1]])
    return np.concatenate(codes), np.concatenate(values)


def target_index(labels: tuple[str, ...], target: int | str | None = None) -> int:
    """The class the scores point to: ``target`` (an index or a class name) when given, else the class called
    "positive", else the last class. Raises ValueError for an unknown name or an index out of range."""
    if target is None:
        return labels.index("positive") if "positive" in labels else len(labels) - 1
    if isinstance(target, str):
        if target not in labels:
            raise ValueError(f"unknown class {target!r}; the model's classes are {', '.join(labels)}")
        return labels.index(target)
    if not 0 <= int(target) < len(labels):
        raise ValueError(f"class index {target} out of range for {len(labels)} classes")
    return int(target)


def _explain_batch(predictor, encoded: list, method: str, target: int, n_steps: int) -> list[np.ndarray]:
    """Token attributions (float32 [T_i] each) of the encoded reviews of one batch."""
    import torch

    from model.explain.gradients import gradient_x_input_batch, integrated_gradients

    dev = predictor.device
    if method == "grad_x_input":
        ids, mask = predictor.encoder.pad(encoded)  # (B, T) each
        with predictor.forward_lock:
            s = gradient_x_input_batch(predictor.model, torch.from_numpy(ids).to(dev), torch.from_numpy(mask).to(dev),
                                       target)  # (B, T)
        return [s[i, : len(e.ids)] for i, e in enumerate(encoded)]
    out = []
    for e in encoded:
        ids = torch.from_numpy(e.ids).unsqueeze(0).to(dev)  # (1, T)
        mask = torch.ones_like(ids, dtype=torch.bool)
        scores, _ = integrated_gradients(predictor.model, ids, mask, target, n_steps, lock=predictor.forward_lock)
        out.append(scores)
    return out


def corpus_token_scores(
    predictor,
    texts: Sequence[str],
    *,
    min_count: int = 5,
    bigrams: bool = True,
    method: str = "grad_x_input",
    batch_size: int = 32,
    max_tokens: int = 8192,
    n_steps: int = 16,
    should_stop: Callable[[], bool] | None = None,
    progress: Callable[[int, int], None] | None = None,
    target: int | str | None = None,
) -> CorpusTokens:
    """Corpus-level token importance of ``texts`` (definitions in the module docstring).

    Args:
        predictor: a :class:`model.Predictor` with a classification head (the bundled model or a Hugging Face
            classifier), shared with the other threads (issue 41: one copy of the weights). Every forward +
            backward pass holds its ``forward_lock``.
        texts: the reviews (e.g. the ``text`` of the scored result rows); invalid ones are skipped and counted.
        min_count: leave out words and bigrams found in fewer reviews than this (>= 1).
        bigrams: also score bigrams of consecutive words.
        method: ``"grad_x_input"`` (batched, the default) or ``"integrated_gradients"`` (one review at a time,
            ``n_steps`` quadrature points; about ``n_steps`` times slower).
        batch_size: most reviews per forward + backward pass.
        max_tokens: most padded tokens per pass (bounds memory: activations and gradients of B x T tokens).
        n_steps: integrated-gradients quadrature points.
        should_stop: checked before every batch; when it returns True the pass stops and the result covers the
            reviews explained so far (``complete=False``).
        progress: called as ``progress(done, total)`` after every batch, ``done`` counting skipped texts too and
            ``total = len(texts)``.
        target: the class whose logit the attributions explain (an index or a name; issue 30: "What drives it"
            per chosen class); None: "positive", else the last class (:func:`target_index`). Multi-label: that
            label's logit; regression: the output value (index 0).

    Returns:
        :class:`CorpusTokens`. Cost: about one scoring pass plus its backward pass (see ``docs/corpus.md``).

    Raises:
        ValueError: unknown ``method``, ``min_count``/``batch_size``/``max_tokens`` < 1, an unknown ``target``;
            NoClassificationHead (a ValueError) for a bare encoder.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    if min(min_count, batch_size, max_tokens) < 1:
        raise ValueError("min_count, batch_size and max_tokens must be >= 1")
    predictor.require_head("corpus token scores")
    t0 = time.perf_counter()
    labels = tuple(predictor.labels)
    target = target_index(labels, target)
    acc = _Accumulator()
    total, done, explained, skipped, complete = len(texts), 0, 0, 0, True
    for w0 in range(0, total, _WINDOW):
        good = []
        for t in texts[w0 : w0 + _WINDOW]:
            try:
                good.append(check_text(t))
            except ValueError:
                skipped += 1
                done += 1
        encoded = predictor.encoder.encode_batch(good)
        lengths = [len(e.ids) for e in encoded]
        order = np.argsort(lengths, kind="stable")
        for idx in token_budget_batches([lengths[i] for i in order], order, batch_size, max_tokens):
            if should_stop is not None and should_stop():
                complete = False
                break
            batch = [encoded[i] for i in idx]
            for i, e, s in zip(idx, batch, _explain_batch(predictor, batch, method, target, n_steps)):
                acc.add_review(*review_occurrences(good[i], e.offsets, e.special_mask(), s, acc, bigrams))
            explained += len(idx)
            done += len(idx)
            if progress is not None:
                progress(done, total)
        if not complete:
            break
        if not good and progress is not None:
            progress(done, total)
    return _result(acc, labels, target, method, min_count, total, explained, skipped, complete, t0)


def _result(acc: _Accumulator, labels, target, method, min_count, total, explained, skipped, complete, t0):
    """The :class:`CorpusTokens` of an accumulator (tokens kept by ``min_count``, sorted by score)."""
    acc.compact()
    keep = np.flatnonzero(acc.counts >= min_count)
    scores = acc.sums[keep] / acc.counts[keep]
    order = np.argsort(-scores, kind="stable")
    keep, scores = keep[order], scores[order]

    def ro(a: np.ndarray) -> np.ndarray:
        a.flags.writeable = False
        return a

    return CorpusTokens(
        tokens=tuple(acc.name(int(c)) for c in acc.codes[keep]),
        scores=ro(scores.astype(np.float64)),
        counts=ro(acc.counts[keep].astype(np.int64)),
        is_bigram=ro(acc.codes[keep] >= _BIGRAM),
        labels=labels, positive_label=labels[target], method=method, min_count=min_count, n_texts=total,
        n_explained=explained, n_skipped=skipped, complete=complete, elapsed_s=time.perf_counter() - t0,
    )


__all__ = ["METHODS", "WORD_RE", "CorpusTokens", "corpus_token_scores", "review_occurrences", "target_index"]
