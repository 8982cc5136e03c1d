"""The attention heatmap (desktop_app.views.heatmap) before any text: no SI-prefixed axes, a unit colour bar (a bug
a user reported, issue 11, item 7)."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

pytestmark = pytest.mark.gui


# -- the empty heatmap has no SI-prefixed axes and a sensible colour bar ---------------------------------------
def test_empty_heatmap_has_no_unit_prefix_and_a_unit_colour_bar(qtbot):
    from desktop_app.state import ExplorerState
    from desktop_app.views.heatmap import AttentionHeatmap

    state = ExplorerState()
    heat = AttentionHeatmap(state)
    qtbot.addWidget(heat)
    heat.resize(500, 400)
    heat.show()
    heat.request_render()
    heat.flush()
    qtbot.wait(50)
    for name in ("left", "bottom"):
        ax = heat.plot.getAxis(name)
        assert "x0.001" not in ax.labelString() and ax.autoSIPrefixScale == 1.0, ax.labelString()
    lo, hi = heat.colorbar.levels()
    assert (lo, hi) == (0.0, 1.0)
    cb_axis = heat.colorbar.axis
    assert cb_axis.autoSIPrefixScale == 1.0
