"""Issue 30, in the app, with hand-made predictions: the prediction panel for many classes, multi-label and
regression; the class choice in the state; the pair's marks in the token view and the links' A -> B filter."""

from __future__ import annotations

import numpy as np
import pytest

from gui_helpers import state_and_view


def make_prediction(labels, logits, task="single_label", threshold=0.5, pair=False, text="good fun here"):
    """A hand-made Prediction (NumPy only) with ``labels`` and ``logits`` read as ``task``; ``pair``: a sentence pair
    "[CLS] good fun here [SEP] it was bad [SEP]" with its segment ids."""
    from model.records.prediction import Prediction
    from model.tasks.task import label_text, predicted_labels, probabilities_of

    logits = np.asarray(logits, np.float32)
    probs = probabilities_of(logits, task)
    if pair:
        tokens = ["[CLS]", "good", "fun", "here", "[SEP]", "it", "was", "bad", "[SEP]"]
        offsets = [(0, 0), (0, 4), (5, 8), (9, 13), (0, 0), (0, 2), (3, 6), (7, 10), (0, 0)]
        seg = np.array([0, 0, 0, 0, 0, 1, 1, 1, 1], np.int8)
        text_pair = "it was bad"
    else:
        tokens = ["[CLS]", "good", "fun", "here"]
        offsets = [(0, 0), (0, 4), (5, 8), (9, 13)]
        seg, text_pair = None, None
    T = len(tokens)
    rng = np.random.default_rng(0)
    att = rng.random((2, 2, T, T)).astype(np.float32)
    att /= att.sum(-1, keepdims=True)
    label = label_text(predicted_labels(probs, tuple(labels), task, threshold))
    return Prediction(text, tokens, np.array(offsets, np.int64), label, tuple(labels), probs, logits, att, False, T,
                      0.001, task=task, threshold=threshold, text_pair=text_pair, segment_ids=seg)


def model_info(labels, task="single_label", reads_pairs=False):
    from model.records.info import ModelInfo

    return ModelInfo(2, 2, 16, 64, 10000.0, "cls", tuple(labels), "CPU", "", None, task=task,
                     reads_pairs=reads_pairs)


LABELS_28 = tuple(f"emotion{i:02d}" for i in range(28))


def panel(qtbot):
    from desktop_app.views.prediction_panel import PredictionPanel

    return state_and_view(qtbot, PredictionPanel, size=(420, 700))


def test_28_classes_are_sorted_top_five_first_and_the_rest_on_request(qtbot):
    state, view = panel(qtbot)
    state.set_model(model_info(LABELS_28))
    logits = np.linspace(-2, 2, 28)[::-1].copy()
    logits[[3, 17]] = [5.0, 4.0]  # the most probable: emotion03, then emotion17
    state.set_prediction(make_prediction(LABELS_28, logits))
    bars = view.bars_box
    shown = bars.visible_names()
    assert shown[:2] == ["emotion03", "emotion17"] and len(shown) == 5
    probs = state.prediction.probabilities
    assert [view.bars[n].probability for n in shown] == pytest.approx(sorted(probs, reverse=True)[:5])
    assert bars.show_all_button.isVisibleTo(view) and bars.show_all_button.text() == "Show all 28"
    bars.show_all_button.click()
    assert len(bars.visible_names()) == 28 and bars.show_all_button.text() == "Show top 5"
    assert view.label.text() == "emotion03"


def test_multi_label_bars_show_sigmoids_against_a_threshold_that_relabels_without_the_model(qtbot):
    state, view = panel(qtbot)
    labels = ("anger", "joy", "love", "fear")
    state.set_model(model_info(labels, "multi_label"))
    logits = np.array([-2.0, 1.5, 0.2, -0.5], np.float32)  # sigmoids .12 .82 .55 .38
    state.set_prediction(make_prediction(labels, logits, "multi_label"))
    sig = 1 / (1 + np.exp(-logits))
    assert [view.bars[n].probability for n in labels] == pytest.approx(sig, abs=1e-6)
    assert all(view.bars[n].threshold == 0.5 for n in labels)
    assert view.label.text() == "joy, love"
    box = view.bars_box.threshold_box
    assert box.isVisibleTo(view)
    box.setValue(0.3)  # the user's threshold: re-labelled at once, same sigmoids, no forward pass
    pred = state.prediction
    assert pred.threshold == pytest.approx(0.3) and pred.label == "joy;love;fear"
    assert view.label.text() == "joy, love, fear" and view.bars["fear"].threshold == pytest.approx(0.3)
    assert view.layer_plot.half_line.value() == pytest.approx(0.3)  # the by-layer plot's decision line
    np.testing.assert_array_equal(pred.logits, logits)


def test_regression_shows_the_value_and_no_bars(qtbot):
    from desktop_app.records import LayerProbabilities

    state, view = panel(qtbot)
    state.set_model(model_info(("similarity",), "regression"))
    state.set_prediction(make_prediction(("similarity",), [3.25], "regression"))
    assert view.label.text() == "similarity = 3.25"
    assert not view.bars_box.isVisibleTo(view)
    values = np.array([[1.0], [2.0], [3.25]], np.float32)
    state.set_layer_probabilities(LayerProbabilities(values, None, ("similarity",), "regression"))
    np.testing.assert_allclose(view.layer_plot.curve_data(), [1.0, 2.0, 3.25])
    assert "value by layer" in view.layer_plot.getPlotItem().titleLabel.text


def test_the_class_choice_follows_the_prediction_until_the_user_picks_one(qtbot):
    from desktop_app.state import ExplorerState

    state = ExplorerState()
    labels = ("a", "b", "c")
    state.set_model(model_info(labels))
    seen = []
    state.task.target_changed.connect(seen.append)
    state.set_prediction(make_prediction(labels, [0.0, 2.0, 1.0]))
    assert state.task.target == 1 and state.task.following
    state.set_prediction(make_prediction(labels, [3.0, 2.0, 1.0]))
    assert state.task.target == 0  # follows the predicted class
    state.task.pick(2)
    state.set_prediction(make_prediction(labels, [0.0, 2.0, 1.0]))
    assert state.task.target == 2 and not state.task.following  # the user's class stays
    state.task.pick(None)
    assert state.task.target == 1
    state.task.pick(2)
    state.set_model(model_info(labels))  # another model: follow the prediction again
    assert state.task.following and state.task.target == 1
    assert seen == [1, 0, 2, 1, 2, 1]
    with pytest.raises(ValueError):
        state.task.pick(3)


def test_the_class_picker_shows_and_sets_the_state_choice(qtbot):
    from desktop_app.views.class_picker import ClassPicker

    state, picker = state_and_view(qtbot, ClassPicker, size=(200, 30))
    labels = ("a", "b", "c")
    state.set_model(model_info(labels))
    state.set_prediction(make_prediction(labels, [0.0, 2.0, 1.0]))
    assert picker.currentIndex() == 0 and picker.itemText(0) == "Predicted (b)"
    picker.activated.emit(3)  # the user picks "c"
    assert state.task.target == 2 and not state.task.following
    picker.setCurrentIndex(0)
    picker.activated.emit(0)
    assert state.task.following and state.task.target == 1


def pair_shown(qtbot, view_class):
    """A ``view_class`` view showing the hand-made pair prediction (flushed): (state, view, prediction)."""
    state, view = state_and_view(qtbot, view_class)
    state.set_model(model_info(("no", "yes"), reads_pairs=True))
    pred = make_prediction(("no", "yes"), [0.0, 1.0], pair=True)
    state.set_prediction(pred)
    view.flush()
    return state, view, pred


def test_the_token_view_marks_the_second_text(qtbot):
    from desktop_app.views.token_view import TokenView

    _state, view, _pred = pair_shown(qtbot, TokenView)
    canvas = view.canvas
    assert canvas.pair_start == 5
    assert [p[0] for p in canvas.pieces] == ["[CLS]", "good", "fun", "here", "[SEP]", "it", "was", "bad", "[SEP]"]
    assert canvas.pieces[5][1] == "\n"  # the second text starts a new line
    assert canvas.rects[5, 1] > canvas.rects[4, 1]
    img = canvas.grab().toImage()  # the blue band under a second-text token, none under a first-text one
    x, y = int(canvas.rects[6, 0] + canvas.rects[6, 2]) // 2, int(canvas.rects[6, 3]) - 2
    x1, y1 = int(canvas.rects[2, 0] + canvas.rects[2, 2]) // 2, int(canvas.rects[2, 3]) - 2
    dpr = img.devicePixelRatio()
    blue, other = img.pixelColor(int(x * dpr), int(y * dpr)), img.pixelColor(int(x1 * dpr), int(y1 * dpr))
    assert blue.blue() > blue.red() + 60 and not other.blue() > other.red() + 60


def test_links_a_to_b_filter_keeps_only_links_from_the_first_text_to_the_second(qtbot):
    from desktop_app.views.links_view import AttentionLinksView
    from desktop_app.views.pair_marks import A_TO_B, B_TO_A

    state, view, pred = pair_shown(qtbot, AttentionLinksView)
    labels = pred.labels
    view.slider.setValue(0)
    view.flush()
    assert view.pair_filter.isVisibleTo(view)
    every = view.shown_links
    seg = pred.segment_ids
    view.pair_filter.set_choice(A_TO_B)
    view.flush()
    n_a, n_b = int((seg == 0).sum()), int((seg == 1).sum())
    assert view.shown_links == n_a * n_b * len(view.enabled_heads) < every
    assert "first text \u2192 second" in view.info.text()
    per_head, rows, cols, _ = view.pair_filter.apply(pred, {0: np.ones(81)}, *np.divmod(np.arange(81), 9), None)
    assert (seg[rows] == 0).all() and (seg[cols] == 1).all()
    view.pair_filter.set_choice(B_TO_A)
    _, rows, cols, _ = view.pair_filter.apply(pred, {0: np.ones(81)}, *np.divmod(np.arange(81), 9), None)
    assert (seg[rows] == 1).all() and (seg[cols] == 0).all()
    state.set_prediction(make_prediction(labels, [0.0, 1.0]))  # a single text: no selector, every link
    view.flush()
    assert not view.pair_filter.isVisibleTo(view) and view.pair_filter.choice == "all"


def test_links_forget_a_hovered_token_the_next_text_does_not_have(qtbot):
    """The mouse rests on key token 8 of a 9-token pair while a shorter text's analysis arrives (analysis runs as the
    user types): the links redraw for every query instead of indexing token 8 of 4 (an IndexError before)."""
    from desktop_app.views.links_view import AttentionLinksView

    state, view, _pred = pair_shown(qtbot, AttentionLinksView)
    view.set_hover("key", 8)
    view.flush()
    assert view.focus == ("key", (8,))
    state.set_prediction(make_prediction(("no", "yes"), [1.0, 0.0]))  # 4 tokens
    view.flush()
    assert view.focus is None and "all queries" in view.info.text() and view.shown_links > 0


def test_twelve_heads_do_not_widen_the_links_dock(qtbot):
    """A 12-head model's head boxes wrap (two rows of six) and ALTI's "all heads" label replaces them: the links view
    of a pair stays under 700 pixels wide at least (848 with one row of boxes, 1,105 with ALTI's label beside them)."""
    import dataclasses

    from desktop_app.views.links_view import AttentionLinksView

    state, view = state_and_view(qtbot, AttentionLinksView, size=(600, 600))
    state.set_model(dataclasses.replace(model_info(("no", "yes"), reads_pairs=True), n_heads=12))
    pred = make_prediction(("no", "yes"), [0.0, 1.0], pair=True)
    att = np.random.default_rng(1).random((2, 12, pred.num_tokens, pred.num_tokens)).astype(np.float32)
    state.set_prediction(dataclasses.replace(pred, attention=att / att.sum(-1, keepdims=True)))
    view.flush()
    boxes = view.heads.boxes
    assert len(boxes) == 12 and {view.heads.grid.getItemPosition(i)[0] for i in range(12)} == {0, 1}
    assert view.minimumSizeHint().width() < 700
    state.set_show("alti")
    view.flush()
    assert not view.heads.isVisibleTo(view) and view.all_heads_label.isVisibleTo(view)
    assert view.minimumSizeHint().width() < 700


def test_the_heatmap_marks_the_second_text_on_both_axes(qtbot):
    from desktop_app.views.heatmap import AttentionHeatmap

    state, view, pred = pair_shown(qtbot, AttentionHeatmap)
    assert sorted((line.angle, line.value()) for line in view._pair_lines) == [(0, 5.0), (90, 5.0)]
    state.set_prediction(make_prediction(pred.labels, [0.0, 1.0]))
    view.flush()
    assert view._pair_lines == []
