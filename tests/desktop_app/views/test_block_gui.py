"""The Block dock of the Learn workspace (issue 53, section 4), offscreen in the real window: the numbers it draws are
the trace's and the trace is ``Predictor.block_trace``'s; choosing a token or a layer recomputes; a hidden dock
computes nothing; the bundled model and a tiny Hugging Face model work; a refusal shows its reason; a click shows a
step's details."""

from __future__ import annotations

import numpy as np
import pytest
from gui_helpers import loaded_window
from PySide6.QtCore import Qt

from desktop_app.views.inside.block_layout import MIN_BAND, norm_text, short_name
from model.records.block import BlockNotSupported

pytestmark = [pytest.mark.gui, pytest.mark.timeout(300)]
TIMEOUT_MS = 120_000
TEXT = "A wonderful film, loved it, but the ending was not good."


def _learn(qtbot, model_dir, text=TEXT):
    win = loaded_window(qtbot, model_dir, panels=True)
    with qtbot.waitSignal(win.state.events.prediction, timeout=TIMEOUT_MS):
        win.open_review(text)
    return win


def _shown(qtbot, win, layer: int, position: int):
    """Switch to Learn, raise the Block dock and wait for the trace of ``layer`` (0-based) and ``position``."""
    win.workspaces.switch("learn")
    win.docks.raise_view("Block")
    qtbot.waitUntil(lambda: (t := win.state.inside.block_trace) is not None and t.layer == layer
                    and t.position == position, timeout=TIMEOUT_MS)
    return win.state.inside.block_trace


def _check_drawn(win, trace) -> None:
    """What the diagram draws is the record's: one box per step, heights proportional to the norms (one scale per
    row), the norm printed under each box, the read-out's numbers."""
    panel = win.inside_panels["block_trace"]
    diagram = panel.view.diagram
    diagram.resize(900, 600)
    diagram.relayout()
    nodes = diagram.geometry.nodes
    assert [n.key for n in nodes] == [s.key for s in trace.all_steps]
    for n, s in zip(nodes, trace.all_steps):
        np.testing.assert_array_equal(n.step.output, s.output)
        if s.norm * n.scale > MIN_BAND:
            assert n.rect.height() == pytest.approx(s.norm * n.scale, rel=1e-6)
        assert n.rect.bottom() <= n.label_y  # no box runs into the strip and the names under its lane
    layer_scales = {n.scale for n in nodes if n.step.branch != "readout"}
    assert len(layer_scales) == 1
    assert max(n.rect.height() for n in nodes if n.step.branch != "readout") == pytest.approx(40.0)
    assert norm_text(trace.step("w1").norm) == f"{trace.step('w1').norm:.3g}"
    assert short_name(trace.step("add1")) == "\u2295"


def test_block_dock_draws_the_trace_of_the_selected_token_and_layer(qtbot, tiny_model_dir, tiny_predictor):
    win = _learn(qtbot, tiny_model_dir)
    panel = win.inside_panels["block_trace"]
    L = win.state.n_layers
    assert panel.layer.value() == L and panel.layer.maximum() == L
    trace = _shown(qtbot, win, L - 1, 0)  # default: the last layer, the first token ([CLS])
    ref = tiny_predictor.block_trace(TEXT, L - 1, 0)
    assert trace.tokens == tuple(win.state.prediction.tokens)
    for ours, theirs in zip(trace.all_steps, ref.all_steps, strict=True):
        assert ours.key == theirs.key
        np.testing.assert_allclose(ours.output, theirs.output, atol=1e-6)
    np.testing.assert_allclose(trace.readout[-1].output, win.state.prediction.probabilities, atol=1e-5)
    _check_drawn(win, trace)
    assert "'[CLS]'" in panel.caption.text() and f"layer {L} of {L}" in panel.caption.text()

    win.state.select_token(3)  # the token clicked in the text
    trace = _shown(qtbot, win, L - 1, 3)
    np.testing.assert_allclose(trace.step("output").output, tiny_predictor.block_trace(TEXT, L - 1, 3)
                               .step("output").output, atol=1e-6)
    panel.layer.setValue(1)  # the first layer: no read-out
    trace = _shown(qtbot, win, 0, 3)
    assert trace.readout == () and not [n for n in panel.view.diagram.geometry.nodes if n.step.branch == "readout"]

    diagram = panel.view.diagram
    node = diagram.geometry.node("ln1")
    qtbot.mouseClick(diagram, Qt.LeftButton, pos=node.rect.center().toPoint())
    assert diagram.selected == "ln1"
    details = panel.view.details.text()
    ln = trace.step("ln1").layer_norm
    assert "LayerNorm 1" in details and f"{ln.mean:.4g}" in details and f"{ln.variance:.4g}" in details

    assert panel.settings() == {"layer": 1}
    panel.apply_settings({"layer": 2, "unknown": 0})
    assert panel.layer.value() == 2
    with pytest.raises(ValueError, match="'layer'"):
        panel.apply_settings({"layer": 9})


def test_hidden_block_dock_computes_nothing(qtbot, tiny_model_dir):
    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    calls = []
    real = win.predictor.block_trace
    win.predictor.block_trace = lambda *a, **k: calls.append(a) or real(*a, **k)
    win.workspaces.switch("read")  # the Block dock is not in Read
    with qtbot.waitSignal(win.state.events.prediction, timeout=TIMEOUT_MS):
        win.open_review(TEXT)
    win.state.select_token(2)
    qtbot.wait(200)
    assert not win.inside_panels["block_trace"].dock.isVisible() and calls == [] and win.state.inside.block_trace is None
    win.workspaces.switch("learn")  # its tab behind Steps: still nothing
    win.docks.raise_view("Attention steps")
    win.state.select_token(4)  # another token, while the Block tab is behind
    qtbot.wait(200)
    assert calls == [] and win.state.inside.block_trace is None
    assert not win.inside_panels["block_trace"].shown()
    _shown(qtbot, win, win.state.n_layers - 1, 4)  # shown: computed once
    assert len(calls) == 1


def test_tiny_hf_model_and_a_refusal(qtbot, tmp_path, monkeypatch):
    pytest.importorskip("transformers")
    from tests.fixtures.tiny_hf import make_tiny_hf_dir

    win = _learn(qtbot, make_tiny_hf_dir(tmp_path / "bert", "bert", init_std=0.3))
    trace = _shown(qtbot, win, 1, 0)
    assert trace.family == "BERT" and trace.post_ln and [s.key for s in trace.readout] == [
        "pool", "linear1", "act1", "linear2", "probabilities"]
    np.testing.assert_allclose(trace.logits, win.state.prediction.logits, atol=1e-5)
    _check_drawn(win, trace)

    def refuse(*_a, **_k):
        raise BlockNotSupported("this model's layer does not fit the Block view's steps: step 'w1' differs")

    monkeypatch.setattr(win.predictor, "block_trace", refuse)
    win.inside_panels["block_trace"].layer.setValue(1)
    qtbot.waitUntil(lambda: "does not fit" in win.state.inside.note("block_trace"), timeout=TIMEOUT_MS)
    assert win.state.inside.block_trace is None and win.inside_panels["block_trace"].view.diagram.trace is None
    assert "does not fit" in win.inside_panels["block_trace"].view.diagram.note and win.errors == []


def test_bundled_model(qtbot, bundled_predictor):
    from model.core.paths import default_model_dir

    win = _learn(qtbot, default_model_dir())
    win.state.select_token(5)
    trace = _shown(qtbot, win, 1, 5)
    ref = bundled_predictor.block_trace(TEXT, 1, 5)
    for ours, theirs in zip(trace.all_steps, ref.all_steps, strict=True):
        np.testing.assert_allclose(ours.output, theirs.output, atol=1e-5)
    np.testing.assert_allclose(trace.readout[-1].output, win.state.prediction.probabilities, atol=1e-5)
    assert trace.pooling == "mean" and trace.readout[0].title == "Mean pooling"
    _check_drawn(win, trace)
