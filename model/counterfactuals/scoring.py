"""Edits scored in batches with ``Predictor.score_many``, and what a flip is for each task type.

The table :data:`VERDICTS` (read with :meth:`model.tasks.types.TaskType.pick`) says, per task type, whether two
scores differ in verdict, which output an edit is measured on and how far a score is from flipping:

* single-label: a flip is another class; the measured output is the source's predicted class's probability;
* multi-label: a flip is another label set (at the predictor's threshold); the measured output is the source's most
  probable label's sigmoid;
* regression: a flip is the value crossing the user's threshold (``value >= threshold`` changes); the measured output
  is the value.

The Jensen-Shannon divergence (:func:`js_divergence`) is in bits, in [0, 1]: for two softmax vectors the divergence
itself (SciPy's: the square of ``scipy.spatial.distance.jensenshannon(p, q, base=2)``, which returns its square root); for
multi-label, the mean over the labels of the divergence of each label's two Bernoulli distributions; none for a
value.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from model.records.counterfactual import Edit
from model.records.prediction import Score
from model.tasks.types import MultiLabel, Regression, SingleLabel, TaskType, task_type


def js_divergence(p: np.ndarray, q: np.ndarray) -> float:
    """Jensen-Shannon divergence in bits of two probability vectors float [C] (each normalised to sum 1 first):
    0.5 KL(p || m) + 0.5 KL(q || m), m = (p + q) / 2; in [0, 1]. The square of
    ``scipy.spatial.distance.jensenshannon(p, q, base=2)`` (which returns the distance, its square root). Raises
    ValueError: shapes differ or a vector sums to 0."""
    from scipy.spatial.distance import jensenshannon

    p, q = np.asarray(p, np.float64), np.asarray(q, np.float64)
    if p.shape != q.shape:
        raise ValueError(f"probability vectors of different shapes {p.shape} and {q.shape}")
    if p.sum() <= 0 or q.sum() <= 0:
        raise ValueError("a probability vector sums to 0")
    return float(min(1.0, jensenshannon(p, q, base=2) ** 2))


def bernoulli_js(p: np.ndarray, q: np.ndarray) -> float:
    """The mean over labels of :func:`js_divergence` of ``(p_i, 1 - p_i)`` and ``(q_i, 1 - q_i)``, float [C] each."""
    p, q = np.asarray(p, np.float64), np.asarray(q, np.float64)
    return float(np.mean([js_divergence([a, 1 - a], [b, 1 - b]) for a, b in zip(p, q)])) if len(p) else 0.0


@dataclass(frozen=True)
class Verdict:
    """How one task type reads a flip (see the module docstring).

    Attributes:
        flipped: ``flipped(score, edited_score, threshold) -> bool``.
        measured: ``measured(score) -> int``: the output index an edit's ``delta`` follows (read on the source).
        output: ``output(score, index) -> float``: that output's probability, or the value.
        divergence: ``divergence(p, q) -> float | None``.
        margin: ``margin(source_score, score, threshold) -> float``: how far ``score`` is from flipping the source's
            verdict (> 0: not flipped; smaller is closer), for ranking candidates that do not flip.
    """

    flipped: Callable[[Score, Score, float], bool]
    measured: Callable[[Score], int]
    output: Callable[[Score, int], float]
    divergence: Callable[[np.ndarray, np.ndarray], float | None]
    margin: Callable[[Score, Score, float], float]


def _label_set(score: Score) -> frozenset[str]:
    return frozenset(filter(None, score.label.split(";")))


def _single_margin(src: Score, s: Score, _t: float) -> float:
    c = int(np.argmax(src.probabilities))
    others = np.delete(s.probabilities, c)
    return float(s.probabilities[c] - (others.max() if len(others) else 0.0))


def _multi_margin(src: Score, s: Score, _t: float) -> float:
    c = int(np.argmax(src.probabilities))  # predicted iff any label is (one threshold for all labels)
    return float(s.probabilities[c] if _label_set(src) else 1.0 - s.probabilities[c])


def _value_side(v: float | None, t: float) -> bool:
    return v is not None and v >= t


def _regression_margin(src: Score, s: Score, t: float) -> float:
    return float((s.value - t) if _value_side(src.value, t) else (t - s.value))


VERDICTS: dict[type[TaskType], Verdict] = {
    SingleLabel: Verdict(
        flipped=lambda a, b, _t: a.label != b.label,
        measured=lambda s: int(np.argmax(s.probabilities)),
        output=lambda s, i: float(s.probabilities[i]),
        divergence=js_divergence,
        margin=_single_margin),
    MultiLabel: Verdict(
        flipped=lambda a, b, _t: _label_set(a) != _label_set(b),
        measured=lambda s: int(np.argmax(s.probabilities)),
        output=lambda s, i: float(s.probabilities[i]),
        divergence=bernoulli_js,
        margin=_multi_margin),
    Regression: Verdict(
        flipped=lambda a, b, t: _value_side(a.value, t) != _value_side(b.value, t),
        measured=lambda s: 0,
        output=lambda s, i: float(s.value),
        divergence=lambda p, q: None,
        margin=_regression_margin),
}
"""The flip rules by task type (see the module docstring); a test checks it covers every type."""


def verdict_of(task) -> Verdict:
    """The :class:`Verdict` of a task (a :class:`model.tasks.task.Task`, a :class:`TaskType` or its id)."""
    kind = task.type if hasattr(task, "kind") else task_type(task)
    return kind.pick(VERDICTS)


def score_inputs(predictor, texts: Sequence[str], pairs: Sequence[str | None], options=None,
                 progress: Callable[[int, int], None] | None = None,
                 should_stop: Callable[[], bool] | None = None) -> list[Score]:
    """``predictor.score_many`` of ``texts`` (with ``pairs`` when any is not None), in the run's ``options``:
    the scored prefix when stopped."""
    text_pairs = list(pairs) if any(p is not None for p in pairs) else None
    return predictor.score_many(list(texts), text_pairs=text_pairs, options=options, progress=progress,
                                should_stop=should_stop)


def scored_edit(edit: Edit, src: Score, new: Score, labels: Sequence[str], task, threshold: float) -> Edit:
    """``edit`` with the verdicts of its source ``src`` and of itself ``new`` filled in (``error`` when either
    failed)."""
    if not src.ok or not new.ok:
        return edit.with_scores(labels=tuple(labels), error=src.error or new.error)
    rule = verdict_of(task)
    i = rule.measured(src)
    return edit.with_scores(
        label=src.label, edited_label=new.label, labels=tuple(labels), probabilities=src.probabilities,
        edited_probabilities=new.probabilities, value=src.value, edited_value=new.value,
        delta=rule.output(new, i) - rule.output(src, i),
        jsd=rule.divergence(src.probabilities, new.probabilities), flipped=bool(rule.flipped(src, new, threshold)))


def score_edits(predictor, edits: Sequence[Edit], threshold: float = 0.0, options=None,
                sources: dict[tuple[str, str | None], Score] | None = None,
                progress: Callable[[int, int], None] | None = None,
                should_stop: Callable[[], bool] | None = None) -> list[Edit]:
    """Score every unscored edit of ``edits`` (and each source not in ``sources``) in batched ``score_many`` calls
    under ``options`` (None: the predictor's current settings); edits already scored are kept as they are. Returns the
    edits in order (the scored prefix when ``should_stop`` stopped the scoring)."""
    sources = dict(sources or {})
    todo = [e for e in edits if not e.scored]
    missing = list(dict.fromkeys((e.text, e.text_pair) for e in todo if (e.text, e.text_pair) not in sources))
    if missing:
        got = score_inputs(predictor, [t for t, _ in missing], [p for _, p in missing], options)
        sources.update(zip(missing, got))
    new = score_inputs(predictor, [e.edited_text for e in todo], [e.edited_pair for e in todo], options,
                       progress, should_stop)
    task = options.task if options is not None else predictor.task
    done = iter(scored_edit(e, sources[(e.text, e.text_pair)], s, predictor.labels, task, threshold)
                for e, s in zip(todo, new))
    out = []
    for e in edits:
        if e.scored:
            out.append(e)
            continue
        nxt = next(done, None)
        if nxt is None:
            break
        out.append(nxt)
    return out


__all__ = ["VERDICTS", "Verdict", "bernoulli_js", "js_divergence", "score_edits", "score_inputs", "scored_edit",
           "verdict_of"]
