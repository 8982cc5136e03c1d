"""Going through batch results: errors first, the next error, opening a row, the corpus dock's filters.

:class:`ResultsNavigation` is mixed into :class:`desktop_app.panels.batch.panel.BatchPanel` (it uses the panel's
``view``, ``proxy``, ``category_combo``, ``corpus_filter_button``, ``review_activated``, ``row_opened``,
``_set_message`` and ``_update_summary``):

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

from PySide6.QtCore import QItemSelectionModel, Qt

from desktop_app.panels.batch.table_model import CONFIDENCE, ROW_ROLE
from desktop_app.panels.batch.row_filter import MISCLASSIFIED, RowFilter


class ResultsNavigation:
    """Errors first, next error, opening rows and the corpus filters of the batch panel (module docstring)."""

    def show_errors_first(self) -> None:
        """Show the misclassified rows, the most confident errors first."""
        if self.category_combo.currentText() != MISCLASSIFIED:
            self.category_combo.setCurrentText(MISCLASSIFIED)  # _on_category sorts
        else:
            self.view.sortByColumn(CONFIDENCE, Qt.SortOrder.DescendingOrder)

    def _on_category(self, category: str) -> None:
        """Filter by ``category``; "Misclassified" sorts by confidence, and leaving it restores arrival order.

        Leaving "Misclassified" also leaves the confidence sort it chose (a sort the user chose stays).
        """
        header = self.view.horizontalHeader()
        if category != MISCLASSIFIED and getattr(self, "_errors_sorted", False):
            self._errors_sorted = False
            if header.sortIndicatorSection() == CONFIDENCE:
                header.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)  # arrival order
        self.proxy.set_category(category)
        if category == MISCLASSIFIED:
            self.view.sortByColumn(CONFIDENCE, Qt.SortOrder.DescendingOrder)
            self._errors_sorted = True

    def next_error(self, step: int = 1) -> bool:
        """Select the next (``step`` 1) or previous (-1) misclassified row after the current one, in the table's
        order (wrapping around), and open it in the explorer.

        Returns:
            True when an error was found; False (with a message) when the table shows none.
        """
        proxy = self.proxy
        n = proxy.rowCount()
        current = self.view.currentIndex()
        start = current.row() if current.isValid() else (-1 if step > 0 else n)
        step = 1 if step >= 0 else -1
        for k in range(1, n + 1):
            i = (start + step * k) % n
            row = proxy.data(proxy.index(i, 0), ROW_ROLE)
            if row is not None and row.correct is False:
                self.open_row(i)
                return True
        self._set_message("No misclassified rows among the rows shown (errors need gold labels).", error=True)
        return False

    def open_row(self, proxy_row: int) -> None:
        """Select row ``proxy_row`` of the table (in its current order), scroll to it and open its review."""
        index = self.proxy.index(proxy_row, 0)
        if not index.isValid():
            return
        self.view.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
        self.view.scrollTo(index)
        self._on_double_clicked(index)

    def _on_double_clicked(self, index) -> None:
        row = self.proxy.data(index, ROW_ROLE)
        if row is None:
            return
        if row.text:
            self.review_activated.emit(row.text)
            self.row_opened.emit(row)
        else:
            self._set_message(f"{row.source}: {row.status}", error=True)

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

    def _on_filter_changed(self, f: RowFilter) -> None:
        """Show the filter ``f`` (the proxy's, the one owner): the Corpus dock's filters (word, cell, map selection)
        on their button, the category and the search in their boxes, and the summary of the rows now shown."""
        corpus_only = RowFilter(word=f.word, cell=f.cell, points=f.points, points_name=f.points_name)
        active = corpus_only.is_filtering()
        self.corpus_filter_button.setText(f"\u2715 {corpus_only.describe()}" if active else "")
        self.corpus_filter_button.setVisible(active)
        if self.category_combo.currentText() != f.category:
            self.category_combo.setCurrentText(f.category)  # its slot sets the same filter again: nothing changes
        if self.search_edit.text().strip().lower() != f.needle:
            self.search_edit.setText(f.needle)
        self._update_summary()
