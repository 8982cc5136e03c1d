"""Whole documents in the app (issue 31): the whole review in the token view, the window selector, the probability
along the document and its clicks, explanations over the whole review (pytest-qt, offscreen, tiny model)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("PySide6")

from gui_helpers import loaded_window  # noqa: E402
from tests.fixtures.tiny_models import SAMPLE_TEXTS  # noqa: E402

pytestmark = pytest.mark.gui

LONG = " ".join(SAMPLE_TEXTS * 4)  # several windows of the tiny model's 64 tokens


def _analysed(qtbot, win, text):
    win.analyze_text(text)
    qtbot.waitUntil(lambda: win.state.prediction is not None and win.state.prediction.document.text == text, timeout=30000)
    return win.state.prediction


def test_a_long_review_is_shown_whole_and_its_windows_chosen(qtbot, tiny_model_dir):
    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    pred = _analysed(qtbot, win, LONG)
    whole = pred.document
    W = whole.num_windows
    assert W > 2 and pred.window == 0 and pred.attention.shape[-1] == pred.num_tokens
    assert pred.num_tokens <= 64 and whole.num_tokens > 64  # attention views: one window; the review: whole
    token_view = win.token_view
    assert len(token_view.canvas.pieces) == whole.num_tokens
    assert token_view.canvas.window_starts == tuple(int(s) for s in whole.windows.ranges[1:, 0])
    # the window selector beside layer and head lists every window; choosing one shows it
    combo = win.menus.window_combo
    assert combo.count() == W and combo.isEnabled() and combo.currentIndex() == 0
    combo.setCurrentIndex(2)
    combo.activated.emit(2)
    qtbot.waitUntil(lambda: win.state.prediction.window == 2, timeout=30000)
    assert win.state.prediction.document is whole and win.state.prediction.text == whole.window_text(2)
    assert combo.currentIndex() == 2 and token_view.canvas.shown_window == tuple(int(x) for x in whole.windows.ranges[2])
    # the prediction panel: the whole review's verdict, and P(class) along the document, one point per window
    panel = win.prediction_panel
    assert panel.document_plot.isVisible() and len(panel.document_plot.points()) == W
    assert panel.label.text() == pred.label == win.state.prediction.label  # every window carries the verdict
    with qtbot.waitSignal(win.state.events.prediction, timeout=30000):
        qtbot.mouseClick(panel.document_plot, qtbot_left(), pos=panel.document_plot.points()[W - 1].toPoint())
    assert win.state.prediction.window == W - 1
    # a click on a token of another window shows that window and selects the token there
    j = int(whole.windows.ranges[0, 0]) + 1  # read by window 0 only
    with qtbot.waitSignal(win.state.events.prediction, timeout=30000):
        win.state.windows.select_document_token(j)
    assert win.state.prediction.window == 0
    assert win.state.selection == (win.state.prediction.from_document_token(j),)


def test_explanations_colour_the_whole_review(qtbot, tiny_model_dir):
    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    pred = _analysed(qtbot, win, LONG)
    win.panels["explain"].select_method("grad_x_input")
    qtbot.waitUntil(lambda: win.state.importance is not None, timeout=60000)
    scores = win.state.importance.scores
    assert scores.shape == (pred.document.num_tokens,)
    values, _, _ = win.token_view.current_values()
    assert values.shape == (pred.document.num_tokens,)
    # another window keeps the explanations of the whole review
    explained = dict(win.state.explanations)
    win.state.windows.request(1)
    qtbot.waitUntil(lambda: win.state.prediction.window == 1 and win.state.importance is not None, timeout=30000)
    assert set(win.state.explanations) == set(explained)
    assert np.array_equal(win.state.importance.scores, scores)


def test_a_review_that_fits_has_no_windows_to_choose(qtbot, tiny_model_dir):
    win = loaded_window(qtbot, tiny_model_dir)
    pred = _analysed(qtbot, win, SAMPLE_TEXTS[0])
    assert pred.num_windows == 1 and pred.document.tokens is pred.tokens
    assert win.menus.window_combo.count() == 1 and not win.menus.window_combo.isEnabled()
    assert not win.prediction_panel.document_plot.isVisible() and win.token_view.canvas.window_starts == ()


def qtbot_left():
    from PySide6.QtCore import Qt

    return Qt.LeftButton


def test_a_huge_review_lays_out_only_the_part_around_the_shown_window(qtbot, tiny_model_dir):
    from desktop_app.document import shown_range

    win = loaded_window(qtbot, tiny_model_dir)
    pred = _analysed(qtbot, win, " ".join(SAMPLE_TEXTS * 400))  # about 27,000 tokens
    whole = pred.document
    assert whole.num_tokens > 20_000
    lo, hi = shown_range(pred, 20_000)
    assert (lo, hi) == (0, 20_000) and len(win.token_view.canvas.pieces) == 20_000
    last = whole.num_windows - 1
    win.state.windows.request(last)
    qtbot.waitUntil(lambda: win.state.prediction.window == last, timeout=30000)
    lo, hi = shown_range(win.state.prediction, 20_000)
    assert hi == whole.num_tokens and win.token_view._lo == lo > 0
    s, e = whole.windows.ranges[last]
    assert win.token_view.canvas.shown_window == (s - lo, e - lo)
    assert len(win.token_view.current_values()[0]) == 20_000  # attention colours of the window, in the part shown


def test_a_session_brings_back_the_window_shown_and_its_selection(qtbot, tiny_model_dir, tmp_path):
    """A long review's session keeps the window the user was looking at (session version 4): reopened, the window
    and the tokens selected in it come back; a window beyond the review is a note, not a failure."""
    import json

    from desktop_app.window.session import save_open as session

    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    whole = _analysed(qtbot, win, LONG).document
    with qtbot.waitSignal(win.state.events.prediction, timeout=30000):
        win.state.windows.request(2)
    win.state.set_selection((3,))
    path = tmp_path / "long.aesession.json"
    session.write_session(session.capture(win), path)
    assert json.loads(path.read_text())["window"] == 2

    other = loaded_window(qtbot, tiny_model_dir, panels=True)
    done = []
    assert session.open_session(other, path, done.append)
    qtbot.waitUntil(lambda: bool(done), timeout=30000)
    pred = other.state.prediction
    assert pred.window == 2 and pred.document.text == whole.text and other.state.selection == (3,)
    assert other.menus.window_combo.currentIndex() == 2

    data = json.loads(path.read_text())
    data["window"] = whole.num_windows + 5
    path.write_text(json.dumps(data))
    third = loaded_window(qtbot, tiny_model_dir, panels=True)
    done.clear()
    assert session.open_session(third, path, done.append)
    qtbot.waitUntil(lambda: bool(done), timeout=30000)
    assert third.state.prediction.window == 0 and "beyond this review" in third.statusBar().currentMessage()
