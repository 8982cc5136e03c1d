"""First run (issue 11, item 5): a sample review already analysed, <br /> shown as line breaks, README names Samples."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[3]
LOAD_TIMEOUT_MS = 60_000
IMDB_TEXT = "Great acting.<br /><br />The plot, however, drags.<BR>Still: 7/10.<br/>Worth it."



def test_display_text_turns_br_into_newlines():
    from desktop_app.panels.editor import display_text

    shown = display_text(IMDB_TEXT)
    assert "<br" not in shown.lower() and shown.count("\n") == 4


@pytest.mark.parametrize("which", ["tiny_predictor", "bundled_predictor"])
def test_newlines_and_br_tokenize_and_predict_the_same(which, request):
    from desktop_app.panels.editor import display_text

    predictor = request.getfixturevalue(which)
    a, b = predictor.predict(IMDB_TEXT), predictor.predict(display_text(IMDB_TEXT))
    assert a.tokens == b.tokens
    np.testing.assert_array_equal(a.probabilities, b.probabilities)
    np.testing.assert_array_equal(a.attention, b.attention)


@pytest.mark.gui
def test_app_opens_with_a_sample_analysed(qtbot, tiny_model_dir):
    from desktop_app.app import first_sample_text, open_sample_when_empty
    from desktop_app.window.main_window import MainWindow

    win = MainWindow(tiny_model_dir, device="cpu")
    qtbot.addWidget(win)
    win.persist_settings = False
    with qtbot.waitSignal(win.predictor_loaded, timeout=LOAD_TIMEOUT_MS):
        pass
    with qtbot.waitSignal(win.state.events.prediction, timeout=LOAD_TIMEOUT_MS):
        assert open_sample_when_empty(win)
    assert win.current_prediction is not None
    assert "<br" not in win.editor.toPlainText().lower()
    assert win.editor.toPlainText().split() == first_sample_text().replace("<br />", " ").split()
    assert not open_sample_when_empty(win)  # never replaces what is there


def test_readme_names_the_samples_menu():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "Samples menu" in text or "**Samples**" in text
