"""What every counterfactual generator shares: its settings, the one input it edits, words and cases.

A generator (:class:`Generator`) turns one :class:`Source` (a text or a sentence pair, the side to edit, the
:class:`Settings`, and for the model-guided generators the shared Predictor and the source's score) into a list of
:class:`model.records.counterfactual.Edit` s. Words are the maximal runs of letters and digits, apostrophes inside
("didn't"), found by :func:`word_spans`; every generator edits whole words.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from model.records.counterfactual import SIDES, Change, Edit, apply_changes

WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*")
"""A word: letters and digits, with apostrophes inside (``didn't``, ``it\u2019s``)."""


class SearchCancelled(Exception):
    """Raised when a caller's ``should_stop()`` returned True between two steps of a generator or a search."""


@dataclass(frozen=True)
class Settings:
    """The settings of one run of the generators (checked once, :meth:`checked`).

    Attributes:
        side: which text of a pair to edit, one of :data:`model.records.counterfactual.SIDES`.
        threshold: regression: a flip is the value crossing this threshold (in the output's units).
        rules: ``word_replacer``'s rules as ``(word, replacement)`` pairs (:func:`model.counterfactuals.lexical.
            parse_rules`); empty: the built-in list :data:`model.counterfactuals.lexical.BUILTIN_RULES`.
        method: ``ablation_flip``'s token-importance method (one of :data:`model.explain.EXPLANATION_METHODS`), or
            ``"auto"``: the most faithful method that is cheap for the text (:func:`model.counterfactuals.ablation.
            auto_method`).
        max_edits: at most this many edits per input from ``word_replacer`` and ``negation``.
        max_removals: ``ablation_flip`` removes at most this many words.
        candidates: ``hotflip`` scores this many substitutions per step.
        max_flips: ``hotflip`` substitutes at most this many tokens (1 or 2).
        samples: ``scrambler``'s shuffles per input.
        seed: ``scrambler``'s seed (with the text: the same input gives the same shuffle).
    """

    side: str = "first"
    threshold: float = 0.0
    rules: tuple[tuple[str, str], ...] = ()
    method: str = "auto"
    max_edits: int = 8
    max_removals: int = 20
    candidates: int = 8
    max_flips: int = 2
    samples: int = 1
    seed: int = 0

    def checked(self) -> Settings:
        """``self`` when every field is valid. Raises ValueError naming the field otherwise."""
        if self.side not in SIDES:
            raise ValueError(f"side must be one of {', '.join(SIDES)}, got {self.side!r}")
        for name in ("max_edits", "max_removals", "candidates", "samples"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"{name} must be a positive integer, got {getattr(self, name)!r}")
        if self.max_flips not in (1, 2):
            raise ValueError(f"max_flips must be 1 or 2, got {self.max_flips!r}")
        from model.explain import EXPLANATION_METHODS

        if self.method != "auto" and self.method not in EXPLANATION_METHODS:
            raise ValueError(f"unknown importance method {self.method!r}; expected one of "
                             f"auto, {', '.join(EXPLANATION_METHODS)}")
        return self


@dataclass
class Source:
    """One input to edit, with what the generators may use.

    Attributes:
        text, text_pair: the input (``text_pair`` None for a single text).
        settings: the run's :class:`Settings`.
        predictor: the shared :class:`model.Predictor` (the model-guided generators use it), or None.
        options: the run's :class:`model.predictor.options.PredictOptions` (None: the predictor's current ones).
        score: the source's :class:`model.records.prediction.Score` (filled by the runner before a model-guided
            generator runs), or None.
        should_stop: checked between steps; True raises :class:`SearchCancelled`.
        spent: model evaluations spent on this input so far (forward passes of one text, a backward pass counting
            as one): the smallest-flip search's budget.
    """

    text: str
    text_pair: str | None = None
    settings: Settings = field(default_factory=Settings)
    predictor: Any = None
    options: Any = None
    score: Any = None
    should_stop: Callable[[], bool] | None = None
    spent: int = 0

    @property
    def side_text(self) -> str:
        """The text being edited (the second one when ``settings.side == "second"``)."""
        if self.settings.side == "second":
            if self.text_pair is None:
                raise ValueError("the second text was chosen for editing, and this input has no second text")
            return self.text_pair
        return self.text

    def check(self) -> None:
        """Raise :class:`SearchCancelled` when ``should_stop()`` says so."""
        if self.should_stop is not None and self.should_stop():
            raise SearchCancelled("stopped")

    def edit(self, generator: str, changes: list[Change] | tuple[Change, ...], note: str, size: int) -> Edit:
        """An unscored :class:`Edit` of this input's edited side by ``changes`` (sorted by start)."""
        changes = tuple(sorted(changes, key=lambda c: (c.start, c.end)))
        return Edit(generator=generator, text=self.text, text_pair=self.text_pair, side=self.settings.side,
                    changes=changes, edited=apply_changes(self.side_text, changes), note=note, size=size)


class Generator:
    """One counterfactual generator (subclasses set :attr:`name`, :attr:`title`, :attr:`guided` and implement
    :meth:`generate`).

    Attributes:
        name: the id used on the command line and in the records (LIT's name where LIT has one).
        title: a few words for the GUI.
        guided: True when it reads the model (needs ``source.predictor`` and ``source.score``); its edits come back
            scored.
    """

    name: ClassVar[str]
    title: ClassVar[str]
    guided: ClassVar[bool] = False

    def generate(self, source: Source) -> list[Edit]:
        """The edits of ``source`` (maybe none). Raises SearchCancelled when ``source.should_stop()`` said so."""
        raise NotImplementedError


def word_spans(text: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` character spans of the words of ``text`` (:data:`WORD`), in order."""
    return [m.span() for m in WORD.finditer(text)]


def keep_case(original: str, new: str) -> str:
    """``new`` in the case of ``original``: all capitals (two letters or more), a capital first letter, or as given."""
    if len(original) > 1 and original.isupper():
        return new.upper()
    if original[:1].isupper():
        return new[:1].upper() + new[1:]
    return new


def removal_changes(text: str, spans: list[tuple[int, int]]) -> list[Change]:
    """Changes that delete the word ``spans`` of ``text`` with the space before each (after it for a word at the
    start), never overlapping: the text keeps single spaces between the words left."""
    changes, last, lead = [], 0, 0  # lead: the end of what is removed from the text's start on
    for start, end in sorted(spans):
        s, e = start, end
        while s > 0 and text[s - 1].isspace():
            s -= 1
        if s <= lead:
            while e < len(text) and text[e].isspace():
                e += 1
            lead = e
        s = max(s, last)
        changes.append(Change(s, e, ""))
        last = e
    return changes


__all__ = ["WORD", "Generator", "SearchCancelled", "Settings", "Source", "keep_case", "removal_changes", "word_spans"]
