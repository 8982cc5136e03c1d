"""Issue 32: damaged session files get a message naming the field; a restore always ends and always matches.

The read cases are parametrised (one damaged field each, on a valid version-2 session); the restore cases open
real sessions in a window over the tiny random model.
"""

from __future__ import annotations

import json
import os
import threading

import pytest
from gui_helpers import LOAD_TIMEOUT_MS, loaded_window


def _record(method="grad_x_input", tokens=("[CLS]", "good"), delta=None, per_k=None) -> dict:
    e = {"method": method, "scores": [0.5] * len(tokens), "signed": True, "target": 1, "elapsed_s": 0.01,
         "convergence_delta": delta, "tokens": list(tokens)}
    f = {"method": method, "comprehensiveness_aopc": 0.2, "sufficiency_aopc": 0.1,
         "per_k": {"5": {"comprehensiveness": 0.2, "sufficiency": 0.1, "tokens": 1}} if per_k is None else per_k,
         "elapsed_s": 0.01, "target": 1, "p_full": 0.7}
    return {"explanation": e, "faithfulness": f}


def _session(**changes) -> dict:
    data = {"format": "attention-explorer-session", "version": 2, "text": "A good film.", "model_dir": "",
            "layer": 1, "head": 0, "selection": [1, 2], "active_view": "", "explanations": {}, "show": "attention",
            "head_mask": None, "pins": []}
    data.update(changes)
    return data


def _write(tmp_path, data, name="s.aesession.json"):
    path = tmp_path / name
    text = data if isinstance(data, str) else json.dumps(data, allow_nan=True)
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    return path


INF = float("inf")
DAMAGED = [
    (_session(layer=INF), "layer"), (_session(layer=-INF), "layer"), (_session(head=INF), "head"),
    (_session(selection=[1, INF]), r"selection\[1\]"), (_session(selection=[1, -3]), r"selection\[1\]"),
    (_session(layer="2"), "layer"), (_session(layer=True), "layer"), (_session(selection=5), "selection"),
    (_session(model_dir="a\x00b"), "model_dir.*NUL"), (_session(model_dir=5), "model_dir"),
    (_session(text=""), "text is empty"), (_session(text="  \n "), "text is empty"),
    (_session(text=None), "text"), (_session(head_mask=[[1, float("nan")]]), "head_mask"),
    (_session(head_mask=[1, 0]), "head_mask"), (_session(head_mask=[["a"]]), "head_mask"),
    (_session(pins=[{"text": ""}]), r"pins\[0\].text"), (_session(pins={"text": "x"}), "pins"),
    (_session(pins=[5]), r"pins\[0\]"), (_session(active_view=["x"]), "active_view"), (_session(show=[1]), "show"),
    (_session(explanations=[1]), "explanations"),
    (_session(explanations={"grad_x_input": 5}), "grad_x_input"),
    (_session(explanations={"grad_x_input": _record(per_k=[1, 2])}), "per_k"),
    (_session(explanations={"grad_x_input": _record(delta="x")}), "convergence_delta"),
    (_session(explanations={"grad_x_input": {**_record(), "faithfulness": None}}), "faithfulness"),
    (_session(explanations={"grad_x_input": _record(tokens=("a", 5))}), r"tokens\[1\]"),
    (_session(version=True), "version"),
    # issue 56: a pin's model that names no model; the corpus map's strings; a score float32 cannot hold
    *[(_session(version=5, pins=[{"text": "Good.", "model": bad}]), r"pins\[0\].model")
      for bad in (False, 0, [], None, "A", "b")],
    (_session(version=5, corpus_map={"slices": [{"name": "a\x00b", "sources": []}]}),
     r"corpus_map.slices\[0\].name holds a NUL"),
    (_session(version=5, corpus_map={"slices": [{"name": "a", "sources": ["r.csv:row 1", "x\ud800"]}]}),
     r"corpus_map.slices\[0\].sources\[1\] holds a lone surrogate"),
    (_session(version=5, corpus_map={"word": "gr\x00eat"}), r"corpus_map.word holds a NUL"),
    (_session(explanations={"grad_x_input": {**_record(), "explanation": {**_record()["explanation"],
                                                                           "scores": [0.5, 1e300]}}}),
     r"explanation.scores\[1\] is 1e\+300, outside the float32 range"),
    ('{"format": "attention-explorer-session", "version": 2, "text": "x", "a": ' + "[" * 5000 + "]" * 5000 + "}",
     "nested"),
    ('{"format": "attention-explorer-session", "version": 2, "text": "x", "a": ' + "[" * 40 + "]" * 40 + "}",
     "nested"),
]


@pytest.mark.parametrize(("data", "field"), DAMAGED, ids=[f"{i}-{f}" for i, (_d, f) in enumerate(DAMAGED)])
def test_a_damaged_field_is_named(tmp_path, data, field):
    from desktop_app.window.session.save_open import SessionError, read_session

    with pytest.raises(SessionError, match=field):
        read_session(_write(tmp_path, data))


def test_a_pin_of_either_model_and_corpus_map_strings_still_open(tmp_path):
    """The values the app writes stay valid: "B" (model B), "" or no key (model A); float32's largest score."""
    from desktop_app.window.session.save_open import read_session

    pins = [{"text": "Good.", "model": "B"}, {"text": "Good.", "model": ""}, {"text": "Good."}]
    big = {**_record(), "explanation": {**_record()["explanation"], "scores": [0.5, -3.4e38]}}
    s = read_session(_write(tmp_path, _session(version=5, pins=pins, explanations={"grad_x_input": big},
                                               corpus_map={"slices": [{"name": "café ✓", "sources": ["a\tb"]}]})))
    assert [p["model"] for p in s.pins] == ["B", "", ""]
    assert s.corpus_map.slices[0].name == "café ✓"


@pytest.mark.parametrize(("text", "expected"), [
    ("Good\r\nfilm.", "Good\nfilm."), ("Good\rfilm.", "Good\nfilm."), ("Good\u2028film.", "Good\nfilm."),
    ("Good\u2029film.", "Good\nfilm."), ("Good \ud800film.", "Good film."), ("\ufeffGood.", "Good."),
])
def test_texts_are_normalised_as_the_editor_does(qtbot, tmp_path, text, expected):
    from PySide6.QtWidgets import QPlainTextEdit

    from desktop_app.window.session.save_open import read_session
    from desktop_app.window.session.fields import editor_text

    assert read_session(_write(tmp_path, _session(text=text))).text == expected == editor_text(text)
    editor = QPlainTextEdit()
    qtbot.addWidget(editor)
    editor.setPlainText(text)
    assert editor.toPlainText() == expected


def test_unknown_and_non_numeric_method_ids_are_left_out(tmp_path):
    from desktop_app.window.session.save_open import read_session

    s = read_session(_write(tmp_path, _session(explanations={
        "frobnicate": _record("frobnicate"), "5": _record("5"), "grad_x_input": _record()})))
    assert list(s.explanations) == ["grad_x_input"] and s.dropped == ("frobnicate", "5")


def test_only_regular_files_are_opened_and_size_is_checked_first(tmp_path):
    from desktop_app.window.session.save_open import SessionError, read_session

    with pytest.raises(SessionError, match="not a regular file"):
        read_session(tmp_path)
    big = tmp_path / "big.aesession.json"
    with open(big, "wb") as f:
        f.truncate(50 * 2**20)  # sparse: 50 MB that are never read
    with pytest.raises(SessionError, match="at most 16 MB"):
        read_session(big)
    if not hasattr(os, "mkfifo"):
        return
    fifo = tmp_path / "pipe.aesession.json"
    os.mkfifo(fifo)
    outcome = []

    def read():
        try:
            read_session(fifo)
        except SessionError as exc:
            outcome.append(str(exc))

    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(10)
    if t.is_alive():  # unblock the reader so the test process ends
        with open(fifo, "w"):
            pass
    assert outcome and "not a regular file" in outcome[0]


pytestmark = pytest.mark.gui


@pytest.mark.parametrize("text", ["Good\r\nfilm, bad end.", "Good\rfilm.", "Good\u2028film.", "Good \ud800film."])
def test_a_restore_always_ends_and_matches(qtbot, tiny_model_dir, tmp_path, text):
    from desktop_app.window.session import save_open as session

    win = loaded_window(qtbot, tiny_model_dir)
    path = _write(tmp_path, _session(text=text, layer=1, head=0, selection=[1, 2], pins=[{"text": "Bad \ud800plot."}],
                                     active_view="Neuron view", model_dir=win.model_info.model_dir))
    done = []
    assert session.open_session(win, path, done.append)
    qtbot.waitUntil(lambda: bool(done), timeout=LOAD_TIMEOUT_MS)
    st = win.state
    assert st.prediction.text == win.editor.toPlainText() and "\r" not in st.prediction.text
    assert (st.layer, st.head, st.selection) == (1, 0, (1, 2)) and win.file_actions.current_view_name() == "Neuron view"
    assert [p.text for p in st.pins] == ["Bad plot."] and win.errors == []


def test_restored_integrated_gradients_without_delta_and_notes(qtbot, tiny_model_dir, tmp_path):
    from desktop_app.app import attach_panels
    from desktop_app.window.session import save_open as session

    win = loaded_window(qtbot, tiny_model_dir)
    attach_panels(win)
    tokens = win.predictor.predict("A good film.").tokens
    path = _write(tmp_path, _session(layer=7, selection=[1, 40], model_dir=win.model_info.model_dir, explanations={
        "integrated_gradients": _record("integrated_gradients", tokens), "saliency_x": _record("saliency_x"),
        "grad_x_input": _record("grad_x_input", ("other",))}))
    done = []
    assert session.open_session(win, path, done.append)
    qtbot.waitUntil(lambda: bool(done), timeout=LOAD_TIMEOUT_MS)
    restored = win.state.explanations  # the panel may add its quick methods meanwhile
    assert restored["integrated_gradients"].explanation.convergence_delta is None and "saliency_x" not in restored
    assert win.errors == []
    note = win.statusBar().currentMessage()
    assert "saliency_x" in note and "grad_x_input" in note and "Layer 8" in note and "1 selected token" in note


def test_a_failed_analysis_ends_the_restore_with_a_message(qtbot, tiny_model_dir, tmp_path, monkeypatch):
    from desktop_app.window.session import save_open as session

    win = loaded_window(qtbot, tiny_model_dir)
    done = []
    session.restore(win, session.Session(text="A good film.", model_dir=win.model_info.model_dir), done.append)
    win.analysis_failed.emit("boom")
    assert done and len(win.errors) == 1 and "boom" in win.errors[0]


def _answer_and_wait(qtbot, win, done, switch: bool) -> None:
    """Wait until the restore ends (``done``), answering the offer to switch models when one is asked."""
    from PySide6.QtWidgets import QMessageBox

    def ended() -> bool:
        box = getattr(win, "session_model_box", None)
        if box is not None:
            box.button(QMessageBox.Yes if switch else QMessageBox.No).click()
        return bool(done)

    qtbot.waitUntil(ended, timeout=LOAD_TIMEOUT_MS)


@pytest.mark.parametrize("switch", [True, False], ids=["switch", "keep"])
@pytest.mark.parametrize("kind", ["not a model", "relative up the tree", "100,000 characters", "missing"])
def test_a_session_s_model_dir_never_stops_the_restore(qtbot, tiny_model_dir, tmp_path, kind, switch):
    """Issue 46: a session whose model_dir is a folder that is no model, a relative path that climbs the tree, a
    path too long for the system or a folder gone: the restore ends with the text analysed by the model in use and
    a note that names model_dir (or, for a folder gone, the model it was saved with)."""
    from desktop_app.window.session import save_open as session

    (tmp_path / "plain").mkdir()
    model_dir = {"not a model": str(tmp_path / "plain"), "relative up the tree": "../" * 40 + "tmp",
                 "100,000 characters": "/" + "d" * 100_000, "missing": str(tmp_path / "gone")}[kind]
    win = loaded_window(qtbot, tiny_model_dir)
    path = _write(tmp_path, _session(text="A good film.", model_dir=model_dir))
    done = []
    assert session.open_session(win, path, done.append)
    _answer_and_wait(qtbot, win, done, switch)
    assert win.state.prediction is not None and win.state.prediction.text == "A good film."
    assert win.model_info.model_dir == str(tiny_model_dir) and win.errors == []
    note = win.statusBar().currentMessage()
    assert ("model_dir" in note) if kind != "missing" else ("saved with the model in" in note), note
