"""Panels the user asks for come to the front (issue 56), in the real window offscreen at 1400 x 860: View > Panels >
What if raises its tab, and model B's verdict shows under model A's, inside the Prediction dock's visible part, once
Model > Compare with a second model... has loaded it."""

from __future__ import annotations

from pathlib import Path

import pytest
from gui_helpers import loaded_window
from PySide6.QtCore import QPoint, QRect

pytestmark = [pytest.mark.gui, pytest.mark.timeout(240)]
TIMEOUT_MS = 120_000


def _within(outer, widget) -> bool:
    """Whether ``widget``'s whole rectangle lies inside ``outer`` (a widget that holds it)."""
    return outer.rect().contains(QRect(widget.mapTo(outer, QPoint(0, 0)), widget.size()))


def test_view_panels_raises_the_panel_it_shows(qtbot, tiny_model_dir):
    """View > Panels > What if added the tab behind the Heatmap's: nothing the user looked at changed. With workspaces
    (issue 54) it also left Read holding What if on a tab of its own, in no workspace's arrangement: the menu opens
    the panel where a raised view opens (``raise_view``), its workspace (Compare), and Read stays as it was."""
    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    dock = win.docks.get("What if")
    assert win.workspaces.current.key == "read" and dock.isHidden()  # at first
    action = next(a for a in win.docks.panels_menu.actions() if a.text() == "What if")
    action.trigger()
    qtbot.waitUntil(lambda: dock.isVisible() and not dock.visibleRegion().isEmpty(), timeout=5_000)
    assert win.workspaces.current.key == "compare" and action.isChecked()
    mates = win.tabifiedDockWidgets(dock)
    assert win.docks.get("Compare") in mates and all(d.visibleRegion().isEmpty() for d in mates)  # the tab in front
    action.trigger()  # and hides it again
    qtbot.waitUntil(dock.isHidden, timeout=5_000)
    win.workspaces.switch("read")  # Read was kept without it
    qtbot.wait(20)
    assert dock.isHidden() and win.heatmap_dock.isVisible()
    win.shutdown_workers()


def test_model_b_verdict_shows_where_the_user_looks(qtbot, tiny_model_dir, model_b, tmp_path):
    """After a folder was scored (the results take the bottom half) the Prediction dock is ~270 px tall: B's section,
    under A's details, was below its fold, and loading B changed nothing visible but an 8-second status message."""
    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    batch = win.panels["batch"]
    folder = Path(tmp_path / "reviews")
    folder.mkdir()
    for i in range(6):
        (folder / f"{i}.txt").write_text(f"Review {i}: a long, slow and rather dull film " * (1 + i), encoding="utf-8")
    with qtbot.waitSignal(batch.scoring_finished, timeout=TIMEOUT_MS):
        batch.add_paths([str(folder)])
    with qtbot.waitSignal(win.state.events.prediction, timeout=TIMEOUT_MS):
        win.open_review("A wonderful film, loved it.")
    second = win.model_menu.second
    with qtbot.waitSignal(second.changed, timeout=TIMEOUT_MS):
        second.load(model_b)
    box = second.box
    qtbot.waitUntil(lambda: box.verdict.text() != "", timeout=TIMEOUT_MS)
    qtbot.wait(50)
    viewport = win.prediction_dock.widget().viewport()
    assert win.prediction_dock.height() < 300  # the results took their room: the case the issue met
    for widget in (box.title, box.verdict, box.agreement, win.prediction_panel.label):
        assert _within(viewport, widget), widget
    assert win.height() == 860
    win.shutdown_workers()
