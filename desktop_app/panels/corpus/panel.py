"""The corpus dock: what the batch results say, in numbers and plots, for the rows the batch table's filters keep.

:class:`CorpusPanel` follows a :class:`~desktop_app.panels.batch.panel.BatchPanel`: its table model (rows
arriving, Clear) and its filter proxy (category, search, the word filter). The metrics
(:func:`model.corpus.metrics.corpus_metrics`) are computed on a background worker
(:func:`~desktop_app.workers.corpus.metrics.corpus_metrics_job`); the GUI thread only copies the row list and draws.
They are computed only while the dock is on screen (:class:`~desktop_app.panels.on_screen.OnScreen`: its workspace
on and, when tabbed with other docks, its tab raised; the header's line of numbers shows on every tab of the dock).
There, updates are throttled: a change starts a single-shot QTimer of :data:`THROTTLE_MS` (a running timer is not
restarted), so a job that streams 25,000 rows recomputes at most twice a second, never per row. Hidden, a change
(rows arriving, Clear, another filter) only marks the numbers :attr:`~CorpusPanel.stale`, and the dock computes
them once, with the current rows and filter, when it is shown again; a 25,000-review batch scored while the user
reads texts in another workspace shares the CPU with no metrics nor plots nobody sees. What needs the numbers while
the dock is hidden asks :meth:`CorpusPanel.with_current_metrics` (Export > Report / Metrics): they are computed then,
on the same worker.

Shown, as the task fits (issue 30): counts, accuracy, F1 and ECE (with gold labels; multi-label subset accuracy,
micro/macro-F1 and Hamming loss; regression MAE, RMSE, Pearson, Spearman), failures; the N x N confusion matrix (up
to 28 classes; click a cell: the table shows that cell's rows, click it again: all rows; the plots keep describing
every cell, see :meth:`desktop_app.panels.batch.row_filter.RowFilter.population`); per-class precision/recall/F1;
P(positive) (or the top label's probability) by gold label; the reliability diagram of the top label; accuracy by
review length and truncation; a regression's predicted-vs-gold scatter and its error by length. The "Words" tab (:class:`~desktop_app.panels.corpus.words.CorpusWordsPanel`)
finds the words that drive the model over these reviews; the "What if" tab
(:class:`~desktop_app.panels.corpus.whatif.CorpusWhatIfPanel`) edits them and counts the flips. Every plot exports as PNG/SVG (``export_requested``; the
main window's File > Export view lists them too), and Export > Report (HTML)... / Metrics (JSON)... save the scorer's
report of what the dock shows (:class:`~desktop_app.panels.corpus.report.CorpusReportExport`).
"""

from __future__ import annotations

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QGridLayout, QHBoxLayout, QMenu, QTabWidget, QToolButton, QVBoxLayout, QWidget

from model.corpus.metrics import undefined_f1
from model.tasks.types import SINGLE_LABEL, MultiLabel, Regression, SingleLabel, task_type

from desktop_app.views.corpus.corpus_plot import READABLE_SIZE
from desktop_app.views.corpus.plots import (
    NUMBERED, ConfusionMatrixPlot, ProbabilityHistogramPlot, ReliabilityPlot, SliceAccuracyPlot
)
from desktop_app.views.corpus.task_plots import PerClassPlot, RegressionScatterPlot
from desktop_app.views.widgets import ElidedLabel, scrollable
from desktop_app.workers.corpus.metrics import corpus_metrics_job
from desktop_app.workers.handle import EXPLANATION_NICE
from desktop_app.workers.jobs import Jobs
from desktop_app.panels.on_screen import OnScreen
from desktop_app.panels.corpus.a_vs_b import CorpusComparison
from desktop_app.panels.corpus.report import CorpusReportExport
from desktop_app.panels.corpus.whatif import CorpusWhatIfPanel
from desktop_app.panels.corpus.map_panel import CorpusMapPanel
from desktop_app.panels.corpus.words import CorpusWordsPanel

THROTTLE_MS = 500  # at most two metric updates per second while rows arrive
METRICS_NICE = EXPLANATION_NICE  # the metrics worker: below the GUI, above batch scoring


def _pct(x: float | None) -> str:
    return "\u2013" if x is None else f"{100 * x:.1f}%"


def _num(x: float | None) -> str:
    return "\u2013" if x is None else f"{x:.3f}"


def _regression_numbers(m) -> list[str]:
    r = m.regression
    return [f"MAE {_num(r.mae)}", f"RMSE {_num(r.rmse)}", f"Pearson {_num(r.pearson)}", f"Spearman {_num(r.spearman)}"]


def _multi_label_numbers(m) -> list[str]:
    return [f"subset accuracy {_pct(m.subset_accuracy)}", f"micro-F1 {_num(m.micro_f1)}",
            f"macro-F1 {_num(m.macro_f1)}", f"Hamming loss {_num(m.hamming_loss)}"]


def _single_label_numbers(m) -> list[str]:
    f1 = "F1" if m.f1_kind == "positive" else "macro-F1"
    parts = [f"accuracy {_pct(m.accuracy)}", f"{f1} {_num(None if undefined_f1(m) else m.f1)}"]  # why: the tooltip
    if m.ece is not None:
        parts.append(f"ECE {_pct(m.ece)}")
    return parts


GOLD_NUMBERS = {SingleLabel: _single_label_numbers, MultiLabel: _multi_label_numbers, Regression: _regression_numbers}
"""The gold-dependent numbers of a :class:`model.corpus.metrics.CorpusMetrics`, as each task type reads them
(selected by :meth:`model.tasks.types.TaskType.pick`)."""


def _gold_numbers(m) -> list[str]:
    """The gold-dependent numbers of ``m``, as its task reads them (:data:`GOLD_NUMBERS`)."""
    return task_type(m.task).pick(GOLD_NUMBERS)(m)


def metrics_line(m) -> str:
    """One line of numbers for :class:`model.corpus.metrics.CorpusMetrics` ``m`` (its task's own numbers)."""
    parts = [f"{m.n_scored:,} scored"]
    if m.n_failed:
        parts.append(f"{m.n_failed:,} failed")
    if m.positive_share is not None:
        parts.append(f"{_pct(m.positive_share)} positive")
    if m.has_gold:
        parts += [*_gold_numbers(m), f"{m.n_with_gold:,} with gold"]
    else:
        parts.append("no gold labels (accuracy needs a label column, or folders named after the classes)")
    return " \u00b7 ".join(parts)


class CorpusPanel(QWidget):
    """Corpus metrics and plots of a batch panel's rows (see the module docstring).

    Args:
        batch: the :class:`~desktop_app.panels.batch.panel.BatchPanel` whose rows and filters it follows.
        throttle_ms: least milliseconds between two metric updates while rows arrive.

    Attributes:
        metrics: the :class:`model.corpus.metrics.CorpusMetrics` shown, or None before the first (see
            :attr:`~CorpusPanel.stale`).
        updates: metric computations started so far (tests and benchmarks count them: a hidden dock starts none).
        on_screen: whether the dock is on screen (:class:`~desktop_app.panels.on_screen.OnScreen`).

    Signals:
        metrics_shown(object): a new :class:`model.corpus.metrics.CorpusMetrics` is on screen.
        export_requested(str): the user asked to export the plot with this title.
    """

    metrics_shown = Signal(object)
    export_requested = Signal(str)

    def __init__(self, batch, parent: QWidget | None = None, throttle_ms: int = THROTTLE_MS) -> None:
        super().__init__(parent)
        self.setObjectName("CorpusPanel")
        self.batch = batch
        self.metrics = None
        self.updates = 0
        self._in_flight = False
        self._revision = 0  # the rows and the filter's population: counted up when they change
        self._asked = None  # the revision the latest computation was asked for
        self._shown_at = None  # ... and that of the metrics shown
        self._population = batch.proxy.row_filter.population()  # the filter's population, as last seen
        self._waiters: list[tuple[int, object, object]] = []  # (revision, on_ready, on_failed): with_current_metrics
        self.timer = QTimer(self, singleShot=True, interval=throttle_ms)
        self.timer.timeout.connect(self._on_timer)
        self.handle = Jobs("corpus-metrics", METRICS_NICE, parent=self)
        self.on_screen = OnScreen(self)
        self.on_screen.shown.connect(self._catch_up)
        self._build_ui()
        batch.table_model.rowsInserted.connect(lambda *_: self._changed())
        batch.table_model.modelReset.connect(self._changed)
        batch.proxy.filter_changed.connect(self._on_filter_changed)

    def _build_ui(self) -> None:
        self.numbers_label = ElidedLabel("Score a folder of reviews to see what the corpus says.")
        self.scope_label = ElidedLabel("")
        self.confusion = ConfusionMatrixPlot()
        self.histogram = ProbabilityHistogramPlot()
        self.reliability = ReliabilityPlot()
        self.slices = SliceAccuracyPlot()
        self.per_class = PerClassPlot()
        self.scatter = RegressionScatterPlot()
        self.confusion.cell_clicked.connect(self._on_cell_clicked)
        self.words = CorpusWordsPanel(self.batch)
        self.whatif = CorpusWhatIfPanel(self.batch)  # issue 43: counterfactual edits of the corpus
        page = QWidget()
        self.grid = grid = QGridLayout(page)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setSpacing(4)
        for plot in (self.confusion, self.per_class, self.histogram, self.reliability, self.slices, self.scatter):
            plot.setMinimumSize(*READABLE_SIZE)  # never squashed until its text overlaps: the page scrolls instead
        self._arrange(SINGLE_LABEL, 2)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.metrics_scroll = scrollable(page)
        self.tabs.addTab(self.metrics_scroll, "Metrics")
        self.tabs.addTab(self.words, "What drives it")
        self.map = CorpusMapPanel(self.batch, metrics_line)  # issue 42: the texts as points, linked to the table
        self.tabs.addTab(scrollable(self.map), "Map")  # scrolls: its minimum size never sets the dock's
        self.comparison = CorpusComparison(self.batch, metrics_line)  # two models' rows (issue 44)
        self.tabs.addTab(scrollable(self.comparison), "A vs B")
        self.tabs.addTab(scrollable(self.whatif), "What if")
        self.export_button = QToolButton()
        self.export_button.setText("Export")
        self.export_button.setToolTip("Save a plot as PNG or SVG, or the corpus report (HTML) and metrics (JSON)")
        self.export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.export_button)
        for title in self.plots():
            menu.addAction(title + "\u2026").triggered.connect(lambda _=False, t=title: self.export_requested.emit(t))
        self.export_button.setMenu(menu)
        self.report = CorpusReportExport(self, menu)  # the scorer's report.html / metrics.json of what the dock shows
        head = QHBoxLayout()
        text = QVBoxLayout()
        text.setSpacing(0)
        text.addWidget(self.numbers_label)
        text.addWidget(self.scope_label)
        head.addLayout(text, 1)
        head.addWidget(self.export_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(2)
        layout.addLayout(head)
        layout.addWidget(self.tabs, 1)

    # -- public API -------------------------------------------------------------------------------------------
    def plots(self) -> dict[str, QWidget]:
        """Export name -> plot widget, for File > Export view and the Export button."""
        return {"Corpus: confusion matrix": self.confusion, "Corpus: score histogram": self.histogram,
                "Corpus: reliability diagram": self.reliability, "Corpus: accuracy by length": self.slices,
                "Corpus: per-class scores": self.per_class, "Corpus: predicted against gold": self.scatter,
                "Corpus: words": self.words.plot, "Corpus: map": self.map.plot}

    def _arrange(self, task: str, n_classes: int) -> None:
        """The plots that fit the task, in the grid: single-label the confusion matrix (the full width from
        :data:`NUMBERED` classes), per-class scores, histogram, reliability, accuracy by length; multi-label
        per-label scores, histogram, accuracy by length; regression the predicted-vs-gold scatter, the histogram of
        the values and the error by length (:attr:`model.tasks.types.TaskType.corpus_plots`, names of this panel's
        plot attributes)."""
        shown = tuple(getattr(self, name) for name in task_type(task).corpus_plots)
        wide = self.confusion in shown and n_classes > NUMBERED
        cell = 0
        every = (self.confusion, self.per_class, self.histogram, self.reliability, self.slices, self.scatter)
        for plot in every:
            self.grid.removeWidget(plot)
        for plot in shown:  # in the task's order: a regression model's scatter first
            span = 2 if wide and plot in (self.confusion, self.per_class) else 1
            cell += cell % 2 if span == 2 else 0
            self.grid.addWidget(plot, cell // 2, cell % 2, 1, span)
            cell += span
        for plot in every:  # after the grid adopted them: a widget shown before it has a parent is a window, and
            plot.setVisible(plot in shown)  # adopting a widget hides it (QWidget.setParent)

    def set_predictor(self, predictor) -> None:
        """The model for "What drives it" (the metrics need none); the scope line says again whether the rows are
        this model's."""
        self.words.set_predictor(predictor)
        self.whatif.set_predictor(predictor)
        self.map.set_predictor(predictor)
        self._update_scope(self.batch.table_model.rowCount())

    @property
    def stale(self) -> bool:
        """True while the metrics shown are not those of the current rows and filter (a computation is due, under
        way, or waits for the dock to be shown)."""
        return self._shown_at != self._revision

    def schedule(self) -> None:
        """Recompute the metrics within :data:`THROTTLE_MS` (a pending update is not postponed) when the dock is on
        screen; else once it is shown (module docstring)."""
        if self.on_screen.now() and not self.timer.isActive():
            self.timer.start()

    def refresh_now(self) -> None:
        """Recompute the metrics now, on the worker, shown or not (when a computation is under way: as soon as it
        ends, if the rows or the filter changed since it was asked)."""
        self.timer.stop()
        if self._in_flight:
            return  # _on_computed asks again
        self._in_flight = True
        self.updates += 1
        keep = self.batch.proxy.row_filter.population()
        self._asked = asked = self._revision
        rows = self.batch.table_model.rows()  # a list copy: the worker gets a snapshot
        labels, task = self.batch.table_model.metrics_schema(rows)
        self.handle.run(corpus_metrics_job, rows, keep.accepts if keep.is_filtering() else None, 10, labels, task,
                        on_result=lambda result: self._on_ready(result, asked), on_error=self._on_failed,
                        on_stale_error=self._on_failed, on_end=self._on_computed)

    def with_current_metrics(self, on_ready, on_failed=None) -> None:
        """Call ``on_ready()`` once the dock shows the metrics of the rows and filter as they are now: at once when it
        does, else after computing them on the worker, hidden or not (Export > Report while the dock is hidden).
        ``on_failed(exc)`` instead when that computation fails."""
        if not self.stale and self.metrics is not None:
            on_ready()
            return
        self._waiters.append((self._revision, on_ready, on_failed))
        self.refresh_now()

    def shutdown(self) -> None:
        """Stop both workers (also done on application quit and when the main window closes)."""
        self.timer.stop()
        self.words.shutdown()
        self.comparison.shutdown()
        self.whatif.shutdown()
        self.map.shutdown()
        self.report.shutdown()
        self.handle.shutdown()

    # -- results ----------------------------------------------------------------------------------------------
    def _on_ready(self, result: tuple, revision: int) -> None:
        """The metrics of the rows and filter at ``revision``: shown, then handed to the waiters asking for them."""
        metrics, n_total = result
        self._shown_at = revision
        self.show_metrics(metrics, n_total)
        self._serve(lambda on_ready, _on_failed: on_ready())

    def _on_failed(self, exc: Exception) -> None:
        self.numbers_label.setText(f"Corpus metrics failed: {type(exc).__name__}: {exc}")
        self._serve(lambda _on_ready, on_failed: on_failed is not None and on_failed(exc))

    def _serve(self, call) -> None:
        """``call(on_ready, on_failed)`` for each waiter the computation just ended was asked late enough for."""
        served = [w for w in self._waiters if w[0] <= self._asked]
        self._waiters = [w for w in self._waiters if w[0] > self._asked]
        for _revision, on_ready, on_failed in served:
            call(on_ready, on_failed)

    def _on_computed(self) -> None:
        """A computation ended (current or not): when the rows or the filter changed since it was asked, the next
        one starts now for a waiter, within :data:`THROTTLE_MS` on screen, else when the dock is shown."""
        self._in_flight = False
        if self._revision == self._asked:
            return
        if self._waiters:
            self.refresh_now()
        else:
            self.schedule()

    # -- when to compute --------------------------------------------------------------------------------------
    def _changed(self) -> None:
        """The rows or the filter's population changed: the metrics shown are stale (module docstring)."""
        self._revision += 1
        self.schedule()

    def _on_timer(self) -> None:
        if self.on_screen.now():  # hidden meanwhile: computed when shown
            self.refresh_now()

    def _catch_up(self) -> None:
        """The dock may have come on screen: compute once what changed while it was hidden."""
        if self.stale and self.on_screen.now() and not self.timer.isActive():
            self.refresh_now()

    def show_metrics(self, m, n_total: int) -> None:
        """Draw :class:`model.corpus.metrics.CorpusMetrics` ``m`` of the filtered rows (``n_total`` rows in all)."""
        self.metrics = m
        if n_total == 0:
            self.numbers_label.setText("Score a folder of reviews to see what the corpus says.")
        else:
            self.numbers_label.setText(metrics_line(m))
            if why := undefined_f1(m):  # the F1 shown as "\u2013": the reason
                self.numbers_label.setToolTip(f"{metrics_line(m)}\n{why}")
        self._update_scope(n_total)
        self._arrange(m.task, len(m.labels))
        self.confusion.set_matrix(m.labels, m.confusion)
        self._select_cell(self.batch.proxy.row_filter.cell)
        self.per_class.set_per_class(m.labels, m.per_class)
        self.histogram.set_histogram(m.histogram, m.labels, m.score_name)
        self.reliability.set_reliability(m.reliability, m.ece)
        if not task_type(m.task).reads_probabilities:  # a value: predicted against gold, the error by length
            reg = m.regression
            self.scatter.set_regression(reg)
            self.slices.set_slices(m.error_by_length or m.by_length, m.by_truncation, reg.mae if reg else None,
                                   error=True)
        else:
            self.slices.set_slices(m.by_length, m.by_truncation, m.accuracy)
        self.metrics_shown.emit(m)

    def _update_scope(self, n_total: int) -> None:
        f = self.batch.proxy.row_filter
        m = self.metrics
        if m is None or n_total == 0:
            self.scope_label.setText("")
            return
        pop = f.population()
        if pop.is_filtering():
            scope = f"{m.n_rows:,} of {n_total:,} rows ({pop.describe()})"
        else:
            scope = f"all {n_total:,} rows"
        cell = ""
        if f.cell is not None:
            cell = f" \u00b7 table: gold {f.cell[0]} \u2192 predicted {f.cell[1]} (click the cell again for all)"
        by = self.batch.scored_by()
        self.scope_label.setText(f"Describes {scope}{f' ({by})' if by else ''}{cell}")

    # -- the batch table's filters ----------------------------------------------------------------------------
    def _on_filter_changed(self, f) -> None:
        if (population := f.population()) != self._population:
            self._population = population
            self._changed()
        self._select_cell(f.cell)
        if self.metrics is not None:
            self._update_scope(self.batch.table_model.rowCount())

    def _select_cell(self, cell) -> None:
        labels = self.metrics.labels if self.metrics is not None else ()
        if cell is None or cell[0] not in labels or cell[1] not in labels:
            self.confusion.select(None)
        else:
            self.confusion.select((labels.index(cell[0]), labels.index(cell[1])))

    def _on_cell_clicked(self, gold: int, predicted: int) -> None:
        """Filter the table to the clicked cell's rows; the selected cell again shows every row."""
        if self.metrics is None or self.metrics.confusion is None:
            return
        labels = self.metrics.labels
        if not (0 <= gold < len(labels) and 0 <= predicted < len(labels)):
            return
        cell = (labels[gold], labels[predicted])
        if self.batch.proxy.row_filter.cell == cell:
            self.batch.navigation.set_cell_filter(None)
        else:
            self.batch.navigation.set_cell_filter(*cell)
