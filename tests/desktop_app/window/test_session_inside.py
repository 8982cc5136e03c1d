"""Sessions keep the encoder block's views' settings (issue 53, section 5; session version 7): the Components dock's
neuron count and clicked part, the contribution graph's threshold and the Block view's layer come back, a view that
refuses its settings is named in the note, and a damaged ``inside`` field is refused naming the field."""

from __future__ import annotations

import json

import pytest
from gui_helpers import loaded_window

pytestmark = pytest.mark.gui

LOAD_TIMEOUT_MS = 60_000
TEXT = "A slow start, then a wonderful second half that I would watch again."


def _open(qtbot, win, path):
    from desktop_app.window.session import save_open as session

    done = []
    assert session.open_session(win, path, done.append)
    qtbot.waitUntil(lambda: bool(done), timeout=LOAD_TIMEOUT_MS)


def test_the_block_views_settings_survive_a_save_and_an_open(qtbot, tiny_model_dir, tmp_path):
    from desktop_app.window.session import save_open as session

    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    with qtbot.waitSignal(win.state.events.prediction, timeout=LOAD_TIMEOUT_MS):
        win.open_review(TEXT)
    panels = win.inside_panels
    panels["components"].top_spin.setValue(17)
    panels["graph"].view.set_threshold(0.2)
    panels["block_trace"].layer.setValue(1)
    path = tmp_path / "inside.aesession.json"
    session.write_session(session.capture(win), path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["version"] == 7
    assert data["inside"]["components"]["top_neurons"] == 17
    assert data["inside"]["graph"]["threshold"] == pytest.approx(0.2)
    assert data["inside"]["block_trace"]["layer"] == 1

    other = loaded_window(qtbot, tiny_model_dir, panels=True)
    mine = other.inside_panels
    assert mine["components"].top_spin.value() != 17 and mine["block_trace"].layer.value() != 1
    _open(qtbot, other, path)
    assert mine["components"].top_spin.value() == 17
    assert mine["graph"].settings()["threshold"] == pytest.approx(0.2)
    assert mine["block_trace"].layer.value() == 1


def test_a_view_refusing_its_settings_is_named_and_the_others_are_kept(qtbot, tiny_model_dir, tmp_path):
    from desktop_app.window.model_menu import folder_key
    from desktop_app.window.session import save_open as session

    path = tmp_path / "bad_layer.aesession.json"
    payload = session.Session(text=TEXT, model_dir=folder_key(tiny_model_dir), inside={"block_trace": {"layer": 99}, "components": {"top_neurons": 5}})
    session.write_session(payload, path)
    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    notes = []
    win.statusBar().messageChanged.connect(notes.append)
    _open(qtbot, win, path)
    assert win.inside_panels["components"].top_spin.value() == 5
    assert win.inside_panels["block_trace"].layer.value() != 99
    assert any("Block view's settings were left out" in n and "layer" in n for n in notes), notes


@pytest.mark.parametrize(("inside", "named"), [
    ([1, 2], "inside is [1, 2], not an object"),
    ({"components": "big"}, "inside.components is 'big', not an object"),
    ({"components": {"top_neurons": [3]}}, "inside.components.top_neurons"),
    ({"graph": {"threshold": "\x00"}}, "inside.graph.threshold holds a NUL byte"),
])
def test_a_damaged_inside_field_is_refused_naming_it(tmp_path, inside, named):
    from desktop_app.window.session import save_open as session

    path = tmp_path / "damaged.aesession.json"
    path.write_text(json.dumps({"format": session.FORMAT, "version": 7, "text": "abc", "inside": inside}))
    with pytest.raises(session.SessionError, match="damaged") as err:
        session.read_session(path)
    assert named in str(err.value)


def test_an_unknown_view_of_a_newer_app_is_dropped_and_version_6_files_open(tmp_path):
    from desktop_app.window.session import save_open as session

    path = tmp_path / "newer.aesession.json"
    path.write_text(json.dumps({"format": session.FORMAT, "version": 7, "text": "abc",
                                "inside": {"heads_x": {"a": 1}, "graph": {"threshold": 0.1}}}))
    assert session.read_session(path).inside == {"graph": {"threshold": 0.1}}
    path.write_text(json.dumps({"format": session.FORMAT, "version": 6, "text": "abc"}))
    assert session.read_session(path).inside == {}
