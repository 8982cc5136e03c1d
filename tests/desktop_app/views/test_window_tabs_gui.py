"""The default window as a new user meets it (issue 33): every tab name readable, every view in the View menu,
layouts saved under the old tab names still restored."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from gui_helpers import loaded_window
from PySide6.QtWidgets import QStyle, QTabBar

from desktop_app.views.registry import DOCKED_VIEWS

pytestmark = [pytest.mark.gui, pytest.mark.timeout(120)]


def dock_tab_bars(win) -> list[QTabBar]:
    """The tab bars QMainWindow made for its tabbed docks (visible ones)."""
    return [b for b in win.findChildren(QTabBar) if b.isVisible() and b.count() > 1]


def cut_tabs(bar: QTabBar) -> list[str]:
    """The tab texts that do not fit their tab (Qt elides them with "…"), and those scrolled out of the bar."""
    margin = bar.style().pixelMetric(QStyle.PixelMetric.PM_TabBarTabHSpace, None, bar)
    fm = bar.fontMetrics()
    cut = []
    for i in range(bar.count()):
        rect, text = bar.tabRect(i), bar.tabText(i)
        if rect.width() < fm.horizontalAdvance(text) + margin or rect.right() > bar.width():
            cut.append(text)
    return cut


def test_every_tab_name_is_whole_in_the_default_window(qtbot, tiny_model_dir):
    win = loaded_window(qtbot, tiny_model_dir, size=(1400, 860), panels=True)
    qtbot.wait(50)
    bars = dock_tab_bars(win)
    assert bars, "the right-hand views are tabbed"
    right = max(bars, key=QTabBar.count)
    assert right.count() >= len(DOCKED_VIEWS) + 1  # the views and the Explanations panel
    for bar in bars:
        assert cut_tabs(bar) == [], [bar.tabText(i) for i in range(bar.count())]
    # the View menu still names every view in full
    names = {a.text() for a in win.view_menu_docks.actions()}
    assert {spec.title for spec in DOCKED_VIEWS} | {"Explanations", "Batch scoring", "Corpus"} <= names


def test_docks_keep_their_object_names_so_saved_layouts_restore(qtbot, tiny_model_dir, isolated_settings):
    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    assert win.dock("Attention heatmap").objectName() == "dock_attention_heatmap"
    assert win.dock("Positional encoding").objectName() == "dock_positional_encoding"
    win.raise_view("Neuron view")
    win.dock("Token links").setFloating(True)
    win.save_settings()
    win.close()
    again = loaded_window(qtbot, tiny_model_dir, panels=True)
    assert again.has_saved_layout
    assert again.dock("Token links").isFloating()
    assert not again.dock("Neuron view").isHidden()
