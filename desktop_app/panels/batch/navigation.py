"""Going through batch results: errors first, the next error, opening a row, the corpus dock's filters.

:class:`ResultsNavigation` (``BatchPanel.navigation``) works on the panel's widgets
(:class:`~desktop_app.panels.batch.ui.BatchWidgets`) and its filter/sort proxy:

* :meth:`~ResultsNavigation.show_errors_first`: the "Misclassified" rows, the most confident errors first (the
  Confidence column, descending); choosing "Misclassified" in the filter box sorts the same way;
* :meth:`~ResultsNavigation.next_error` (F8; Shift+F8 goes back): selects the next misclassified row in the
  table's order and opens it in the explorer;
* double-click (or :meth:`~ResultsNavigation.open_row`): opens a row's review in the explorer;
* :meth:`~ResultsNavigation.set_word_filter` / :meth:`~ResultsNavigation.set_cell_filter`: the corpus dock's word
  and confusion-matrix filters, shown with a map selection as one button in the panel that removes them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from PySide6.QtCore import QItemSelectionModel, Qt

from desktop_app.panels.batch.table_model import CONFIDENCE, ROW_ROLE
from desktop_app.panels.batch.row_filter import MISCLASSIFIED, RowFilter


class ResultsNavigation:
    """Errors first, next error, opening rows and the corpus filters of the batch panel (module docstring); it
    connects the widgets it serves: a double-click in the table, the category box, Errors first, the corpus filters'
    button, and the proxy's ``filter_changed``.

    Args:
        ui: the panel's :class:`~desktop_app.panels.batch.ui.BatchWidgets` (the table, the category box, the search
            box, the corpus filters' button).
        proxy: the panel's :class:`~desktop_app.panels.batch.proxy.BatchFilterProxy` (the one owner of the filter).
        open_review: called with the :class:`model.batch.ResultRow` of a row opened (one with a text).
        message: the panel's message line, called as ``message(text, error=True)``.
    """

    def __init__(self, ui, proxy, open_review: Callable, message: Callable) -> None:
        self.ui = ui
        self.proxy = proxy
        self._open_review = open_review
        self._message = message
        self._errors_sorted = False  # "Misclassified" chose the confidence sort
        ui.view.doubleClicked.connect(self.open_index)
        ui.category_combo.currentTextChanged.connect(self.on_category)
        ui.errors_button.clicked.connect(self.show_errors_first)
        ui.corpus_filter_button.clicked.connect(self.clear_corpus_filters)
        proxy.filter_changed.connect(self.show_filter)

    def set_categories(self, names: tuple[str, ...]) -> None:
        """The filter box's categories (:func:`~desktop_app.panels.batch.row_filter.categories` of the model); the
        current one stays when the new model has it, else the box goes back to All."""
        combo = self.ui.category_combo
        current = combo.currentText()
        if tuple(combo.itemText(i) for i in range(combo.count())) == names:
            return
        combo.blockSignals(True)
        combo.clear()
        combo.addItems(names)
        combo.setCurrentText(current if current in names else names[0])
        combo.blockSignals(False)
        if current not in names:
            self.on_category(names[0])

    def show_errors_first(self) -> None:
        """Show the misclassified rows, the most confident errors first."""
        if self.ui.category_combo.currentText() != MISCLASSIFIED:
            self.ui.category_combo.setCurrentText(MISCLASSIFIED)  # on_category sorts
        else:
            self.ui.view.sortByColumn(CONFIDENCE, Qt.SortOrder.DescendingOrder)

    def on_category(self, category: str) -> None:
        """The category box chose ``category``: filter by it; "Misclassified" sorts by confidence, and leaving it
        restores arrival order.

        Leaving "Misclassified" also leaves the confidence sort it chose (a sort the user chose stays).
        """
        header = self.ui.view.horizontalHeader()
        if category != MISCLASSIFIED and self._errors_sorted:
            self._errors_sorted = False
            if header.sortIndicatorSection() == CONFIDENCE:
                header.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)  # arrival order
        self.proxy.set_category(category)
        if category == MISCLASSIFIED:
            self.ui.view.sortByColumn(CONFIDENCE, Qt.SortOrder.DescendingOrder)
            self._errors_sorted = True

    def next_error(self, step: int = 1) -> bool:
        """Select the next (``step`` 1) or previous (-1) misclassified row after the current one, in the table's
        order (wrapping around), and open it in the explorer.

        Returns:
            True when an error was found; False (with a message) when the table shows none.
        """
        proxy = self.proxy
        n = proxy.rowCount()
        current = self.ui.view.currentIndex()
        start = current.row() if current.isValid() else (-1 if step > 0 else n)
        step = 1 if step >= 0 else -1
        for k in range(1, n + 1):
            i = (start + step * k) % n
            row = proxy.data(proxy.index(i, 0), ROW_ROLE)
            if row is not None and row.correct is False:
                self.open_row(i)
                return True
        self._message("No misclassified rows among the rows shown (errors need gold labels).", error=True)
        return False

    def open_row(self, proxy_row: int) -> None:
        """Select row ``proxy_row`` of the table (in its current order), scroll to it and open its review."""
        index = self.proxy.index(proxy_row, 0)
        if not index.isValid():
            return
        view = self.ui.view
        view.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
        view.scrollTo(index)
        self.open_index(index)

    def open_index(self, index) -> None:
        """Open the review of the table's row at ``index`` (a double-click); a row without a text (a file that could
        not be read) says why instead."""
        row = self.proxy.data(index, ROW_ROLE)
        if row is None:
            return
        if row.text:
            self._open_review(row)
        else:
            self._message(f"{row.source}: {row.status}", error=True)

    # -- the corpus dock's filters -----------------------------------------------------------------------------
    def set_word_filter(self, word: str) -> None:
        """Show only the rows whose review contains ``word`` (a word or bigram, whole words); "" removes it."""
        self.proxy.set_word(word)

    def set_cell_filter(self, gold: str | None, predicted: str | None = None) -> None:
        """Show only the rows with gold label ``gold`` predicted ``predicted`` (a confusion-matrix cell); None
        removes it."""
        self.proxy.set_cell(None if gold is None or predicted is None else (gold, predicted))

    def clear_corpus_filters(self) -> None:
        """Remove the Corpus dock's filters: the word, the cell and the map selection (the category and the search
        stay)."""
        self.proxy.set_filter(replace(self.proxy.row_filter, word="", cell=None, points=None, points_name=""))

    def show_filter(self, f: RowFilter) -> None:
        """Show the filter ``f`` (the proxy's, the one owner): the Corpus dock's filters (word, cell, map selection)
        on their button, the category and the search in their boxes."""
        ui = self.ui
        corpus_only = RowFilter(word=f.word, cell=f.cell, points=f.points, points_name=f.points_name)
        active = corpus_only.is_filtering()
        ui.corpus_filter_button.setText(f"\u2715 {corpus_only.describe()}" if active else "")
        ui.corpus_filter_button.setVisible(active)
        if ui.category_combo.currentText() != f.category:
            ui.category_combo.setCurrentText(f.category)  # its slot sets the same filter again: nothing changes
        if ui.search_edit.text().strip().lower() != f.needle:
            ui.search_edit.setText(f.needle)
