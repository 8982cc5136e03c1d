"""The Corpus dock's "A vs B" tab (issue 44): when the batch rows were scored by two models, both models' metrics
side by side, the A-versus-B confusion (single-label) and McNemar's exact test on the rows with gold.

:class:`CorpusComparison` follows the batch table model (rows arriving, Clear), throttled as the Metrics tab
(a single-shot timer of :data:`~desktop_app.panels.corpus.panel.THROTTLE_MS`); the numbers are computed on a
background job (:func:`comparison_job`: :func:`model.corpus.metrics.corpus_metrics` of A's rows and of B's,
:func:`model.corpus.comparison.comparison_metrics`), the GUI thread only copies the row list and fills the widgets.
It describes every row of the table (the table's filters do not apply here); a second table gives the numbers and
McNemar's test per length slice (the Metrics tab's slices).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from model.corpus.comparison import comparison_metrics
from model.report.comparison import SLICE_HEADERS, slice_rows, verdict
from model.corpus.metrics import corpus_metrics

from desktop_app.workers.handle import EXPLANATION_NICE
from desktop_app.workers.jobs import JobContext, Jobs
from desktop_app.panels.batch.compare import has_model_b

HINT = ("Model > Compare with a second model\u2026, then score a folder: both models' metrics, where they disagree "
        "and McNemar's test on the rows with gold labels appear here.")


def comparison_job(_ctx: JobContext, rows: list, labels: tuple[str, ...] | None, task: str | None):
    """``(A's CorpusMetrics, B's CorpusMetrics, ComparisonMetrics)`` of compared ``rows`` (None when none of them
    carries model B's row). ``labels``/``task``: the table's model (A's order)."""
    if not has_model_b(rows):
        return None
    a = corpus_metrics(rows, labels=labels, task=task)
    b_rows = [r.b for r in rows if getattr(r, "b", None) is not None]
    b = corpus_metrics(b_rows, labels=a.labels, task=a.task)
    return a, b, comparison_metrics(rows, a.labels, a.task, _first_model(rows), _first_model(b_rows), by_length=True)


def _first_model(rows: list) -> str:
    """The model folder of the first row that has one ("" for none): a file that failed was scored by no model, so
    the first row may have none (issue 56: the tab said "A (?)" and "B (?)")."""
    return next((r.model for r in rows if r.model), "")


class CorpusComparison(QWidget):
    """The "A vs B" tab (module docstring).

    Args:
        batch: the :class:`~desktop_app.panels.batch.panel.BatchPanel` whose rows it describes.
        metrics_line: how one model's :class:`model.corpus.metrics.CorpusMetrics` reads in one line (the Metrics
            tab's).
        throttle_ms: least milliseconds between two updates while rows arrive.

    Attributes:
        result: the last ``(a, b, comparison)`` shown, or None.

    Signals:
        shown(object): a new result is on screen (None: the hint).
    """

    shown = Signal(object)

    def __init__(self, batch, metrics_line: Callable, parent: QWidget | None = None, throttle_ms: int = 500) -> None:
        super().__init__(parent)
        self.batch, self._line, self.result = batch, metrics_line, None
        self.hint = QLabel(HINT)
        self.a_label, self.b_label, self.test_label = QLabel(), QLabel(), QLabel()
        for label in (self.hint, self.a_label, self.b_label, self.test_label):
            label.setWordWrap(True)
        self.confusion = QTableWidget()
        self.slices = QTableWidget(0, len(SLICE_HEADERS))  # McNemar per length slice
        self.slices.setHorizontalHeaderLabels(list(SLICE_HEADERS))
        for table in (self.confusion, self.slices):
            table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        for w in (self.hint, self.a_label, self.b_label, self.test_label, self.confusion, self.slices):
            layout.addWidget(w)
        layout.addStretch(1)
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(throttle_ms)
        self.timer.timeout.connect(self.refresh_now)
        self.handle = Jobs("corpus-compare", EXPLANATION_NICE, parent=self)
        batch.table_model.rowsInserted.connect(lambda *_: self.timer.isActive() or self.timer.start())
        batch.table_model.modelReset.connect(self.timer.start)
        self._show(None)

    def refresh_now(self) -> None:
        """Recompute on the worker now (the latest request wins)."""
        self.timer.stop()
        rows = self.batch.table_model.rows()
        self.handle.run(comparison_job, rows, *self.batch.table_model.metrics_schema(rows), on_result=self._show,
                        on_error=lambda exc: self.test_label.setText(f"Comparison failed: {exc}"))

    def shutdown(self) -> None:
        """Stop the worker (the Corpus dock's shutdown)."""
        self.timer.stop()
        self.handle.shutdown()

    def _show(self, result) -> None:
        self.result = result
        for w in (self.a_label, self.b_label, self.test_label, self.confusion, self.slices):
            w.setVisible(result is not None)
        self.hint.setVisible(result is None)
        if result is not None:
            a, b, m = result
            self.a_label.setText(f"<b>A</b> ({_name(m.a_model)}): {self._line(a)}")
            self.b_label.setText(f"<b>B</b> ({_name(m.b_model)}): {self._line(b)}")
            self.test_label.setText(_test_text(m))
            self._fill_confusion(m)
            cells = slice_rows(m)
            self.slices.setRowCount(len(cells))
            for i, row in enumerate(cells):
                for j, text in enumerate(row):
                    self.slices.setItem(i, j, QTableWidgetItem(text))
        self.shown.emit(result)

    def _fill_confusion(self, m) -> None:
        self.confusion.setVisible(m.confusion is not None)
        if m.confusion is None:
            return
        n = len(m.labels)
        self.confusion.setRowCount(n)
        self.confusion.setColumnCount(n)
        self.confusion.setHorizontalHeaderLabels([f"B: {x}" for x in m.labels])
        self.confusion.setVerticalHeaderLabels([f"A: {x}" for x in m.labels])
        for i in range(n):
            for j in range(n):
                self.confusion.setItem(i, j, QTableWidgetItem(f"{int(m.confusion[i, j]):,}"))
        self.confusion.setToolTip("Rows: model A's prediction; columns: model B's; off the diagonal they disagree")


def _name(folder: str) -> str:
    """The last two parts of a model folder ("resources/model"), or "?"."""
    return "/".join(folder.replace("\\", "/").rstrip("/").split("/")[-2:]) or "?"


def _test_text(m) -> str:
    """The agreement and McNemar's test of :class:`model.records.comparison.ComparisonMetrics` ``m``, in words."""
    agree = "" if m.agreement is None else f"They agree on {100 * m.agreement:.1f}% of {m.n_compared:,} rows. "
    if m.mean_abs_difference is not None:
        agree = f"Mean |A \u2212 B| {m.mean_abs_difference:.4g} over {m.n_compared:,} rows. "
    mc = m.mcnemar
    p = "n/a" if mc.p_value is None else f"{mc.p_value:.3g}"
    test = (f"McNemar's exact test on {m.n_with_gold:,} rows with gold: b01 = {mc.b01:,} (A right, B wrong), "
            f"b10 = {mc.b10:,} (A wrong, B right), p = {p}. " if m.n_with_gold else "")
    return agree + test + verdict(m)


__all__ = ["HINT", "CorpusComparison", "comparison_job"]
