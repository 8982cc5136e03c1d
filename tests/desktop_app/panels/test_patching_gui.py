"""The Patching dock (issue 53 section 3; desktop_app/panels/inside/patching.py), offscreen, through the real window:
the heatmap's numbers are the API's, progress reaches the end, Cancel stops the work, the empty state says what to
do, unaligned positions are named, a hidden dock computes nothing, a head cell selects its head."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from gui_helpers import loaded_window
from PySide6.QtCore import Qt

from desktop_app.panels.inside.patching import CANCELLED_NOTE, NO_PIN_NOTE, TITLE
from desktop_app.views.inside.patching import grid_of

pytestmark = [pytest.mark.gui, pytest.mark.timeout(300)]
WAIT_MS = 120_000
CLEAN = "A wonderful film, I loved it and the acting is good."
CORRUPTED = "A wonderful film, I did not love it and the acting is bad."


def _analysed(qtbot, win, text: str) -> None:
    win.analyze_text(text)
    qtbot.waitUntil(lambda: win.state.prediction is not None and win.state.prediction.document.text == text,
                    timeout=WAIT_MS)


def _pair(qtbot, win, clean=CLEAN, corrupted=CORRUPTED) -> None:
    """Analyse and pin ``clean``, then analyse ``corrupted`` (the current text)."""
    _analysed(qtbot, win, clean)
    win.state.pin_current()
    _analysed(qtbot, win, corrupted)


def _result(qtbot, win):
    qtbot.waitUntil(lambda: win.state.inside.patching is not None, timeout=WAIT_MS)
    return win.state.inside.patching


def _panel(win):
    """The window's Patching dock controller."""
    return win.inside_panels["patching"]


def _same(shown: np.ndarray, expected: np.ndarray) -> None:
    np.testing.assert_array_equal(np.isnan(shown), np.isnan(expected))
    np.testing.assert_allclose(np.nan_to_num(shown), np.nan_to_num(expected), rtol=1e-5, atol=1e-6)


def _check_against_api(qtbot, win, site: str, direction: str = "denoise"):
    panel = _panel(win)
    panel.apply_settings({"site": site, "direction": direction})
    result = _result(qtbot, win)
    assert result.site == site and result.direction == direction
    panel.view.flush()
    api = win.predictor.activation_patching(CLEAN, CORRUPTED, site=site, target=win.state.task.target,
                                            direction=direction)
    _same(panel.view.matrix, grid_of(api))
    assert panel.view.matrix.shape == grid_of(api).shape
    assert f"{api.clean_score:.4g}" in panel.view.caption.text()
    assert f"{api.corrupted_score:.4g}" in panel.view.caption.text()
    assert panel.progress.value() == panel.progress.maximum() > 0  # the progress reached the end
    if site != "resid":  # each head / FFN cell's number is written in it
        assert panel.view.cell_numbers.texts == [(r, c, f"{v:.2f}") for (r, c), v in np.ndenumerate(grid_of(api))]
    row, col = np.argwhere(np.isfinite(panel.view.matrix))[-1]
    hover = panel.view.describe_cell(int(row), int(col))
    assert f"{float(api.effects.reshape(panel.view.matrix.shape)[row, col]):+.3f}" in hover
    assert f"{float(api.patched_scores.reshape(panel.view.matrix.shape)[row, col]):.4g}" in hover
    return api


def test_the_heatmap_shows_the_apis_numbers_and_a_head_click_selects_it(qtbot, tiny_model_dir):
    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    _pair(qtbot, win)
    assert win.state.inside.patching is None  # the dock is hidden (Read workspace): nothing computed
    win.docks.raise_view(TITLE)
    assert win.workspaces.current.key == "inside" and not win.docks.get(TITLE).isHidden()
    api = _check_against_api(qtbot, win, "resid")
    assert api.unaligned and all(name in _panel(win).view.unaligned_label.text() for name in api.unaligned)
    assert not _panel(win).view.hatch_item.path().isEmpty()  # the unaligned positions are hatched
    t = int(np.flatnonzero(api.alignment < 0)[0])
    assert "not patched" in _panel(win).view.describe_cell(1, t)
    _check_against_api(qtbot, win, "head")
    view = _panel(win).view
    qtbot.wait(50)
    where = view.glw.mapFromScene(view.cell_scene_pos(1, 1))
    qtbot.mouseMove(view.glw.viewport(), pos=where)
    qtbot.waitUntil(lambda: view.hover_label.text().startswith("L2.H2: restored share"), timeout=5000)
    qtbot.mouseClick(view.glw.viewport(), Qt.LeftButton, pos=where)
    assert win.state.layer_head == (1, 1)  # the head cell L2.H2 selected that head in the explorer
    _check_against_api(qtbot, win, "ffn")
    win.state.toggle_head(0, 0)  # a head switched off: patching (the API) runs every head, and the caption says so
    _panel(win).view.flush()
    assert "every head on" in _panel(win).view.caption.text()
    win.state.toggle_head(0, 0)
    noised = _check_against_api(qtbot, win, "resid", "noise")  # the corrupted text's activations into the clean one
    assert noised.tokens == tuple(win.state.pins[0].prediction.tokens)
    assert "noise: the corrupted" in _panel(win).view.caption.text()
    _panel(win).apply_settings({"site": "resid", "method": "attribution", "direction": "denoise"})
    result = _result(qtbot, win)
    _panel(win).view.flush()
    assert result.approximate and "Fast preview" in _panel(win).view.caption.text()
    with pytest.raises(ValueError, match="'direction'"):
        _panel(win).apply_settings({"direction": "sideways"})
    assert _panel(win).settings() == {"site": "resid", "direction": "denoise", "method": "attribution",
                                                        "clean_pin": None}


def test_cancel_stops_the_work_and_says_so(qtbot, tiny_model_dir):
    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    _pair(qtbot, win)
    lock = win.predictor._parts().pass_lock  # holding it keeps the worker before its first patched batch
    with lock:
        win.docks.raise_view(TITLE)
        assert _panel(win).running and _panel(win).cancel_button.isEnabled()
        qtbot.mouseClick(_panel(win).cancel_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not _panel(win).running, timeout=WAIT_MS)
    assert win.state.inside.patching is None and win.state.inside.note(TITLE.lower()) == CANCELLED_NOTE
    view = _panel(win).view
    view.flush()
    assert "cancelled" in view.caption.text() and view.matrix is None
    win.workspaces.switch("read")
    win.docks.raise_view(TITLE)  # shown again: a cancelled request is not restarted by itself
    qtbot.wait(200)
    assert win.state.inside.patching is None and not _panel(win).running
    _panel(win).run_button.click()  # Run computes it again
    assert _result(qtbot, win).site == "resid"


def test_cancel_during_a_pass_stops_inside_it(qtbot, tiny_model_dir, monkeypatch):
    """Cancel clicked while the first patched pass is inside its first layer (held there by a hook until the click):
    the job stops inside that pass (none of its layers finishes), not at the pass's end."""
    import threading

    import desktop_app.panels.inside.patching as dock
    from model.explain.taps import taps_of

    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    _pair(qtbot, win)
    job_thread, entered, release = [], threading.Event(), threading.Event()
    real_job = dock.patching_job
    monkeypatch.setattr(dock, "patching_job", lambda ctx, *a: job_thread.append(threading.get_ident()) or
                        real_job(ctx, *a))
    L, calls = win.predictor.config.n_layers, [0, 0]  # the patching job's layer calls: started, finished

    def started(*_):
        if job_thread and threading.get_ident() == job_thread[-1]:
            calls[0] += 1
            if calls[0] == 2 * L + 1:  # the first patched pass enters its first layer (after 2 unpatched passes)
                entered.set()
                release.wait(60)

    def finished(*_):
        if job_thread and threading.get_ident() == job_thread[-1]:
            calls[1] += 1

    layers = {t.layer: None for t in taps_of(win.predictor.model).layers}
    hooks = [h for m in layers for h in (m.register_forward_pre_hook(started), m.register_forward_hook(finished))]
    try:
        win.docks.raise_view(TITLE)
        qtbot.waitUntil(entered.is_set, timeout=WAIT_MS)
        qtbot.mouseClick(_panel(win).cancel_button, Qt.LeftButton)
        release.set()
        qtbot.waitUntil(lambda: not _panel(win).running, timeout=WAIT_MS)
    finally:
        release.set()
        for h in hooks:
            h.remove()
    assert win.state.inside.note(TITLE.lower()) == CANCELLED_NOTE and win.state.inside.patching is None
    assert calls == [2 * L + 1, 2 * L]  # the unpatched passes ran; the patched pass stopped inside its first layer


def test_no_pin_shows_the_instruction_and_pins_the_what_if_original(qtbot, tiny_model_dir):
    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    win.docks.raise_view(TITLE)
    _analysed(qtbot, win, CORRUPTED)
    assert win.state.inside.patching_note == NO_PIN_NOTE
    _panel(win).view.flush()
    assert _panel(win).view.caption.text() == NO_PIN_NOTE and not _panel(win).view.glw.isVisible()
    assert _panel(win).pin_button.isVisible() and _panel(win).pin_button.text() == "Pin this text"
    win.panels["whatif"].source = (CLEAN, None)  # as after "Edit this text" on CLEAN, an edit now on display
    _panel(win).request(force=True)
    assert _panel(win).pin_button.text() == "Pin the original"
    _panel(win).pin_button.click()
    qtbot.waitUntil(lambda: bool(win.state.pins), timeout=WAIT_MS)
    assert [p.text for p in win.state.pins] == [CLEAN] and win.state.pins[0].prediction.document.text == CLEAN
    result = _result(qtbot, win)
    assert result.clean_tokens == tuple(win.state.pins[0].prediction.tokens) and not _panel(win).pin_button.isVisible()


def test_the_pin_picker_chooses_the_clean_text(qtbot, tiny_model_dir):
    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    other = "The acting is good, the story dull."
    _analysed(qtbot, win, CLEAN)
    win.state.pin_current()
    _pair(qtbot, win, other, CORRUPTED)  # two pins: CLEAN, then the newer `other`
    win.docks.raise_view(TITLE)
    combo = _panel(win).pin_combo
    assert combo.count() == 2 and combo.itemText(0).startswith("newest: The acting")
    assert _result(qtbot, win).clean_tokens == tuple(win.predictor.predict(other).tokens)
    combo.setCurrentIndex(1)
    combo.activated.emit(1)  # as a user's pick
    qtbot.waitUntil(lambda: win.state.inside.patching is not None
                    and win.state.inside.patching.clean_tokens == tuple(win.predictor.predict(CLEAN).tokens),
                    timeout=WAIT_MS)
    panel = _panel(win)
    assert panel.settings()["clean_pin"] == 1  # the pick is kept in sessions ...
    panel.apply_settings({"clean_pin": None})
    assert combo.currentIndex() == 0 and panel.clean_pin().text == other
    panel.apply_settings({"clean_pin": 1})  # ... and comes back
    assert combo.currentIndex() == 1 and panel.clean_pin().text == CLEAN
    with pytest.raises(ValueError, match="'clean_pin'"):
        panel.apply_settings({"clean_pin": 2})
    win.state.unpin(0)  # CLEAN unpinned: the picker falls back to the newest
    assert combo.count() == 1 and _panel(win).clean_pin().text == other


def test_a_what_if_edit_is_patched_against_its_original(qtbot, tiny_model_dir):
    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    whatif = win.panels["whatif"]
    _analysed(qtbot, win, CLEAN)
    for name, box in whatif.picker.boxes.items():
        box.setChecked(name == "negation")
    whatif.run_generators()
    qtbot.waitUntil(lambda: not whatif.running and bool(whatif.edits), timeout=WAIT_MS)
    edit = whatif.edits[0]
    whatif.table.cellClicked.emit(0, 1)  # the edit becomes the current text, its original pinned
    qtbot.waitUntil(lambda: win.state.prediction.document.text == edit.edited_text, timeout=WAIT_MS)
    win.docks.raise_view(TITLE)
    result = _result(qtbot, win)
    api = win.predictor.activation_patching(CLEAN, edit.edited_text, target=win.state.task.target)
    assert result.clean_tokens == api.clean_tokens and result.corrupted_tokens == api.corrupted_tokens
    _same(result.effects, api.effects)


def test_a_hidden_dock_computes_nothing(qtbot, tiny_model_dir, monkeypatch):
    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    calls = []
    real = win.predictor.activation_patching
    monkeypatch.setattr(win.predictor, "activation_patching", lambda *a, **k: calls.append(a) or real(*a, **k))
    _pair(qtbot, win)
    _panel(win).apply_settings({"site": "head"})
    qtbot.wait(200)
    assert win.docks.get(TITLE).isHidden() and calls == [] and win.state.inside.patching is None
    win.docks.raise_view(TITLE)  # its workspace (Inside), its tab in front
    _result(qtbot, win)
    assert len(calls) == 1


def test_the_latest_request_wins(qtbot, tiny_model_dir):
    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    _pair(qtbot, win)
    shown = []
    win.state.inside.events.patching.connect(lambda new, *_: new is not None and shown.append(new.site))
    with win.predictor._parts().pass_lock:  # the residual request waits on the worker
        win.docks.raise_view(TITLE)
        _panel(win).apply_settings({"site": "ffn"})  # asked meanwhile: the residual one is stale
    assert _result(qtbot, win).site == "ffn"
    qtbot.wait(200)
    assert shown == ["ffn"]


def test_a_change_while_hidden_stops_the_running_request(qtbot, tiny_model_dir):
    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    _pair(qtbot, win)
    with win.predictor._parts().pass_lock:  # the worker waits before its first patched batch
        win.docks.raise_view(TITLE)
        assert _panel(win).running
        win.workspaces.switch("read")  # the dock leaves: the request runs on while nothing changes
        assert win.docks.get(TITLE).isHidden() and _panel(win).running
        _panel(win).apply_settings({"site": "head"})  # a change while hidden: that request is stale
        assert not _panel(win).running
    qtbot.wait(300)
    assert win.state.inside.patching is None and win.state.inside.patching_note == ""
    win.docks.raise_view(TITLE)
    assert _result(qtbot, win).site == "head"


def test_another_model_drops_the_pins_and_patches_with_the_new_one(qtbot, tiny_model_dir, tmp_path):
    from tests.fixtures.tiny_models import make_random_model_dir

    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    win.docks.raise_view(TITLE)
    _pair(qtbot, win)
    old = _result(qtbot, win)
    with qtbot.waitSignal(win.predictor_loaded, timeout=WAIT_MS):
        win.model_menu.open_model(make_random_model_dir(tmp_path / "other", seed=11))
    qtbot.waitUntil(lambda: win.state.prediction is not None, timeout=WAIT_MS)
    assert not win.state.pins and win.state.inside.patching is None
    assert win.state.inside.patching_note == NO_PIN_NOTE
    _pair(qtbot, win)
    new = _result(qtbot, win)
    api = win.predictor.activation_patching(CLEAN, CORRUPTED, target=win.state.task.target)
    _same(new.effects, api.effects)
    assert new.clean_score == pytest.approx(api.clean_score, rel=1e-5) and new.clean_score != old.clean_score


def test_a_tiny_hugging_face_model_and_one_without_a_head(qtbot, tmp_path):
    pytest.importorskip("transformers")
    from tests.fixtures.tiny_hf import make_tiny_hf_dir

    bert = make_tiny_hf_dir(tmp_path / "bert", "bert", init_std=0.5)  # 0.02 gives logits within 2e-5 of each other
    win = loaded_window(qtbot, bert, panels=True)
    win.docks.raise_view(TITLE)
    _pair(qtbot, win)
    _check_against_api(qtbot, win, "head")
    regression = loaded_window(qtbot, make_tiny_hf_dir(tmp_path / "reg", "bert", task="regression", init_std=0.5),
                               panels=True)
    regression.docks.raise_view(TITLE)
    _pair(qtbot, regression)
    result = _result(qtbot, regression)
    _panel(regression).view.flush()
    assert result.target == 0 and "Score: the predicted value" in _panel(regression).view.caption.text()
    headless = loaded_window(qtbot, make_tiny_hf_dir(tmp_path / "bare", "bert", head=False), panels=True)
    headless.docks.raise_view(TITLE)
    _analysed(qtbot, headless, CLEAN)
    assert "needs a classification head" in headless.state.inside.patching_note


def test_equal_scores_say_there_is_nothing_to_restore(qtbot):
    from gui_helpers import state_and_view

    from desktop_app.views.inside.patching import PatchingView
    from model.records.patching import PatchingResult

    state, view = state_and_view(qtbot, PatchingView, size=(500, 400))
    tokens = ("[CLS]", "good", "[SEP]")
    for corrupted, drawn in ((1.23456, False), (1.23457, False), (0.5, True)):
        gap = 1.23456 - corrupted
        effects = np.full((2, 3), np.nan, np.float32) if gap == 0 else np.full((2, 3), 0.25 / gap, np.float32)
        state.inside.set("patching", PatchingResult(
            site="resid", direction="denoise", method="exact", effects=effects, patched_scores=effects,
            clean_score=1.23456, corrupted_score=corrupted, target=1, label="positive", clean_tokens=tokens,
            corrupted_tokens=tokens, alignment=np.arange(3), unaligned=(), passes=3, elapsed_s=0.01))
        view.flush()
        assert (view.matrix is not None) == drawn
        assert ("Nothing to restore" in view.caption.text()) != drawn
