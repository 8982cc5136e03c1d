"""The "Model B attention" dock (desktop_app.window.model_b_attention), offscreen: model B's own heatmap and links
for the text model A shows, with B's own layers and heads, following A's text and long-review window, computed only
while the dock is shown, and dropped with model B."""

from __future__ import annotations

import numpy as np
import pytest
from gui_helpers import loaded_window

from model import Predictor
from model.core.config import EncoderConfig
from tests.fixtures.tiny_models import make_random_model_dir

pytestmark = [pytest.mark.gui, pytest.mark.timeout(300)]
TIMEOUT_MS = 120_000
TEXT = "A wonderful film, loved it."


@pytest.fixture(scope="module")
def wide_b(tmp_path_factory):
    """A model B of another shape than model A (3 layers x 4 heads against 2 x 2), the same labels."""
    config = EncoderConfig(max_len=64, d_model=16, n_heads=4, n_layers=3, d_ff=32)
    return make_random_model_dir(tmp_path_factory.mktemp("wide_b"), config, seed=7)


def _with_b(qtbot, tiny_model_dir, folder):
    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    with qtbot.waitSignal(win.state.events.prediction, timeout=TIMEOUT_MS):
        win.open_review(TEXT)
    second = win.model_menu.second
    with qtbot.waitSignal(second.changed, timeout=TIMEOUT_MS):
        second.load(folder)
    return win, win.model_b_attention


def _shown(qtbot, att, text):
    qtbot.waitUntil(lambda: att.state.prediction is not None and att.state.prediction.document.text == text,
                    timeout=TIMEOUT_MS)
    return att.state.prediction


def test_model_b_attention_shows_bs_own_heads_for_as_text(qtbot, tiny_model_dir, wide_b):
    win, att = _with_b(qtbot, tiny_model_dir, wide_b)
    assert att.dock.isHidden() and att.state.prediction is None  # nothing computed while hidden
    win.model_menu.rebuild()
    action = next(a for a in win.model_menu.menu.actions() if "Model B's" in a.text())
    assert action.isEnabled()
    action.trigger()
    assert not att.dock.isHidden()
    pred = _shown(qtbot, att, TEXT)
    alone = Predictor.from_pretrained(wide_b, device="cpu").predict(TEXT)
    assert att.state.info.n_layers == 3 and att.state.info.n_heads == 4 and pred.attention.shape[:2] == (3, 4)
    np.testing.assert_allclose(pred.attention, alone.attention, atol=1e-5)
    assert win.state.info.n_layers == 2 and win.state.prediction.attention.shape[:2] == (2, 2)  # A's stays A's
    att.state.set_layer_head(2, 3)
    att.heatmap.flush()
    np.testing.assert_allclose(att.heatmap.image_item.image, alone.attention[2, 3], atol=1e-5)
    assert "3 layers \u00d7 4 heads" in att.caption.text() and alone.label in att.caption.text()

    att.state.set_show("alti")  # B's value flow, by B's own flow worker
    qtbot.waitUntil(lambda: att.state.flow is not None, timeout=TIMEOUT_MS)
    att.heatmap.flush()
    assert att.heatmap.image_item.image is not None and att.heatmap.image_item.image.shape == (len(pred.tokens),) * 2

    other = "Dull and boring, I hated every minute."
    with qtbot.waitSignal(win.state.events.prediction, timeout=TIMEOUT_MS):
        win.open_review(other)
    _shown(qtbot, att, other)
    win.model_menu.second.stop()
    assert att.state.prediction is None and "Open a second model" in att.caption.text()


def test_the_dock_follows_as_window_of_a_long_review(qtbot, tiny_model_dir, model_b):
    long_text = " ".join(f"Sentence {i} of a long review: the film was good fun and well made." for i in range(40))
    win, att = _with_b(qtbot, tiny_model_dir, model_b)
    att.show()
    with qtbot.waitSignal(win.state.events.prediction, timeout=TIMEOUT_MS):
        win.open_review(long_text)
    first = _shown(qtbot, att, long_text)
    assert first.document.windows.count > 2 and "window 1 of" in att.caption.text()
    a_doc = win.state.prediction.document
    with qtbot.waitSignal(win.state.events.prediction, timeout=TIMEOUT_MS):
        win.show_window(2)
    start = int(a_doc.windows.chars[2][0])
    qtbot.waitUntil(lambda: att.state.prediction is not first, timeout=TIMEOUT_MS)
    b_doc = att.state.prediction.document
    w = int((b_doc.windows.chars[:, 0] <= start).sum()) - 1
    assert w >= 1 and f"window {w + 1} of" in att.caption.text()
    s, e = (int(x) for x in b_doc.windows.chars[w])
    assert att.state.prediction.text == long_text[s:e] and s <= start  # B's window w, which starts before A's
