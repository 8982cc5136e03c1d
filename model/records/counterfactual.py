"""The records of counterfactual edits (issue 43, "What if"): immutable, NumPy only, no torch.

An :class:`Edit` is one changed copy of a text made by a generator of :mod:`model.counterfactuals` (LIT's
``WordReplacer``, ``AblationFlip``, ``HotFlip``, ``Scrambler``; CheckList's negation): the source text, its
:class:`Change` s (character spans of the source and what replaces them), the edited text, and, once scored
(:func:`model.counterfactuals.scoring.score_edits`), the model's verdict on both texts and whether it flipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from model.records.prediction import freeze_arrays

SIDES = ("first", "second")
"""Which text of a sentence pair an edit changes: the first (``text``) or the second (``text_pair``)."""


@dataclass(frozen=True)
class Change:
    """One replaced character span of the edited side's source text.

    Attributes:
        start, end: the span [start, end) in characters of the source text (``end == start``: an insertion).
        new: what replaces it ("" for a removal).
    """

    start: int
    end: int
    new: str


def apply_changes(text: str, changes: tuple[Change, ...]) -> str:
    """``text`` with ``changes`` applied (spans of ``text``, sorted and not overlapping).

    Raises:
        ValueError: a span outside ``text``, spans out of order or overlapping.
    """
    out, at = [], 0
    for c in changes:
        if not at <= c.start <= c.end <= len(text):
            raise ValueError(f"change {c} is outside the text or overlaps the one before it")
        out += [text[at:c.start], c.new]
        at = c.end
    out.append(text[at:])
    return "".join(out)


def edited_spans(changes: tuple[Change, ...]) -> list[tuple[int, int]]:
    """Where each change's new text sits in the edited text: ``(start, end)`` character spans, one per change (an
    empty span where something was removed), in the order of ``changes``."""
    spans, shift = [], 0
    for c in changes:
        start = c.start + shift
        spans.append((start, start + len(c.new)))
        shift += len(c.new) - (c.end - c.start)
    return spans


@dataclass(frozen=True)
class Edit:
    """One counterfactual edit of one input, scored or not.

    Attributes:
        generator: the generator's name (:data:`model.counterfactuals.GENERATORS`).
        text, text_pair: the source input (``text_pair`` None for a single text).
        side: the edited side, one of :data:`SIDES` (``"first"`` for a single text).
        changes: the :class:`Change` s of the edited side's source text, sorted, not overlapping.
        edited: the edited side's new text (``apply_changes(source side, changes)``).
        note: what the generator did, in words ("removed 3 words", "good -> bad").
        size: how many words were changed, removed or added (the "smallest flip" compares it).
        label, edited_label: the model's label of the source and of the edited input (:attr:`model.records.prediction.
            Score.label`: a class, ``";"``-joined labels, or "" for a value); "" until scored.
        labels: the model's class names, index-aligned with the probabilities.
        probabilities, edited_probabilities: float32 [C] (shape (0,) for regression and until scored).
        value, edited_value: regression's predicted values; None otherwise.
        delta: the change of the source's predicted class's probability (multi-label: of its most probable label;
            regression: of the value), edited minus source; None until scored.
        jsd: Jensen-Shannon divergence in bits of the two probability vectors
            (:func:`model.counterfactuals.scoring.js_divergence`); None for regression and until scored.
        flipped: whether the verdict changed (a class, a label set, or the value's side of the threshold); None until
            scored.
        error: why the edited input could not be scored (then ``flipped`` is None), or None.
        origin: where the source came from (a batch record's ``source``: ``path:line N``), or "".
    """

    generator: str
    text: str
    text_pair: str | None
    side: str
    changes: tuple[Change, ...]
    edited: str
    note: str = ""
    size: int = 0
    label: str = ""
    edited_label: str = ""
    labels: tuple[str, ...] = ()
    probabilities: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    edited_probabilities: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    value: float | None = None
    edited_value: float | None = None
    delta: float | None = None
    jsd: float | None = None
    flipped: bool | None = None
    error: str | None = None
    origin: str = ""

    def __post_init__(self) -> None:
        freeze_arrays(self)

    @property
    def scored(self) -> bool:
        """True once the model's verdicts are filled in (or the edit failed to score)."""
        return self.flipped is not None or self.error is not None

    @property
    def source(self) -> str:
        """The edited side's source text."""
        return self.text if self.side == "first" else (self.text_pair or "")

    @property
    def edited_text(self) -> str:
        """The first text after the edit (``text`` itself when the second text was edited)."""
        return self.edited if self.side == "first" else self.text

    @property
    def edited_pair(self) -> str | None:
        """The second text after the edit (``text_pair`` itself when the first text was edited)."""
        return self.edited if self.side == "second" else self.text_pair

    def with_scores(self, **scores) -> Edit:
        """A copy with the scoring fields given by keyword (``label``, ``edited_label``, ...)."""
        return replace(self, **scores)


__all__ = ["SIDES", "Change", "Edit", "apply_changes", "edited_spans"]
