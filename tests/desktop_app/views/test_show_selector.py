"""The "Show" selector of the attention views (issue 25, part 2): attention weights, value-weighted norms
||alpha f(x)|| (Kobayashi et al. 2020) or ALTI contributions (Ferrando et al. 2022), in the heatmap, the token links
and the token view; ||f(x_j)|| beside alpha_ij in the neuron view and the attention steps.

The window loads the bundled model and analyses a real IMDB review; what the views draw is compared with the flow
computed independently by ``window.predictor.attention_flow(text, method)``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gui_helpers import loaded_window

pytestmark = pytest.mark.gui

ROOT = Path(__file__).resolve().parents[3]
BUNDLED = ROOT / "resources" / "model" / "model.safetensors"
REVIEW = ROOT / "resources" / "samples" / "pos_4_10.txt"
TIMEOUT_MS = 60_000

needs_model = pytest.mark.skipif(not BUNDLED.is_file() or not REVIEW.is_file(),
                                 reason="needs the bundled model and sample reviews in resources/")


def analysed(qtbot):
    """The window over the bundled model with a real review analysed; the links, neuron and steps docks shown."""
    win = loaded_window(qtbot, None)
    text = REVIEW.read_text(encoding="utf-8")
    with qtbot.waitSignal(win.state.events.prediction, timeout=TIMEOUT_MS):
        win.open_review(text)
    for dock in (win.links_dock, win.neuron_dock, win.steps_dock):
        dock.show()
    return win, win.state.prediction


def choose(combo, data) -> None:
    """Pick the entry of ``combo`` whose data is ``data``, as a user does."""
    i = combo.findData(data)
    assert i >= 0, data
    combo.setCurrentIndex(i)
    combo.activated.emit(i)


def show(qtbot, win, what: str, combo=None):
    """Switch the toolbar's (or ``combo``'s) Show selector to ``what``, wait for the flow, render the views."""
    choose(combo if combo is not None else win.menus.show_combo, what)
    assert win.state.show == what
    if what != "attention":
        qtbot.waitUntil(lambda: win.state.flow is not None and win.state.flow.method == what, timeout=TIMEOUT_MS)
    render(win)
    return win.state.flow


def render(win) -> None:
    for view in (win.heatmap, win.links_view, win.token_view, win.neuron_view, win.steps_view):
        view.flush()


def read_out(matrix: np.ndarray, pooling: str) -> np.ndarray:
    """The classification read-out row of a (T, T) matrix: row 0 ([CLS]) or the mean of the rows."""
    return matrix[0] if pooling == "cls" else matrix.mean(axis=0)


def test_selector_choices_sync_and_alti_disables_the_head_combo(qtbot):
    from desktop_app.state import SHOW_CHOICES, ExplorerState
    from desktop_app.views.selectors import ALTI_HEAD_TIP, LayerHeadSelector

    state = ExplorerState()
    a, b = LayerHeadSelector(state), LayerHeadSelector(state)
    assert [a.show_combo.itemData(i) for i in range(a.show_combo.count())] == list(SHOW_CHOICES)
    assert [a.show_combo.itemText(i) for i in range(3)] == [
        "attention weights", "value-weighted (\u2016\u03b1f(x)\u2016)", "ALTI contributions"]
    choose(a.show_combo, "alti")
    assert state.show == "alti" and b.show_combo.currentData() == "alti"
    for sel in (a, b):
        assert not sel.head_combo.isEnabled() and sel.head_combo.toolTip() == ALTI_HEAD_TIP
        assert "whole layer" in sel.head_combo.toolTip() and "residual" in sel.head_combo.toolTip()
    state.set_show("value_norm")
    assert a.show_combo.currentData() == "value_norm" == b.show_combo.currentData()
    assert a.head_combo.isEnabled() and a.head_combo.toolTip() == a.head_tooltip


@needs_model
def test_value_norms_in_heatmap_links_and_tokens_equal_the_flow(qtbot):
    win, pred = analysed(qtbot)
    text = pred.text
    flow = show(qtbot, win, "value_norm")
    want = win.predictor.attention_flow(text, "value_norm")
    assert win.heatmap.show_combo.currentData() == "value_norm"
    assert win.heatmap.colorbar.getAxis("left").labelText == "\u2016\u03b1f(x)\u2016"
    L, H, T = want.matrices.shape[0], want.matrices.shape[1], pred.num_tokens
    np.testing.assert_allclose(flow.matrices, want.matrices, rtol=1e-5, atol=1e-6)
    # a head: its norms, not its weights
    win.set_layer_head(1, 2)
    render(win)
    image = win.heatmap.image_item.image
    np.testing.assert_allclose(image, want.matrices[1, 2], rtol=1e-5, atol=1e-6)
    assert not np.allclose(image, pred.attention[1, 2], atol=1e-3)
    assert "value-weighted" in win.heatmap.title.text() and "Layer 2, head 3" in win.heatmap.title.text()
    hover = win.heatmap.describe_cell(3, 5)
    assert f"{want.matrices[1, 2, 3, 5]:.4f}" in hover and f"{pred.attention[1, 2, 3, 5]:.4f}" in hover
    # mean of heads: the norm of the heads' summed vectors; max of heads: the element-wise max of the norms
    win.set_layer_head(0, -1)
    render(win)
    np.testing.assert_allclose(win.heatmap.image_item.image, want.summed[0], rtol=1e-5, atol=1e-6)
    win.set_layer_head(0, -2)
    render(win)
    np.testing.assert_allclose(win.heatmap.image_item.image, want.matrices[0].max(axis=0), rtol=1e-5, atol=1e-6)
    # token view without a selection: the read-out row of the summed norms
    win.set_layer_head(1, -1)
    render(win)
    np.testing.assert_allclose(win.token_view.values, read_out(want.summed[1], pred.pooling), rtol=1e-5, atol=1e-6)
    assert "\u2016" in win.token_view.caption.text() and "read-out" in win.token_view.caption.text()
    # a selected query: the sum of its rows of the shown matrix, and its links scaled by their own max
    win.set_layer_head(1, 2)
    win.state.set_selection([3, 7])
    render(win)
    np.testing.assert_allclose(win.token_view.values, want.matrices[1, 2, [3, 7]].sum(axis=0), rtol=1e-5, atol=1e-5)
    links = win.links_view
    assert links.enabled_heads == {2}
    row = want.matrices[1, 2, [3, 7]].ravel()
    assert links.shown_links == int((row >= links.threshold_fraction * row.max()).sum()) > 0
    assert f"{row.max():.3g}" in links.info.text() and "\u2016\u03b1f(x)\u2016" in links.info.text()
    links.slider.setValue(0)
    links.flush()
    assert links.shown_links == int((row > 0).sum())
    assert L == 2 and H == 4 and T > 50  # the bundled model and a real review


@needs_model
def test_alti_is_one_matrix_per_layer_and_attention_comes_back(qtbot):
    from desktop_app.views.selectors import ALTI_HEAD_TIP

    win, pred = analysed(qtbot)
    win.set_layer_head(1, 2)
    flow = show(qtbot, win, "alti", combo=win.heatmap.show_combo)  # the heatmap's own selector drives the state
    want = win.predictor.attention_flow(pred.text, "alti")
    assert win.menus.show_combo.currentData() == "alti"
    np.testing.assert_allclose(flow.matrices, want.matrices, rtol=1e-5, atol=1e-6)
    image = win.heatmap.image_item.image
    np.testing.assert_allclose(image, want.matrices[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(image.sum(axis=1), 1.0, atol=1e-4)
    assert win.heatmap.colorbar.getAxis("left").labelText == "ALTI contribution"
    assert "all heads" in win.heatmap.title.text() and "rows sum to 1" in win.heatmap.title.text()
    for combo in (win.menus.head_combo, win.heatmap.head_combo):
        assert not combo.isEnabled() and combo.toolTip() == ALTI_HEAD_TIP
    # the links: one "all heads" set of lines, the head boxes hidden (the row no wider than its label)
    links = win.links_view
    H = pred.attention.shape[1]
    assert links.all_heads_label.isVisibleTo(links) and not links.heads.isVisibleTo(links)
    assert links.shown_links > 0
    assert any(item.isVisible() for item in links.path_items[H])
    assert not any(item.isVisible() for row in links.path_items[:H] for item in row)
    # the tokens: the aggregated contributions reaching the read-out
    np.testing.assert_allclose(win.token_view.values, read_out(want.aggregated[1], pred.pooling), rtol=1e-5,
                               atol=1e-6)
    assert "ALTI" in win.token_view.caption.text()
    win.state.select_token(4)
    render(win)
    np.testing.assert_allclose(win.token_view.values, want.matrices[1, 4], rtol=1e-5, atol=1e-6)
    # back to the attention weights: the prediction's matrices again, the head combo enabled
    show(qtbot, win, "attention")
    assert win.menus.head_combo.isEnabled() and win.heatmap.head_combo.isEnabled()
    np.testing.assert_array_equal(win.heatmap.image_item.image, pred.attention[1, 2])
    assert win.heatmap.colorbar.getAxis("left").labelText == "attention weight"
    np.testing.assert_allclose(win.token_view.values, pred.attention[1, 2, 4], rtol=1e-6)
    assert links.heads.isVisibleTo(links) and not links.all_heads_label.isVisibleTo(links)
    # switching again uses the cached flow: shown at once, no "Computing"
    choose(win.menus.show_combo, "alti")
    assert win.state.flow is not None and win.state.flow.method == "alti"


@needs_model
def test_a_missing_flow_shows_its_note_not_a_picture(qtbot):
    win, pred = analysed(qtbot)
    show(qtbot, win, "value_norm")
    assert win.heatmap.image_item.image is not None
    for note in ("value-weighted (\u2016\u03b1f(x)\u2016) cannot be shown: X is not covered", "Computing ALTI\u2026"):
        win.state.set_flow(None, note)
        render(win)
        assert win.heatmap.image_item.image is None and win.heatmap.matrix is None
        assert note in win.heatmap.title.text()
        assert len(win.token_view.values) == 0 and note in win.token_view.caption.text()
        assert win.links_view.shown_links == 0 and note in win.links_view.info.text()
        assert not any(item.isVisible() for row in win.links_view.path_items for item in row)
    show(qtbot, win, "attention")
    np.testing.assert_allclose(win.heatmap.image_item.image, pred.attention[0].mean(axis=0), rtol=1e-6)


@needs_model
def test_neuron_view_and_steps_show_the_value_norms(qtbot):
    win, pred = analysed(qtbot)
    want = win.predictor.attention_flow(pred.text, "value_norm")
    with qtbot.waitSignal(win.state.events.internals, timeout=TIMEOUT_MS):
        win.set_layer_head(1, 2)
    qtbot.waitUntil(lambda: win.state.value_norms is not None, timeout=TIMEOUT_MS)
    np.testing.assert_allclose(win.state.value_norms, want.value_norms, rtol=1e-5, atol=1e-6)
    win.state.select_token(5)
    render(win)
    x, head, query = win.neuron_view.shown
    assert (x.layer, head, query) == (1, 2, 5)
    np.testing.assert_allclose(win.neuron_view.norm_bars.opts["width"], want.value_norms[1, 2], rtol=1e-5)
    hover = win.neuron_view.describe(9)
    assert f"{want.value_norms[1, 2, 9]:.4f}" in hover and f"{want.matrices[1, 2, 5, 9]:.4f}" in hover
    table, steps = win.steps_view.table, win.steps_view.steps
    assert table.horizontalHeaderItem(6).text() == "\u2016f(x\u2c7c)\u2016"
    for r, j in enumerate(steps.keys[:5]):
        j = int(j)
        assert float(table.item(r, 6).text()) == pytest.approx(float(want.value_norms[1, 2, j]), abs=1e-3)
        # w_j ||f(x_j)|| is the value-weighted norm ||alpha_ij f(x_j)|| of the flow
        assert float(table.item(r, 7).text()) == pytest.approx(float(want.matrices[1, 2, 5, j]), abs=1e-3)
    win.state.set_value_norms(None)
    render(win)
    assert table.item(0, 6).text() == "\u2014" and table.item(0, 7).text() == "\u2014"
    assert len(win.neuron_view.norm_bars.opts["width"]) == 0 and "not computed" in win.neuron_view.describe(9)
