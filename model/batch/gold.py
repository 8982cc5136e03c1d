"""Gold labels of batch scoring: a reader's raw value -> the model's own label names (issue 30).

Readers (:mod:`model.batch.readers`) do not know the model, so a :class:`~model.batch.Record` carries its gold
label as the raw text found in the file (``Record.gold``; a JSON list is joined by ``";"``, a number written as
text) or the name of its parent folder (``Record.gold_source == "folder"``). Only a missing field or column (or a
JSON ``null``) is ``None``, no gold; an empty cell or an empty JSON list is ``""``. :class:`GoldReader` turns it
into the row's ``gold`` for the model's labels and task:

* single-label: a class name, matched case-insensitively (``"Joy"`` -> ``"joy"``); else an integer id, read
  through the label order (``id2label``: ``"2"`` -> ``labels[2]``); for a model with the classes ``negative`` and
  ``positive`` also ``pos``/``neg``, ``true``/``false`` and ``+1`` (the aclImdb names).
* multi-label: a ``";"``-separated list (or a JSON list) of names or ids; the row's gold is the names in the
  model's label order joined by ``";"``. An explicit empty value (``"labels": []``, an empty label cell) is the
  empty label set, a gold label like any other (most rows of a toxicity set have none): its row's gold is ``""``
  with ``correct`` set (:attr:`model.batch.ResultRow.has_gold`).
* single-label and regression: an empty value is no gold.
* regression: a number (``"3.8"``), written back as ``repr(float)``.

A value the model does not know (an unknown class, an id out of range, a non-numeric regression gold) leaves the
row's gold empty and comes back with a one-line ``problem`` that the caller counts (:class:`model.batch.Summary`),
never an exception. A folder name the model does not know is not a problem: most folders are not classes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from model.tasks.types import SINGLE_LABEL, TaskType, task_type

BINARY_LABELS = ("negative", "positive")
BINARY_ALIASES = {"pos": "positive", "neg": "negative", "true": "positive", "false": "negative", "+1": "positive"}
"""Other names of the bundled model's two classes (aclImdb folders, 0/1-style columns)."""
MAX_SHOWN = 8  # labels listed in a problem message


@dataclass(frozen=True)
class GoldReader:
    """Reads raw gold values for one model's ``labels`` and ``task`` (see the module docstring).

    Attributes:
        labels: the model's C class names, in its output order (``Predictor.labels``).
        task: one of :data:`model.tasks.task.TASKS` (a :class:`~model.tasks.types.TaskType` is stored as its id).

    Raises:
        ValueError: an unknown task.
    """

    labels: tuple[str, ...]
    task: str = SINGLE_LABEL
    _index: dict[str, str] = field(init=False, repr=False, compare=False)
    _type: TaskType = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_type", task_type(self.task))
        object.__setattr__(self, "task", self._type.id)
        index = {name.strip().lower(): name for name in self.labels}
        if {"negative", "positive"} <= set(self.labels):
            index = {**{k: v for k, v in BINARY_ALIASES.items()}, **index}
        object.__setattr__(self, "_index", index)

    def read(self, raw: str | None, source: str = "") -> tuple[str | None, str | None]:
        """``(gold, problem)`` of one raw value.

        Args:
            raw: the record's raw gold text (None: no gold; blank: the empty label set of a multi-label model, no
                gold for the other tasks).
            source: ``"folder"`` when ``raw`` is a folder name (an unknown one is silently no gold).

        Returns:
            ``gold``: the model's label name(s) (multi-label ``";"``-joined in label order, ``""`` for the empty
            set), the regression value as text, or None when unknown; ``problem``: None, or why a non-empty value was
            not understood.
        """
        if raw is None:
            return None, None
        text = str(raw).strip()
        if not text:
            return ("" if self._type.label_set and source != "folder" else None), None
        if not self._type.reads_probabilities:  # a value
            if source == "folder":
                return None, None
            return _number(text)
        parts = [p.strip() for p in text.split(";")] if self._type.label_set else [text]
        names = [self._name(p) for p in parts if p]
        if None in names:
            if source == "folder":
                return None, None
            bad = next(p for p, n in zip([p for p in parts if p], names) if n is None)
            return None, f"gold label {bad!r} is not one of the model's labels ({self._shown()})"
        if self._type.label_set:
            chosen = set(names)
            return ";".join(n for n in self.labels if n in chosen), None
        return names[0], None

    def _name(self, value: str) -> str | None:
        """The model's label for one name or integer id, or None."""
        hit = self._index.get(value.lower())
        if hit is not None:
            return hit
        try:
            number = float(value)
        except ValueError:
            return None
        if number.is_integer() and 0 <= int(number) < len(self.labels):
            return self.labels[int(number)]
        return None

    def _shown(self) -> str:
        more = len(self.labels) - MAX_SHOWN
        return ", ".join(self.labels[:MAX_SHOWN]) + (f", ... {more} more" if more > 0 else "")


def _number(text: str) -> tuple[str | None, str | None]:
    """A regression gold: ``(repr(float), None)``, or ``(None, problem)`` when ``text`` is not a finite number."""
    try:
        x = float(text)
    except ValueError:
        return None, f"gold {text!r} is not a number (the model predicts a value)"
    if not math.isfinite(x):
        return None, f"gold {text!r} is not a finite number"
    return repr(x), None


def gold_text(value: object) -> str | None:
    """A reader's raw gold value as text: None (a missing field or column, JSON ``null``) -> None; a list -> its
    items joined by ``";"`` (``[]`` -> ``""``, the empty label set); a blank string -> ``""``; a bool ->
    ``"true"``/``"false"``; a number or string -> ``str`` (an integral float as an integer, ``1.0`` -> ``"1"``)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ";".join(t for t in (gold_text(v) for v in value) if t)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip()


def normalize_gold(value: object) -> str | None:
    """The bundled model's reading of a gold value: ``"positive"``, ``"negative"`` or None.

    pos, positive, 1, true, +1 -> positive; neg, negative, 0, false -> negative (case-insensitive, spaces ignored);
    anything else (``-1``, ``unsup``, ``0.5``, ``""``, None) -> None.
    """
    text = gold_text(value)
    if text is None or (isinstance(value, float) and not value.is_integer()):
        return None
    return GoldReader(BINARY_LABELS).read(text)[0]


__all__ = ["BINARY_ALIASES", "GoldReader", "gold_text", "normalize_gold"]
