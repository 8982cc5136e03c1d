"""What colours the corpus map's points (issue 42), Qt-free: shared by the app's Map view and the HTML report.

A colouring is categorical (:class:`Categories`: a category per point, with names and colours for the legend) or
continuous (:class:`Scale`: a number per point, NaN where there is none). Which colourings a model's rows have
depends on its task type (:data:`MODES`, a :meth:`~model.tasks.types.TaskType.pick` table): single-label rows by
predicted class, gold class, right/wrong, confidence or a class's probability; multi-label by a chosen label (its
probability, whether it is predicted, whether it is gold), right/wrong (the exact set); regression by the value or
the absolute error; every task by length (tokens), windows, or whether a word occurs; rows scored by two models
(issue 44, :class:`model.records.comparison.ComparedRow`) also by whether the two models agree (:data:`AGREEMENT`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from model.palette import NEUTRAL, RIGHT, WRONG, class_colour
from model.records.batch import ResultRow
from model.records.comparison import ComparedRow
from model.tasks.types import MultiLabel, Regression, SingleLabel, task_type

_COMMON = ("length", "windows", "word")
MODES = {
    SingleLabel: ("predicted", "gold", "correct", "confidence", "probability", *_COMMON),
    MultiLabel: ("label_predicted", "label_gold", "correct", "probability", *_COMMON),
    Regression: ("value", "error", *_COMMON),
}
"""The colourings of each task type's rows, the first the default (see the module docstring)."""
AGREEMENT = "agree"
"""The colouring of rows scored by two models: whether model A and model B predict the same (``ComparedRow.agree``)."""

TITLES = {"predicted": "predicted class", "gold": "gold class", "correct": "right / wrong", "confidence": "confidence",
          "probability": "probability of a class", "label_predicted": "a label: predicted",
          "label_gold": "a label: gold", "value": "predicted value", "error": "absolute error",
          "length": "length (tokens)", "windows": "windows", "word": "a word occurs",
          AGREEMENT: "model A and model B agree"}
"""A human title per colouring."""


@dataclass(frozen=True)
class Categories:
    """A categorical colouring: ``codes`` int [N] index ``names`` and ``colours`` (``"#RRGGBB"``)."""

    codes: np.ndarray
    names: tuple[str, ...]
    colours: tuple[str, ...]


@dataclass(frozen=True)
class Scale:
    """A continuous colouring: ``values`` float [N] (NaN: none), named ``name``."""

    values: np.ndarray
    name: str


def modes_for(task_id: str, compared: bool = False) -> tuple[str, ...]:
    """The colourings of rows of task ``task_id`` (:data:`MODES`), and :data:`AGREEMENT` when ``compared`` (the rows
    were scored by two models)."""
    modes = task_type(task_id).pick(MODES)
    return (*modes, AGREEMENT) if compared else modes


def compared(rows: Sequence[ResultRow]) -> bool:
    """True when any of ``rows`` was scored by a second model too (a :class:`ComparedRow` with B's row)."""
    return any(isinstance(r, ComparedRow) and r.b is not None for r in rows)


def _categories(keys: Sequence[str], order: Sequence[str], colours: dict[str, str]) -> Categories:
    names = [n for n in order if n in set(keys)] + sorted(set(keys) - set(order))
    at = {n: i for i, n in enumerate(names)}
    return Categories(np.array([at[k] for k in keys], np.int64), tuple(names),
                      tuple(colours.get(n, NEUTRAL) for n in names))


def _label_of(row: ResultRow, labels: Sequence[str], which: str) -> str:
    text = row.label if which == "predicted" else row.gold
    if not row.has_gold and which == "gold":
        return "(no gold)"
    return text.split(";")[0] if text else "(none)"


def colouring(rows: Sequence[ResultRow], mode: str, labels: Sequence[str] = (), label: str = "",
              word: str = "") -> Categories | Scale:
    """The colouring ``mode`` (one of :data:`TITLES`) of ``rows`` (scored rows of one model, whose ``labels`` they
    are); ``label``: the class of ``probability``/``label_*`` (default the first); ``word``: the word of ``word``
    (whole word, case-insensitive).

    Raises:
        ValueError: an unknown mode.
    """
    label = label or (labels[0] if labels else "")
    palette = {n: class_colour(i) for i, n in enumerate(labels)}
    if mode in ("predicted", "gold"):
        return _categories([_label_of(r, labels, mode) for r in rows], list(labels), palette)
    if mode == "correct":
        keys = ["right" if r.correct else "wrong" if r.correct is not None else "no gold" for r in rows]
        return _categories(keys, ("right", "wrong", "no gold"), {"right": RIGHT, "wrong": WRONG})
    if mode in ("label_predicted", "label_gold"):
        field = "label" if mode == "label_predicted" else "gold"
        keys = [f"{label}" if label in getattr(r, field).split(";") else f"not {label}" for r in rows]
        return _categories(keys, (label, f"not {label}"), {label: palette.get(label, RIGHT)})
    if mode == AGREEMENT:
        agree = [r.agree if isinstance(r, ComparedRow) else None for r in rows]
        keys = ["agree" if a else "disagree" if a is not None else "not compared" for a in agree]
        return _categories(keys, ("agree", "disagree", "not compared"), {"agree": RIGHT, "disagree": WRONG})
    if mode == "word":
        pattern = re.compile(rf"\b{re.escape(word.strip())}\b", re.IGNORECASE) if word.strip() else None
        keys = [f"“{word}” occurs" if pattern and pattern.search(r.text) else "not found" for r in rows]
        return _categories(keys, (f"“{word}” occurs", "not found"), {f"“{word}” occurs": WRONG})
    return Scale(_numbers(rows, mode, label), TITLES.get(mode, mode) if mode != "probability" else f"p({label})")


def _numbers(rows: Sequence[ResultRow], mode: str, label: str) -> np.ndarray:
    """float [N] of a continuous mode (NaN where a row has none). Raises ValueError: an unknown mode."""
    nan = float("nan")
    pick = {
        "confidence": lambda r: r.confidence,
        "probability": lambda r: r.probability(label),
        "value": lambda r: r.value,
        "error": lambda r: abs(r.value - float(r.gold)) if r.value is not None and _is_number(r.gold) else None,
        "length": lambda r: r.num_tokens,
        "windows": lambda r: r.num_windows,
    }
    if mode not in pick:
        raise ValueError(f"unknown map colouring {mode!r}; one of {', '.join(TITLES)}")
    return np.array([nan if (v := pick[mode](r)) is None else float(v) for r in rows], np.float64)


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


RAMP = ("#440154", "#3B528B", "#21918C", "#5EC962", "#FDE725")
"""Five stops of viridis (dark = low, yellow = high), for a :class:`Scale`."""


def ramp_colours(values: np.ndarray) -> list[str]:
    """``"#RRGGBB"`` per value of float [N] on :data:`RAMP` between the finite minimum and maximum (NaN: NEUTRAL)."""
    v = np.asarray(values, np.float64)
    ok = np.isfinite(v)
    lo, hi = (float(v[ok].min()), float(v[ok].max())) if ok.any() else (0.0, 1.0)
    t = np.clip((v - lo) / (hi - lo if hi > lo else 1.0), 0, 1)
    stops = np.array([[int(c[i : i + 2], 16) for i in (1, 3, 5)] for c in RAMP], np.float64)  # (5, 3)
    pos = np.where(ok, t, 0) * (len(RAMP) - 1)
    i = np.minimum(pos.astype(int), len(RAMP) - 2)
    rgb = stops[i] + (stops[i + 1] - stops[i]) * (pos - i)[:, None]
    return [f"#{int(a):02X}{int(b):02X}{int(c):02X}" if k else NEUTRAL
            for (a, b, c), k in zip(np.rint(rgb), ok, strict=True)]
