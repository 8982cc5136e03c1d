"""The corpus map's slices (issue 42): named selections of texts, their metrics side by side, their rows exported.

A slice remembers the ``source`` of each of its rows (:class:`desktop_app.map_settings.Slice`), so it finds them
again after the same files are scored again; sessions keep the slices. The table lists every row, the current map
selection and each slice with its count and the Corpus dock's line of numbers
(:func:`model.corpus.metrics.corpus_metrics` of each group's rows).

The numbers are computed on the "corpus-slices" worker (:func:`desktop_app.workers.corpus.metrics.slice_metrics_job`;
the latest request wins), and only while the table is on screen: the Map tab raised, the Corpus dock in the
workspace and, when tabbed with other docks, its tab raised. A change meanwhile (rows arriving, at most twice a
second, or the table cleared; another map selection; a slice saved, restored from a session or deleted) marks the
numbers stale, and they are computed when the table is shown again. Filters that leave the map selection as it was
(a category, "Errors first", a search, a confusion cell) change nothing here, and only the groups whose rows changed
are computed again (another map selection: that row alone; rows arriving: all). The GUI thread only gathers each
group's rows (a set look-up per row); while the worker computes, the names and counts are current and the group's
previous numbers stay, greyed, with the tooltip "updating" ("computing\u2026" for a group without earlier numbers).
Before this, every filter change recomputed every group on the GUI thread, and the first one imported scikit-learn
there: "Errors first" on 300 rows froze the window ~1.3 s (``python -m benchmarks.batch_gui --n 300 --fill``).
"""

from __future__ import annotations

from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QPalette
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

from desktop_app.map_settings import Slice
from desktop_app.panels.on_screen import OnScreen
from desktop_app.workers.corpus.metrics import slice_metrics_job
from desktop_app.workers.handle import EXPLANATION_NICE
from desktop_app.workers.jobs import Jobs

THROTTLE_MS = 500  # while rows arrive, the numbers are computed again at most twice a second (as the Metrics tab's)
COMPUTING = "computing\u2026"
UPDATING_TIP = "Updating: these are the numbers before the last change"


class SlicesBox(QWidget):
    """The slices of a :class:`~desktop_app.panels.corpus.map_panel.CorpusMapPanel` (module docstring).

    Args:
        panel: the map panel (its ``batch``, ``status`` and ``select_rows``).
        describe: one line of numbers for a :class:`model.corpus.metrics.CorpusMetrics`.
        throttle_ms: least milliseconds between two computations while rows arrive.

    Attributes:
        requests: computations asked of the worker so far (tests: a hidden table asks for none).
        on_screen: whether the table is on screen (:class:`~desktop_app.panels.on_screen.OnScreen`).

    Signals:
        computed(): the table shows the numbers of its current rows and slices.
    """

    computed = Signal()

    def __init__(self, panel, describe, parent: QWidget | None = None, throttle_ms: int = THROTTLE_MS) -> None:
        super().__init__(parent)
        self.panel, self.describe = panel, describe
        self._slices: list[Slice] = []
        self.requests = 0
        self._stale = True  # the groups changed since the last request
        self._updating = False  # a request is under way
        self._revision = 0  # the table's rows: counted up when they change
        self._lines: dict[tuple, str] = {}  # a group's key (_groups) -> its numbers, computed
        self._previous: dict[str, str] = {}  # a group's name -> the numbers it last showed
        self._keys_shown: list[tuple[str, tuple, int]] = []  # the table's rows: name, key, texts
        self._shown: list[tuple[str, int, str]] = []  # the table's rows: name, texts, numbers
        self._selection = (None, "")  # the map selection (points, name) the table follows
        self.handle = Jobs("corpus-slices", EXPLANATION_NICE, parent=self)
        self.on_screen = OnScreen(self)  # shown (the Map tab, the dock, its tab): compute what changed meanwhile
        self.on_screen.shown.connect(self._catch_up)
        self.timer = QTimer(self, singleShot=True, interval=throttle_ms)
        self.timer.timeout.connect(self.refresh)
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
        batch = panel.batch
        batch.proxy.filter_changed.connect(self._on_filter_changed)
        batch.table_model.rowsInserted.connect(lambda *_: self._rows_changed(throttled=True))
        batch.table_model.modelReset.connect(self._rows_changed)

    # -- the slices -------------------------------------------------------------------------------------------
    def saved(self) -> tuple[Slice, ...]:
        """The slices, in order."""
        return tuple(self._slices)

    def set_saved(self, slices) -> None:
        """Replace the slices (a session's)."""
        self._slices = list(slices)
        self._changed()

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
        self._changed()
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
            self._changed()

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

    def shutdown(self) -> None:
        """Stop the slices' worker."""
        self.timer.stop()
        self.handle.shutdown()

    # -- when to compute --------------------------------------------------------------------------------------
    def shown(self) -> bool:
        """Whether the table is on screen (:meth:`desktop_app.panels.on_screen.OnScreen.now`)."""
        return self.on_screen.now()

    @property
    def updating(self) -> bool:
        """True while the numbers shown are not those of the current rows and slices (a computation is under way,
        or waits for the table to be shown)."""
        return self._updating or self._stale

    def _catch_up(self) -> None:
        """Shown (the Map tab raised, the dock shown or its tab raised): compute what changed meanwhile."""
        if self._stale and not self.timer.isActive():
            self.refresh()

    def _on_filter_changed(self, f) -> None:
        if (f.points, f.points_name) != self._selection:
            self._changed()

    def _rows_changed(self, throttled: bool = False) -> None:
        self._revision += 1
        self._changed(throttled)

    def _changed(self, throttled: bool = False) -> None:
        """The groups changed: compute their numbers now (``throttled``: within :data:`THROTTLE_MS`) when the table
        is on screen, else once it is shown."""
        self._stale = True
        if not self.shown():
            return
        if not throttled:
            self.refresh()
        elif not self.timer.isActive():
            self.timer.start()

    # -- the table --------------------------------------------------------------------------------------------
    def _first_slice_row(self) -> int:
        return 1 + bool(self.selection_rows())

    def _chosen(self) -> int:
        return self.table.currentRow() - self._first_slice_row()

    def _groups(self) -> list[tuple[str, tuple, list]]:
        """``(name, key, rows)`` of every row, the map selection and each slice, in the table's order; equal keys
        mean the same rows (the table's rows unchanged since)."""
        f = self.panel.batch.proxy.row_filter
        out = [("All rows", (self._revision, "all"), self.panel.batch.table_model.rows())]
        if sel := self.selection_rows():
            out.append((f.points_name or "Map selection", (self._revision, "points", f.points), sel))
        return out + [(s.name, (self._revision, "slice", s.sources), self.rows_of(s)) for s in self._slices]

    def metrics_rows(self) -> list[tuple[str, int, str]]:
        """``(name, texts, numbers)`` of each row of the table, as shown (see :attr:`updating`)."""
        return list(self._shown)

    def refresh(self) -> bool:
        """Compute the numbers of the groups not computed yet on the worker (module docstring); False (nothing asked)
        while the table is not on screen: it is computed when shown."""
        self.timer.stop()
        if not self.shown():
            self._stale = True
            return False
        f = self.panel.batch.proxy.row_filter
        self._selection = (f.points, f.points_name)
        groups = self._groups()
        todo = [(key, rows) for _name, key, rows in groups if key not in self._lines]
        self._stale, self._updating = False, bool(todo)
        self._fill([(name, key, len(rows)) for name, key, rows in groups])
        if not todo:
            self.computed.emit()
            return True
        self.requests += 1
        table = self.panel.batch.table_model
        keys = [key for key, _rows in todo]
        self.handle.run(slice_metrics_job, [(rows, *table.metrics_schema(rows)) for _key, rows in todo],
                        on_result=lambda metrics: self._on_computed(keys, metrics), on_error=self._on_failed)
        return True

    def _on_computed(self, keys: list[tuple], metrics: list) -> None:
        """The worker's :class:`model.corpus.metrics.CorpusMetrics` of the groups ``keys`` (the latest request's)."""
        self._lines = {k: v for k, v in self._lines.items() if k[0] == self._revision}  # rows since: forgotten
        self._lines.update({key: self.describe(m) if m is not None and m.n_scored else "\u2013"
                            for key, m in zip(keys, metrics, strict=True)})
        self._updating = False
        self._fill(self._keys_shown)
        self.computed.emit()

    def _on_failed(self, exc: Exception) -> None:
        self._updating = False
        self._fill(self._keys_shown, failed=" ".join(f"failed: {type(exc).__name__}: {exc}".split()))  # one line

    def _fill(self, groups: list[tuple[str, tuple, int]], failed: str | None = None) -> None:
        """The table's rows from ``(name, key, texts)``: the numbers computed for the key, else the name's previous
        numbers greyed as updating (or ``failed``), else "computing\u2026"."""
        self._keys_shown = groups
        self._shown = []
        self.table.setRowCount(len(groups))
        grey = self.palette().color(QPalette.ColorRole.PlaceholderText)
        for i, (name, key, n) in enumerate(groups):
            current = key in self._lines
            if current:
                text = self._previous[name] = self._lines[key]
            else:
                text = failed or self._previous.get(name, COMPUTING)
            value = QTableWidgetItem(text)
            if not current and failed is None:
                value.setForeground(grey)
                value.setToolTip(UPDATING_TIP if name in self._previous else "")
            for j, item in enumerate((QTableWidgetItem(name), QTableWidgetItem(f"{n:,}"), value)):
                self.table.setItem(i, j, item)
            self._shown.append((name, n, text))
