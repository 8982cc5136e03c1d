"""The Contribution graph view alone (desktop_app.views.inside.contribution_graph): a new graph opens at a readable
threshold until the user moves the slider, and the batched painting draws every edge the item holds."""

from __future__ import annotations

import numpy as np
import pytest
from gui_helpers import state_and_view

from desktop_app.views.inside import contribution_graph as cg
from model.records.graph import RESIDUAL

pytestmark = pytest.mark.gui
TEXT = "This movie was not good at all, the acting was wooden and the plot was dull."


def test_a_new_graph_opens_readable_until_the_user_chooses(qtbot, tiny_predictor, monkeypatch):
    monkeypatch.setattr(cg, "MAX_HEAD_EDGES", 3)
    state, view = state_and_view(qtbot, cg.ContributionGraphView)
    graph = tiny_predictor.contribution_graph(TEXT, cg.THRESHOLDS[0])
    state.inside.set("graph", graph)
    t = view.threshold
    assert t == cg.readable_threshold(graph) and t >= cg.AUTO_FLOOR and "(auto)" in view.slider_label.text()
    assert (view.graph.heads != RESIDUAL).sum() <= 3 or t == cg.THRESHOLDS[-1]
    below = [u for u in cg.THRESHOLDS if cg.AUTO_FLOOR <= u < t]  # the least such threshold
    assert all((graph.pruned(u).heads != RESIDUAL).sum() > 3 for u in below)
    view.plot.setXRange(2, 8, padding=0)  # the user zooms in: the slider keeps the zoom, a new graph shows whole
    view.set_threshold(0.3)
    assert view.plot.getViewBox().viewRange()[0] == pytest.approx([2, 8])
    view.set_threshold(0.01)  # the user's choice stays for the next graph
    state.inside.set("graph", tiny_predictor.contribution_graph("A wonderful film, loved it.", cg.THRESHOLDS[0]))
    assert view.threshold == 0.01 and view.slider_label.text() == "0.01"
    assert view.plot.getViewBox().viewRange()[0][1] > 8
    np.testing.assert_array_equal(np.sort(view.item.adjacency, 0), np.sort(view.graph.edges, 0))
    view.item.generatePicture()  # the batched picture of every edge, one run per pen
    assert view.item.picture is not None and view.item.picture.size() > 0
    state.inside.set("graph", None, "Computing\u2026")
    assert view.graph is None and view.note.text() == "Computing\u2026" and view.item.adjacency is None
