"""The Corpus dock's Export > Report (HTML)... and Metrics (JSON)...: the scorer's report, from the app.

An analyst who scored files in the app gets the same self-contained ``report.html`` and ``metrics.json`` as
``attention-explorer-score --report/--metrics`` writes (one writer: :mod:`model.report.report`), of what the dock
shows: the metrics of the rows the Metrics tab describes (all rows, or the table's filter, named in the report), the
words of "What drives it" when they were computed, model B's comparison, the corpus map when one is drawn and the
"What if" tab's flips. The dock's metrics are those of the rows and filter as they are when the file is asked for:
while the dock is hidden (it computes only while on screen) or within its throttle as rows arrive, they are computed
first, on the dock's worker (:meth:`~desktop_app.panels.corpus.panel.CorpusPanel.with_current_metrics`); nothing else
is recomputed: :meth:`CorpusReportExport.snapshot` takes the dock's records on the GUI thread and
:mod:`desktop_app.workers.corpus.report` writes them on a worker, atomically.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QFileDialog

from model.scorer.report import model_name
from model.report.report import MAX_FAILURES
from model.batch.rows import precision_label

from desktop_app.workers.corpus.report import CorpusSnapshot, metrics_job, report_job
from desktop_app.workers.handle import EXPLANATION_NICE
from desktop_app.workers.jobs import Jobs

NOTHING = "Score some texts first: the report describes the scored rows."


class CorpusReportExport(QObject):
    """Report (HTML) and Metrics (JSON) entries of a :class:`~desktop_app.panels.corpus.panel.CorpusPanel`'s Export
    menu.

    Args:
        panel: the Corpus dock; menu: its Export menu (the entries are added at its end).

    Attributes:
        folder: where the save dialogs open (the last saved file's folder; the home folder at first).

    Signals:
        message(str): a file was written ("Saved the corpus report to PATH") or there is nothing to report yet.
        failed(str): a file could not be written (the path and why).
    """

    message = Signal(str)
    failed = Signal(str)

    def __init__(self, panel, menu) -> None:
        super().__init__(panel)
        self.panel = panel
        self.folder = str(Path.home())
        self.handle = Jobs("corpus-report", EXPLANATION_NICE, parent=self)
        menu.addSeparator()
        self.report_action = menu.addAction("Report (HTML)\u2026", self.ask_report)
        self.report_action.setToolTip("The scorer's report.html of the rows the Metrics tab describes")
        self.metrics_action = menu.addAction("Metrics (JSON)\u2026", self.ask_metrics)
        self.metrics_action.setToolTip("The scorer's metrics.json of the rows the Metrics tab describes")

    def snapshot(self) -> CorpusSnapshot | None:
        """What the dock shows now, or None when there is nothing to report (no metrics, or no scored row)."""
        if not self._ready():
            return None
        p = self.panel
        m = p.metrics
        compared = p.comparison.result
        projector = p.map.projector
        summary = p.batch.table_model.summary  # the table's running totals: no pass over its rows here
        return CorpusSnapshot(
            metrics=m, tokens=p.words.result, model_name=model_name(p.batch.predictor),
            source=p.scope_label.text().removeprefix("Describes ") or f"{m.n_rows:,} rows",
            precision=precision_label(summary.precisions), failures=tuple(summary.failures[:MAX_FAILURES]),
            elapsed_s=summary.elapsed_s or None, comparison=None if compared is None else compared[2],
            map_rows=tuple(p.map.rows) if projector is not None else (),
            map_projection=None if projector is None else projector.result,
            counterfactuals=dict(p.whatif.metrics) or None)

    def ask_report(self) -> None:
        """Ask where to save the report, then :meth:`save_report`."""
        self._ask("Save the corpus report", "report.html", "HTML (*.html *.htm)", self.save_report)

    def ask_metrics(self) -> None:
        """Ask where to save the metrics, then :meth:`save_metrics`."""
        self._ask("Save the corpus metrics", "metrics.json", "JSON (*.json)", self.save_metrics)

    def save_report(self, path: str) -> bool:
        """Write the report of :meth:`snapshot` (once the dock's metrics are current) to ``path`` on the worker;
        False when there is nothing to report (no scored row, no model)."""
        return self._save(path, report_job, "the corpus report")

    def save_metrics(self, path: str) -> bool:
        """Write the metrics of :meth:`snapshot` (once the dock's metrics are current) to ``path`` on the worker;
        False when there is nothing to report (no scored row, no model)."""
        return self._save(path, metrics_job, "the corpus metrics")

    def shutdown(self) -> None:
        """Stop the worker (a write under way finishes first: the file is written atomically either way)."""
        self.handle.shutdown()

    # ------------------------------------------------------------------------------------------------------------
    def _ready(self) -> bool:
        """Something to report: metrics of scored rows and a model."""
        m = self.panel.metrics
        return m is not None and m.n_scored > 0 and self.panel.batch.predictor is not None

    def _may_report(self) -> bool:
        """Something to report once the metrics are current: scored rows in the table and a model."""
        return self.panel.batch.table_model.summary.ok > 0 and self.panel.batch.predictor is not None

    def _ask(self, title: str, name: str, pattern: str, save) -> None:
        if not self._may_report():
            self.message.emit(NOTHING)
            return
        path, _ = QFileDialog.getSaveFileName(self.panel, title, str(Path(self.folder) / name), pattern)
        if path:
            self.folder = str(Path(path).parent)
            save(path)

    def _save(self, path: str, job, what: str) -> bool:
        if not self._may_report():
            self.message.emit(NOTHING)
            return False
        self.panel.with_current_metrics(
            lambda: self._write(path, job, what),
            lambda exc: self.failed.emit(f"Could not save {what} to {path}: the corpus metrics failed: {exc}"))
        return True

    def _write(self, path: str, job, what: str) -> None:
        """Write :meth:`snapshot` (the dock's metrics current) with ``job`` on the worker."""
        snap = self.snapshot()
        if snap is None:  # the filter keeps no scored row
            self.message.emit(NOTHING)
            return
        self.handle.run(job, str(path), snap, latest=False,
                        on_result=lambda p: self.message.emit(f"Saved {what} to {p}"),
                        on_error=lambda exc: self.failed.emit(f"Could not save {what} to {path}: {exc}"))


__all__ = ["CorpusReportExport"]
