"""The batch results table's filter and sort (:class:`BatchFilterProxy`) and the table view (:func:`results_view`).

:class:`BatchFilterProxy` shows the rows of a :class:`~desktop_app.panels.batch.table_model.BatchTableModel` that its
:class:`~desktop_app.panels.batch.row_filter.RowFilter` accepts (a category, a search string, a word from the corpus dock,
a confusion-matrix cell, a map selection), in arrival order or sorted by one column. It is the one owner of the
filters: the batch dock's category box and search box follow its :attr:`~BatchFilterProxy.row_filter`. It holds one
NumPy array, the source rows in display order: a filter change tests each row once in plain Python (no Qt call per
row), a sort is one NumPy ``argsort`` of the column's precomputed keys
(:meth:`~desktop_app.panels.batch.table_model.BatchTableModel.sort_order`), and each change is one ``layoutChanged``
that keeps the selection. Qt's ``QSortFilterProxyModel`` called Python once per comparison (``lessThan``) and once
per row (``filterAcceptsRow``): sorting 25,000 rows held the GUI thread about 2 s (``python -m benchmarks.batch_gui
--fill``, docs/performance.md).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from PySide6.QtCore import QAbstractProxyModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView

from model.batch import Summary

from desktop_app.panels.batch.table_model import COLUMNS, CONFIDENCE, EXCERPT, GOLD, LABEL, SOURCE
from desktop_app.panels.batch.row_filter import RowFilter

_ROOT = QModelIndex()


class BatchFilterProxy(QAbstractProxyModel):
    """The rows its :class:`RowFilter` accepts, in arrival order or sorted by a column (module docstring).

    The search string matches (case-insensitively) the source path, the full review text and the status;
    categories are the entries of ``FILTERS``; :meth:`set_word` and :meth:`set_cell` are the corpus dock's
    word and confusion-matrix filters. :meth:`sort` (called by the view's header) orders by a column's
    ``SORT_ROLE`` values; column -1 is arrival order. Rows that arrive while sorted are merged into their place.

    Signals:
        filter_changed(object): the new :class:`RowFilter`, after any filter changed.
    """

    filter_changed = Signal(object)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._filter = RowFilter()
        self._shown: Summary | None = None  # summary of the rows that pass the filter; None: not computed
        self._accepted = np.zeros(0, dtype=bool)  # bool [source rows]: the filter's verdict per row
        self._order = np.zeros(0, dtype=np.int64)  # int64 [shown rows]: source rows in display order
        self._where: np.ndarray | None = None  # int64 [source rows]: display row of each (-1 hidden); lazy
        self._sort_column, self._sort_order = -1, Qt.SortOrder.AscendingOrder

    def setSourceModel(self, model) -> None:
        """Attach the source model and follow its appends and resets."""
        self.beginResetModel()
        super().setSourceModel(model)
        model.rowsInserted.connect(self._on_source_rows_inserted)
        model.modelAboutToBeReset.connect(self.beginResetModel)
        model.modelReset.connect(self._on_source_reset)
        model.dataChanged.connect(self._on_source_data_changed)
        self._recompute()
        self.endResetModel()

    # -- filters ----------------------------------------------------------------------------------------------
    @property
    def row_filter(self) -> RowFilter:
        """The current filter (immutable: a snapshot another thread may use)."""
        return self._filter

    def set_search(self, text: str) -> None:
        """Keep rows whose source, text or status contains ``text`` (case-insensitive); "" keeps all."""
        self.set_filter(replace(self._filter, needle=text.strip().lower()))

    def set_category(self, category: str) -> None:
        """One of the model's categories (:func:`~desktop_app.panels.batch.row_filter.categories`). Raises ValueError for
        anything else."""
        self.set_filter(replace(self._filter, category=category))

    def set_word(self, word: str) -> None:
        """Keep rows whose review contains ``word`` (or a bigram) as whole words; "" keeps all."""
        self.set_filter(replace(self._filter, word=" ".join(str(word).lower().split())))

    def set_cell(self, cell: tuple[str, str] | None) -> None:
        """Keep rows with this ``(gold, predicted)`` pair (a confusion-matrix cell); None keeps all."""
        self.set_filter(replace(self._filter, cell=None if cell is None else (str(cell[0]), str(cell[1]))))

    def reset_filters(self) -> None:
        """Drop every filter (category, search, word, cell, map selection): Clear and a new scoring start from all
        rows (issue 56: a map selection of rows no longer in the table hid every new row)."""
        self.set_filter(RowFilter())

    def set_filter(self, new: RowFilter) -> None:
        """Adopt ``new`` (one ``layoutChanged``) and emit ``filter_changed``; nothing when it equals the current."""
        if new == self._filter:
            return
        self._filter, self._shown = new, None
        self._relayout(self._recompute)
        self.filter_changed.emit(new)

    def is_filtering(self) -> bool:
        """True when some filter (category, search, word, cell) hides rows."""
        return self._filter.is_filtering()

    def described_rows(self) -> list:
        """The rows the Corpus dock describes: those of :meth:`RowFilter.population` (every filter but the
        confusion-matrix cell), in arrival order, as :class:`model.batch.ResultRow` s."""
        src = self.sourceModel()
        rows = [] if src is None else src.rows()
        keep = self._filter.population()
        return [r for r in rows if keep.accepts(r)] if keep.is_filtering() else rows

    def visible_rows(self) -> list:
        """The :class:`model.batch.ResultRow` s that pass the filter (in the table's order)."""
        src = self.sourceModel()
        return [] if src is None else [src.row_at(i) for i in self._order.tolist()]

    def shown_summary(self) -> Summary:
        """The :class:`Summary` of the rows that pass the filter (``elapsed_s`` 0: time belongs to all rows).

        Computed once per filter change, then extended with each batch of appended rows, so a batch that
        streams 25,000 rows into a filtered table costs O(rows appended) per update, not O(all rows).
        """
        if self._shown is None:
            self._shown = Summary()
            self._shown.add(self.visible_rows())
        return self._shown

    # -- sorting ----------------------------------------------------------------------------------------------
    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Order the shown rows by ``column`` (-1: arrival order) in one ``layoutChanged`` (selection kept).

        The order is kept through appends and filter changes, so asking again for the current one does nothing
        (``QTableView.sortByColumn`` asks twice)."""
        if (int(column), order) == (self._sort_column, self._sort_order):
            return
        self._sort_column, self._sort_order = int(column), order
        self._relayout(lambda: self._set_order(self._sorted(np.flatnonzero(self._accepted))))

    def sort_column(self) -> int:
        """The column the rows are sorted by, -1 for arrival order."""
        return self._sort_column

    def _sorted(self, rows: np.ndarray) -> np.ndarray:
        src, column = self.sourceModel(), self._sort_column
        if src is None or not 0 <= column < src.columnCount():
            return rows
        return src.sort_order(column, rows, descending=self._sort_order == Qt.SortOrder.DescendingOrder)

    def _recompute(self) -> None:
        """The filter's verdict on every source row, then the shown rows in order."""
        src = self.sourceModel()
        rows = [] if src is None else src.rows()
        f = self._filter
        self._accepted = (np.fromiter((f.accepts(r) for r in rows), dtype=bool, count=len(rows))
                          if f.is_filtering() else np.ones(len(rows), dtype=bool))
        self._set_order(self._sorted(np.flatnonzero(self._accepted)))

    def _set_order(self, order: np.ndarray) -> None:
        self._order, self._where = np.asarray(order, dtype=np.int64), None

    def _relayout(self, change) -> None:
        """Run ``change`` (which sets a new order) as one layout change, moving the persistent indexes along."""
        self.layoutAboutToBeChanged.emit()
        old = self.persistentIndexList()
        sources = [int(self._order[i.row()]) if i.isValid() and i.row() < len(self._order) else -1 for i in old]
        change()
        where = self._positions()
        new = [self.index(int(where[s]), i.column()) if 0 <= s < len(where) and where[s] >= 0 else QModelIndex()
               for s, i in zip(sources, old)]
        self.changePersistentIndexList(old, new)
        self.layoutChanged.emit()

    def _positions(self) -> np.ndarray:
        if self._where is None or len(self._where) != len(self._accepted):
            where = np.full(len(self._accepted), -1, dtype=np.int64)
            where[self._order] = np.arange(len(self._order))
            self._where = where
        return self._where

    # -- following the source ---------------------------------------------------------------------------------
    def _on_source_reset(self) -> None:
        self._shown = None
        self._recompute()
        self.endResetModel()

    def _on_source_data_changed(self, top_left, bottom_right, roles=()) -> None:
        """Rows' looks changed (e.g. the class colours): repaint those columns of every shown row."""
        if self._order.size:
            self.dataChanged.emit(self.index(0, top_left.column()),
                                  self.index(len(self._order) - 1, bottom_right.column()), roles)

    def _on_source_rows_inserted(self, _parent, first: int, last: int) -> None:
        """New rows (always appended): filtered once; shown at the end, or merged into the sort order."""
        src, f = self.sourceModel(), self._filter
        new = [src.row_at(i) for i in range(first, last + 1)]
        ok = np.fromiter((f.accepts(r) for r in new), dtype=bool, count=len(new)) if f.is_filtering() \
            else np.ones(len(new), dtype=bool)
        self._accepted = np.concatenate([self._accepted, ok])
        if self._shown is not None:
            self._shown.add([r for r, keep in zip(new, ok) if keep])
        added = first + np.flatnonzero(ok)
        if added.size == 0:
            self._where = None
            return
        if self._sort_column >= 0:  # merged into place: one sort of the shown rows (all in arrival order first)
            self._relayout(lambda: self._set_order(self._sorted(np.sort(np.concatenate([self._order, added])))))
            return
        n = len(self._order)
        self.beginInsertRows(_ROOT, n, n + added.size - 1)
        self._set_order(np.concatenate([self._order, added]))
        self.endInsertRows()

    # -- QAbstractProxyModel ----------------------------------------------------------------------------------
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> int:
        """Number of rows shown (0 for any valid parent: a flat table)."""
        return 0 if parent.isValid() else len(self._order)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> int:
        """Number of columns: the source model's (:data:`COLUMNS` and the model's own)."""
        src = self.sourceModel()
        return 0 if parent.isValid() or src is None else src.columnCount()

    def index(self, row: int, column: int, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> QModelIndex:
        """The index of a shown row and column; invalid out of range."""
        if parent.isValid() or not (0 <= row < len(self._order) and 0 <= column < self.columnCount()):
            return QModelIndex()
        return self.createIndex(row, column)

    def parent(self, index=None):
        """No item has a parent (a flat table); without ``index``, the QObject parent."""
        if index is None:
            return super().parent()
        return QModelIndex()

    def mapToSource(self, index: QModelIndex | QPersistentModelIndex) -> QModelIndex:
        """The source index of a shown cell (invalid for an invalid index)."""
        src = self.sourceModel()
        if src is None or not index.isValid() or index.row() >= len(self._order):
            return QModelIndex()
        return src.index(int(self._order[index.row()]), index.column())

    def mapFromSource(self, index: QModelIndex | QPersistentModelIndex) -> QModelIndex:
        """The shown cell of a source index (invalid when the row is filtered out)."""
        if not index.isValid():
            return QModelIndex()
        where = self._positions()
        row = int(where[index.row()]) if index.row() < len(where) else -1
        return self.index(row, index.column()) if row >= 0 else QModelIndex()

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        """The source model's data of the shown cell."""
        src = self.sourceModel()
        if src is None or not index.isValid() or index.row() >= len(self._order):
            return None
        return src.data(src.index(int(self._order[index.row()]), index.column()), role)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        """Column titles; a row's header is its arrival number (1-based), whatever the order."""
        src = self.sourceModel()
        if src is None:
            return None
        if orientation == Qt.Orientation.Vertical and 0 <= section < len(self._order):
            section = int(self._order[section])
        return src.headerData(section, orientation, role)


def results_view(proxy: BatchFilterProxy) -> QTableView:
    """The results table over ``proxy``: sortable (arrival order until sorted), whole rows selected, read-only,
    one line per row, the status column taking the remaining width."""
    view = QTableView()
    view.setModel(proxy)
    view.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)  # arrival order until sorted
    view.setSortingEnabled(True)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.setAlternatingRowColors(True)
    view.setWordWrap(False)
    view.verticalHeader().setDefaultSectionSize(view.fontMetrics().height() + 6)
    hh = view.horizontalHeader()
    hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    hh.setStretchLastSection(True)  # the status column takes the remaining width
    for c in range(len(COLUMNS)):
        hh.resizeSection(c, 72)
    hh.resizeSection(SOURCE, 150)
    hh.resizeSection(EXCERPT, 260)
    hh.resizeSection(LABEL, 92)  # the class swatch and "positive"
    hh.resizeSection(GOLD, 92)
    hh.resizeSection(CONFIDENCE, 84)
    metrics = hh.fontMetrics()
    for c, name in enumerate(COLUMNS):  # every header whole in its column, the sort arrow beside it
        hh.resizeSection(c, max(hh.sectionSize(c), metrics.horizontalAdvance(name) + 28))
    view.setToolTip("Double-click a row to analyse the review")
    return view
