"""The corpus map's slices (issue 42): named selections of texts, their metrics side by side, their rows exported.

A slice remembers the ``source`` of each of its rows (:class:`desktop_app.map_settings.Slice`), so it finds them
again after the same files are scored again; sessions keep the slices. The table lists every row, the current map
selection and each slice with its count and the Corpus dock's line of numbers
(:func:`model.corpus.metrics.corpus_metrics`, computed on the GUI thread when the slices or the rows change: a
slice's rows, ~1 ms per 1,000 rows).
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QFileDialog,
    QGridLayout,
    QInputDialog,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from model.batch import write_rows
from model.corpus.metrics import corpus_metrics

from desktop_app.map_settings import Slice


class SlicesBox(QWidget):
    """The slices of a :class:`~desktop_app.panels.corpus.map_panel.CorpusMapPanel` (module docstring).

    Args:
        panel: the map panel (its ``batch`` and ``select_rows``).
        describe: one line of numbers for a :class:`model.corpus.metrics.CorpusMetrics`.
    """

    def __init__(self, panel, describe, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.panel, self.describe = panel, describe
        self._slices: list[Slice] = []
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["Slice", "Texts", "Metrics"])
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.verticalHeader().setVisible(False)
        self.table.cellDoubleClicked.connect(lambda r, _c: self.show_slice(r - self._first_slice_row()))
        buttons = QGridLayout()  # two rows: the dock stays narrow
        for k, (text, tip, slot) in enumerate((
                ("Save slice\u2026", "Save the map selection as a named slice", lambda: self.save_selection()),
                ("Show", "Filter the table and the metrics to the chosen slice", lambda: self.show_slice(self._chosen())),
                ("Clear", "Clear the map selection", lambda: self.panel.select_rows([])),
                ("Export\u2026", "Write the chosen slice's rows", lambda: self.export(self._chosen())),
                ("Delete", "Forget the chosen slice", lambda: self.delete(self._chosen())))):
            b = QPushButton(text)
            b.setToolTip(tip)
            b.clicked.connect(slot)
            buttons.addWidget(b, k // 3, k % 3)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(buttons)
        layout.addWidget(self.table, 1)
        panel.batch.proxy.filter_changed.connect(lambda _f: self.refresh())

    # -- the slices -------------------------------------------------------------------------------------------
    def saved(self) -> tuple[Slice, ...]:
        """The slices, in order."""
        return tuple(self._slices)

    def set_saved(self, slices) -> None:
        """Replace the slices (a session's)."""
        self._slices = list(slices)
        self.refresh()

    def selection_rows(self) -> list:
        """The table rows of the current map selection ([] without one)."""
        points = self.panel.batch.proxy.row_filter.points
        return [] if points is None else [r for r in self.panel.batch.table_model.rows() if id(r) in points]

    def save_selection(self, name: str | None = None) -> Slice | None:
        """Save the map selection as a slice named ``name`` (None: ask); None when there is no selection."""
        rows = self.selection_rows()
        if not rows:
            self.panel.status.setText("Select texts on the map first (drag a box or a lasso).")
            return None
        if name is None:
            name, ok = QInputDialog.getText(self, "Save slice", "Name:", text=f"slice {len(self._slices) + 1}")
            if not ok or not name.strip():
                return None
        piece = Slice(name.strip(), tuple(r.source for r in rows))
        self._slices.append(piece)
        self.refresh()
        return piece

    def rows_of(self, piece: Slice) -> list:
        """The table rows whose source is in the slice (in table order)."""
        sources = set(piece.sources)
        return [r for r in self.panel.batch.table_model.rows() if r.source in sources]

    def show_slice(self, k: int) -> None:
        """Filter the table and the metrics to slice ``k``'s rows."""
        if 0 <= k < len(self._slices):
            self.panel.select_rows(self.rows_of(self._slices[k]), self._slices[k].name)

    def delete(self, k: int) -> None:
        """Forget slice ``k``."""
        if 0 <= k < len(self._slices):
            del self._slices[k]
            self.refresh()

    def export(self, k: int, path: str | None = None) -> int:
        """Write slice ``k``'s rows (CSV, JSON Lines or Parquet by the extension; None: ask) atomically; returns the
        rows written (0: nothing, or the write failed: the status says why)."""
        if not 0 <= k < len(self._slices):
            return 0
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Export slice", f"{self._slices[k].name}.csv",
                                                  "CSV (*.csv);;JSON Lines (*.jsonl);;Parquet (*.parquet)")
            if not path:
                return 0
        try:
            n = write_rows(path, self.rows_of(self._slices[k]))
        except (OSError, ValueError, RuntimeError) as exc:
            self.panel.status.setText(f"Export failed: {exc}")
            return 0
        self.panel.status.setText(f"Exported {n:,} rows of {self._slices[k].name} to {path}")
        return n

    # -- the table --------------------------------------------------------------------------------------------
    def _first_slice_row(self) -> int:
        return 1 + bool(self.selection_rows())

    def _chosen(self) -> int:
        return self.table.currentRow() - self._first_slice_row()

    def metrics_rows(self) -> list[tuple[str, int, str]]:
        """``(name, texts, numbers)`` of every row, the map selection and each slice, in the table's order."""
        table = self.panel.batch.table_model
        groups = [("All rows", table.rows())]
        if sel := self.selection_rows():
            groups.append((self.panel.batch.proxy.row_filter.points_name or "Map selection", sel))
        groups += [(s.name, self.rows_of(s)) for s in self._slices]
        out = []
        for name, rows in groups:
            labels, task = table.metrics_schema(rows)
            m = corpus_metrics(rows, labels=labels, task=task) if rows else None
            out.append((name, len(rows), self.describe(m) if m is not None and m.n_scored else "\u2013"))
        return out

    def refresh(self) -> None:
        """Recompute the table."""
        rows = self.metrics_rows()
        self.table.setRowCount(len(rows))
        for i, (name, n, numbers) in enumerate(rows):
            for j, value in enumerate((name, f"{n:,}", numbers)):
                self.table.setItem(i, j, QTableWidgetItem(value))
