"""The model side of whole documents for :class:`model.Predictor`: the windows of an encoding, explanations and
faithfulness merged over windows, and the scoring items of ``score_many``.

:mod:`model.text.document_windows` (NumPy only) says where the windows are, builds their inputs
(:func:`~model.text.document_windows.window_inputs`) and says how their results combine; the functions here take what
they need explicitly (the text encoder, the document's prediction, and for the per-window work a callable that explains
or measures one window's text), so nothing here calls back into the Predictor. A window's text
(``text[chars[w, 0]:chars[w, 1]]``) is split by a WordPiece tokenizer into exactly the window's pieces, since windows
start at word starts. Private to :mod:`model.predictor`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
import torch

from model.core.tokenizer import Encoded
from model.records.explanation import Explanation, Faithfulness
from model.records.prediction import Prediction, Score
from model.tasks.task import Task
from model.tasks.types import task_type
from model.text.document_windows import (
    DocumentWindows,
    aggregate,
    document_windows,
    merge_token_scores,
    window_inputs,
    window_weights,
)
from model.text.inputs import check_text

from ._reading import probabilities, read_out

WINDOW_BATCH = 8  # windows per forward pass (bounded memory: no T x T matrix over a whole document)

ExplainWindow = Callable[[str], Explanation]
"""Explains one window's text (as one input) for the document's target; the caller binds method and options."""
MeasureWindow = Callable[[str, Explanation], Faithfulness]
"""ERASER faithfulness of one window's text and its explanation (the caller binds the options)."""


def whole_windows(encoder, enc: Encoded) -> DocumentWindows:
    """The :class:`model.text.document_windows.DocumentWindows` of a whole encoding
    (``encoder.encode(text, whole=True)``)."""
    P, S = encoder.specials
    special = np.zeros(len(enc.ids), dtype=bool)
    special[:P] = True
    special[len(special) - S :] = True
    pieces = enc.ids[P : len(enc.ids) - S]
    return document_windows(enc.offsets, special, encoder.max_len - P - S, None, encoder.word_starts(pieces))


def window_text(text: str, windows: DocumentWindows, w: int) -> str:
    """The source text of window ``w``'s pieces."""
    s, e = (int(x) for x in windows.chars[w])
    return text[s:e]


def read_in_windows(encoder, text: str, windowed: bool, prediction: Prediction | None,
                    predict: Callable[[], Prediction]) -> Prediction | None:
    """A prediction of ``text`` (its verdict and :class:`~model.records.document.Document`) when the call reads it in
    several windows (``windowed`` and too long for one), else None: ``prediction`` when it is one of ``text`` (any
    window), else ``predict()`` (the caller's ``predict(text)`` under the call's options)."""
    if not windowed or not encoder.encode(check_text(text)).truncated:
        return None
    pred = prediction if prediction is not None and prediction.document.text == text else predict()
    return pred if pred.num_windows > 1 else None


def window_text_of(encoder, text: str, w: int) -> str:
    """The source text of window ``w`` of ``text`` read in windows (tokenized only, no forward pass; ``text`` itself
    when it fits in one window). Raises IndexError: ``w`` outside 0..W-1."""
    windows = whole_windows(encoder, encoder.encode(check_text(text), whole=True))
    if not 0 <= int(w) < windows.count:
        raise IndexError(f"window {w} out of range for a text read in {windows.count} windows")
    return text if windows.count == 1 else window_text(text, windows, int(w))


def window_token_map(encoder, text: str, windows: DocumentWindows, w: int, tokens_w: int) -> np.ndarray:
    """int64 [tokens_w]: the document token index of each token of window ``w``'s text encoded alone (-1 for none).

    The window's tokens equal the document's in its range (windows start at word starts); when another tokenizer
    splits the window's edge differently, tokens are matched by their character spans instead."""
    idx = windows.tokens_of(w)
    if len(idx) == tokens_w:
        return idx
    enc_w = encoder.encode(check_text(window_text(text, windows, w)))
    doc = encoder.encode(text, whole=True)
    base = int(windows.chars[w, 0])
    at = {(int(s), int(e)): j for j, (s, e) in enumerate(doc.offsets) if e > s}
    P, _ = encoder.specials
    out = np.array([at.get((int(s) + base, int(e) + base), -1) if e > s else -1 for s, e in enc_w.offsets])
    out[:P] = np.arange(P)
    return out.astype(np.int64)


def explain_document(encoder, text: str, prediction: Prediction, explain_window: ExplainWindow,
                     progress: Callable[[int, int], None] | None = None) -> Explanation:
    """Explain a long text: each of its windows explained (``explain_window``, for the document's class, each
    window's text as one input, ``long_text="head_tail"``), the scores merged
    (:func:`model.text.document_windows.merge_token_scores` with :func:`model.text.document_windows.window_weights`: a
    document token's score is its score in the window that reads it times that window's weight; :func:`window_token_map`
    places them). ``progress`` gets (windows done, W).

    Returns:
        :class:`model.records.explanation.Explanation` with float32 [T] scores over the document's T tokens.
    """
    windows = prediction.document.windows
    weights = window_weights(windows.ranges)
    scores, maps, elapsed, deltas = [], [], 0.0, []
    for v in range(windows.count):
        # a window's text is one input: when a window starts inside a word its text alone may need a piece or two more
        # than the window holds (issue 46), and the head+tail cut of those few keeps it one input, never new windows
        e = explain_window(window_text(text, windows, v))
        maps.append(window_token_map(encoder, text, windows, v, len(e.scores)))
        scores.append(e.scores)
        elapsed += e.elapsed_s
        if e.convergence_delta is not None:
            deltas.append(abs(e.convergence_delta))
        if progress is not None:
            progress(v + 1, len(weights))
    merged = merge_token_scores(scores, maps, windows.num_tokens, weights)
    return Explanation(method=e.method, scores=merged, signed=e.signed, target=e.target, elapsed_s=elapsed,
                       convergence_delta=max(deltas) if deltas else None, tokens=list(prediction.document.tokens))


def faithfulness_document(encoder, text: str, explanation: Explanation, prediction: Prediction,
                          measure: MeasureWindow) -> Faithfulness:
    """ERASER faithfulness of a whole-document explanation: each window of the text measured (``measure``) with the
    explanation's scores of its tokens; the windows' comprehensiveness and sufficiency averaged with the aggregation's
    weights (:func:`model.text.document_windows.window_weights`).

    Returns:
        :class:`model.records.explanation.Faithfulness`: AOPCs and per-k values the weighted means over the windows,
        ``p_full`` the document's probability of the class (regression: its value), ``elapsed_s`` the sum.
    """
    windows = prediction.document.windows
    weights = window_weights(windows.ranges)
    parts = []
    for v in range(windows.count):
        sub = window_text(text, windows, v)
        idx = window_token_map(encoder, text, windows, v, len(encoder.encode(check_text(sub)).ids))
        scores = np.where(idx >= 0, np.asarray(explanation.scores)[np.maximum(idx, 0)], 0.0).astype(np.float32)
        part = dataclasses.replace(explanation, scores=scores, tokens=[explanation.tokens[max(i, 0)] for i in idx])
        parts.append(measure(sub, part))

    def mean(values) -> float:
        return float(sum(wt * v for wt, v in zip(weights, values, strict=True)))

    first = parts[0]
    read = task_type(prediction.task).measured_values(prediction.logits, prediction.probabilities)  # what p measures
    per_k = {k: {m: mean([p.per_k[k][m] for p in parts]) for m in first.per_k[k]} for k in first.per_k}
    return dataclasses.replace(
        first, comprehensiveness_aopc=mean([p.comprehensiveness_aopc for p in parts]),
        sufficiency_aopc=mean([p.sufficiency_aopc for p in parts]), per_k=per_k, p_full=read[first.target].item(),
        elapsed_s=sum(p.elapsed_s for p in parts))


class WindowCollector:
    """The windows of a batch of encoded texts as scoring items, and each text's :class:`model.records.prediction.Score`
    once all its windows are scored (for ``Predictor.score_many``).

    Args:
        encoder: the predictor's text encoder.
        encoded: per text ``(ids int64 [T], truncated)`` (``encode_ids_batch``; ``whole=True`` for windows), or per
            sentence pair ``(ids, segment ids int8 [T], which side was cut)`` (``encode_pair_ids_batch``: one item,
            never windows).
        labels: the model's C class names; task: how the logits are read (the call's, fixed for the whole call).
        windowed: read long texts in windows (False: each text is one item, as encoded).

    Attributes:
        items: the int64 id arrays to score; segments: each item's segment ids (None for a single text).
    """

    def __init__(self, encoder, encoded: list[tuple], labels: tuple[str, ...], task: Task, windowed: bool):
        self.labels, self.task = labels, task
        self.items: list[np.ndarray] = []
        self.segments: list[np.ndarray | None] = []
        self.owner: list[int] = []
        self.ranges: list[np.ndarray] = []
        self.truncated = [bool(e[1]) if len(e) == 2 else bool(e[2]) for e in encoded]
        self.pair_cut = ["" if len(e) == 2 else e[2] for e in encoded]
        self.num_tokens = [len(e[0]) for e in encoded]
        for k, e in enumerate(encoded):
            one = len(e) == 3 or not windowed
            inputs, ranges = ([e[0]], np.zeros((1, 2), np.int64)) if one else window_inputs(encoder, e[0])
            self.items.extend(inputs)
            self.segments.extend([e[1] if len(e) == 3 else None] * len(inputs))
            self.owner.extend([k] * len(inputs))
            self.ranges.append(ranges)
        counts = [len(r) for r in self.ranges]  # each text's windows
        self.first = np.cumsum([0] + counts)  # item index of each text's first window
        self.logits: dict[int, np.ndarray] = {}
        self.left = counts

    def add(self, item: int, logits: np.ndarray, probs: np.ndarray) -> tuple[int, Score] | None:
        """Record one item's float [C] logits and probabilities; returns (text index, Score) when that text is
        complete, else None. A one-window text's Score holds ``probs`` as given (today's bits)."""
        k = self.owner[item]
        self.logits[item] = logits
        self.left[k] -= 1
        if self.left[k]:
            return None
        W = len(self.ranges[k])
        if W == 1:
            z, p = logits, probs.astype(np.float32)
        else:
            z = np.stack([self.logits.pop(self.first[k] + v) for v in range(W)])
            z = np.asarray(aggregate(z, self.ranges[k]), np.float32)
            p = probabilities(torch.from_numpy(z), self.task)
        self.logits.pop(item, None)
        label, value = read_out(z, p, self.labels, self.task)
        return k, Score(label, p, self.truncated[k], self.num_tokens[k], num_windows=W, task=self.task.kind,
                        value=value, pair_truncated=self.pair_cut[k])
