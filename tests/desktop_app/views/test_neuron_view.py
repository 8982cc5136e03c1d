"""The neuron view (issue 11, item 2): q_i, k_j, q_i * k_j, scaled dot products and softmax, from the worker."""

from __future__ import annotations

import numpy as np
import pytest
from gui_helpers import loaded_window
from PySide6.QtCore import Qt

pytestmark = pytest.mark.gui

LOAD_TIMEOUT_MS = 60_000



def test_neuron_view_from_synthetic_internals(qtbot):
    from desktop_app.state import ExplorerState
    from desktop_app.views.neuron_view import NeuronView
    from model.records.internals import AttentionInternals

    state = ExplorerState()
    view = NeuronView(state)
    qtbot.addWidget(view)
    view.resize(800, 600)
    view.show()
    x = AttentionInternals.synthetic(n_heads=2, num_tokens=12, d_head=8)
    view.set_data(x, 1, 3)
    np.testing.assert_allclose(view.product_image.image, x.keys[1] * x.queries[1, 3])
    np.testing.assert_allclose(view.key_image.image, x.keys[1])
    np.testing.assert_allclose(view.weight_bars.opts["width"], x.weights(1, 3), atol=1e-6)
    np.testing.assert_allclose(view.score_bars.opts["width"], np.abs(x.scores[1, 3]), atol=1e-6)
    # the dot product is the row sum of the elementwise product, scaled
    np.testing.assert_allclose(view.product_image.image.sum(1) / np.sqrt(8), x.scores[1, 3], atol=1e-4)
    text = view.describe(5, 2)
    assert "key 5" in text and "component 2" in text
    with pytest.raises(IndexError):
        view.set_data(x, 2, 0)


def test_neuron_view_in_the_window_follows_selection_and_click_selects(qtbot, tiny_model_dir):
    win = loaded_window(qtbot, tiny_model_dir)
    with qtbot.waitSignal(win.state.events.internals, timeout=LOAD_TIMEOUT_MS):
        win.open_review("a wonderful film with a great cast")
    pred = win.state.prediction
    win.neuron_dock.show()
    win.neuron_dock.raise_()
    view = win.neuron_view
    view.flush()
    x, head, query = view.shown
    assert (head, query) == (0, 0) and x.tokens == tuple(pred.tokens)
    np.testing.assert_allclose(view.weight_bars.opts["width"], pred.attention[0, 0, 0], atol=1e-5)
    # another layer: new internals from the worker
    with qtbot.waitSignal(win.state.events.internals, timeout=LOAD_TIMEOUT_MS):
        win.set_layer_head(1, 1)
    view.flush()
    x, head, query = view.shown
    assert x.layer == 1 and head == 1
    np.testing.assert_allclose(view.weight_bars.opts["width"], pred.attention[1, 1, 0], atol=1e-5)
    # clicking a key row selects that token everywhere; the view then shows it as the query
    qtbot.wait(50)
    pos = view.glw.mapFromScene(view.key_scene_pos(2))
    qtbot.mouseClick(view.glw.viewport(), Qt.LeftButton, pos=pos)
    assert win.state.selection == (2,)
    view.flush()
    assert view.shown[2] == 2
    np.testing.assert_allclose(view.weight_bars.opts["width"], pred.attention[1, 1, 2], atol=1e-5)
    win.close()


def test_stale_internals_are_dropped(qtbot, tiny_predictor):
    from desktop_app.state import ExplorerState
    from desktop_app.workers.internals import InternalsController

    state = ExplorerState()
    ctl = InternalsController(state)
    ctl.set_predictor(tiny_predictor)
    got = []
    state.events.internals.connect(got.append)
    state.set_prediction(tiny_predictor.predict("first text"))
    state.set_prediction(tiny_predictor.predict("second text, longer"))
    qtbot.waitUntil(lambda: len(got) >= 1, timeout=LOAD_TIMEOUT_MS)
    qtbot.wait(200)
    assert got[-1].tokens == tuple(state.prediction.tokens)
    assert all(g.tokens == got[-1].tokens for g in got)  # the first request's result never arrived
    ctl.shutdown()


def test_steps_view_shows_the_six_steps(qtbot):
    from desktop_app.state import ExplorerState
    from desktop_app.views.steps_view import TOP_K, AttentionStepsView
    from model.records.internals import AttentionInternals

    state = ExplorerState()
    view = AttentionStepsView(state)
    qtbot.addWidget(view)
    view.resize(700, 700)
    view.show()
    x = AttentionInternals.synthetic(n_heads=2, num_tokens=40, d_head=8, seed=1)
    view.set_data(x, 1, 7)
    st = view.steps
    assert view.table.rowCount() == TOP_K + 1  # the top keys and one row for the rest
    j = int(st.keys[0])
    assert view.table.item(0, 0).text() == str(j)
    assert float(view.table.item(0, 2).text()) == pytest.approx(float(x.raw_scores(1, 7)[j]), abs=1e-3)
    assert float(view.table.item(0, 3).text()) == pytest.approx(float(x.scores[1, 7, j]), abs=1e-3)
    assert float(view.table.item(0, 5).text()) == pytest.approx(float(x.weights(1, 7)[j]), abs=1e-3)
    np.testing.assert_allclose(view.output_image.image[0], x.head_outputs[1, 7], atol=1e-6)
    small = AttentionInternals.synthetic(n_heads=1, num_tokens=5, d_head=4)
    view.set_data(small, 0, 0)
    assert view.table.rowCount() == 5
    np.testing.assert_allclose(view.weighted_image.image.sum(0), small.head_outputs[0, 0], atol=1e-5)
