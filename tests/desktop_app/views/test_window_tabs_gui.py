"""The default window as a new user meets it (issue 33): every tab name readable, every view in the View menu,
layouts saved under the old tab names still restored."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from gui_helpers import cut_tabs, dock_tab_bars, loaded_window

from desktop_app.views.registry import DOCKED_VIEWS

pytestmark = [pytest.mark.gui, pytest.mark.timeout(120)]


def test_every_tab_name_is_whole_in_the_default_window(qtbot, tiny_model_dir):
    win = loaded_window(qtbot, tiny_model_dir, size=(1400, 860), panels=True)
    seen = set()
    for key in win.workspaces.actions:  # issue 54: the views are spread over the workspaces
        win.workspaces.switch(key)
        qtbot.wait(50)
        bars = dock_tab_bars(win)
        assert bars, "the right-hand views are tabbed"
        for bar in bars:
            assert cut_tabs(bar) == [], (key, [bar.tabText(i) for i in range(bar.count())])
            seen |= {bar.tabText(i) for i in range(bar.count())}
    assert {spec.tab for spec in DOCKED_VIEWS} | {"Explanations"} <= seen  # every view is tabbed in some workspace
    # the View menu still names every view in full
    names = {a.text() for a in win.docks.panels_menu.actions()}
    assert {spec.title for spec in DOCKED_VIEWS} | {"Explanations", "Batch scoring", "Corpus"} <= names


def test_docks_keep_their_object_names_so_saved_layouts_restore(qtbot, tiny_model_dir, isolated_settings):
    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    assert win.docks.get("Attention heatmap").objectName() == "dock_attention_heatmap"
    assert win.docks.get("Positional encoding").objectName() == "dock_positional_encoding"
    win.docks.raise_view("Neuron view")
    win.docks.get("Token links").setFloating(True)
    win.window_layout.save()
    win.close()
    again = loaded_window(qtbot, tiny_model_dir, panels=True)
    assert again.has_saved_layout
    assert again.docks.get("Token links").isFloating()
    assert not again.docks.get("Neuron view").isHidden()
