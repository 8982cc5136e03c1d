"""The prediction by layer in the prediction panel (issue 25, part 4)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gui_helpers import loaded_window

from desktop_app.records import LayerProbabilities

ROOT = Path(__file__).resolve().parents[3]
BUNDLED = ROOT / "resources" / "model" / "model.safetensors"
TIMEOUT_MS = 60_000
TEXT = "The acting was not good."


def record(probs, reference=None, labels=("negative", "positive")):
    probs = np.asarray(probs, np.float32)
    ref = None if reference is None else np.asarray(reference, np.float32)
    return LayerProbabilities(probs, ref, tuple(labels))


def test_plot_draws_the_followed_class_and_clears(qtbot):
    from desktop_app.views.layer_plot import PLOT_HEIGHT, LayerPlot

    plot = LayerPlot()
    qtbot.addWidget(plot)
    probs = [[0.6, 0.4], [0.3, 0.7], [0.1, 0.9]]
    plot.set_layer_probabilities(record(probs))
    np.testing.assert_allclose(plot.curve_data(), [0.4, 0.7, 0.9], atol=1e-6)  # P(positive)
    assert plot.reference_data().size == 0
    assert plot.axis.tickStrings([0.0, 1.0, 2.0], 1.0, 1.0) == ["emb", "1", "2"]
    assert "positive" in plot.getPlotItem().titleLabel.text
    plot.set_layer_probabilities(record(probs, reference=[[0.5, 0.5], [0.2, 0.8], [0.05, 0.95]]))
    np.testing.assert_allclose(plot.reference_data(), [0.5, 0.8, 0.95], atol=1e-6)
    assert "all heads" in plot.getPlotItem().titleLabel.text
    # no "positive" class: the predicted class (the last row's argmax) is followed
    plot.set_layer_probabilities(record([[0.2, 0.5, 0.3], [0.1, 0.2, 0.7]], labels=("a", "b", "c")))
    np.testing.assert_allclose(plot.curve_data(), [0.3, 0.7], atol=1e-6)
    plot.set_layer_probabilities(None)
    assert plot.curve_data().size == 0 and plot.reference_data().size == 0
    assert plot.height() <= PLOT_HEIGHT


@pytest.mark.skipif(not BUNDLED.is_file(), reason="needs the trained model resources/model")
def test_panel_plot_follows_the_prediction_by_layer(qtbot):
    win = loaded_window(qtbot, None)
    plot = win.prediction_panel.layer_plot
    predictor = win.predictor
    with qtbot.waitSignal(win.state.events.layer_probabilities, timeout=TIMEOUT_MS,
                          check_params_cb=lambda r, *_: r is not None):
        win.analyze_text(TEXT)
    pos = list(predictor.labels).index("positive")
    expected = predictor.layer_predictions(TEXT)
    assert plot.curve_data().shape == (expected.shape[0],)
    np.testing.assert_allclose(plot.curve_data(), expected[:, pos], atol=1e-6)
    assert plot.curve_data()[-1] == pytest.approx(float(win.state.prediction.probabilities[pos]), abs=1e-6)
    assert plot.reference_data().size == 0
    assert 0 < plot.height() <= 130

    mask = np.ones((win.state.n_layers, win.state.n_heads), np.float32)
    mask[0, :] = 0.0
    with qtbot.waitSignal(win.state.events.layer_probabilities, timeout=TIMEOUT_MS,
                          check_params_cb=lambda r, *_: r is not None and r.reference is not None):
        win.state.set_head_mask(mask)
    np.testing.assert_allclose(plot.curve_data(), predictor.layer_predictions(TEXT, head_mask=mask)[:, pos],
                               atol=1e-6)
    np.testing.assert_allclose(plot.reference_data(), expected[:, pos], atol=1e-6)
    assert not np.allclose(plot.curve_data(), plot.reference_data())  # the heads off change the curve
    assert plot.curve_data()[-1] == pytest.approx(
        float(predictor.predict(TEXT, head_mask=mask).probabilities[pos]), abs=1e-6)

    with qtbot.waitSignal(win.state.events.layer_probabilities, timeout=TIMEOUT_MS):
        win.analyze_text("")  # nothing is current: the plot is cleared
    assert plot.curve_data().size == 0 and plot.reference_data().size == 0
