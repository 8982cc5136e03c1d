"""The paired metrics of scored edits (LIT's swap rate and mean Jensen-Shannon divergence), and one edit as a JSON
Lines row (``attention-explorer-score --counterfactuals-out``).

Per generator (and per the source's label): ``n`` (edits scored without error), ``flip_rate`` (the share of them
whose verdict flipped: LIT's "swap rate"), ``mean_abs_delta`` (the mean |change| of the source's predicted class's
probability, or of the value) and ``mean_jsd`` (the mean Jensen-Shannon divergence in bits,
:func:`model.counterfactuals.scoring.js_divergence`; None for regression).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from model.records.counterfactual import Edit

METRIC_KEYS = ("n", "flip_rate", "mean_abs_delta", "mean_jsd")
"""The keys of one generator's metrics (``metrics.json``'s ``"counterfactuals"``)."""


def _summary(edits: Sequence[Edit]) -> dict:
    """The four metrics (:data:`METRIC_KEYS`) of scored edits without errors."""
    n = len(edits)
    if not n:
        return {"n": 0, "flip_rate": None, "mean_abs_delta": None, "mean_jsd": None}
    jsd = [e.jsd for e in edits if e.jsd is not None]
    return {"n": n, "flip_rate": float(np.mean([bool(e.flipped) for e in edits])),
            "mean_abs_delta": float(np.mean([abs(e.delta) for e in edits])),
            "mean_jsd": float(np.mean(jsd)) if jsd else None}


def class_key(edit: Edit) -> str:
    """The group an edit counts in "by class": its source's label ("(none)" for an empty label set, "value" for a
    regression)."""
    if edit.value is not None:
        return "value"
    return edit.label or "(none)"


def counterfactual_metrics(edits: Iterable[Edit]) -> dict[str, dict]:
    """``{generator: {"n", "flip_rate", "mean_abs_delta", "mean_jsd", "by_class": {label: the same four}}}`` over the
    scored edits without errors, generators in order of first appearance, classes sorted."""
    groups: dict[str, list[Edit]] = {}
    for e in edits:
        if e.scored and e.error is None:
            groups.setdefault(e.generator, []).append(e)
    out = {}
    for name, group in groups.items():
        by: dict[str, list[Edit]] = {}
        for e in group:
            by.setdefault(class_key(e), []).append(e)
        out[name] = {**_summary(group), "by_class": {k: _summary(v) for k, v in sorted(by.items())}}
    return out


def _named(labels: Sequence[str], values: np.ndarray) -> dict[str, float]:
    return {name: round(float(v), 6) for name, v in zip(labels, values)}


def edit_line(edit: Edit) -> dict:
    """One scored edit as a JSON Lines row: ``source`` (its origin), ``generator``, ``text``, ``edited_text`` (for a
    pair also ``text_pair`` and ``edited_text_pair``), ``label``, ``edited_label``, ``probabilities`` and
    ``edited_probabilities`` (class name -> probability) or, for regression, ``value`` and ``edited_value``,
    ``flipped`` (None, with ``error``, when it could not be scored)."""
    row = {"source": edit.origin, "generator": edit.generator, "text": edit.text, "edited_text": edit.edited_text}
    if edit.text_pair is not None:
        row.update(text_pair=edit.text_pair, edited_text_pair=edit.edited_pair)
    row.update(label=edit.label, edited_label=edit.edited_label)
    if edit.value is not None or edit.edited_value is not None:
        row.update(value=edit.value, edited_value=edit.edited_value)
    else:
        row.update(probabilities=_named(edit.labels, edit.probabilities),
                   edited_probabilities=_named(edit.labels, edit.edited_probabilities))
    row["flipped"] = edit.flipped
    if edit.error is not None:
        row["error"] = edit.error
    return row


def write_edits_jsonl(path, edits: Iterable[Edit]) -> None:
    """Write one :func:`edit_line` per edit to ``path`` (UTF-8 JSON Lines), atomically. Raises OSError."""
    import json

    from model.files.atomic import atomic_write_bytes

    lines = "".join(json.dumps(edit_line(e), ensure_ascii=False) + "\n" for e in edits)
    atomic_write_bytes(path, lines.encode("utf-8"))


__all__ = ["METRIC_KEYS", "class_key", "counterfactual_metrics", "edit_line", "write_edits_jsonl"]
