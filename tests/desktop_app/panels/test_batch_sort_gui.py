"""Sorting the batch results table (issue 33, item 7): one NumPy argsort of precomputed keys, not a Python call per
comparison; rows arriving while sorted are merged into place; the selection follows its rows."""

from __future__ import annotations

import math
import sys

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt

from desktop_app.panels.batch.table_model import CONFIDENCE, ROW_ROLE, SOURCE
from desktop_app.panels.batch.panel import BatchPanel
from model.batch import ResultRow
from model.batch.rows import binary_row

pytestmark = [pytest.mark.gui, pytest.mark.timeout(120)]


def rows(n: int, start: int = 0) -> list[ResultRow]:
    """``n`` scored rows with scrambled probabilities (deterministic)."""
    out = []
    for i in range(start, start + n):
        p = ((i * 7919) % 1000) / 1000
        out.append(binary_row(f"r{i:05d}.txt", f"review {i}", "positive" if p >= 0.5 else "negative", p, 10, False,
                             "positive", p >= 0.5, "ok"))
    return out


@pytest.fixture
def panel(qtbot):
    p = BatchPanel()
    qtbot.addWidget(p)
    yield p
    p.shutdown()


def shown_p(panel) -> list[float]:
    proxy = panel.proxy
    return [proxy.data(proxy.index(i, 0), ROW_ROLE).probability("positive") for i in range(proxy.rowCount())]


def python_calls(fn) -> int:
    """The number of Python function calls made while ``fn()`` runs (sys.setprofile 'call' events)."""
    count = [0]

    def prof(_frame, event, _arg):
        if event == "call":
            count[0] += 1

    sys.setprofile(prof)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return count[0]


def test_sorting_makes_no_python_call_per_comparison(qtbot, panel):
    """A sort of n rows whose keys are known runs in NumPy: far fewer Python calls than n log2 n comparisons (Qt's
    proxy sort called ``lessThan`` once per comparison, ~2 s for 25,000 rows)."""
    n = 4000
    panel.table_model.append_rows(rows(n))
    p_positive = panel.table_model.column_of("positive")
    panel.ui.view.sortByColumn(p_positive, Qt.SortOrder.AscendingOrder)  # the column's keys are read once here
    calls = python_calls(lambda: panel.ui.view.sortByColumn(p_positive, Qt.SortOrder.DescendingOrder))
    assert calls < n / 4 < n * math.log2(n)
    values = shown_p(panel)
    assert values == sorted(values, reverse=True) and len(values) == n


def test_rows_arriving_while_sorted_are_merged_and_selection_follows(qtbot, panel):
    panel.table_model.append_rows(rows(50))
    panel.ui.view.sortByColumn(CONFIDENCE, Qt.SortOrder.DescendingOrder)
    panel.ui.view.selectRow(3)
    chosen = panel.proxy.data(panel.ui.view.currentIndex(), ROW_ROLE)
    panel.table_model.append_rows(rows(30, 50))
    conf = [max(p, 1 - p) for p in shown_p(panel)]
    assert len(conf) == 80 and conf == sorted(conf, reverse=True)
    assert panel.proxy.data(panel.ui.view.currentIndex(), ROW_ROLE) is chosen
    panel.ui.view.sortByColumn(SOURCE, Qt.SortOrder.AscendingOrder)
    assert panel.proxy.data(panel.ui.view.currentIndex(), ROW_ROLE) is chosen
    panel.ui.category_combo.setCurrentText("Predicted positive")  # filtered and sorted together
    assert all(p >= 0.5 for p in shown_p(panel))
    panel.ui.view.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)  # back to arrival order
    panel.ui.category_combo.setCurrentText("All")
    assert [r.source for r in panel.proxy.visible_rows()] == [r.source for r in panel.rows()]
    assert panel.proxy.headerData(0, Qt.Orientation.Vertical) == "1"
