"""Sessions (issue 11, item 6): save and reopen text, model, layer/head, selection, active view, explanations."""

from __future__ import annotations

import json
import os
import stat

import numpy as np
import pytest
from gui_helpers import loaded_window

pytestmark = pytest.mark.gui

LOAD_TIMEOUT_MS = 60_000



def _window(qtbot, model_dir):
    return loaded_window(qtbot, model_dir)


def _fake_result(pred, method="grad_x_input"):
    from model.records.explanation import Explanation, ExplanationResult, Faithfulness

    scores = np.linspace(-1, 1, pred.num_tokens).astype(np.float32)
    e = Explanation(method, scores, True, 1, 0.01, None, list(pred.tokens))
    f = Faithfulness(method, 0.25, 0.05, {5: {"comprehensiveness": 0.2, "sufficiency": 0.1, "tokens": 1}}, 0.02, 1, 0.7)
    return ExplanationResult(method, e, f)


def test_session_round_trip(qtbot, tiny_model_dir, tmp_path):
    from desktop_app.window.session import save_open as session

    win = _window(qtbot, tiny_model_dir)
    with qtbot.waitSignal(win.state.events.prediction, timeout=LOAD_TIMEOUT_MS):
        win.open_review("A slow start.\nThen a wonderful second half that I would watch again.")
    pred = win.state.prediction
    win.state.set_layer_head(1, 0)
    win.state.set_selection((2, 4))
    win.state.add_explanation(_fake_result(pred))
    win.neuron_dock.show()
    win.neuron_dock.raise_()
    qtbot.wait(50)
    path = tmp_path / "s.aesession.json"
    old = os.umask(0o022)
    try:
        session.write_session(session.capture(win), path)
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["format"] == session.FORMAT and data["version"] == session.VERSION
    assert data["active_view"] == "Neuron view" and data["selection"] == [2, 4]

    other = _window(qtbot, tiny_model_dir)
    done = []
    assert session.open_session(other, path, done.append)
    qtbot.waitUntil(lambda: bool(done), timeout=LOAD_TIMEOUT_MS)
    st = other.state
    assert other.editor.toPlainText() == pred.text and st.prediction.tokens == pred.tokens
    assert (st.layer, st.head, st.selection) == (1, 0, (2, 4))
    assert other.file_actions.current_view_name() == "Neuron view"
    res = st.explanations["grad_x_input"]
    np.testing.assert_allclose(res.explanation.scores, _fake_result(pred).explanation.scores)
    assert res.faithfulness.comprehensiveness_aopc == 0.25 and res.faithfulness.per_k[5]["tokens"] == 1
    assert other.errors == []


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ('{"format": "attention-explorer-session", "version": 1, "text": "abc"', "damaged"),
        ("\x00\xff garbage", "damaged"),
        ('{"format": "attention-explorer-session", "version": 99, "text": "abc"}', "newer version"),
        ('{"format": "attention-explorer-session", "version": 1, "text": 5}', "damaged"),
        ('{"hello": "world"}', "not an Attention Explorer session"),
    ],
)
def test_bad_session_files_get_a_clear_message(tmp_path, content, words):
    from desktop_app.window.session.save_open import SessionError, read_session

    p = tmp_path / "bad.aesession.json"
    p.write_text(content, encoding="utf-8", errors="surrogateescape")
    with pytest.raises(SessionError, match=words):
        read_session(p)


def test_opening_a_damaged_session_shows_a_message_and_keeps_the_text(qtbot, tiny_model_dir, tmp_path):
    from desktop_app.window.session import save_open as session

    win = _window(qtbot, tiny_model_dir)
    win.editor.setPlainText("keep me")
    p = tmp_path / "newer.json"
    p.write_text(json.dumps({"format": session.FORMAT, "version": session.VERSION + 1, "text": "x"}))
    assert not session.open_session(win, p)
    assert len(win.errors) == 1 and "newer version" in win.errors[0]
    assert win.editor.toPlainText() == "keep me"
    labels = [a.text() for a in win.menuBar().actions()[0].menu().actions()]
    assert any("Save sessi" in t.replace("&", "") or "Save session" in t.replace("&", "") for t in labels)
    assert any("Open session" in t.replace("&", "") for t in labels)


def test_session_keeps_show_head_mask_and_pins(qtbot, tiny_model_dir, tmp_path):
    """Issue 25: the "Show" choice, the heads switched off and the pinned texts survive a save and an open."""
    from desktop_app.window.session import save_open as session

    win = _window(qtbot, tiny_model_dir)
    L, H = win.state.n_layers, win.state.n_heads
    with qtbot.waitSignal(win.state.events.prediction, timeout=LOAD_TIMEOUT_MS):
        win.open_review("The acting was good.")
    win.state.pin_current()
    mask = np.ones((L, H), np.float32)
    mask[0, 1] = 0
    with qtbot.waitSignal(win.state.events.prediction, timeout=LOAD_TIMEOUT_MS):
        win.state.set_head_mask(mask)  # the window analyses the review again with head 2 of layer 1 off
    with qtbot.waitSignal(win.state.events.prediction, timeout=LOAD_TIMEOUT_MS):
        win.open_review("The acting was not good.")
    win.state.set_show("alti")
    path = tmp_path / "s.aesession.json"
    session.write_session(session.capture(win), path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["version"] == session.VERSION and data["show"] == "alti"
    assert data["head_mask"][0][1] == 0 and sum(map(sum, data["head_mask"])) == L * H - 1
    assert [p["text"] for p in data["pins"]] == ["The acting was good."] and data["pins"][0]["head_mask"] is None

    other = _window(qtbot, tiny_model_dir)
    done = []
    assert session.open_session(other, path, done.append)
    qtbot.waitUntil(lambda: bool(done), timeout=LOAD_TIMEOUT_MS)
    st = other.state
    assert st.show == "alti" and st.head_mask is not None and np.array_equal(st.head_mask, mask)
    assert st.prediction.text == "The acting was not good."
    np.testing.assert_allclose(st.prediction.probabilities,
                               other.predictor.predict("The acting was not good.", head_mask=mask).probabilities,
                               atol=1e-6)
    assert [p.text for p in st.pins] == ["The acting was good."] and st.pins[0].head_mask is None
    np.testing.assert_allclose(st.pins[0].prediction.probabilities,
                               other.predictor.predict("The acting was good.").probabilities, atol=1e-6)
    assert other.errors == []


def test_version_1_sessions_still_open_and_bad_masks_are_refused(tmp_path):
    from desktop_app.window.session.save_open import SessionError, read_session

    p = tmp_path / "v1.aesession.json"
    p.write_text(json.dumps({"format": "attention-explorer-session", "version": 1, "text": "abc", "layer": 1}))
    s = read_session(p)
    assert (s.text, s.layer, s.show, s.head_mask, s.pins) == ("abc", 1, "attention", None, ())
    p.write_text(json.dumps({"format": "attention-explorer-session", "version": 2, "text": "abc",
                             "head_mask": [[1, 2]]}))
    with pytest.raises(SessionError, match="head_mask"):
        read_session(p)
    p.write_text(json.dumps({"format": "attention-explorer-session", "version": 2, "text": "abc", "show": "x"}))
    with pytest.raises(SessionError, match="show"):
        read_session(p)


# -- issue 33, item 6: a session saved with another model offers to switch to it -------------------------------
@pytest.fixture
def other_model_dir(tmp_path):
    """A second tiny model folder (other weights), as the model a session was saved with."""
    from tests.fixtures.tiny_models import make_random_model_dir

    return make_random_model_dir(tmp_path / "other-model", seed=7)


def _saved_with(qtbot, model_dir, path):
    """Save a session (a pin, layer 1 head 0, a selection) analysed with ``model_dir``; returns its prediction."""
    from desktop_app.window.session import save_open as session

    win = _window(qtbot, model_dir)
    with qtbot.waitSignal(win.state.events.prediction, timeout=LOAD_TIMEOUT_MS):
        win.open_review("The acting was good.")
    win.state.pin_current()
    with qtbot.waitSignal(win.state.events.prediction, timeout=LOAD_TIMEOUT_MS):
        win.open_review("A slow start, then a wonderful second half.")
    win.state.set_layer_head(1, 0)
    win.state.set_selection((1, 3))
    session.write_session(session.capture(win), path)
    pred = win.state.prediction
    win.close()
    return pred


def _answer(qtbot, win, yes: bool):
    from PySide6.QtWidgets import QMessageBox

    qtbot.waitUntil(lambda: getattr(win, "session_model_box", None) is not None, timeout=LOAD_TIMEOUT_MS)
    box = win.session_model_box
    assert "saved with" in box.text() and "Switch" in box.text()
    box.button(QMessageBox.Yes if yes else QMessageBox.No).click()


def test_a_session_of_another_model_switches_to_it_and_restores_everything(qtbot, tiny_model_dir, other_model_dir,
                                                                          tmp_path):
    from desktop_app.window.session import save_open as session
    from desktop_app.window.model_menu import folder_key

    path = tmp_path / "other.aesession.json"
    saved = _saved_with(qtbot, other_model_dir, path)
    win = _window(qtbot, tiny_model_dir)
    done = []
    assert session.open_session(win, path, done.append)
    assert not done and folder_key(win.model_info.model_dir) == folder_key(tiny_model_dir)  # asked first
    _answer(qtbot, win, yes=True)
    qtbot.waitUntil(lambda: bool(done), timeout=LOAD_TIMEOUT_MS)
    st = win.state
    assert folder_key(win.model_info.model_dir) == folder_key(other_model_dir)
    assert win.model_menu.current == folder_key(other_model_dir)
    assert st.prediction.text == saved.text
    np.testing.assert_allclose(st.prediction.probabilities, saved.probabilities, atol=1e-6)  # the session's model
    assert (st.layer, st.head, st.selection) == (1, 0, (1, 3))
    assert [p.text for p in st.pins] == ["The acting was good."]
    assert win.errors == []


def test_keeping_the_current_model_restores_the_session_with_a_note(qtbot, tiny_model_dir, other_model_dir,
                                                                   tmp_path):
    from desktop_app.window.session import save_open as session
    from desktop_app.window.model_menu import folder_key

    path = tmp_path / "other.aesession.json"
    saved = _saved_with(qtbot, other_model_dir, path)
    win = _window(qtbot, tiny_model_dir)
    messages, done = [], []
    win.statusBar().messageChanged.connect(messages.append)
    assert session.open_session(win, path, done.append)
    _answer(qtbot, win, yes=False)
    qtbot.waitUntil(lambda: bool(done), timeout=LOAD_TIMEOUT_MS)
    assert folder_key(win.model_info.model_dir) == folder_key(tiny_model_dir)
    assert win.state.prediction.text == saved.text
    assert any("saved with" in m for m in messages)


def test_a_session_whose_model_folder_is_gone_opens_with_the_model_in_use(qtbot, tiny_model_dir, other_model_dir,
                                                                          tmp_path):
    import shutil

    from desktop_app.window.session import save_open as session

    path = tmp_path / "other.aesession.json"
    saved = _saved_with(qtbot, other_model_dir, path)
    shutil.rmtree(other_model_dir)
    win = _window(qtbot, tiny_model_dir)
    done = []
    assert session.open_session(win, path, done.append)
    assert getattr(win, "session_model_box", None) is None  # nothing to switch to: nothing asked
    qtbot.waitUntil(lambda: bool(done), timeout=LOAD_TIMEOUT_MS)
    assert win.state.prediction.text == saved.text
