"""The Corpus dock's Map tab (issue 42): the scored texts as points placed by their sentence vectors, linked to the
batch table, the corpus metrics and the explorer.

* Projection: PCA at once (and again, throttled, while rows arrive); UMAP on request (Map), in the background with
  progress and Cancel; both on the "corpus-map" thread (:mod:`desktop_app.workers.corpus.map_jobs`, the one worker
  pattern), cached per rows, model and layer. The vectors are the batch job's (:mod:`desktop_app.panels.batch.row_vectors`).
* Colour (:mod:`model.corpus.map_colours`, by task type): predicted class, gold, right/wrong, confidence, a class's
  probability (multi-label: a chosen label), value or error (regression), length, windows, a word; a legend; the
  excerpt on hover.
* Linked: a box or lasso selection filters the batch table (:class:`~desktop_app.panels.batch.row_filter.RowFilter`
  ``points``) and so the Corpus metrics, which describe the selection; rows the table's filters hide (a confusion
  cell, a category, a word) are drawn faint, so a cell's points stand out; a click opens the text in the explorer.
  The explored text is a star (placed with the fitted projection) and its 10 nearest texts by cosine are ringed and
  listed with their labels and gold (:class:`~desktop_app.panels.corpus.nearest.NearestTexts`).
* Slices (:class:`~desktop_app.panels.corpus.map_slices.SlicesBox`): named selections, their metrics side by side (on
  their own worker, only while on screen), export.
* Fit (issue 56): the tab takes the height of the dock and no more (its status is one line, elided, the whole text
  its tooltip: a word-wrapped label made the scroll area size the tab to its preferred height, 234 px taller than the
  dock, the plot's bottom and the slices below the fold); the UMAP progress bar, beside the status, is wide enough for
  its text.

Public (of :class:`CorpusMapPanel`): :meth:`~CorpusMapPanel.set_predictor`, :meth:`~CorpusMapPanel.set_explored`,
:meth:`~CorpusMapPanel.settings`, :meth:`~CorpusMapPanel.apply_settings`, :meth:`~CorpusMapPanel.project`,
:meth:`~CorpusMapPanel.select_rows`; signal ``projected``.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from model.corpus.projection import MIN_VECTORS
from model.corpus.map_colours import AGREEMENT, TITLES, Categories, colouring, compared, modes_for, ramp_colours
from model.tasks.types import SINGLE_LABEL

from desktop_app.map_settings import MapSettings
from desktop_app.views.corpus.map_plot import CorpusMapPlot
from desktop_app.views.widgets import ElidedLabel, fitting_width
from desktop_app.workers.corpus.map_jobs import projection_job
from desktop_app.workers.handle import EXPLANATION_NICE
from desktop_app.workers.jobs import Jobs
from desktop_app.panels.corpus.map_slices import SlicesBox
from desktop_app.panels.corpus.nearest import NearestTexts

PCA_THROTTLE_MS = 1000  # while rows arrive, the PCA map is made again at most once a second
EXCERPT_CHARS = 160
PROGRESS_SAMPLE = "UMAP epoch 1000/1000"
"""The progress text the bar is sized for (umap-learn fits 200 or 500 epochs unless told otherwise)."""


def excerpt(row) -> str:
    """A row's hover text: label (and gold), then the first :data:`EXCERPT_CHARS` characters of its text."""
    text = " ".join(row.text.split())
    cut = text[:EXCERPT_CHARS] + ("\u2026" if len(text) > EXCERPT_CHARS else "")
    head = row.label or (f"value {row.value:.3g}" if row.value is not None else "")
    gold = f" \u00b7 gold {row.gold}" if row.has_gold else ""
    return f"{head}{gold}\n{cut}"


class CorpusMapPanel(QWidget):
    """The Map tab (module docstring).

    Args:
        batch: the :class:`~desktop_app.panels.batch.panel.BatchPanel` whose rows, vectors and filters it follows.
        describe: one line of numbers for a :class:`model.corpus.metrics.CorpusMetrics` (the Corpus dock's).

    Signals:
        projected(object): a new :class:`model.records.vectors.MapProjection` is drawn.
    """

    projected = Signal(object)

    def __init__(self, batch, describe, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("CorpusMapPanel")
        self.batch, self.predictor = batch, None
        self.projector = self.vectors = None
        self.rows: list = []  # the table rows of the points, in point order
        self._method = "pca"  # the projection last asked for
        self.handle = Jobs("corpus-map", EXPLANATION_NICE, parent=self)
        self.timer = QTimer(self, singleShot=True, interval=PCA_THROTTLE_MS)
        self.timer.timeout.connect(lambda: self.project("pca", automatic=True))
        self._build_ui(describe)
        batch.table_model.rowsInserted.connect(lambda *_: self._rows_changed())
        batch.table_model.modelReset.connect(self._on_reset)
        batch.proxy.filter_changed.connect(lambda _f: self.recolour(keep_range=True))

    def _build_ui(self, describe) -> None:
        self.projection_box = QComboBox()
        self.projection_box.addItem("PCA", "pca")
        self.projection_box.addItem("UMAP", "umap")
        self.map_button = QPushButton("Map")
        self.map_button.setToolTip("Place the texts again with the chosen projection (UMAP runs in the background)")
        self.map_button.clicked.connect(lambda: self.project(self.projection_box.currentData()))
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.handle.request_stop)
        self.colour_box, self.label_box = QComboBox(), QComboBox()
        self.word_edit = QLineEdit()
        self.word_edit.setPlaceholderText("word")
        self.word_edit.setMaximumWidth(110)
        self.select_box = QComboBox()
        for mode, title in (("box", "Select: box"), ("lasso", "Select: lasso"), ("pan", "Pan")):
            self.select_box.addItem(title, mode)
        self.progress = QProgressBar()
        self.progress.setFixedWidth(fitting_width(self.progress, PROGRESS_SAMPLE))
        self.progress.setVisible(False)
        self.plot = CorpusMapPlot()
        self.status = ElidedLabel("Score a folder of texts: each becomes a point here, placed by its sentence vector.")
        self.nearest = NearestTexts(self)  # the explored text's star and its nearest texts
        self.neighbours = self.nearest.list
        self.slices = SlicesBox(self, describe)
        for w in (self.colour_box, self.label_box, self.select_box):
            w.currentIndexChanged.connect(self._on_controls)
        self.word_edit.editingFinished.connect(self._on_controls)
        self.plot.selected.connect(lambda idx: self.select_rows([self.rows[i] for i in idx]))
        self.plot.point_clicked.connect(lambda i: self.open_row(self._table_row(i)))
        bar = QHBoxLayout()
        for w in (self.projection_box, self.map_button, self.cancel_button, QLabel("Colour:"), self.colour_box,
                  self.label_box, self.word_edit, self.select_box):
            bar.addWidget(w)
        bar.addStretch(1)
        line = QHBoxLayout()  # the status, and UMAP's progress beside it
        line.addWidget(self.status, 1)
        line.addWidget(self.progress)
        side = QSplitter()
        side.setOrientation(side.orientation().Vertical)
        side.addWidget(self.nearest)
        side.addWidget(self.slices)
        self.split = split = QSplitter()
        split.addWidget(self.plot)
        split.addWidget(side)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        self._sized = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addLayout(line)
        layout.addWidget(split, 1)

    def showEvent(self, event) -> None:
        """On the first show: the map gets two thirds of the width, the neighbours and slices the rest."""
        super().showEvent(event)
        if not self._sized and self.width() > 100:
            self._sized = True
            self.split.setSizes([2 * self.width() // 3, self.width() // 3])

    # -- public API -------------------------------------------------------------------------------------------
    def set_predictor(self, predictor) -> None:
        """The model whose vectors the explored text needs, and whose task decides the colourings."""
        self.predictor = predictor
        schema = self.batch.table_model.schema
        self._fill_colours(tuple(schema[0] or ()), schema[1])

    def _fill_colours(self, labels: tuple, task: str | None) -> None:
        """The colourings and labels of a model's task (kept when they still apply)."""
        keep_mode, keep_label = self.colour_box.currentData(), self.label_box.currentText()
        for box in (self.colour_box, self.label_box):
            box.blockSignals(True)
            box.clear()
        for mode in modes_for(task or SINGLE_LABEL, compared(self.rows)):
            self.colour_box.addItem(TITLES[mode], mode)
        self.label_box.addItems(list(labels))
        self.colour_box.setCurrentIndex(max(0, self.colour_box.findData(keep_mode)))
        self.label_box.setCurrentIndex(max(0, self.label_box.findText(keep_label)))
        for box in (self.colour_box, self.label_box):
            box.blockSignals(False)
        self._on_controls()

    def project(self, method: str = "pca", automatic: bool = False) -> bool:
        """Place the table's texts with ``method`` ("pca", "umap") on the map's thread; False when fewer than
        :data:`~model.corpus.projection.MIN_VECTORS` texts have vectors (the status says so). UMAP of too few texts
        shows PCA, the status saying why (:func:`model.corpus.projection.project`)."""
        n = self.batch.table_model.rowCount()
        vectors = self.batch.row_vectors.gather(n)
        if vectors.count < MIN_VECTORS:
            if not automatic:
                self.status.setText(f"{vectors.count} text(s) with vectors: the map needs at least {MIN_VECTORS}.")
            return False
        if automatic and self._method == "umap":  # a UMAP map (or one being fitted) is not replaced by a PCA
            self.status.setText(f"{n - len(self.rows):,} new text(s): press Map to place them.")
            return False
        if not automatic:
            self.timer.stop()
        self._method = method
        self.projection_box.setCurrentIndex(self.projection_box.findData(method))
        self.cancel_button.setEnabled(method == "umap")
        self.progress.setVisible(method == "umap")
        self.progress.setRange(0, 0)
        self.status.setText(f"{'UMAP' if method == 'umap' else 'PCA'} of {vectors.count:,} texts\u2026")
        self.handle.run(projection_job, vectors, method, on_result=lambda p: self._on_projected(p, vectors),
                        on_progress=self._on_progress, on_error=self._on_failed, on_stop=self._on_cancelled,
                        on_end=lambda: self.cancel_button.setEnabled(False))
        return True

    def set_explored(self, text: str | None, text_pair: str | None = None) -> None:
        """The text shown in the explorer (None: none): marked on the map with its nearest texts."""
        self.nearest.set_explored(text, text_pair)

    def select_rows(self, rows: list, name: str = "") -> None:
        """Filter the batch table (and so the Corpus metrics) to ``rows`` (table rows); [] clears the selection."""
        f = self.batch.proxy.row_filter
        points = frozenset(id(r) for r in rows) if rows else None
        self.batch.proxy.set_filter(replace(f, points=points, points_name=name if rows else ""))

    def settings(self) -> MapSettings:
        """The map's settings and slices, for a session."""
        return MapSettings(self.projection_box.currentData(), self.colour_box.currentData() or "",
                           self.label_box.currentText(), self.word_edit.text(), self.select_box.currentData(),
                           self.slices.saved())

    def apply_settings(self, s: MapSettings) -> None:
        """Adopt a session's map settings and slices (settings that do not apply to this model are left as they are)."""
        self.projection_box.setCurrentIndex(max(0, self.projection_box.findData(s.projection)))
        self.word_edit.setText(s.word)
        for box, value in ((self.colour_box, s.colour), (self.select_box, s.select)):
            if (k := box.findData(value)) >= 0:
                box.setCurrentIndex(k)
        if (k := self.label_box.findText(s.label)) >= 0:
            self.label_box.setCurrentIndex(k)
        self.slices.set_saved(s.slices)
        self._on_controls()

    def shutdown(self) -> None:
        """Stop the map's workers."""
        self.timer.stop()
        self.handle.shutdown()
        self.nearest.shutdown()
        self.slices.shutdown()

    # -- projection -------------------------------------------------------------------------------------------
    def _rows_changed(self) -> None:
        if not self.timer.isActive():
            self.timer.start()
        schema = self.batch.table_model.schema
        if self.colour_box.count() == 0 or self.label_box.count() != len(schema[0] or ()):
            self._fill_colours(tuple(schema[0] or ()), schema[1])

    def _on_reset(self) -> None:
        self.timer.stop()
        self.handle.cancel()
        self.projector, self.vectors, self.rows, self._method = None, None, [], "pca"
        self.plot.set_points(np.zeros((0, 2)), [], [])
        self.plot.set_legend([])  # no points, no key (it stayed under the emptied map)
        self.plot.set_marks(None)
        self.nearest.clear()
        self.status.setText("Score a folder of texts: each becomes a point here, placed by its sentence vector.")

    def _on_progress(self, value) -> None:
        done, total = value
        self.progress.setRange(0, max(1, total))
        self.progress.setValue(done)
        self.progress.setFormat(f"UMAP epoch {done}/{total}")
        bar = self.progress
        bar.setFixedWidth(max(bar.minimumWidth(), fitting_width(bar, bar.text())))  # never cut, e.g. 5000 epochs

    def _on_projected(self, projector, vectors) -> None:
        self.progress.setVisible(False)
        table = self.batch.table_model
        self.projector, self.vectors = projector, vectors
        self.rows = [table.row_at(int(i)) for i in vectors.rows]
        if compared(self.rows) != (self.colour_box.findData(AGREEMENT) >= 0):  # model B's rows came or went (issue 44)
            self._fill_colours(tuple(table.schema[0] or ()), table.schema[1])
        r = projector.result
        took = f" in {r.elapsed_s:.1f} s" if r.elapsed_s else " (cached)"
        share = f"; the axes explain {100 * sum(r.explained):.1f}% of the variance" if r.method == "pca" else ""
        if r.note:  # UMAP of too few texts: PCA is shown, and the box says so
            self._method = r.method
            self.projection_box.setCurrentIndex(self.projection_box.findData(r.method))
        note = f" ({r.note})" if r.note else ""
        self.status.setText(f"{r.method.upper()} of {len(self.rows):,} texts{took}{share}{note}. Drag to select, "
                            "click a point to explore it, right-drag to pan; the table and the metrics follow the "
                            "selection.")
        self.recolour()
        self.nearest.place()
        self.projected.emit(r)

    def _on_failed(self, exc: Exception) -> None:
        self._method = "pca" if self.projector is None else self.projector.result.method
        self.progress.setVisible(False)
        self.status.setText(" ".join(f"The map failed: {type(exc).__name__}: {exc}".split()))  # one line

    def _on_cancelled(self) -> None:
        self._method = "pca" if self.projector is None else self.projector.result.method
        self.progress.setVisible(False)
        self.status.setText("UMAP cancelled; the map shows the previous projection.")

    # -- colours ----------------------------------------------------------------------------------------------
    def _on_controls(self, *_args) -> None:
        mode = self.colour_box.currentData() or ""
        self.label_box.setVisible(mode in ("probability", "label_predicted", "label_gold"))
        self.word_edit.setVisible(mode == "word")
        self.plot.set_mode(self.select_box.currentData() or "box")
        self.recolour(keep_range=True)

    def recolour(self, keep_range: bool = False) -> None:
        """Draw the points with the chosen colouring; rows the table's filters hide are faint."""
        if self.projector is None or not self.rows:
            return
        mode = self.colour_box.currentData() or modes_for(self.rows[0].task)[0]
        labels = next((r.labels for r in self.rows if r.labels), ())
        c = colouring(self.rows, mode, labels, self.label_box.currentText(), self.word_edit.text())
        if isinstance(c, Categories):
            colours = [c.colours[k] for k in c.codes]
            legend = [(f"{n} ({int((c.codes == k).sum()):,})", col) for k, (n, col) in
                      enumerate(zip(c.names, c.colours, strict=True))]
        else:
            colours = ramp_colours(c.values)
            finite = c.values[np.isfinite(c.values)]
            lo, hi = (f"{finite.min():.3g}", f"{finite.max():.3g}") if finite.size else ("\u2013", "\u2013")
            legend = [(f"{c.name} {lo}", ramp_colours(np.array([0.0, 1.0]))[0]),
                      (f"{c.name} {hi}", ramp_colours(np.array([0.0, 1.0]))[1])]
        f = self.batch.proxy.row_filter
        faded = np.array([not f.accepts(r) for r in self.rows]) if f.is_filtering() else None
        self.plot.set_points(self.projector.result.coords, colours, [excerpt(r) for r in self.rows], faded,
                             keep_range=keep_range)
        self.plot.set_legend(legend)
        self.nearest.mark()

    # -- opening texts ----------------------------------------------------------------------------------------
    def _table_row(self, point: int) -> int:
        return int(self.vectors.rows[point])

    def open_row(self, table_row: int) -> None:
        """Open table row ``table_row``'s text in the explorer (as a double click in the table does)."""
        row = self.batch.table_model.row_at(table_row)
        if row.text:
            self.batch.review_activated.emit(row.text)
            self.batch.row_opened.emit(row)
