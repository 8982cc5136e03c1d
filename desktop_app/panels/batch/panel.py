"""The batch panel: drop files or folders of reviews, score them all, sort/filter/open/export the results.

Scoring runs :func:`~desktop_app.workers.batch.batch_job` on the panel's own thread
(:class:`~desktop_app.workers.jobs.Jobs`): one job per request, each with a new generation. The job streams
:func:`model.batch.iter_records` through :func:`model.batch.score_records` and sends rows back in chunks. The GUI thread only appends rows to the
:class:`~desktop_app.panels.batch.table_model.BatchTableModel`.

* ``add_paths`` while a job runs queues the paths as the next job;
  ``set_predictor`` starts queued jobs once a model is there.
* Cancel sets the worker's abort flag, which the engine checks before every batch; rows scored
  so far stay in the table. Clear cancels, drops queued jobs and any rows
  still in flight from the old job (a new generation makes them stale).
* Progress reaches the GUI at most ``PROGRESS_INTERVAL_S`` apart; the bar
  shows the percentage of the estimated review count and an ETA.
* Export writes CSV, JSON Lines or Parquet atomically with the same columns
  as the command line (:data:`model.batch.EXPORT_COLUMNS`).
* The panel owns its parts: ``ui`` (the widgets, :class:`~desktop_app.panels.batch.ui.BatchWidgets`) and
  ``navigation`` (errors first, the next error (F8), opening a row and the corpus dock's word and cell filters,
  :class:`~desktop_app.panels.batch.navigation.ResultsNavigation`); files dropped on it are scored
  (:class:`~desktop_app.panels.editor.PathDrops`).

Public interface used by the main window: :meth:`BatchPanel.set_predictor`,
:meth:`BatchPanel.add_paths`, :meth:`BatchPanel.cancel`, :meth:`BatchPanel.cancel_if_running`,
:meth:`BatchPanel.shutdown`, ``navigation``'s :meth:`~ResultsNavigation.next_error`,
:meth:`~ResultsNavigation.set_word_filter` and :meth:`~ResultsNavigation.set_cell_filter`, signals
:attr:`BatchPanel.review_activated`, :attr:`BatchPanel.row_opened`.
"""

from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QApplication, QFileDialog, QWidget

from model.batch import Columns, Summary, write_rows
from model.batch.columns import check_columns
from model.corpus.comparison import schema_of_rows
from model.batch.engine import model_id
from model.batch.export import SPREADSHEET_CELL_LIMIT, excerpt_rows
from model.batch.readers import SUPPORTED_PATTERNS
from model.tasks.task import task_of
from model.text.inputs import InputSpec

from desktop_app.workers.batch import (
    DEFAULT_BATCH_SIZE, DEFAULT_CHUNK, BatchProgress, BatchRun, ChunkVectors, batch_job
)
from desktop_app.workers.handle import BATCH_NICE
from desktop_app.workers.jobs import Jobs
from desktop_app.panels.batch.export import ask_export_path, export_hint
from desktop_app.panels.batch.table_model import CONFIDENCE, LABEL, BatchTableModel, format_duration
from desktop_app.panels.batch.navigation import ResultsNavigation
from desktop_app.panels.batch.proxy import BatchFilterProxy
from desktop_app.panels.batch.ui import DROP_HINT, BatchWidgets
from desktop_app.panels.editor import PathDrops
from desktop_app.panels.batch.row_filter import categories
from desktop_app.panels.batch.row_vectors import RowVectors
from desktop_app.panels.batch.scored_by import model_label, rows_are_stale, scored_by


class BatchPanel(QWidget):
    """Batch scoring of files and folders of reviews, with a sortable, filterable results table.

    Attributes:
        ui: the panel's widgets (:class:`~desktop_app.panels.batch.ui.BatchWidgets`).
        navigation: errors first, the next error, opening rows, the corpus dock's filters
            (:class:`~desktop_app.panels.batch.navigation.ResultsNavigation`).

    Signals:
        review_activated(str): the full text of a double-clicked row (send it
            to the analysis view).
        row_opened(object): the :class:`model.batch.ResultRow` of that row (after ``review_activated``).
        scoring_started(int): a job started (its id).
        scoring_finished(object): a job ended; the :class:`model.batch.Summary`
            of that job (``elapsed_s`` in seconds).
        progress_changed(int, int): (records done, estimated total) of the
            running job, throttled to ``PROGRESS_INTERVAL_S``.
        message(str): a one-line status/error message (also shown in the panel).
    """

    review_activated = Signal(str)
    row_opened = Signal(object)
    scoring_started = Signal(int)
    scoring_finished = Signal(object)
    progress_changed = Signal(int, int)
    message = Signal(str)

    def __init__(self, parent: QWidget | None = None, batch_size: int = DEFAULT_BATCH_SIZE,
                 chunk: int = DEFAULT_CHUNK) -> None:
        super().__init__(parent)
        self.setObjectName("BatchPanel")
        self._predictor = None
        self._second = None  # model B (issue 44): scores every row too, or None
        self._queue: list[list[str]] = []
        self._scored_paths: list[str] = []  # every path scored into the table, for a re-score
        self._running: int | None = None  # the job (generation) being scored
        self._job_t0 = 0.0
        self._scoring_s = 0.0  # seconds spent scoring in finished jobs
        self.table_model = BatchTableModel(self)
        self.row_vectors = RowVectors()  # the rows' sentence vectors, for the corpus map (issue 42)
        self.proxy = BatchFilterProxy(self)
        self.proxy.setSourceModel(self.table_model)
        self.ui = BatchWidgets(self, self.proxy, self._choose_export)
        self.navigation = ResultsNavigation(self.ui, self.proxy, self._open_review, self._set_message)
        self._connect_ui()
        PathDrops(self, self.add_paths)  # files and folders dropped on the panel are scored
        self._batch_size, self._chunk = batch_size, chunk
        self.handle = Jobs("batch-scoring", BATCH_NICE, parent=self, wait_ms=10000)

    def _connect_ui(self) -> None:
        """The widgets' signals to the panel's slots (the navigation connects its own)."""
        ui = self.ui
        ui.add_files_button.clicked.connect(self._choose_files)
        ui.add_folder_button.clicked.connect(self._choose_folder)
        ui.clear_button.clicked.connect(self.clear)
        ui.cancel_button.clicked.connect(self.cancel)
        ui.rescore_button.clicked.connect(self.rescore)
        self.proxy.filter_changed.connect(lambda _f: self._update_summary())  # after the navigation shows it

    def _open_review(self, row) -> None:
        """Send the :class:`model.batch.ResultRow` ``row``'s text to the explorer (``review_activated``, then
        ``row_opened``)."""
        self.review_activated.emit(row.text)
        self.row_opened.emit(row)

    # -- public API -------------------------------------------------------------------------------------------
    def set_predictor(self, predictor) -> None:
        """Use ``predictor`` (a loaded ``model.Predictor``) for the next jobs; starts queued ones.

        A running job keeps the predictor it started with.
        """
        self._predictor = predictor
        self._update_summary()  # the rows may now be another model's
        if predictor is not None:
            labels = tuple(getattr(predictor, "labels", ()) or ())
            task = task_of(predictor)
            self.table_model.set_schema(labels, task.kind, InputSpec.of(predictor).reads_pairs)
            for col in (LABEL, CONFIDENCE):  # a regression row has no class and no confidence: its Value says it
                self.ui.view.setColumnHidden(col, not task.type.reads_probabilities)
            self.navigation.set_categories(categories(labels, task.kind))
            self._start_next()

    def set_second_predictor(self, predictor) -> None:
        """Model B (a loaded ``model.Predictor`` that can be compared with the model in use; None: stop comparing)
        scores every row of the next jobs too: the table gains B's columns and "Agree?"; a running job keeps what
        it started with."""
        self._second = predictor

    def add_paths(self, paths: list[str]) -> None:
        """Score these files/folders: starts now, or queues behind the running job / until a model is set. Every
        filter of the table is dropped (:meth:`BatchFilterProxy.reset_filters`).

        Empty lists are ignored; paths that do not exist become rows with a
        status ("not found"), they do not raise.
        """
        paths = [str(p) for p in paths if str(p)]
        if not paths:
            return
        self.proxy.reset_filters()  # a new scoring shows every row
        self._queue.append(paths)
        if self._predictor is None:
            self._set_message("Waiting for the model to load; scoring starts then.")
        self._start_next()

    def cancel(self) -> None:
        """Stop the running job after its current batch and drop queued jobs; rows scored so far stay."""
        self._queue.clear()
        if self._running is not None:
            self.handle.request_stop()
            self.ui.cancel_button.setEnabled(False)
            self.ui.progress_bar.setFormat("cancelling…")

    def cancel_if_running(self) -> None:
        """:meth:`cancel` while a job is scoring (another model is being loaded); jobs waiting for a model stay."""
        if self.is_running():
            self.cancel()

    @property
    def predictor(self):
        """The ``model.Predictor`` the next jobs use (None before a model is set)."""
        return self._predictor

    def scored_by(self) -> str:
        """Which model scored the rows, and whether it is the model in use (:func:`.scored_by.scored_by`); ""
        without scored rows."""
        return scored_by(self.table_model.summary.models, self._current_model())

    def _current_model(self) -> str | None:
        return model_id(self._predictor) if self._predictor is not None else None

    def rescore(self) -> None:
        """Score every file and folder in the table again with the model in use (after a model switch): the rows
        are cleared and one job scores them all (queued until a model is loaded)."""
        paths = list(self._scored_paths)
        self.clear()
        self.add_paths(paths)

    def clear(self) -> None:
        """Cancel everything, remove all rows (rows still in flight from the old job are dropped) and every filter."""
        self.cancel()
        self.proxy.reset_filters()
        self.handle.next_generation()  # anything still arriving from the cancelled job is stale now
        self._scored_paths.clear()
        self.table_model.clear()
        self.row_vectors.clear()
        self._scoring_s = 0.0
        self._update_summary()
        self._set_message("")
        self.ui.idle_progress()  # no "Done: N reviews" beside the emptied table

    def is_running(self) -> bool:
        """True while a job is scoring."""
        return self._running is not None

    def rows(self):
        """All result rows in arrival order (a list of :class:`model.batch.ResultRow`)."""
        return self.table_model.rows()

    export_hint = staticmethod(export_hint)

    def export_to(self, path: str, fmt: str | None = None, excerpt_chars: int | None = None) -> bool:
        """Write every row to ``path`` atomically (CSV, JSON Lines or Parquet; from the extension when ``fmt`` is None).

        ``excerpt_chars``: cut each review text to this many characters (:func:`model.batch.export.excerpt_rows`),
        for spreadsheets, which cut cells at :data:`SPREADSHEET_CELL_LIMIT` characters; None keeps whole reviews.

        Returns:
            True on success; on failure shows and emits a message and returns
            False (never raises for I/O or format problems).
        """
        rows = self.table_model.rows()
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            n = write_rows(path, excerpt_rows(rows, excerpt_chars) if excerpt_chars else rows, fmt,
                           schema=schema_of_rows(rows))  # model B's columns too when the rows carry them
        except (OSError, ValueError, RuntimeError) as exc:
            self._set_message(f"Export failed: {exc}", error=True)
            return False
        finally:
            QApplication.restoreOverrideCursor()
        self._set_message(f"Exported {n:,} rows to {path}")
        return True

    def shutdown(self) -> None:
        """Drop queued jobs, cancel the running one and wait (up to 10 s) for the worker thread; call before the
        app exits (done on application quit and when the main window closes)."""
        self._queue.clear()
        self.handle.shutdown()

    def columns(self) -> Columns:
        """The text, second-text and gold-label columns typed in the panel (None where empty: detected)."""
        return Columns(*(e.text().strip() or None for e in (self.ui.text_column_edit, self.ui.pair_column_edit,
                                                            self.ui.label_column_edit)))

    def _column_problem(self, paths: list[str], columns: Columns) -> str | None:
        """Why a job cannot start with these columns (one message, nothing scored), or None."""
        refused = InputSpec.of(self._predictor, "this model").refusal(columns.pair)
        if refused is not None:
            return f"Second text column {columns.pair!r}: {refused}; clear the field or load a pair model."
        problem = check_columns(paths, columns)
        return None if problem is None else f"Not scored: {problem}."

    # -- job control ------------------------------------------------------------------------------------------
    def _start_next(self) -> None:
        if self._running is not None or self._predictor is None or not self._queue or self.handle.stopped:
            return
        paths = self._queue.pop(0)
        self._scored_paths.extend(p for p in paths if p not in self._scored_paths)
        self.table_model.add_roots(paths)
        columns = self.columns()
        if (problem := self._column_problem(paths, columns)) is not None:
            self._set_message(problem)
            self._start_next()
            return
        job = self._running = self.handle.next_generation()
        max_bytes = int(self.ui.max_mb_spin.value() * 2**20)
        self._job_t0 = time.monotonic()
        self.ui.cancel_button.setEnabled(True)
        self.ui.progress_bar.setRange(0, 0)  # busy until the count estimate arrives
        self.ui.progress_bar.setFormat("reading…")
        names = ", ".join(Path(p).name or p for p in paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
        self._set_message(f"Scoring {names}…")
        self.scoring_started.emit(job)
        self.handle.reset_stop()  # the previous job has finished: a Cancel of it must not stop this one
        run = BatchRun()
        self.handle.run(batch_job, self._predictor, paths, run, columns, max_bytes, self._batch_size, self._chunk,
                        second=self._second, vectors=self.row_vectors.spec, generation=job,
                        on_progress=self._on_job_output, on_error=self._on_failed,
                        on_end=lambda: self._on_finished(job, run.summary, run.cancelled))

    def _on_job_output(self, output: BatchProgress | list) -> None:
        """What the running (current) job yields: its progress, or a chunk of rows."""
        if isinstance(output, BatchProgress):
            self._on_progress(output.done, output.total)
        elif isinstance(output, ChunkVectors):  # before its rows: the map finds them when the rows arrive
            self.row_vectors.extend(output.vectors, first=self.table_model.rowCount())
        else:
            self._on_rows(output)

    def _on_progress(self, done: int, total: int) -> None:
        total = max(total, done, 1)
        self.ui.progress_bar.setRange(0, total)
        self.ui.progress_bar.setValue(done)
        elapsed = time.monotonic() - self._job_t0
        eta = ""
        if 0 < done < total and elapsed > 0.5:
            eta = f" · ETA {format_duration((total - done) * elapsed / done)}"
        if self.handle.stop_requested():
            self.ui.progress_bar.setFormat("cancelling…")
        else:
            self.ui.progress_bar.setFormat(f"{done:,} / ~{total:,} reviews (%p%){eta}")
        self._update_summary()
        self.progress_changed.emit(done, total)

    def _on_rows(self, rows: list) -> None:
        self.table_model.append_rows(rows)
        self._update_summary()

    def _on_failed(self, exc: Exception) -> None:
        self._set_message(f"Scoring stopped by an error: {type(exc).__name__}: {exc}", error=True)

    def _on_finished(self, job: int, summary: Summary, cancelled: bool) -> None:
        """Job ``job`` ended (however it ended, cleared or not): the next queued job starts."""
        self._running = None
        self._scoring_s += summary.elapsed_s
        self.ui.cancel_button.setEnabled(False)
        self.ui.progress_bar.setRange(0, 1)
        self.ui.progress_bar.setValue(1 if not cancelled else 0)
        if self.handle.is_current(job):  # else the table was cleared meanwhile: no message of it
            word = "Cancelled" if cancelled else "Done"
            self.ui.progress_bar.setFormat(f"{word}: {summary.count:,} reviews in {format_duration(summary.elapsed_s)}")
            if not self.ui.message_label.text().startswith("Scoring stopped by an error"):
                failed = f"; {summary.failed:,} could not be read (filter 'Failed' to see why)" if summary.failed else ""
                gold = ""
                if summary.gold_problems:
                    source, problem = summary.gold_examples[0]
                    gold = (f"; {summary.gold_problems:,} gold label(s) not understood, left empty "
                            f"(e.g. {Path(source.split(':')[0]).name}: {problem})")
                self._set_message(f"{word}: {summary.ok:,} reviews scored{failed}{gold}.")
        self._update_summary()
        self.scoring_finished.emit(summary)
        self._start_next()

    # -- helpers ----------------------------------------------------------------------------------------------
    def _update_summary(self) -> None:
        s = self.table_model.summary
        running = time.monotonic() - self._job_t0 if self._running is not None else 0.0
        s.elapsed_s = self._scoring_s + running
        current = self._current_model()
        stale = rows_are_stale(s.models, current) and not self.is_running()
        self.ui.rescore_button.setVisible(stale)
        if stale:
            self.ui.rescore_button.setText(f"Re-score with {model_label(current)}")
        if s.count == 0:
            self.ui.summary_label.setText(DROP_HINT)
            return
        by = self.scored_by()
        if not self.proxy.is_filtering():
            line = s.line()
        else:
            shown = self.proxy.shown_summary()  # no rate: elapsed time belongs to all rows
            line = f"Showing {shown.count:,} of {s.count:,} (filtered): {shown.line()}"
        # another model's rows: said first, where the one-line label does not cut it off
        text = f"{by[0].upper()}{by[1:]} · {line}" if stale else f"{line} · {by}" if by else line
        self.ui.summary_label.setText(text)

    def _set_message(self, text: str, error: bool = False) -> None:
        self.ui.message_label.setText(text)
        self.ui.message_label.setStyleSheet("color: #b00020;" if error else "")
        if text:
            self.message.emit(text)

    def _choose_files(self) -> None:
        patterns = " ".join(SUPPORTED_PATTERNS)
        files, _ = QFileDialog.getOpenFileNames(self, "Score review files", "", f"Reviews ({patterns});;All files (*)")
        if files:
            self.add_paths(files)

    def _choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Score a folder of reviews")
        if folder:
            self.add_paths([folder])

    def _choose_export(self, fmt: str, excerpt_chars: int | None = None) -> None:
        if self.table_model.rowCount() == 0:
            self._set_message("Nothing to export yet.", error=True)
            return
        path = ask_export_path(self, fmt, excerpt_chars)
        if path:
            self.export_to(path, fmt, excerpt_chars)


__all__ = ["SPREADSHEET_CELL_LIMIT", "BatchPanel"]
