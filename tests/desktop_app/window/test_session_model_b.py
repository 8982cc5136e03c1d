"""Sessions keep model B (issue 44, session version 5): its folder and its pins are saved, and opening the session
loads model B from that folder and restores its pins with the same numbers; a model B that cannot be loaded leaves the
rest restored with one note naming the folder; a session without model B leaves the open one alone; versions 1-4 open
as before."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from gui_helpers import loaded_window

pytestmark = [pytest.mark.gui, pytest.mark.timeout(300)]
TIMEOUT_MS = 60_000
TEXT_A = "The acting was good."
TEXT_B = "A wonderful film, loved it, though the ending dragged."


def _load_b(qtbot, win, folder):
    second = win.model_menu.second
    with qtbot.waitSignal(second.changed, timeout=TIMEOUT_MS):
        second.load(folder)
    return second


def _analysed(qtbot, win, text: str) -> None:
    with qtbot.waitSignal(win.state.events.prediction, timeout=TIMEOUT_MS):
        win.open_review(text)


def _compared_with_b(qtbot, win):
    """The Compare result of the newest pin (model B's) with the current text, once it has arrived."""
    def shown() -> bool:
        r = win.compare.latest
        return r is not None and r.names == ("model B", "model A") and win.compare.message == ""

    qtbot.waitUntil(shown, timeout=TIMEOUT_MS)
    return win.compare.latest


def _opened(qtbot, win, path) -> None:
    from desktop_app.window.session import save_open as session

    done = []
    assert session.open_session(win, path, done.append)
    qtbot.waitUntil(lambda: bool(done), timeout=TIMEOUT_MS)


def _write(path: Path, **fields) -> Path:
    from desktop_app.window.session.save_open import FORMAT

    path.write_text(json.dumps({"format": FORMAT, **fields}), encoding="utf-8")
    return path


def test_a_session_brings_back_model_b_and_its_pin(qtbot, tiny_model_dir, model_b, tmp_path):
    from desktop_app.window.session import save_open as session
    from desktop_app.window.model_menu import folder_key
    from model import Predictor

    win = loaded_window(qtbot, tiny_model_dir)
    win.compare.set_method("grad_x_input")
    _analysed(qtbot, win, TEXT_A)
    a_pin = win.state.pin_current()
    second = _load_b(qtbot, win, model_b)
    _analysed(qtbot, win, TEXT_B)
    second.pin_text()
    before = _compared_with_b(qtbot, win)
    path = tmp_path / "ab.aesession.json"
    session.write_session(session.capture(win), path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["version"] == session.VERSION >= 5 and data["model_b_dir"] == folder_key(model_b)
    assert [(p["text"], p["model"], p["head_mask"]) for p in data["pins"]] == [(TEXT_A, "", None), (TEXT_B, "B", None)]
    win.close()

    other = loaded_window(qtbot, tiny_model_dir)
    other.compare.set_method("grad_x_input")
    _opened(qtbot, other, path)
    b = other.model_menu.second
    assert b.predictor is not None and folder_key(b.folder) == folder_key(model_b) and not b.box.isHidden()
    st = other.state
    assert st.prediction.text == TEXT_B
    assert [(p.text, p.of_model_b) for p in st.pins] == [(TEXT_A, False), (TEXT_B, True)]
    np.testing.assert_allclose(st.pins[0].prediction.probabilities, a_pin.prediction.probabilities, atol=1e-6)
    after = _compared_with_b(qtbot, other)
    assert after.pinned.words.words == before.pinned.words.words
    np.testing.assert_allclose(after.pinned.probabilities, before.pinned.probabilities, atol=1e-6)
    np.testing.assert_allclose(after.pinned.importance, before.pinned.importance, atol=1e-5)
    np.testing.assert_allclose(after.current.importance, before.current.importance, atol=1e-5)
    alone = Predictor.from_pretrained(model_b, device="cpu").predict(TEXT_B).probabilities  # B's own reading
    np.testing.assert_allclose(after.pinned.probabilities, alone, atol=1e-5)
    qtbot.waitUntil(lambda: b.box.verdict.text() != "", timeout=TIMEOUT_MS)  # B's verdict on the restored text
    assert other.errors == [] and b.error_box is None

    loaded = b.predictor  # the same session again: model B is already the session's, nothing is loaded
    _opened(qtbot, other, path)
    assert b.predictor is loaded and [p.of_model_b for p in other.state.pins] == [False, True]


@pytest.mark.parametrize("kind", ["gone", "relative", "broken", "other labels"])
def test_a_model_b_that_cannot_be_loaded_leaves_the_rest_restored_with_a_note(qtbot, tiny_model_dir, other_labels,
                                                                             tmp_path, kind):
    from desktop_app.window.model_menu import folder_key

    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{not json", encoding="utf-8")
    folder = {"gone": str(tmp_path / "gone"), "relative": "models/b", "broken": str(broken),
              "other labels": str(other_labels)}[kind]
    why = {"gone": "does not exist here", "relative": "relative path", "broken": "Could not load model B",
           "other labels": "different labels"}[kind]
    path = _write(tmp_path / "s.aesession.json", version=5, text=TEXT_B, model_dir=str(tiny_model_dir),
                  model_b_dir=folder, pins=[{"text": TEXT_A, "head_mask": None},
                                            {"text": TEXT_B, "head_mask": None, "model": "B"}])
    win = loaded_window(qtbot, tiny_model_dir)
    _opened(qtbot, win, path)
    st = win.state
    assert st.prediction.text == TEXT_B and [(p.text, p.of_model_b) for p in st.pins] == [(TEXT_A, False)]
    second = win.model_menu.second
    assert second.predictor is None and second.loading is None and second.error_box is None and win.errors == []
    note = win.statusBar().currentMessage()
    shown = folder if kind == "relative" else folder_key(folder)
    assert "model B" in note and shown in note and why in note and "1 pin(s) of model B were left out" in note, note


def test_a_session_without_model_b_leaves_the_open_model_b_alone(qtbot, tiny_model_dir, model_b, tmp_path):
    """A version 4 session (no model B): the model B open stays open; the pins are the session's."""
    win = loaded_window(qtbot, tiny_model_dir)
    second = _load_b(qtbot, win, model_b)
    loaded = second.predictor
    _analysed(qtbot, win, TEXT_B)
    second.pin_text()
    path = _write(tmp_path / "v4.aesession.json", version=4, text=TEXT_B, model_dir=str(tiny_model_dir), window=0,
                  pins=[{"text": TEXT_A, "head_mask": None, "text_pair": None}])
    _opened(qtbot, win, path)
    assert second.predictor is loaded and not second.box.isHidden()
    assert [(p.text, p.of_model_b) for p in win.state.pins] == [(TEXT_A, False)] and win.errors == []


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_older_versions_read_without_model_b(tmp_path, version):
    from desktop_app.window.session.save_open import read_session

    path = _write(tmp_path / "old.aesession.json", version=version, text="a fine film",
                  pins=[{"text": "dull", "head_mask": None}])
    s = read_session(path)
    assert s.model_b_dir is None and s.pins == ({"text": "dull", "head_mask": None, "text_pair": None, "model": ""},)


def test_version_5_round_trip_and_bad_model_b_fields(tmp_path):
    from desktop_app.window.session.save_open import Session, SessionError, read_session, write_session

    pins = ({"text": "dull", "head_mask": [[1.0, 0.0], [1.0, 1.0]], "text_pair": None, "model": ""},
            {"text": "great", "head_mask": None, "text_pair": None, "model": "B"})
    for model_b_dir in ("", str(tmp_path / "b"), None):
        saved = Session(text="a fine film", model_dir="", pins=pins, model_b_dir=model_b_dir)
        write_session(saved, tmp_path / "s.aesession.json")
        assert read_session(tmp_path / "s.aesession.json") == saved
    for fields, named in (({"model_b_dir": 5}, "model_b_dir"),
                          ({"pins": [{"text": "dull", "model": "C"}]}, r"pins\[0\]\.model")):
        path = _write(tmp_path / "bad.aesession.json", version=5, text="a fine film", **fields)
        with pytest.raises(SessionError, match=named):
            read_session(path)


def test_merged_pins_keep_the_saved_order():
    from desktop_app.records import Pin
    from desktop_app.window.session.model_b import merged_pins

    saved = [{"text": t, "head_mask": None, "text_pair": None, "model": m} for t, m in
             (("one", ""), ("two", "B"), ("three", ""))]
    a_pins = (Pin("one", "p1"), Pin("three", "p3"))
    assert [(p.text, p.model) for p in merged_pins(saved, a_pins, True)] == [("one", ""), ("two", "B"), ("three", "")]
    assert merged_pins(saved, a_pins, False) == a_pins
    assert [p.text for p in merged_pins(saved, a_pins[:1], True)] == ["one", "two"]  # a pin analysed away
