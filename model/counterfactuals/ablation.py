"""``ablation_flip`` (LIT's AblationFlip, with a token-importance order): remove the fewest words, in the order of a
token-importance method, until the verdict flips. Removes only, never adds or changes a word.

Steps for one input: explain the source's verdict with ``settings.method`` (default ``"auto"``, :func:`auto_method`:
integrated gradients, the most faithful method on the bundled model (docs/model.md), when its estimated time for this
text is at most :data:`AUTO_IG_S`, else gradient x input, signed and one forward and backward pass); sum each
word's token scores; rank the words by their support of the verdict (score times :func:`~.guided.aim`'s direction;
an unsigned method's scores as they are); remove the first k words for k = 1, 2, ... (``settings.max_removals`` at
most; the prefixes scored a batch at a time, stopping at the first that flips); then, for a removal of at most :data:`MINIMISE_UP_TO` words, try to put each removed word back
(all k in one batch) and keep the first set that still flips, at most :data:`MINIMISE_ROUNDS` times: a smaller
removal (locally smallest when the rounds did not run out). The edit
reported is the smallest flipping removal found, or the largest removal tried when none flips (``flipped`` False).
"""

from __future__ import annotations

import numpy as np

from model.records.counterfactual import Edit

from .base import Generator, Source, removal_changes, word_spans
from .guided import aim, score_candidates, side_tokens, token_words

PREFIX_BATCH = 8
"""Word-removal prefixes scored per ``score_many`` call."""
MINIMISE_UP_TO = 8
"""A flipping removal of at most this many words is made smaller by putting words back one at a time."""
MINIMISE_ROUNDS = 3
"""At most this many words are put back (one batch of candidates each)."""
AUTO_IG_S = 0.1
"""``"auto"`` explains with integrated gradients when :func:`model.explain.cost.estimate_seconds` says it takes at
most this many seconds for the text, else with gradient x input."""


def auto_method(predictor, tokens: int) -> str:
    """The importance method ``"auto"`` means for a text of ``tokens`` tokens (see :data:`AUTO_IG_S`)."""
    from model.explain.cost import estimate_seconds

    ig = estimate_seconds("integrated_gradients", predictor.config, tokens)
    return "integrated_gradients" if ig <= AUTO_IG_S else "grad_x_input"


def word_order(source: Source) -> tuple[list[tuple[int, int]], list[int]]:
    """``(word spans of the edited side, word indices most supporting the verdict first)`` by the explanation
    ``settings.method``; words no token of the model's input falls in (cut by head+tail) come last, in text order."""
    p, text = source.predictor, source.side_text
    spans = word_spans(text)
    options = source.options if source.options is not None else p.options()
    cut = options.replace(long_text="head_tail")  # the scores align with encode()'s tokens
    target, direction = aim(source)
    enc = p.encode(source.text, source.text_pair) if source.text_pair is not None else p.encode(source.text)
    method = auto_method(p, len(enc.ids)) if source.settings.method == "auto" else source.settings.method
    expl = p.explain(source.text, method, target=target, text_pair=source.text_pair, options=cut)
    source.spent += 2
    words = token_words(enc, side_tokens(source, enc), spans)
    support = np.zeros(len(spans))
    seen = np.zeros(len(spans), bool)
    scores = np.asarray(expl.scores, np.float64) * (direction if expl.signed else 1.0)
    for t, w in enumerate(words):
        if w >= 0:
            support[w] += scores[t]
            seen[w] = True
    order = sorted(range(len(spans)), key=lambda w: (not seen[w], -support[w], w))
    return spans, order


class AblationFlip(Generator):
    """See the module docstring; one edit per input (none for an input without words)."""

    name = "ablation_flip"
    title = "Ablation flip"
    guided = True

    def _edit(self, source: Source, spans, removed: list[int]) -> Edit:
        chosen = sorted(spans[w] for w in removed)
        note = f"removed {len(removed)} word{'s' * (len(removed) != 1)}: " + \
            ", ".join(source.side_text[s:e] for s, e in chosen[:8]) + (" ..." if len(chosen) > 8 else "")
        return source.edit(self.name, removal_changes(source.side_text, chosen), note, len(removed))

    def generate(self, source: Source) -> list[Edit]:
        spans, order = word_order(source)
        limit = min(source.settings.max_removals, len(order))
        best = None
        for first in range(1, limit + 1, PREFIX_BATCH):
            ks = range(first, min(first + PREFIX_BATCH, limit + 1))
            scored = score_candidates(source, [self._edit(source, spans, order[:k]) for k in ks])
            hit = next((e for e in scored if e.flipped), None)
            best = hit or (scored[-1] if scored else best)
            if hit is not None:
                return [self._minimise(source, spans, order[:hit.size], hit)]
        return [best] if best is not None else []

    def _minimise(self, source: Source, spans, removed: list[int], found: Edit) -> Edit:
        """Put removed words back one at a time while the removal still flips (see the module docstring)."""
        for _ in range(MINIMISE_ROUNDS if len(removed) <= MINIMISE_UP_TO else 0):
            if len(removed) < 2:
                break
            tries = [removed[:i] + removed[i + 1:] for i in range(len(removed))]
            scored = score_candidates(source, [self._edit(source, spans, r) for r in tries])
            hit = next((i for i, e in enumerate(scored) if e.flipped), None)
            if hit is None:
                break
            removed, found = tries[hit], scored[hit]
        return found


__all__ = ["AUTO_IG_S", "MINIMISE_ROUNDS", "MINIMISE_UP_TO", "PREFIX_BATCH", "AblationFlip", "auto_method", "word_order"]
