"""The Explanations panel on a tiny random model (pytest-qt, offscreen)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("PySide6")
from PySide6.QtCore import Qt  # noqa: E402

from desktop_app.panels.explain_panel import ExplanationPanel
from desktop_app.views.colours import colours_for
from model.explain import CHEAP_METHODS, EXPLANATION_METHODS

pytestmark = pytest.mark.gui

TEXT = "I loved every minute of it; a great, great cast and a beautiful score!"
LONG = " ".join(["a dull film with a wonderful cast but the worst script"] * 8)  # > 64 tokens: truncated


@pytest.fixture
def panel(qtbot, tiny_predictor):
    p = ExplanationPanel()
    qtbot.addWidget(p)
    p.set_predictor(tiny_predictor)
    yield p
    p.shutdown()


def _wait_for_cheap(qtbot, panel):
    qtbot.waitUntil(lambda: all(m in panel.results for m in CHEAP_METHODS), timeout=20000)


def _cell(panel, method, col):
    item = panel.table.item(EXPLANATION_METHODS.index(method), col)
    return item.text() if item is not None else ""


def test_panel_fills_rows_for_cheap_methods(qtbot, panel, tiny_predictor):
    pred = tiny_predictor.predict(TEXT)
    panel.set_prediction(pred)
    _wait_for_cheap(qtbot, panel)
    for m in CHEAP_METHODS:
        comp, suff, ms = (_cell(panel, m, c) for c in (1, 2, 3))
        assert -1 <= float(comp) <= 1 and -1 <= float(suff) <= 1 and float(ms) >= 0
        assert panel.results[m].explanation.scores.shape == (pred.num_tokens,)
    assert _cell(panel, "integrated_gradients", 1) == ""  # on demand only
    # the comparison shows both chosen methods' scores over the same tokens, coloured as the token view colours
    (left_title, left), (right_title, right) = panel.comparison()
    assert "Attention" in left_title and "Gradient" in right_title and "comprehensiveness" in right_title
    np.testing.assert_array_equal(left, panel.results["attention"].explanation.scores)
    np.testing.assert_array_equal(right, panel.results["grad_x_input"].explanation.scores)
    right_canvas = panel.compare_view.canvases[1]
    assert len(right_canvas.rects) == pred.num_tokens
    np.testing.assert_array_equal(right_canvas.colours, colours_for(right, signed=True)[0])


def test_selecting_a_method_emits_scores_of_length_T(qtbot, panel, tiny_predictor):
    pred = tiny_predictor.predict(TEXT)
    panel.set_prediction(pred)
    _wait_for_cheap(qtbot, panel)
    with qtbot.waitSignal(panel.importance_selected, timeout=5000) as blocker:
        panel.select_method("grad_x_input")
    scores, signed, method = blocker.args
    assert method == "grad_x_input" and signed is True
    assert isinstance(scores, np.ndarray) and scores.shape == (pred.num_tokens,)
    np.testing.assert_allclose(scores, panel.results["grad_x_input"].explanation.scores)
    # choosing a table row does the same
    with qtbot.waitSignal(panel.importance_selected, timeout=5000) as blocker:
        panel.table.selectRow(EXPLANATION_METHODS.index("rollout"))
    assert blocker.args[2] == "rollout" and blocker.args[1] is False and len(blocker.args[0]) == pred.num_tokens
    with qtbot.waitSignal(panel.importance_selected, timeout=5000) as blocker:
        panel.select_method(None)
    assert blocker.args == [None, False, ""]


def test_new_prediction_resets_and_recolours(qtbot, panel, tiny_predictor):
    panel.set_prediction(tiny_predictor.predict(TEXT))
    _wait_for_cheap(qtbot, panel)
    panel.select_method("attention")
    second = tiny_predictor.predict(LONG)
    received = []
    panel.importance_selected.connect(lambda s, signed, m: received.append((s, m)))
    panel.set_prediction(second)
    assert received and received[0] == (None, "")  # old scores dropped at once
    _wait_for_cheap(qtbot, panel)
    qtbot.waitUntil(lambda: received[-1][0] is not None, timeout=5000)
    assert len(received[-1][0]) == second.document.num_tokens and received[-1][1] == "attention"  # the whole text
    assert all(r.explanation.tokens == second.document.tokens for r in panel.results.values())


def test_latest_request_wins(qtbot, panel, tiny_predictor):
    first, last = tiny_predictor.predict(LONG), tiny_predictor.predict(TEXT)
    panel.set_prediction(first)
    panel.set_prediction(last)
    _wait_for_cheap(qtbot, panel)
    qtbot.wait(200)  # let any stale result of the first request arrive (it must be dropped)
    assert panel.prediction is last
    assert all(r.explanation.tokens == last.tokens for r in panel.results.values())


def test_integrated_gradients_runs_with_progress(qtbot, panel, tiny_predictor):
    panel.set_prediction(tiny_predictor.predict(TEXT))
    _wait_for_cheap(qtbot, panel)
    with qtbot.waitSignal(panel.integrated_gradients_finished, timeout=30000) as blocker:
        panel.run_integrated_gradients(n_steps=16)
        assert not panel.ig_button.isEnabled() and panel.ig_cancel_button.isEnabled()
    assert blocker.args == [True]
    assert "integrated_gradients" in panel.results
    assert float(_cell(panel, "integrated_gradients", 1)) <= 1
    assert panel.ig_progress.value() == panel.ig_progress.maximum()
    assert panel.ig_button.isEnabled() and not panel.ig_cancel_button.isEnabled()


def test_integrated_gradients_can_be_cancelled(qtbot, panel, tiny_predictor):
    panel.set_prediction(tiny_predictor.predict(LONG))
    _wait_for_cheap(qtbot, panel)
    with qtbot.waitSignal(panel.integrated_gradients_finished, timeout=60000) as blocker:
        panel.run_integrated_gradients(n_steps=1024)
        panel.cancel_integrated_gradients()
    assert blocker.args == [False]
    assert "integrated_gradients" not in panel.results
    assert _cell(panel, "integrated_gradients", 1) == "cancelled"
    assert panel.ig_button.isEnabled() and not panel.ig_cancel_button.isEnabled()


def test_no_model_gives_a_message_not_a_crash(qtbot):
    p = ExplanationPanel()
    qtbot.addWidget(p)
    p.run_integrated_gradients()
    assert "first" in p.status.text()
    p.shutdown()


def test_comparison_waits_for_uncomputed_methods(qtbot, panel, tiny_predictor):
    """Integrated gradients runs on demand: until then its strip says so and holds no scores."""
    panel.compare_right.setCurrentIndex(EXPLANATION_METHODS.index("integrated_gradients"))
    panel.set_prediction(tiny_predictor.predict(TEXT))
    _wait_for_cheap(qtbot, panel)
    (_, left), (right_title, right) = panel.comparison()
    assert left is not None and right is None and "not computed yet" in right_title

def test_explanations_follow_the_head_mask(qtbot, panel, tiny_predictor):
    """Issue 25: with heads switched off, the explanations (and their faithfulness) are of the masked model."""
    cfg = tiny_predictor.config
    mask = np.ones((cfg.n_layers, cfg.n_heads), np.float32)
    mask[0, 0] = mask[-1, -1] = 0
    panel.state.set_head_mask(mask)
    pred = tiny_predictor.predict(TEXT, head_mask=mask)
    panel.set_prediction(pred)
    _wait_for_cheap(qtbot, panel)
    got = panel.results["grad_x_input"]
    want = tiny_predictor.explain(TEXT, "grad_x_input", prediction=pred, head_mask=mask)
    np.testing.assert_allclose(got.explanation.scores, want.scores, rtol=1e-5, atol=1e-6)
    unmasked = tiny_predictor.explain(TEXT, "grad_x_input")
    assert not np.allclose(got.explanation.scores, unmasked.scores, atol=1e-6)
    faith = tiny_predictor.faithfulness(TEXT, want, head_mask=mask)
    assert got.faithfulness.comprehensiveness_aopc == pytest.approx(faith.comprehensiveness_aopc, abs=1e-6)


def test_decompx_runs_on_demand_with_progress_and_cancel(qtbot, panel, tiny_predictor):
    """Issue 34: DecompX (estimated over a second on long texts) runs from the panel on demand, with progress per
    layer and Cancel, like integrated gradients."""
    panel.set_prediction(tiny_predictor.predict(LONG))
    _wait_for_cheap(qtbot, panel)
    panel.select_method("decompx")
    assert "not computed yet" in panel.status.text()
    with qtbot.waitSignal(panel.integrated_gradients_finished, timeout=60000) as blocker:
        panel.run_method("decompx")
        assert panel.ig_cancel_button.isEnabled() and not panel.slow_combo.isEnabled()
        panel.cancel_integrated_gradients()
    assert blocker.args == [False] and "decompx" not in panel.results
    assert _cell(panel, "decompx", 1) == "cancelled" and "DecompX" in panel.status.text()
    panel.slow_combo.setCurrentIndex(panel.slow_combo.findData("decompx"))
    assert not panel.ig_steps.isEnabled()  # steps are integrated gradients' only
    steps = []
    panel.handle.worker.yielded.connect(lambda _request, done_total: steps.append(done_total))
    with qtbot.waitSignal(panel.integrated_gradients_finished, timeout=60000) as blocker:
        qtbot.mouseClick(panel.ig_button, Qt.LeftButton)
    assert blocker.args == [True] and "decompx" in panel.results
    assert steps[-1][0] == steps[-1][1] >= tiny_predictor.config.n_layers and len(steps) >= 2  # per layer
    assert panel.ig_progress.value() == panel.ig_progress.maximum()
    assert panel.ig_button.isEnabled() and not panel.ig_cancel_button.isEnabled()


# -- explanations: the faithfulness table shows every row at the default window size ---------------------------
def test_faithfulness_table_shows_all_rows_at_default_size(qtbot, tiny_model_dir):
    from gui_helpers import loaded_window

    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    explain = win.panels["explain"]
    dock = win.docks.get("Explanations")
    dock.show()
    dock.raise_()
    qtbot.wait(50)
    table = explain.table
    viewport = table.viewport().rect()
    for row in range(table.rowCount()):
        rect = table.visualRect(table.model().index(row, 0))
        assert viewport.contains(rect), f"row {row} of {table.rowCount()} is cut off ({rect} in {viewport})"
