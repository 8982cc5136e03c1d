"""The "smallest flip" search: ``hotflip`` (one token), ``ablation_flip`` and ``hotflip`` (two tokens) on one input
under a budget of model evaluations, the flip with the fewest changed words kept.

Steps, each run only while the budget lasts and no flip of one word was found (none can be smaller): 1. one-token
HotFlip; 2. AblationFlip, its removals capped at the budget left (and at a removal no larger than the best flip so
far); 3. two-token HotFlip. A model evaluation is one scored text, or a forward and backward pass counted as two
(:attr:`model.counterfactuals.base.Source.spent`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from model.records.counterfactual import Edit

from .ablation import AblationFlip
from .base import Settings, Source
from .guided import closest
from .hotflip import HotFlip
from .scoring import score_inputs

DEFAULT_BUDGET = 300
"""Model evaluations one search may spend (about 1 s for a 200-token review with the bundled model on 2 cores)."""


@dataclass(frozen=True)
class SearchResult:
    """What a smallest-flip search found.

    Attributes:
        best: the flip with the fewest changed words (ties: the largest change), else the edit closest to flipping,
            else None (no edit could be made).
        tried: the best edit of each step run, in order.
        spent: model evaluations spent.
        complete: True when every step ran (not cut by the budget).
    """

    best: Edit | None
    tried: tuple[Edit, ...]
    spent: int
    complete: bool


def smallest_flip(predictor, text: str, text_pair: str | None = None, settings: Settings | None = None,
                  options=None, budget: int = DEFAULT_BUDGET, progress: Callable[[int, int, str], None] | None = None,
                  should_stop: Callable[[], bool] | None = None) -> SearchResult:
    """Search one input for its smallest flip (see the module docstring).

    Args:
        predictor, settings, options: as :func:`model.counterfactuals.run.generate`.
        budget: model evaluations at most (checked between steps; a step's own cost is bounded by its settings).
        progress: ``progress(step, steps, what)`` before each step (3 steps).
        should_stop: Cancel: checked between steps and inside them.

    Raises:
        ValueError: the input cannot be scored (its reason), bad settings or budget < 1.
        model.counterfactuals.base.SearchCancelled: ``should_stop()`` returned True.
    """
    if budget < 1:
        raise ValueError(f"budget must be at least 1 model evaluation, got {budget}")
    settings = (settings or Settings()).checked()
    options = options if options is not None else predictor.options()
    (score,) = score_inputs(predictor, [text], [text_pair], options)
    if not score.ok:
        raise ValueError(f"cannot search this text: {score.error}")
    source = Source(text, text_pair, settings, predictor, options, score, should_stop, spent=1)
    steps = [("one-token HotFlip", HotFlip(), replace(settings, max_flips=1)),
             ("AblationFlip", AblationFlip(), settings),
             ("two-token HotFlip", HotFlip(), replace(settings, max_flips=2))]
    tried: list[Edit] = []
    complete = True
    for k, (what, gen, step_settings) in enumerate(steps):
        source.check()
        best = closest(source, tried)
        if best is not None and best.flipped and best.size <= 1:
            break
        left = budget - source.spent
        if left < 3:
            complete = False
            break
        if isinstance(gen, AblationFlip):
            cap = min(step_settings.max_removals, max(1, left - 2))
            if best is not None and best.flipped:
                cap = min(cap, best.size - 1)
            step_settings = replace(step_settings, max_removals=max(1, cap))
        if progress is not None:
            progress(k, len(steps), what)
        source.settings = step_settings
        tried += gen.generate(source)
    return SearchResult(closest(source, tried), tuple(tried), source.spent, complete)


__all__ = ["DEFAULT_BUDGET", "SearchResult", "smallest_flip"]
