"""Issue 30 through the real window: the second text box (a pair analysed as the tokenizer encodes it, the switch
remembered per model folder), the task override (Model > Task, remembered and re-applied), the class choice used by
the explanations, and the bundled model refusing nothing it did before."""

from __future__ import annotations

import numpy as np
import pytest

from gui_helpers import LOAD_TIMEOUT_MS, loaded_window

pytest.importorskip("transformers")

TEXT = "the film was good and the acting was great"
PAIR = "the movie is bad"


@pytest.fixture(scope="module")
def pair_dir(tmp_path_factory):
    from tests.fixtures.tiny_hf import make_tiny_hf_dir

    return make_tiny_hf_dir(tmp_path_factory.mktemp("pair") / "bert-pair", "bert", num_labels=3, seed=3)


@pytest.fixture(scope="module")
def multi_dir(tmp_path_factory):
    from tests.fixtures.tiny_hf import make_tiny_hf_dir

    return make_tiny_hf_dir(tmp_path_factory.mktemp("multi") / "bert-multi", "bert", num_labels=5,
                            task="multi_label", seed=4, init_std=0.5)


def analyse(qtbot, win, text=TEXT):
    with qtbot.waitSignal(win.state.events.prediction, timeout=LOAD_TIMEOUT_MS,
                          check_params_cb=lambda p, *_: p is not None and p.text == text):
        win.analyze_text(text)
    return win.state.prediction


def test_the_second_text_box_sends_a_pair_encoded_as_the_tokenizer_does(qtbot, pair_dir):
    from transformers import AutoTokenizer

    win = loaded_window(qtbot, pair_dir)
    box = win.review_box
    assert win.state.info.reads_pairs and box.pair_action.isEnabled() and box.pair_button.isVisibleTo(win)
    assert not box.pair_editor.isVisibleTo(win)
    box.pair_action.trigger()  # the user switches the second text on
    assert box.pair_editor.isVisibleTo(win) and box.pair_on
    box.pair_editor.setPlainText(PAIR)
    pred = analyse(qtbot, win)
    assert pred.text_pair == PAIR and win.state.task.text_pair == PAIR
    enc = AutoTokenizer.from_pretrained(pair_dir)(TEXT, PAIR)
    tokens = enc.tokens()
    assert list(pred.tokens) == tokens
    assert pred.pair_start == list(enc["token_type_ids"]).index(1)
    np.testing.assert_array_equal(pred.segment_ids, enc["token_type_ids"])
    win.token_view.flush()
    assert win.token_view.canvas.pair_start == pred.pair_start
    assert "sentence pair" in win.prediction_panel.details.text()
    box.pair_action.trigger()  # off: a single text again
    pred = analyse(qtbot, win, TEXT + " indeed")
    assert pred.text_pair is None and pred.pair_start == -1
    with qtbot.waitSignal(win.state.events.prediction, timeout=LOAD_TIMEOUT_MS,
                          check_params_cb=lambda p, *_: p is not None and p.text_pair == "a second one"):
        win.open_review("a first one", "a second one")  # e.g. a batch row of a pair
    assert box.pair_on


def test_the_second_text_switch_is_remembered_per_model_folder(qtbot, pair_dir, multi_dir):
    win = loaded_window(qtbot, pair_dir)
    win.review_box.pair_action.trigger()
    assert win.review_box.pair_on
    with qtbot.waitSignal(win.predictor_loaded, timeout=LOAD_TIMEOUT_MS):
        win.model_menu.open_model(multi_dir)  # another folder: its own switch (off)
    assert not win.review_box.pair_on
    with qtbot.waitSignal(win.predictor_loaded, timeout=LOAD_TIMEOUT_MS):
        win.model_menu.open_model(pair_dir)  # back: on again
    assert win.review_box.pair_on and win.review_box.pair_editor.isVisibleTo(win)


def test_the_bundled_model_has_no_second_text(qtbot, tiny_model_dir):
    win = loaded_window(qtbot, tiny_model_dir)
    assert not win.state.info.reads_pairs and not win.review_box.pair_action.isEnabled()
    assert not win.review_box.pair_button.isVisibleTo(win)  # the window looks as it did
    assert win.review_box.text_pair() is None


def test_the_task_override_relabels_and_is_reapplied_when_the_folder_opens_again(qtbot, pair_dir, multi_dir):
    win = loaded_window(qtbot, multi_dir)
    assert win.state.info.task == "multi_label"
    pred = analyse(qtbot, win)
    assert pred.task == "multi_label" and len(win.prediction_panel.bars) == 5
    win.model_menu.rebuild()
    task_menu = next(a.menu() for a in win.model_menu.menu.actions() if a.menu() and "Task" in a.text())
    titles = [a.text() for a in task_menu.actions()]
    assert any("Multi-label" in t and "(config)" in t for t in titles)
    regression = next(a for a in task_menu.actions() if a.data() == "regression")  # 5 outputs: not a regression
    assert not regression.isEnabled() and "regression reads one output, and this model has 5" in regression.toolTip()
    assert all(a.isEnabled() for a in task_menu.actions() if a.data() in ("single_label", "multi_label"))
    with qtbot.waitSignal(win.state.events.prediction, timeout=LOAD_TIMEOUT_MS,
                          check_params_cb=lambda p, *_: p is not None and p.task == "single_label"):
        next(a for a in task_menu.actions() if a.data() == "single_label").trigger()
    pred = win.state.prediction
    assert pred.probabilities.sum() == pytest.approx(1.0, abs=1e-5) and win.state.info.task == "single_label"
    with qtbot.waitSignal(win.predictor_loaded, timeout=LOAD_TIMEOUT_MS):
        win.model_menu.open_model(pair_dir)
    assert win.state.info.task == "single_label"
    with qtbot.waitSignal(win.controller.task_set, timeout=LOAD_TIMEOUT_MS):
        with qtbot.waitSignal(win.predictor_loaded, timeout=LOAD_TIMEOUT_MS):
            win.model_menu.open_model(multi_dir)  # the override comes back with the folder
    assert win.state.info.task == "single_label" and win.state.info.task_source == "user"


def test_the_explanations_explain_the_chosen_class_of_a_pair(qtbot, pair_dir):
    win = loaded_window(qtbot, pair_dir, panels=True)
    panel = win.panels["explain"]
    win.review_box.set_text_pair(PAIR)
    with qtbot.waitSignal(panel.method_computed, timeout=LOAD_TIMEOUT_MS,
                          check_params_cb=lambda m: m == "grad_x_input"):
        analyse(qtbot, win)
    assert len(win.state.explanations["grad_x_input"].explanation.scores) == win.state.prediction.num_tokens
    predicted = win.state.prediction.label_index
    assert win.state.task.target == predicted
    assert win.state.explanations["grad_x_input"].explanation.target == predicted
    other = (predicted + 1) % 3
    with qtbot.waitSignal(panel.method_computed, timeout=LOAD_TIMEOUT_MS,
                          check_params_cb=lambda m: m == "grad_x_input"):
        panel.class_picker.activated.emit(other + 1)  # the user picks another class
    assert win.state.task.target == other
    assert win.state.explanations["grad_x_input"].explanation.target == other
    expected = win.predictor.explain(TEXT, "grad_x_input", target=other, text_pair=PAIR).scores
    np.testing.assert_allclose(win.state.explanations["grad_x_input"].explanation.scores, expected, atol=1e-5)
    qtbot.waitUntil(lambda: win.state.layer_probabilities is not None, timeout=LOAD_TIMEOUT_MS)
    np.testing.assert_allclose(win.prediction_panel.layer_plot.curve_data(),
                               win.predictor.layer_predictions(TEXT, text_pair=PAIR)[:, other], atol=1e-5)
    with qtbot.waitSignal(win.state.events.prediction, timeout=LOAD_TIMEOUT_MS):
        win.analyze_text(TEXT + " again")
    assert win.state.task.target == other  # the user's class stays for the next text


def test_a_session_keeps_the_second_text_the_class_choice_and_the_threshold(qtbot, multi_dir, tmp_path):
    import json

    from desktop_app.window.session import save_open as session

    win = loaded_window(qtbot, multi_dir)
    win.review_box.set_text_pair(PAIR)
    pred = analyse(qtbot, win)
    assert pred.text_pair == PAIR
    win.prediction_panel.bars_box.threshold_box.setValue(0.35)
    win.state.task.pick(2)
    path = tmp_path / "pair.aesession.json"
    session.write_session(session.capture(win), path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["version"] == session.VERSION >= 3
    assert (data["text_pair"], data["target"], data["threshold"]) == (PAIR, 2, pytest.approx(0.35))

    other = loaded_window(qtbot, multi_dir)
    done = []
    assert session.open_session(other, path, done.append)
    qtbot.waitUntil(lambda: bool(done), timeout=LOAD_TIMEOUT_MS)
    st = other.state
    assert other.review_box.text_pair() == PAIR and st.prediction.text_pair == PAIR
    assert st.task.threshold == pytest.approx(0.35) and st.prediction.threshold == pytest.approx(0.35)
    assert st.task.target == 2 and not st.task.following
    assert other.errors == []


def test_older_sessions_open_and_bad_task_fields_are_refused(qtbot, tiny_model_dir, tmp_path):
    import json

    from desktop_app.window.session import save_open as session
    from desktop_app.window.session.save_open import SessionError, read_session

    p = tmp_path / "v2.aesession.json"
    p.write_text(json.dumps({"format": "attention-explorer-session", "version": 2, "text": "a fine film",
                             "model_dir": str(tiny_model_dir), "show": "attention",
                             "pins": [{"text": "dull", "head_mask": None}]}))
    s = read_session(p)
    assert (s.text_pair, s.target, s.threshold) == (None, None, None) and s.pins[0]["text_pair"] is None
    win = loaded_window(qtbot, tiny_model_dir)
    done = []
    assert session.open_session(win, p, done.append)
    qtbot.waitUntil(lambda: bool(done), timeout=LOAD_TIMEOUT_MS)
    assert win.state.prediction.text == "a fine film" and win.state.task.following and win.errors == []
    for field, value in (("threshold", 1.5), ("threshold", "high"), ("target", -1), ("target", 1.5),
                         ("text_pair", 5), ("text_pair", "")):
        p.write_text(json.dumps({"format": "attention-explorer-session", "version": 3, "text": "abc", field: value}))
        with pytest.raises(SessionError, match=field):
            read_session(p)


def test_a_regression_pair_shows_its_value_and_its_value_by_layer(qtbot, tmp_path):
    from tests.fixtures.tiny_hf import make_tiny_hf_dir

    folder = make_tiny_hf_dir(tmp_path / "sts", "bert", task="regression", seed=5, init_std=0.5)
    win = loaded_window(qtbot, folder)
    assert win.state.info.task == "regression"
    win.review_box.set_text_pair(PAIR)
    pred = analyse(qtbot, win)
    value = win.predictor.predict(TEXT, text_pair=PAIR).value
    assert pred.value == pytest.approx(value, abs=1e-5)
    assert win.prediction_panel.label.text() == f"score = {value:.3g}"
    qtbot.waitUntil(lambda: win.state.layer_probabilities is not None, timeout=LOAD_TIMEOUT_MS)
    np.testing.assert_allclose(win.prediction_panel.layer_plot.curve_data(),
                               win.predictor.layer_predictions(TEXT, text_pair=PAIR)[:, 0], atol=1e-5)
    assert win.prediction_panel.layer_plot.curve_data()[-1] == pytest.approx(value, abs=1e-4)


def test_compare_explains_two_pairs_for_the_chosen_class(qtbot, pair_dir):
    win = loaded_window(qtbot, pair_dir)
    win.review_box.set_text_pair(PAIR)
    analyse(qtbot, win, "the acting was good")
    win.state.pin_current()
    analyse(qtbot, win, "the acting was not good")
    win.state.task.pick(2)

    def shown():
        r = win.compare_view.result
        return r is not None and r.current.text == "the acting was not good" and r.target == 2

    qtbot.waitUntil(shown, timeout=LOAD_TIMEOUT_MS)
    result = win.compare_view.result
    assert win.state.pins[0].prediction.text_pair == PAIR
    assert [w.lower() for w in result.current.words.words] == ["the", "acting", "was", "not", "good"]  # first text
    p = win.predictor.predict("the acting was not good", text_pair=PAIR)
    np.testing.assert_allclose(result.current.probabilities, p.probabilities, atol=1e-5)


def test_the_threshold_is_the_models_batch_rows_follow_it_and_it_comes_back_with_the_folder(qtbot, tmp_path,
                                                                                              pair_dir):
    import json

    from model.tasks.task import MULTI_LABEL, label_text, predicted_labels
    from tests.fixtures.tiny_hf import make_tiny_hf_dir

    folder = make_tiny_hf_dir(tmp_path / "tags", "bert", num_labels=4, task="multi_label", seed=6, init_std=0.5)
    texts = [f"{w} film, {v} acting" for w in ("a good", "a dull", "the best", "an odd", "no")
             for v in ("great", "bad", "fine")]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), encoding="utf-8")
    win = loaded_window(qtbot, folder, panels=True)
    labels = tuple(win.state.info.labels)
    probs = [s.probabilities for s in win.predictor.score_many(texts)]

    def labelled(t):
        return [label_text(predicted_labels(p, labels, MULTI_LABEL, t)) for p in probs]

    threshold = next(t for t in (0.45, 0.4, 0.55, 0.35, 0.6, 0.3, 0.65, 0.25, 0.7) if labelled(t) != labelled(0.5))
    analyse(qtbot, win)
    box = win.prediction_panel.bars_box.threshold_box
    with qtbot.waitSignal(win.controller.task_set, timeout=LOAD_TIMEOUT_MS):
        box.setValue(threshold)  # the user moves the threshold: re-labelled at once, and sent to the model
    assert win.state.prediction.threshold == pytest.approx(threshold)  # the instant re-label stays
    assert win.predictor.task.threshold == pytest.approx(threshold)
    assert win.state.info.threshold == pytest.approx(threshold) and win.state.info.task == "multi_label"
    batch = win.panels["batch"]
    with qtbot.waitSignal(batch.scoring_finished, timeout=LOAD_TIMEOUT_MS):
        batch.add_paths([str(path)])
    rows = batch.rows()
    assert [r.text for r in rows] == texts
    assert [r.label for r in rows] == labelled(threshold)  # the rows use the threshold the panel shows

    with qtbot.waitSignal(win.predictor_loaded, timeout=LOAD_TIMEOUT_MS):
        win.model_menu.open_model(pair_dir)  # another folder: the model's own threshold
    assert win.state.task.threshold == pytest.approx(0.5) and win.predictor.task.threshold == pytest.approx(0.5)
    with qtbot.waitSignal(win.controller.task_set, timeout=LOAD_TIMEOUT_MS):
        with qtbot.waitSignal(win.predictor_loaded, timeout=LOAD_TIMEOUT_MS):
            win.model_menu.open_model(folder)  # back: the threshold comes back with the folder
    assert win.predictor.task.threshold == pytest.approx(threshold)
    assert win.state.task.threshold == pytest.approx(threshold) and win.state.info.task == "multi_label"
    pred = analyse(qtbot, win, TEXT + " again")
    assert pred.threshold == pytest.approx(threshold) and box.value() == pytest.approx(threshold)


def test_a_regression_models_faithfulness_is_measured_in_its_output_value(qtbot, tmp_path, pair_dir):
    from tests.fixtures.tiny_hf import make_tiny_hf_dir

    folder = make_tiny_hf_dir(tmp_path / "sts", "bert", task="regression", seed=5, init_std=0.5)
    win = loaded_window(qtbot, folder, panels=True)
    panel = win.panels["explain"]
    with qtbot.waitSignal(panel.method_computed, timeout=LOAD_TIMEOUT_MS,
                          check_params_cb=lambda m: m == "grad_x_input"):
        analyse(qtbot, win)
    table = panel.table
    headers = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]
    assert "\u0394 value" in headers[1] and "\u0394 value" in headers[2]
    assert "predicted value" in table.toolTip() and "p(class)" not in table.toolTip()
    panel.compare.view.flush()
    qtbot.waitUntil(lambda: "output value" in panel.compare.view.titles[0].text(), timeout=LOAD_TIMEOUT_MS)
    with qtbot.waitSignal(win.predictor_loaded, timeout=LOAD_TIMEOUT_MS):
        win.model_menu.open_model(pair_dir)  # a classifier: drops in a probability
    headers = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]
    assert headers[1] == "Compr. \u2191" and "p(class)" in table.toolTip()


def test_a_refused_task_is_not_remembered_for_the_folder(qtbot, pair_dir):
    """Model > Task > Regression on a 3-label model is refused ("Task not changed: regression reads one output");
    it was remembered for the folder all the same, so every later opening of the folder tried it again and showed the
    refusal in the status bar. The folder now remembers the task the model is read as."""
    win = loaded_window(qtbot, pair_dir)
    tasks = win.model_menu.tasks
    with qtbot.waitSignal(win.controller.task_set, timeout=LOAD_TIMEOUT_MS):
        tasks.set_task("multi_label")  # a task that fits, remembered
    assert tasks.saved_task(tasks.key()) == "multi_label"
    with qtbot.waitSignal(win.controller.task_failed, timeout=LOAD_TIMEOUT_MS):
        tasks.set_task("regression")
    assert win.state.info.task == "multi_label"
    assert tasks.saved_task(tasks.key()) == "multi_label"
    with qtbot.waitSignal(win.controller.task_failed, timeout=LOAD_TIMEOUT_MS):
        tasks.set_task("regression")
    with qtbot.waitSignal(win.controller.task_set, timeout=LOAD_TIMEOUT_MS):
        tasks.set_task("single_label")  # the config's task: nothing remembered
    with qtbot.waitSignal(win.controller.task_failed, timeout=LOAD_TIMEOUT_MS):
        tasks.set_task("regression")
    assert tasks.saved_task(tasks.key()) is None
