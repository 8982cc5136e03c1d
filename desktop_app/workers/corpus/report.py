"""The Corpus dock's Export > Report (HTML) and Metrics (JSON), on a worker (run by a :class:`~.jobs.Jobs`).

:class:`CorpusSnapshot` is what the dock shows, taken on the GUI thread (records only: nothing is recomputed);
:func:`report_job` and :func:`metrics_job` write it with the scorer's own writers
(:func:`model.report.report.write_report_html`, :func:`model.report.report.write_metrics_json`, atomically), so a
report saved from the app has the sections ``attention-explorer-score --report/--metrics`` writes: the metrics of
the rows the Metrics tab describes, the words of "What drives it" when they were computed, model B's comparison
(issue 44), the corpus map when one was drawn (issue 42) and the counterfactual flips of the "What if" tab (issue 43).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

import numpy as np

from model.corpus.comparison import comparison_dict
from model.report.comparison import comparison_section
from model.report.corpus_map import map_section
from model.report.report import DEFAULT_TOP, MAX_FAILURES, write_metrics_json, write_report_html

from desktop_app.workers.jobs import JobContext


@dataclass(frozen=True)
class CorpusSnapshot:
    """What the Corpus dock shows, for a report.

    Attributes:
        metrics: the :class:`model.corpus.metrics.CorpusMetrics` of the rows the Metrics tab describes.
        tokens: the "What drives it" :class:`model.corpus.metrics.CorpusTokens`, or None (not computed).
        model_name: the model that scored the rows, with its size (:func:`model.scorer.report.model_name`).
        source: which rows, in words (e.g. "all 300 rows (scored by the bundled model)").
        precision: what the rows ran in (:func:`model.batch.rows.precision_of`), or None.
        failures: ``(source, status)`` of rows not scored, at most :data:`model.report.report.MAX_FAILURES`.
        elapsed_s: the scoring wall time in seconds, or None (unknown).
        comparison: model B's :class:`model.records.comparison.ComparisonMetrics`, or None (no model B rows).
        map_rows: the ResultRows placed on the corpus map, in the order of ``map_projection.coords``; map_projection:
            the :class:`model.records.vectors.MapProjection` drawn, or None (no map).
        counterfactuals: the "What if" tab's flips by generator (:func:`model.counterfactuals.counterfactual_metrics`),
            or None.
    """

    metrics: object
    tokens: object | None
    model_name: str
    source: str
    precision: str | None = None
    failures: tuple[tuple[str, str], ...] = ()
    elapsed_s: float | None = None
    comparison: object | None = None
    map_rows: tuple = ()
    map_projection: object | None = None
    counterfactuals: dict | None = None


def report_job(_ctx: JobContext, path: str, snap: CorpusSnapshot) -> str:
    """Write ``snap`` as the self-contained HTML report at ``path`` (atomic); returns ``path``. Raises OSError."""
    sections = [] if snap.comparison is None else [comparison_section(snap.comparison)]
    if snap.map_projection is not None and snap.map_rows:
        sections.append(map_section(list(snap.map_rows), np.arange(len(snap.map_rows)), snap.map_projection))
    write_report_html(path, snap.metrics, snap.tokens, model_name=snap.model_name,
                      date=datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"), source=snap.source,
                      top=DEFAULT_TOP, elapsed_s=snap.elapsed_s, failures=list(snap.failures[:MAX_FAILURES]),
                      precision=snap.precision, sections=sections, counterfactuals=snap.counterfactuals)
    return path


def metrics_job(_ctx: JobContext, path: str, snap: CorpusSnapshot) -> str:
    """Write ``snap``'s numbers as ``metrics.json`` at ``path`` (atomic; the scorer's keys, with ``"comparison"`` and
    ``"counterfactuals"`` when the dock has them); returns ``path``. Raises OSError."""
    extra = {**({} if snap.comparison is None else {"comparison": comparison_dict(snap.comparison)}),
             **({} if not snap.counterfactuals else {"counterfactuals": snap.counterfactuals})}
    write_metrics_json(path, snap.metrics, snap.tokens, DEFAULT_TOP, snap.precision, extra=extra or None)
    return path


__all__ = ["CorpusSnapshot", "metrics_job", "report_job"]
