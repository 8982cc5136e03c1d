"""The results docks in the real window (issue 56), offscreen at the default 1400 x 860: clicking a confusion-matrix
cell shows its filter in the Batch dock without moving the layout (the docks keep their widths, the matrix stays under
the pointer, the search box keeps its room, the Corpus tabs do not scroll sideways)."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from gui_helpers import loaded_window
from PySide6.QtCore import QPoint

pytestmark = [pytest.mark.gui, pytest.mark.timeout(240)]
WAIT_MS = 60_000


def test_a_confusion_cell_filter_leaves_the_layout_where_it_was(qtbot, tiny_model_dir, reviews):
    """The "× gold negative → predicted positive" button widened the Batch dock by ~60 px for good: the matrix moved
    under the pointer (a second click hit the next cell), the search box shrank to "Fi…", and the Corpus dock's What
    if tab, now narrower than its content, scrolled sideways ("6 edits" for 66)."""
    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    batch, corpus = win.panels["batch"], win.panels["corpus"]
    batch.ui.label_column_edit.setText("label")
    with qtbot.waitSignal(batch.scoring_finished, timeout=WAIT_MS):
        batch.add_paths([str(reviews)])
    qtbot.waitUntil(lambda: corpus.metrics is not None and corpus.metrics.n_rows == 31, timeout=WAIT_MS)
    qtbot.wait(100)
    docks = (win.docks.get("Batch scoring"), win.docks.get("Corpus"))
    widths = [d.width() for d in docks]
    matrix_at = corpus.confusion.mapTo(win, QPoint(0, 0))
    labels = corpus.metrics.labels
    for _ in range(2):  # the cell, then the same cell again (all rows)
        corpus.confusion.cell_clicked.emit(labels.index("negative"), labels.index("positive"))
        qtbot.wait(100)
        button = batch.ui.corpus_filter_button
        if batch.proxy.row_filter.cell is not None:
            assert button.isVisible() and button.text() == "\u2715 gold negative \u2192 predicted positive"
        assert [d.width() for d in docks] == widths
        assert corpus.confusion.mapTo(win, QPoint(0, 0)) == matrix_at
        search = batch.ui.search_edit
        assert search.width() >= search.fontMetrics().horizontalAdvance("Filter by file")  # not "Fi…"
    assert batch.proxy.row_filter.cell is None and not batch.ui.corpus_filter_button.isVisible()
    corpus.tabs.setCurrentIndex(corpus.tabs.indexOf(corpus.whatif.parentWidget().parentWidget()))
    qtbot.wait(50)
    scroll = corpus.tabs.currentWidget()
    assert not scroll.horizontalScrollBar().isVisible()  # the What if tab is whole: "66 edits", not "6 edits"
    win.shutdown_workers()
