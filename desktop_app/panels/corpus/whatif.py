"""The Corpus dock's "What if" tab (issue 43): the chosen generators over the scored corpus (or a sample of it).

The texts are the Batch table's rows scored without error that the Corpus dock describes (its filters but a
confusion-matrix cell, e.g. a map selection; the first N, "Sample"), edited and scored on this tab's
:class:`~desktop_app.workers.jobs.Jobs` by the one shared Predictor (:func:`desktop_app.workers.counterfactuals.
edits_job`), with progress and Cancel. Shown: per generator and per source class, the edits, the flip rate (LIT's
swap rate), the mean |change| of the source class's probability (or value) and the mean Jensen-Shannon divergence
(:func:`model.counterfactuals.counterfactual_metrics`); below, the edits that flipped, sortable; Export writes them
(or every edit) as JSON Lines, the command line's ``--counterfactuals-out`` rows.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from model.counterfactuals import counterfactual_metrics
from model.counterfactuals.metrics import METRIC_KEYS, write_edits_jsonl

from desktop_app.workers.counterfactuals import edits_job
from desktop_app.panels.whatif_widgets import WhatIfBase, edits_table, fill_edits

DEFAULT_SAMPLE = 200
"""Rows edited by default (the first ones of the table)."""
SUMMARY_COLUMNS = ("Generator", "Source class", "Edits", "Flip rate", "Mean |\u0394|", "Mean JSD")


def _cell(value, fmt: str = "") -> QTableWidgetItem:
    return QTableWidgetItem("\u2013" if value is None else format(value, fmt))


class CorpusWhatIfPanel(WhatIfBase):
    """See the module docstring.

    Args:
        batch: the :class:`~desktop_app.panels.batch.panel.BatchPanel` whose rows are edited.
    """

    def __init__(self, batch, parent: QWidget | None = None) -> None:
        super().__init__("corpus-whatif", parent)
        self.batch = batch
        self.metrics: dict = {}
        self.sample = QSpinBox()
        self.sample.setRange(1, 1_000_000)
        self.sample.setValue(DEFAULT_SAMPLE)
        self.sample.setPrefix("first ")
        self.sample.setSuffix(" rows")
        self.run_button = QPushButton("Run on the corpus")
        self.cancel_button = QPushButton("Cancel")
        self.export_button = QPushButton("Export flipped\u2026")
        self.export_all_button = QPushButton("Export all\u2026")
        self.progress = QProgressBar()
        self.status.setText("Score a corpus, pick generators and press \u201cRun on the corpus\u201d.")
        self.summary = QTableWidget(0, len(SUMMARY_COLUMNS))
        self.summary.setHorizontalHeaderLabels(SUMMARY_COLUMNS)
        self.summary.verticalHeader().setVisible(False)
        self.flipped = edits_table()
        row = QHBoxLayout()
        for w in (self.sample, self.run_button, self.cancel_button, self.progress, self.export_button,
                  self.export_all_button):
            row.addWidget(w)
        row.addStretch(1)
        lay = QVBoxLayout(self)
        lay.addWidget(self.picker)
        lay.addLayout(row)
        for w in (self.status, self.summary, QLabel("Edits that flipped the verdict:"), self.flipped):
            lay.addWidget(w)
        self.run_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)
        self.export_button.clicked.connect(lambda: self.export(flipped_only=True))
        self.export_all_button.clicked.connect(lambda: self.export(flipped_only=False))
        self._update_enabled()

    def _update_enabled(self) -> None:
        self.run_button.setEnabled(self._predictor is not None and not self.running)
        self.cancel_button.setEnabled(self.running)
        self.progress.setVisible(self.running)
        self.export_button.setEnabled(any(e.flipped for e in self.edits))
        self.export_all_button.setEnabled(bool(self.edits))

    def start(self) -> bool:
        """Edit the first N scored rows the Corpus dock describes (the table's filters but a confusion-matrix cell:
        a map selection, a word, the search; :meth:`~desktop_app.panels.batch.proxy.BatchFilterProxy.described_rows`)
        with the ticked generators (on the worker); False when there is nothing to do (the status says why)."""
        rows = [r for r in self.batch.proxy.described_rows() if r.ok][:self.sample.value()]
        names = self.picker.names()
        if not rows or not names or self._predictor is None:
            empty = ("Nothing to edit: no scored row among the rows the Corpus describes." if self.batch.rows()
                     else "Nothing to edit: score a corpus first.")
            self.status.setText(empty if not rows else "Tick a generator.")
            return False
        self.running = True
        pop = self.batch.proxy.row_filter.population()
        scope = f" ({pop.describe()})" if pop.is_filtering() else ""
        self.status.setText(f"Editing {len(rows):,} rows{scope} with {', '.join(names)}\u2026")
        self.progress.setRange(0, len(rows) + 1)
        self.progress.setValue(0)
        pairs = any(r.text_pair is not None for r in rows)
        self.handle.run(edits_job, self._predictor, [(r.text, r.text_pair) for r in rows], names,
                        self.picker.settings(pairs), None, [r.source for r in rows], on_result=self.show_edits,
                        on_progress=lambda v: self.progress.setValue(v[0]), on_error=self._on_failed,
                        on_stop=self._on_stopped)
        self._update_enabled()
        return True

    def show_edits(self, edits: list) -> None:
        """Show the metrics of ``edits`` and list the flipped ones."""
        self.running = False
        self.edits = list(edits)
        self.metrics = counterfactual_metrics(self.edits)
        lines = [x for name, m in self.metrics.items()
                 for x in [(name, "all", m), *((name, cls, sub) for cls, sub in m["by_class"].items())]]
        self.summary.setRowCount(len(lines))
        for r, (name, cls, m) in enumerate(lines):
            values = [m[k] for k in METRIC_KEYS]
            cells = [QTableWidgetItem(name), QTableWidgetItem(cls), _cell(values[0], ","),
                     _cell(None if values[1] is None else 100 * values[1], ".1f"), _cell(values[2], ".4f"),
                     _cell(values[3], ".4f")]
            for c, cell in enumerate(cells):
                self.summary.setItem(r, c, cell)
        self.summary.resizeColumnsToContents()
        flipped = [e for e in self.edits if e.flipped]
        fill_edits(self.flipped, flipped)
        self.status.setText(f"{len(self.edits):,} edits, {len(flipped):,} flipped the verdict.")
        self._update_enabled()

    def export(self, flipped_only: bool, path: str | None = None) -> str | None:
        """Write the flipped edits (or all) as JSON Lines to ``path`` (None: ask); returns the path written."""
        chosen = [e for e in self.edits if e.flipped] if flipped_only else self.edits
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Export edits", "edits.jsonl", "JSON Lines (*.jsonl)")
        if not path:
            return None
        try:
            write_edits_jsonl(path, chosen)
        except OSError as exc:
            self.status.setText(f"Cannot write {path}: {exc}")
            return None
        self.status.setText(f"Wrote {len(chosen):,} edits to {path}.")
        return path


__all__ = ["DEFAULT_SAMPLE", "CorpusWhatIfPanel"]
