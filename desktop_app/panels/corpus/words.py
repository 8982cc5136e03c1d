"""The corpus dock's "What drives it" tab: the words that push the model toward each class over the shown reviews.

"Find the words" runs :func:`model.corpus.metrics.corpus_token_scores` (gradient x input per review, averaged per
word and bigram over the reviews that contain it; words in fewer than the minimum count of reviews are left out)
over the scored reviews the batch table shows, toward the class chosen in the class box (any classifier's; issue 30), off the
GUI thread
(:func:`~desktop_app.workers.corpus.metrics.corpus_tokens_job`, which runs them in a child process reniced like batch
scoring, so they share no GIL with the GUI; progress, Cancel). Then two
ranked lists (toward positive, toward negative; score and count) and a bar plot
(:class:`~desktop_app.views.word_plot.WordScoresPlot`). Clicking a word filters the batch table to the reviews that
contain it; the explorer underlines it in every review it opens (the window wires the table's word filter to
:meth:`desktop_app.state.ExplorerState.set_highlighted_words`).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop_app.views.widgets import ElidedLabel
from desktop_app.views.word_plot import WordScoresPlot
from desktop_app.workers.corpus.metrics import corpus_tokens_job, failure_message
from desktop_app.workers.handle import BATCH_NICE
from desktop_app.workers.jobs import Jobs

TOP_LIST = 50  # words per ranked list
TOP_PLOT = 8  # words per side in the bar plot (16 rows: every word labelled in a 400-pixel dock)
DEFAULT_MIN_COUNT = 5


def ranked_list(title: str) -> QTableWidget:
    """An empty read-only table (word, score, reviews) headed ``title``."""
    table = QTableWidget(0, 3)
    table.setHorizontalHeaderLabels([title, "score", "reviews"])
    table.verticalHeader().setVisible(False)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 4)
    header = table.horizontalHeader()
    header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
    header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
    table.setToolTip("Click a word to show the reviews that contain it")
    table.setMinimumHeight(3 * table.verticalHeader().defaultSectionSize())
    return table


def fill_list(table: QTableWidget, entries: list[tuple[str, float, int]]) -> None:
    """Show ``(word, score, count)`` entries in a :func:`ranked_list`."""
    table.setRowCount(len(entries))
    for i, (word, score, count) in enumerate(entries):
        cells = (word, f"{score:+.3f}", f"{count:,}")
        for j, text in enumerate(cells):
            item = QTableWidgetItem(text)
            if j:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            table.setItem(i, j, item)


class CorpusWordsPanel(QWidget):
    """Corpus token scores of the batch table's reviews (module docstring).

    Args:
        batch: the :class:`~desktop_app.panels.batch.panel.BatchPanel` whose shown rows are explained and whose
            table a clicked word filters.

    Attributes:
        result: the :class:`model.corpus.metrics.CorpusTokens` shown, or None.

    Signals:
        finished(object): a computation ended with this :class:`~model.corpus.metrics.CorpusTokens` (complete or not).
    """

    finished = Signal(object)

    def __init__(self, batch, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.batch = batch
        self.result = None
        self._predictor = None
        self._running: int | None = None
        self._scope = ""
        self._build_ui()
        self.handle = Jobs("corpus-tokens", BATCH_NICE, parent=self, wait_ms=15000)
        batch.table_model.modelReset.connect(self._on_rows_cleared)

    def _build_ui(self) -> None:
        self.run_button = QPushButton("Find the words")
        self.run_button.setToolTip("Explain every review the table shows (gradient \u00d7 input) and rank the words "
                                   "by their mean attribution")
        self.run_button.clicked.connect(self.start)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.min_count_spin = QSpinBox()
        self.min_count_spin.setRange(1, 100000)
        self.min_count_spin.setValue(DEFAULT_MIN_COUNT)
        self.min_count_spin.setPrefix("min. ")
        self.min_count_spin.setSuffix(" reviews")
        self.min_count_spin.setToolTip("Leave out words found in fewer reviews than this")
        self.bigrams_check = QCheckBox("bigrams")
        self.bigrams_check.setChecked(True)
        self.class_combo = QComboBox()
        self.class_combo.setToolTip("The class whose logit the words are ranked for: the words toward it, and those "
                                    "against it (issue 30: any classifier)")
        self.class_combo.setMinimumContentsLength(10)
        self.progress_bar = QProgressBar()
        self.progress_bar.setRange(0, 1)
        self.progress_bar.setValue(0)
        self.progress_bar.setFormat("idle")
        self.info_label = ElidedLabel("Which words push the model toward each class, over the reviews shown.")
        self.plot = WordScoresPlot()
        self.plot.word_clicked.connect(self.batch.navigation.set_word_filter)
        self.positive_list = ranked_list("toward positive")
        self.negative_list = ranked_list("toward negative")
        for table in (self.positive_list, self.negative_list):
            table.cellClicked.connect(lambda row, _col, t=table: self._on_list_clicked(t, row))
        lists = QSplitter(Qt.Orientation.Vertical)
        lists.addWidget(self.positive_list)
        lists.addWidget(self.negative_list)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.plot)
        split.addWidget(lists)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)
        split.setSizes([300, 260])  # the lists need about 260 pixels: word, score, reviews
        row = QHBoxLayout()
        row.addWidget(self.run_button)
        row.addWidget(self.cancel_button)
        row.addWidget(self.progress_bar, 1)
        options = QHBoxLayout()
        options.addWidget(self.class_combo)
        options.addWidget(self.min_count_spin)
        options.addWidget(self.bigrams_check)
        options.addWidget(self.info_label, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(row)
        layout.addLayout(options)
        layout.addWidget(split, 1)

    # -- public API -------------------------------------------------------------------------------------------
    def set_predictor(self, predictor) -> None:
        """The model to explain with (the next computation uses it; a running one keeps its own); the class choice
        lists its classes ("positive" chosen when it has one, else the last, as before issue 30)."""
        self._predictor = predictor
        labels = [str(n) for n in getattr(predictor, "labels", ()) or ()]
        if labels == [self.class_combo.itemText(i) for i in range(self.class_combo.count())]:
            return
        self.class_combo.clear()
        self.class_combo.addItems(labels)
        if labels:
            self.class_combo.setCurrentText("positive" if "positive" in labels else labels[-1])

    def target(self) -> str | None:
        """The class chosen for the word ranking (None before a model is set)."""
        return self.class_combo.currentText() or None

    def is_running(self) -> bool:
        """True while word scores are being computed."""
        return self._running is not None

    def start(self) -> bool:
        """Score the words of the scored reviews the batch table shows, on the worker. Returns False (with a
        message) when there is no model or nothing to explain yet."""
        if self._predictor is None:
            self.info_label.setText("The model is still loading.")
            return False
        if self.batch.table_model.rowCount() == 0:
            self.info_label.setText("Score some reviews first.")
            return False
        self.cancel()
        f = self.batch.proxy.row_filter
        self._scope = "all rows" if not f.is_filtering() else f.describe()
        self._running = generation = self.handle.next_generation()
        self.handle.reset_stop()
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.progress_bar.setRange(0, 0)
        self.progress_bar.setFormat("starting\u2026")
        self.info_label.setText(f"Explaining the reviews shown ({self._scope})\u2026")
        keep = f.accepts if f.is_filtering() else None
        self.handle.run(corpus_tokens_job, self._predictor, self.batch.table_model.rows(), keep,
                        self.min_count_spin.value(), self.bigrams_check.isChecked(), self.target(), BATCH_NICE,
                        generation=generation, on_progress=self._on_progress, on_result=self._on_finished,
                        on_error=self._on_failed)
        return True

    def cancel(self) -> None:
        """Stop the running computation after its current batch (the words of the reviews done so far are shown)."""
        if self._running is not None:
            self.handle.request_stop()
            self.progress_bar.setFormat("cancelling\u2026")

    def shutdown(self) -> None:
        """Stop the worker (also done on application quit and when the main window closes)."""
        self.handle.shutdown()

    def show_tokens(self, result) -> None:
        """Show a :class:`model.corpus.metrics.CorpusTokens`: the ranked lists, the bar plot and what they cover."""
        self.result = result
        toward, against = result.sides
        self.positive_list.setHorizontalHeaderLabels([f"toward {toward}", "score", "reviews"])
        self.negative_list.setHorizontalHeaderLabels([f"toward {against}" if len(result.labels) == 2
                                                      else f"against {toward}", "score", "reviews"])
        self.plot.set_sides(toward, against)
        fill_list(self.positive_list, result.top(TOP_LIST, "positive"))
        fill_list(self.negative_list, result.top(TOP_LIST, "negative"))
        self.plot.set_words(result.top(TOP_PLOT, "positive"), result.top(TOP_PLOT, "negative"))
        done = "" if result.complete else " (cancelled: the reviews explained so far)"
        self.info_label.setText(
            f"{len(result):,} words and bigrams in \u2265 {result.min_count} reviews (min. count) \u00b7 "
            f"{result.n_explained:,} reviews explained ({self._scope}){done} \u00b7 gradient \u00d7 input, "
            f"{'log-odds' if len(result.labels) == 2 else 'logit'} of {result.positive_label} \u00b7 "
            f"{result.elapsed_s:.0f} s")

    # -- worker answers ---------------------------------------------------------------------------------------
    def _on_progress(self, progress: tuple[int, int]) -> None:
        done, total = progress
        self.progress_bar.setRange(0, max(1, total))
        self.progress_bar.setValue(done)
        if not self.handle.stop_requested():
            self.progress_bar.setFormat(f"{done:,} / {total:,} reviews (%p%)")

    def _on_finished(self, result) -> None:
        self._end()
        self.progress_bar.setRange(0, 1)
        self.progress_bar.setValue(1 if result.complete else 0)
        self.progress_bar.setFormat("done" if result.complete else "cancelled")
        self.show_tokens(result)
        self.finished.emit(result)

    def _on_failed(self, exc: Exception) -> None:
        message = failure_message(exc)
        self._end()
        self.progress_bar.setRange(0, 1)
        self.progress_bar.setValue(0)
        self.progress_bar.setFormat("failed")
        self.info_label.setText(f"Could not score the words: {message}")

    def _end(self) -> None:
        self._running = None
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)

    def _on_rows_cleared(self) -> None:
        """The batch table was cleared: stop, and forget words of reviews no longer there."""
        if self._running is not None:
            self.handle.next_generation()  # its answer is stale now
            self.handle.request_stop()
            self._end()
            self.progress_bar.setFormat("idle")
        self.result = None
        fill_list(self.positive_list, [])
        fill_list(self.negative_list, [])
        self.plot.reset()
        self.info_label.setText("Which words push the model toward each class, over the reviews shown.")

    def _on_list_clicked(self, table: QTableWidget, row: int) -> None:
        item = table.item(row, 0)
        if item is not None:
            self.batch.navigation.set_word_filter(item.text())
