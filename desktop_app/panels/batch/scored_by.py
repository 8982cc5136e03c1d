"""Which model scored the batch rows (issue 33): the words the batch table and the Corpus dock say it with.

Each scored row names its model (:attr:`model.batch.ResultRow.model`, the folder's absolute path, also an export
column), and :class:`model.batch.Summary` counts the scored rows per model (``models``). After a model switch the
rows on display were scored by an earlier model: the summary lines say so, and the batch panel offers to score
them again with the model in use (:meth:`desktop_app.panels.batch.panel.BatchPanel.rescore`). Qt-free.
"""

from __future__ import annotations

from pathlib import Path

from model.core.paths import default_model_dir


def model_label(model: str) -> str:
    """How a line names the model of :attr:`~model.batch.ResultRow.model`: "the bundled model", the folder's name,
    or "an unknown model" ("")."""
    if not model:
        return "an unknown model"
    path = Path(model)
    if path == default_model_dir().resolve():
        return "the bundled model"
    return path.name or model


def scored_by(models: dict[str, int], current: str | None) -> str:
    """The words that say which model scored the rows, e.g. "scored by the bundled model", "scored by minilm, not
    the model in use", "scored by 2 models: minilm (1,200), the bundled model (300), not all by the model in use";
    "" when no row was scored.

    Args:
        models: scored rows per model (:attr:`model.batch.Summary.models`).
        current: the model in use (:func:`model.batch.engine.model_id` of the predictor), None when none is loaded.
    """
    if not models:
        return ""
    if len(models) == 1:
        (model,) = models
        note = "" if current is None or model == current else ", not the model in use"
        return f"scored by {model_label(model)}{note}"
    names = ", ".join(f"{model_label(m)} ({n:,})" for m, n in models.items())
    note = "" if current is None else ", not all by the model in use" if current in models else \
        ", none by the model in use"
    return f"scored by {len(models)} models: {names}{note}"


def rows_are_stale(models: dict[str, int], current: str | None) -> bool:
    """True when some scored row was scored by another model than the one in use (a re-score would change it)."""
    return current is not None and any(m != current for m in models)
