"""Faithfulness of token-importance explanations by erasure: ERASER comprehensiveness and sufficiency.

Source: DeYoung et al. 2020, "ERASER: A Benchmark to Evaluate Rationalized
NLP Models", section 4 (comprehensiveness, sufficiency and their
area-over-the-perturbation-curve, AOPC, over bins k).

For the class c an explanation is for (the predicted class by default):

* comprehensiveness_k = p(c | full text) - p(c | text with the top-k% tokens removed)
  (high = the tokens the method ranks first really carry the decision);
* sufficiency_k = p(c | full text) - p(c | only the top-k% tokens kept)
  (low = those tokens alone are enough);
* AOPC = the mean over k in :data:`AOPC_PERCENTS` = {1, 5, 10, 20, 50}%.

Removal rule (the same everywhere): tokens are **deleted** from the id
sequence (the rest close up and take new positions); special tokens (``[CLS]``,
and for Hugging Face models also ``[SEP]`` / ``<s>`` / ``</s>``) are never removed
nor counted. Of the n real (non-special) tokens, m = max(1, round(k n / 100))
are removed/kept, chosen as the m highest scores (for signed methods, the
highest signed value, i.e. the strongest evidence *for* c; ties go to the
earlier token). In a sentence pair every kept token keeps its segment id (its ``token_type_ids``).
"p" is what the task reads (:func:`model.tasks.readout.outputs`): the softmax probability of c, a multi-label head's
sigmoid of label c, or a regression head's value. All 1 + 2 |K| inputs of one text go through one padded
forward pass on the fast SDPA path.

The dataset-level table (mean AOPC with 95% bootstrap intervals) is the CLI
:mod:`model.evaluation.faithfulness`
(``python -m model.evaluation.faithfulness --data ../shared/data/imdb/test.jsonl.gz --n 500``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import torch

from ..core.tokenizer import pad_sequences
from model.tasks.readout import outputs
from model.text.segments import types_kw
from model.tasks.task import task_of
from model.tasks.types import TaskType, task_type

from .methods import encode_of, forward_lock_of
from model.records.explanation import Explanation, Faithfulness

if TYPE_CHECKING:  # pragma: no cover
    from .methods import ExplainablePredictor as Predictor

AOPC_PERCENTS: tuple[int, ...] = (1, 5, 10, 20, 50)
"""The bins k (percent of the real tokens) averaged into AOPC (DeYoung et al. 2020)."""

ProbFn = Callable[..., np.ndarray]
"""``prob_fn(input_ids int64 (B, T), attention_mask bool (B, T)) -> probabilities float (B, C)``; for a sentence
pair it is called with a third argument, the segment ids int64 (B, T) of the erased inputs."""


def tokens_for_percent(num_real: int, percent: float) -> int:
    """m = max(1, round(percent * num_real / 100)), capped at ``num_real``.

    Args:
        num_real: n, the real tokens (``[CLS]`` excluded), >= 1.
        percent: k in (0, 100].

    Raises:
        ValueError: if ``num_real`` < 1 or ``percent`` is outside (0, 100].
    """
    if num_real < 1:
        raise ValueError("the text has no tokens besides [CLS]; nothing to erase")
    if not 0 < percent <= 100:
        raise ValueError(f"percent must be in (0, 100], got {percent}")
    return min(num_real, max(1, int(np.floor(percent * num_real / 100 + 0.5))))


def _special_or_cls(special: np.ndarray | None, T: int) -> np.ndarray:
    if special is not None:
        return np.asarray(special, dtype=bool)
    mask = np.zeros(T, dtype=bool)
    mask[:1] = True
    return mask


def top_token_positions(scores: np.ndarray, m: int, special: np.ndarray | None = None) -> np.ndarray:
    """Positions of the m highest scores among the real tokens, ties to the earlier token.

    Args:
        scores: float [T].
        m: how many, 0 <= m <= number of real tokens.
        special: bool [T], positions never chosen; default: only position 0 (``[CLS]``).

    Returns:
        int64 [m] positions, in descending order of score.
    """
    scores = np.asarray(scores, dtype=np.float64)
    real = np.flatnonzero(~_special_or_cls(special, len(scores)))
    order = np.argsort(-scores[real], kind="stable")
    return real[order[:m]].astype(np.int64)


def erasure_keeps(
    scores: np.ndarray, percents: Sequence[float] = AOPC_PERCENTS, special: np.ndarray | None = None
) -> tuple[list[np.ndarray], list[int]]:
    """The removal rule (see the module docstring) as bool [T] masks of the kept positions.

    Args:
        scores: float [T] importance. percents: the bins k. special: bool [T], the always-kept special tokens;
            default: only position 0.

    Returns:
        ``(keeps, ms)``: 1 + 2 |K| masks (all True; comprehensiveness for each k; sufficiency for each k) and the
        tokens removed/kept per k.

    Raises:
        ValueError: there are no real tokens.
    """
    special = _special_or_cls(special, len(scores))
    n = int((~special).sum())
    comp, suff, ms = [], [], []
    for k in percents:
        m = tokens_for_percent(n, k)
        top = top_token_positions(scores, m, special)
        keep = np.ones(len(scores), dtype=bool)
        keep[top] = False
        comp.append(keep)
        only = special.copy()
        only[top] = True
        suff.append(only)
        ms.append(m)
    return [np.ones(len(scores), dtype=bool), *comp, *suff], ms


def erasure_inputs(
    ids: np.ndarray, scores: np.ndarray, percents: Sequence[float] = AOPC_PERCENTS, special: np.ndarray | None = None
) -> tuple[list[np.ndarray], list[int]]:
    """The perturbed id sequences of the removal rule (see the module docstring; :func:`erasure_keeps`).

    Args:
        ids: int64 [T], ``[CLS]`` first.
        scores: float [T] importance, aligned with ``ids``.
        percents: the bins k.
        special: bool [T], the always-kept special tokens; default: only position 0.

    Returns:
        ``(sequences, ms)``: ``sequences`` = [full, comprehensiveness input
        for each k..., sufficiency input for each k...] (1 + 2 |K| int64
        arrays, original order of the surviving tokens kept); ``ms`` = tokens
        removed/kept per k.

    Raises:
        ValueError: if ``scores`` and ``ids`` differ in length, or there are
            no real tokens.
    """
    ids = np.asarray(ids, dtype=np.int64)
    scores = np.asarray(scores)
    if scores.shape != ids.shape:
        raise ValueError(f"the explanation has {scores.shape[0]} scores but the text has {ids.shape[0]} tokens")
    keeps, ms = erasure_keeps(scores, percents, special)
    return [ids[keep] for keep in keeps], ms


def erasure_scores(
    ids: np.ndarray,
    scores: np.ndarray,
    target: int,
    prob_fn: ProbFn,
    percents: Sequence[float] = AOPC_PERCENTS,
    pad_id: int = 0,
    special: np.ndarray | None = None,
    segment_ids: np.ndarray | None = None,
) -> tuple[float, np.ndarray, np.ndarray, list[int]]:
    """Comprehensiveness and sufficiency at every k, with one batched call of ``prob_fn``.

    Args:
        ids: int64 [T], ``[CLS]`` first.
        scores: float [T].
        target: the class index c.
        prob_fn: see :data:`ProbFn`; gets the 1 + 2 |K| inputs right-padded
            with ``pad_id``.
        percents: the bins k.
        pad_id: padding id.
        special: bool [T], the always-kept special tokens; default: only position 0.
        segment_ids: int [T] of a sentence pair (each kept token keeps its own; ``prob_fn`` gets them as a third
            argument, int64 (B, T), padded with 0), or None.

    Returns:
        ``(p_full, comprehensiveness [K], sufficiency [K], ms)`` in
        probability units (regression: the output's units).
    """
    seqs, ms = erasure_inputs(ids, scores, percents, special)
    batch, mask = pad_sequences(seqs, pad_id)
    if segment_ids is None:
        out = prob_fn(batch, mask)
    else:
        keeps, _ = erasure_keeps(np.asarray(scores), percents, special)
        out = prob_fn(batch, mask, pad_sequences([np.asarray(segment_ids)[k] for k in keeps], 0)[0])
    p = np.asarray(out, dtype=np.float64)[:, target]  # (1 + 2K,)
    K = len(percents)
    p_full = float(p[0])
    return p_full, p_full - p[1 : 1 + K], p_full - p[1 + K : 1 + 2 * K], ms


def predictor_prob_fn(predictor: Predictor, kind: str | TaskType | None = None) -> ProbFn:
    """A :data:`ProbFn` running ``predictor.model`` (SDPA path, inference mode, under its ``forward_lock``): what
    the task ``kind`` (None: the predictor's) reads (:func:`model.tasks.readout.outputs`: softmax, sigmoids, or the
    regression value)."""
    kind = task_type(kind) if kind is not None else task_of(predictor).type

    def prob_fn(ids: np.ndarray, mask: np.ndarray, segment_ids: np.ndarray | None = None) -> np.ndarray:
        with torch.inference_mode(), forward_lock_of(predictor):
            logits, _ = predictor.model(
                torch.from_numpy(ids).to(predictor.device), torch.from_numpy(mask).to(predictor.device),
                **types_kw(predictor.model, segment_ids, predictor.device),
            )
            return outputs(logits.float(), kind).cpu().numpy()

    return prob_fn


def faithfulness(
    predictor: Predictor, text: str, explanation: Explanation, percents: Sequence[float] = AOPC_PERCENTS,
    text_pair: str | None = None, kind: str | None = None,
) -> Faithfulness:
    """ERASER comprehensiveness and sufficiency AOPC of ``explanation`` for ``text``.

    The measured class is ``explanation.target`` (the predicted class unless
    the explanation was made for another one).

    Args:
        predictor: the :class:`model.Predictor` that was explained.
        text: the text that was explained.
        explanation: from :func:`model.explain.explain` on the same text.
        percents: the bins k (default :data:`AOPC_PERCENTS`).
        text_pair: the second text of a sentence pair that was explained, or None.
        kind: the task p reads (``Predictor.faithfulness`` passes its call's); None: ``predictor.task``'s.

    Returns:
        A :class:`Faithfulness`.

    Raises:
        ValueError: bad text, or an explanation whose length differs from
            the text's token count.
    """
    t0 = time.perf_counter()
    enc = encode_of(predictor, text, text_pair)
    p_full, comp, suff, ms = erasure_scores(
        enc.ids, explanation.scores, explanation.target, predictor_prob_fn(predictor, kind), percents, predictor.config.pad_id,
        enc.special, enc.segment_ids,  # special None: only [CLS] is special (our own tokenizer)
    )
    per_k = {
        k: {"comprehensiveness": float(c), "sufficiency": float(s), "tokens": int(m)}
        for k, c, s, m in zip(percents, comp, suff, ms)
    }
    return Faithfulness(
        method=explanation.method,
        comprehensiveness_aopc=float(comp.mean()),
        sufficiency_aopc=float(suff.mean()),
        per_k=per_k,
        elapsed_s=time.perf_counter() - t0,
        target=explanation.target,
        p_full=p_full,
    )
