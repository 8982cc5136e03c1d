"""The model side of whole documents: window inputs, their forward passes, and explanations merged over windows.

:mod:`model.text.document_windows` (NumPy only) says where the windows are and how their results combine; this module builds the
windows' token ids from a whole encoding, runs them, and runs the per-window explanation, faithfulness and flow of
:class:`model.Predictor` on each window's text (``text[chars[w, 0]:chars[w, 1]]``, which a WordPiece tokenizer
splits into exactly the window's pieces, since windows start at word starts). Used by :class:`model.Predictor` only.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from model.core.tokenizer import Encoded
from model.tasks.types import task_type
from model.text.document_windows import DocumentWindows, aggregate, document_windows, merge_token_scores, window_ranges, window_weights

Predictor = Any  # a model.Predictor (not imported: model.predictor.predictor imports this module)

WINDOW_BATCH = 8  # windows per forward pass (bounded memory: no T x T matrix over a whole document)


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


@torch.inference_mode()
def forward_logits(predictor: Predictor, inputs: list[np.ndarray], head_mask=None) -> torch.Tensor:
    """Logits of each input, :data:`WINDOW_BATCH` padded inputs per forward pass (the SDPA path, no weights), in the
    predictor's precision (``Predictor.scoring``).

    Returns:
        float tensor [W, C] on the CPU.
    """
    out = []
    for b in range(0, len(inputs), WINDOW_BATCH):
        ids, mask = predictor.encoder.pad_ids(inputs[b : b + WINDOW_BATCH])
        with predictor.scoring(head_mask) as model:
            logits, _ = model(torch.from_numpy(ids).to(predictor.device), torch.from_numpy(mask).to(predictor.device))
        out.append(logits.float().cpu())
    return torch.cat(out)


def whole_windows(predictor: Predictor, enc: Encoded) -> DocumentWindows:
    """The :class:`model.text.document_windows.DocumentWindows` of a whole encoding (``predictor.encoder.encode(text, whole=True)``)."""
    P, S = predictor.encoder.specials
    special = np.zeros(len(enc.ids), dtype=bool)
    special[:P] = True
    special[len(special) - S :] = True
    pieces = enc.ids[P : len(enc.ids) - S]
    return document_windows(enc.offsets, special, predictor.encoder.max_len - P - S, None,
                            predictor.encoder.word_starts(pieces))


def window_text(text: str, windows: DocumentWindows, w: int) -> str:
    """The source text of window ``w``'s pieces."""
    s, e = (int(x) for x in windows.chars[w])
    return text[s:e]


def window_token_map(predictor: Predictor, text: str, windows: DocumentWindows, w: int, tokens_w: int) -> np.ndarray:
    """int64 [tokens_w]: the document token index of each token of window ``w``'s text encoded alone (-1 for none).

    The window's tokens equal the document's in its range (windows start at word starts); when another tokenizer
    splits the window's edge differently, tokens are matched by their character spans instead."""
    idx = windows.tokens_of(w)
    if len(idx) == tokens_w:
        return idx
    enc_w = predictor.encode(window_text(text, windows, w))
    doc = predictor.encoder.encode(text, whole=True)
    base = int(windows.chars[w, 0])
    at = {(int(s), int(e)): j for j, (s, e) in enumerate(doc.offsets) if e > s}
    P, _ = predictor.encoder.specials
    out = np.array([at.get((int(s) + base, int(e) + base), -1) if e > s else -1 for s, e in enc_w.offsets])
    out[:P] = np.arange(P)
    return out.astype(np.int64)


def explain_document(predictor: Predictor, text: str, method: str, prediction, target: int | None, **kwargs):
    """Explain a long text: each of its windows explained for the document's class, the scores merged
    (:func:`model.text.document_windows.merge_token_scores` with :func:`model.text.document_windows.window_weights`: a document token's score is
    its score in the window that reads it times that window's weight; :func:`window_token_map` places them). Each
    window's text is explained as one input (``long_text="head_tail"``). ``progress`` gets (windows done, W).

    Returns:
        :class:`model.explain.Explanation` with float32 [T] scores over the document's T tokens.
    """
    from model.records.explanation import Explanation

    windows = prediction.document_windows()
    target = prediction.label_index if target is None else int(target)
    progress = kwargs.pop("progress", None)
    weights = window_weights(windows.ranges)
    scores, maps, elapsed, deltas = [], [], 0.0, []
    for v in range(windows.count):
        # a window's text is one input: when a window starts inside a word its text alone may need a piece or two more
        # than the window holds (issue 46), and the head+tail cut of those few keeps it one input, never new windows
        e = predictor.explain(window_text(text, windows, v), method, target=target, long_text="head_tail", **kwargs)
        maps.append(window_token_map(predictor, text, windows, v, len(e.scores)))
        scores.append(e.scores)
        elapsed += e.elapsed_s
        if e.convergence_delta is not None:
            deltas.append(abs(e.convergence_delta))
        if progress is not None:
            progress(v + 1, len(weights))
    merged = merge_token_scores(scores, maps, windows.num_tokens, weights)
    return Explanation(method=method, scores=merged, signed=e.signed, target=target, elapsed_s=elapsed,
                       convergence_delta=max(deltas) if deltas else None, tokens=list(prediction.tokens))


def faithfulness_document(predictor: Predictor, text: str, explanation, prediction, **kwargs):
    """ERASER faithfulness of a whole-document explanation: each window of the text measured with the explanation's
    scores of its tokens; the windows' comprehensiveness and sufficiency averaged with the aggregation's weights
    (:func:`model.text.document_windows.window_weights`).

    Returns:
        :class:`model.explain.Faithfulness`: AOPCs and per-k values the weighted means over the windows, ``p_full``
        the document's probability of the class, ``elapsed_s`` the sum.
    """
    import dataclasses

    from model.explain.erasure import faithfulness

    windows = prediction.document_windows()
    weights = window_weights(windows.ranges)
    parts = []
    for v in range(windows.count):
        sub = window_text(text, windows, v)
        idx = window_token_map(predictor, text, windows, v, len(predictor.encode(sub).ids))
        scores = np.where(idx >= 0, np.asarray(explanation.scores)[np.maximum(idx, 0)], 0.0).astype(np.float32)
        part = dataclasses.replace(explanation, scores=scores, tokens=[explanation.tokens[max(i, 0)] for i in idx])
        parts.append(faithfulness(predictor, sub, part, **kwargs))

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
    once all its windows are scored (for :meth:`model.Predictor.score_many`).

    Args:
        encoder: the predictor's text encoder.
        encoded: per text ``(ids int64 [T], truncated)`` (``encode_ids_batch``; ``whole=True`` for windows), or per
            sentence pair ``(ids, segment ids int8 [T], which side was cut)`` (``encode_pair_ids_batch``: one item,
            never windows).
        reader: the predictor: its ``labels``, ``task``, ``read_out`` and ``probabilities`` read the logits.
        windowed: read long texts in windows (False: each text is one item, as encoded).

    Attributes:
        items: the int64 id arrays to score; segments: each item's segment ids (None for a single text).
    """

    def __init__(self, encoder, encoded: list[tuple], reader, windowed: bool):
        self.reader = reader
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

    def add(self, item: int, logits: np.ndarray, probs: np.ndarray):
        """Record one item's float [C] logits and probabilities; returns (text index, Score) when that text is
        complete, else None. A one-window text's Score holds ``probs`` as given (today's bits)."""
        from model.records.prediction import Score

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
            p = self.reader.probabilities(torch.from_numpy(z))
        self.logits.pop(item, None)
        label, value = self.reader.read_out(z, p)
        return k, Score(label, p, self.truncated[k], self.num_tokens[k], num_windows=W, task=self.reader.task.kind,
                        value=value, pair_truncated=self.pair_cut[k])
