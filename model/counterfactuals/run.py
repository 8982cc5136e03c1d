"""Running the generators over one input or a corpus: :data:`GENERATORS` (the registry), :func:`parse_generators`,
:func:`generate` (every chosen generator on every input, then the edits scored in batches with
``Predictor.score_many``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from model.records.counterfactual import Edit

from .ablation import AblationFlip
from .base import Generator, SearchCancelled, Settings, Source
from .hotflip import HotFlip
from .lexical import Negation, Scrambler, WordReplacer
from .scoring import score_edits, score_inputs

GENERATORS: dict[str, Generator] = {g.name: g for g in (WordReplacer(), Negation(), AblationFlip(), HotFlip(),
                                                        Scrambler())}
"""The generators by name, in display order."""


def parse_generators(spec: str | Sequence[str]) -> tuple[str, ...]:
    """Generator names from ``"negation,hotflip"`` (or a sequence of names), duplicates dropped, order kept.

    Raises:
        ValueError: no name, or an unknown one (the message names the known ones).
    """
    names = [n.strip() for n in (spec.split(",") if isinstance(spec, str) else spec) if n.strip()]
    unknown = [n for n in names if n not in GENERATORS]
    if unknown or not names:
        raise ValueError(f"unknown counterfactual generator {', '.join(unknown) or '(none given)'}; expected "
                         f"names from {', '.join(GENERATORS)}")
    return tuple(dict.fromkeys(names))


def generate(predictor, inputs: Sequence[tuple[str, str | None]], names: Sequence[str],
             settings: Settings | None = None, options=None, origins: Sequence[str] | None = None,
             progress: Callable[[int, int], None] | None = None,
             should_stop: Callable[[], bool] | None = None) -> list[Edit]:
    """Every generator of ``names`` on every input ``(text, text_pair or None)``, the edits scored.

    The sources are scored first (one ``score_many`` call); the model-guided generators (``ablation_flip``,
    ``hotflip``) score their own candidates per input; the other generators' edits are scored at the end, in one
    batched ``score_many`` call. An input that cannot be scored (empty, too long) gets no guided edit.

    Args:
        predictor: the shared :class:`model.Predictor` (a classification head is needed).
        inputs: the inputs; ``origins``: where each came from (the edits' ``origin``), default "".
        names: generator names (:func:`parse_generators`); settings: the run's :class:`Settings` (default ones).
        options: the run's :class:`model.predictor.options.PredictOptions` (None: the predictor's current ones).
        progress: ``progress(done, total)`` after each input (the final scoring is one more step).
        should_stop: checked between inputs and steps; when True the edits made so far come back, scored.

    Returns:
        The scored edits, grouped by input in input order, each input's by generator in ``names`` order.

    Raises:
        ValueError: an unknown generator, bad settings, or a second text to edit on inputs without one.
    """
    names, settings = parse_generators(names), (settings or Settings()).checked()
    if settings.side == "second" and (missing := [i for i, (_, p) in enumerate(inputs) if p is None]):
        raise ValueError(f"the second text was chosen for editing, and input {missing[0] + 1} has no second text")
    options = options if options is not None else predictor.options()
    stop = should_stop or (lambda: False)
    scores = score_inputs(predictor, [t for t, _ in inputs], [p for _, p in inputs], options)
    origins = list(origins) if origins is not None else [""] * len(inputs)
    edits: list[Edit] = []
    total = len(inputs) + 1
    try:
        for i, ((text, pair), score) in enumerate(zip(inputs, scores)):
            if stop():
                break
            source = Source(text, pair, settings, predictor, options, score, should_stop)
            for name in names:
                gen = GENERATORS[name]
                if gen.guided and not score.ok:
                    continue
                edits += [replace(e, origin=origins[i]) for e in gen.generate(source)]
            if progress is not None:
                progress(i + 1, total)
    except SearchCancelled:
        pass
    sources = {(t, p): s for (t, p), s in zip(inputs, scores)}
    out = score_edits(predictor, edits, settings.threshold, options, sources)
    if progress is not None:
        progress(total, total)
    return out


__all__ = ["GENERATORS", "generate", "parse_generators"]
