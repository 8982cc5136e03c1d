"""The attention steps' lessons in the GUI (issue 36): step 0 without weights, the causal what-if switch shared by the
steps view and the heatmap, the heads joined by W^O."""

from __future__ import annotations

import numpy as np
import pytest
from gui_helpers import loaded_window, state_and_view

from model.records.internals import AttentionInternals
from model.attention.lessons import causal_weights, causal_what_if, heads_joined, plain_attention

pytestmark = pytest.mark.gui

LOAD_TIMEOUT_MS = 60_000


def _steps_view(qtbot):
    from desktop_app.views.steps_view import AttentionStepsView

    return state_and_view(qtbot, AttentionStepsView)


def test_step0_and_heads_joined_sections_show_the_lesson_records(qtbot):
    state, view = _steps_view(qtbot)
    x = AttentionInternals.synthetic(n_heads=3, num_tokens=20, d_head=4, seed=3)
    view.set_data(x, 2, 5)
    assert [view.tabs.tabText(i) for i in range(3)] == ["Steps 1\u20136", "Step 0", "Heads joined"]
    # step 0: x_i . x_j and its softmax beside q_i . k_j and w_j, for the keys the steps table lists
    plain, st, table = plain_attention(x, 5), view.steps, view.plain_section.table
    assert table.rowCount() == len(st.keys)
    for r, j in enumerate(st.keys):
        assert int(table.item(r, 0).text()) == int(j)
        assert float(table.item(r, 2).text()) == pytest.approx(float(plain.scores[j]), abs=1e-3)
        assert float(table.item(r, 3).text()) == pytest.approx(float(plain.weights[j]), abs=1e-3)
        assert float(table.item(r, 4).text()) == pytest.approx(float(x.raw_scores(2, 5)[j]), abs=1e-3)
        assert float(table.item(r, 5).text()) == pytest.approx(float(x.weights(2, 5)[j]), abs=1e-3)
    np.testing.assert_allclose(view.plain_section.vectors.image.image[0], plain.context, atol=1e-6)
    np.testing.assert_allclose(view.plain_section.vectors.image.image[1], x.inputs[5], atol=1e-6)
    # heads joined: one row per head's part, then the bias, their sum and the model's output (equal)
    joined, rows = heads_joined(x, 5), view.heads_section.vectors.image.image
    assert rows.shape == (3 + 3, x.inputs.shape[1])
    np.testing.assert_allclose(rows[:3], joined.parts, atol=1e-6)
    np.testing.assert_allclose(rows[:3].sum(0) + rows[3], rows[5], atol=1e-5)
    np.testing.assert_allclose(rows[4], rows[5], atol=1e-5)
    assert view.heads_section.vectors.names[2].startswith("\u25b6")  # the selected head is marked
    assert "add up" in view.heads_section.note.text()
    np.testing.assert_allclose(view.heads_section.slice_rows.image.image, x.output_weight[2])  # head 3's W^O slice
    assert view.heads_section.slice_rows.names[0] == "row 8"  # rows 2 d .. 3 d - 1 of W^O
    # the causal what-if is off: no column, no section, no greyed row
    assert view.table.isColumnHidden(8) and not view.causal_section.isVisible() and view.masked_rows() == set()


def test_causal_switch_greys_masked_keys_and_shows_the_renormalised_row(qtbot):
    from desktop_app.views.steps_view import MASKED_BRUSH

    state, view = _steps_view(qtbot)
    x = AttentionInternals.synthetic(n_heads=2, num_tokens=9, d_head=4, seed=4)
    view.causal_check.click()  # the switch sets the one state
    assert state.causal is True
    view.set_data(x, 1, 3)
    c = causal_what_if(x, 1, 3)
    assert not view.table.isColumnHidden(8) and view.causal_section.isVisible()
    for r, j in enumerate(view.steps.keys):
        assert float(view.table.item(r, 8).text()) == pytest.approx(float(c.weights[j]), abs=1e-3)
        masked = int(j) > 3
        assert (r in view.masked_rows()) == masked
        assert (view.table.item(r, 0).background() == MASKED_BRUSH) == masked
        assert (float(view.table.item(r, 8).text()) == 0.0) == masked
    rows = view.causal_section.vectors.image.image
    np.testing.assert_allclose(rows[0], x.head_outputs[1, 3], atol=1e-6)
    np.testing.assert_allclose(rows[1], c.output, atol=1e-6)
    np.testing.assert_allclose(rows[2], c.output - x.head_outputs[1, 3], atol=1e-6)
    assert "lesson" in view.causal_section.label.text() and "trained without" in view.causal_section.label.text()
    view.set_data(x, 0, 0)  # the first query attends only to itself
    assert float(view.table.item([int(j) for j in view.steps.keys].index(0), 8).text()) == pytest.approx(1.0)
    state.set_causal(False)
    view.flush()
    assert not view.causal_check.isChecked()


def test_causal_switch_in_the_window_reaches_heatmap_and_steps_but_not_the_prediction(qtbot, tiny_model_dir):
    win = loaded_window(qtbot, tiny_model_dir)
    with qtbot.waitSignal(win.state.events.internals, timeout=LOAD_TIMEOUT_MS):
        win.open_review("a wonderful film with a great cast")
    pred = win.state.prediction
    heatmap, steps = win.heatmap, win.steps_view
    win.heatmap_dock.raise_()
    heatmap.flush()
    real = heatmap.image_item.image.copy()
    assert heatmap.causal_item.path().isEmpty() and not heatmap.causal_label.isVisible()
    heatmap.causal_check.click()
    assert win.state.causal
    heatmap.flush()
    H = pred.attention.shape[1]
    expected = causal_weights(pred.attention[win.state.layer]).mean(axis=0)  # the default head choice: mean
    assert win.state.head < 0 and H > 1
    np.testing.assert_allclose(heatmap.image_item.image, expected, atol=1e-6)
    np.testing.assert_allclose(heatmap.image_item.image.sum(1), 1.0, atol=1e-5)
    assert not np.allclose(heatmap.image_item.image, real)
    assert not heatmap.causal_item.path().isEmpty() and heatmap.causal_label.isVisibleTo(heatmap)
    assert "causal what-if" in heatmap.title.text() or "causal what-if" in heatmap.title.toolTip()
    assert "masked by the causal" in heatmap.describe_cell(0, 2)
    win.steps_dock.show()
    win.steps_dock.raise_()
    steps.flush()
    assert steps.causal_check.isChecked() and not steps.table.isColumnHidden(8)
    assert win.state.prediction is pred  # a lesson: nothing was re-analysed
    steps.causal_check.click()  # off again, from the other view
    heatmap.flush()
    assert not win.state.causal and not heatmap.causal_check.isChecked()
    np.testing.assert_allclose(heatmap.image_item.image, real)
    win.close()


def test_causal_shown_renormalises_attention_and_only_masks_a_flow():
    from types import SimpleNamespace

    from desktop_app.state import MAX_HEADS
    from desktop_app.views.shown import Shown, causal_shown

    rng = np.random.default_rng(0)
    att = rng.random((2, 3, 6, 6)).astype(np.float32)
    att /= att.sum(-1, keepdims=True)  # (L, H, T, T), rows sum to 1
    state = SimpleNamespace(causal=True, prediction=SimpleNamespace(attention=att), show="attention", layer=1,
                            head=MAX_HEADS)
    shown = Shown(att[1].max(0), "attention weight", "Layer 2, max of heads \u2014 attention weights")
    out = causal_shown(state, shown)
    np.testing.assert_allclose(out.matrix, causal_weights(att[1]).max(0), atol=1e-6)  # each head renormalised first
    assert "causal what-if" in out.caption and out.rows_sum_to_one
    flow = Shown(rng.random((6, 6)).astype(np.float32), "\u2016\u03b1f(x)\u2016", "Layer 2, head 1")
    state.show = "value_norm"
    out = causal_shown(state, flow)
    np.testing.assert_array_equal(out.matrix, np.tril(flow.matrix))  # masked, not renormalised
    assert "not renormalised" in out.caption
    state.causal = False
    assert causal_shown(state, flow) is flow
