"""What the model-guided generators share: the direction to push the verdict, token-to-word maps, and scoring a
source's candidate edits in one batch (``Predictor.score_many``).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

import numpy as np

from model.records.counterfactual import Edit

from .base import Source
from .scoring import score_inputs, scored_edit, verdict_of


def task_of(source: Source):
    """The task the run reads the head as (the options' task, else the predictor's)."""
    return source.options.task if source.options is not None else source.predictor.task


def aim(source: Source) -> tuple[int, float]:
    """``(target, direction)``: the output index to push and the sign that moves the verdict: +1 lowers the source's
    verdict's own output (its class's log-odds, its top label's logit when that label is predicted, a value at or above
    the threshold), -1 raises it (the top label when no label is predicted; a value below the threshold)."""
    target = verdict_of(task_of(source)).measured(source.score)
    return target, 1.0 if _on(source) else -1.0


def _on(source: Source) -> bool:
    """Whether the source's verdict sits on the "high" side of its measured output (see :func:`aim`)."""
    s = source.score
    if not task_of(source).type.reads_probabilities:
        return s.value is not None and s.value >= source.settings.threshold
    return bool(s.label)  # a class, or a non-empty label set


def side_tokens(source: Source, enc) -> np.ndarray:
    """bool [T]: the tokens of ``enc`` (the encoded input) that belong to the edited side and are not special."""
    keep = ~enc.special_mask()
    if enc.segment_ids is not None:
        seg = np.asarray(enc.segment_ids)
        keep &= seg == (1 if source.settings.side == "second" else 0)
    return keep


def token_words(enc, keep: np.ndarray, spans: Sequence[tuple[int, int]]) -> np.ndarray:
    """int64 [T]: the index of the word (in ``spans``, sorted word spans of the edited side) each kept token starts
    in, -1 for tokens not kept or outside every word (punctuation)."""
    starts = [s for s, _ in spans]
    out = np.full(len(enc.ids), -1, np.int64)
    for t in np.flatnonzero(keep):
        a, b = (int(x) for x in enc.offsets[t])
        w = bisect.bisect_right(starts, a) - 1
        if w >= 0 and a < spans[w][1] and b > a:
            out[t] = w
    return out


def score_candidates(source: Source, edits: Sequence[Edit]) -> list[Edit]:
    """``edits`` of ``source`` scored in one ``score_many`` call against ``source.score`` (adds them to
    ``source.spent``)."""
    source.check()
    if not edits:
        return []
    p = source.predictor
    got = score_inputs(p, [e.edited_text for e in edits], [e.edited_pair for e in edits], source.options)
    source.spent += len(edits)
    return [scored_edit(e, source.score, s, p.labels, task_of(source), source.settings.threshold)
            for e, s in zip(edits, got)]


def closest(source: Source, edits: Sequence[Edit]) -> Edit | None:
    """The flipped edit with the fewest changed words (then the largest change), else the scored edit closest to
    flipping (the smallest :attr:`~model.counterfactuals.scoring.Verdict.margin`), else None."""
    ok = [e for e in edits if e.error is None]
    if not ok:
        return None
    flipped = [e for e in ok if e.flipped]
    if flipped:
        return min(flipped, key=lambda e: (e.size, -abs(e.delta or 0.0)))
    rule = verdict_of(task_of(source))
    return min(ok, key=lambda e: rule.margin(source.score, _as_score(e), source.settings.threshold))


def _as_score(edit: Edit):
    """The edited input's verdict as a Score-like record (what :attr:`~model.counterfactuals.scoring.Verdict.margin`
    reads)."""
    from model.records.prediction import Score

    return Score(label=edit.edited_label, probabilities=edit.edited_probabilities, truncated=False, num_tokens=0,
                 value=edit.edited_value)


__all__ = ["aim", "closest", "score_candidates", "side_tokens", "task_of", "token_words"]
