"""GUI tests of the Explorer window (pytest-qt, offscreen). Random model folders unless noted."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication

pytestmark = pytest.mark.gui

ROOT = Path(__file__).resolve().parents[3]
BUNDLED = ROOT / "resources" / "model" / "model.safetensors"
LOAD_TIMEOUT_MS = 60_000



@pytest.fixture(scope="session")
def model512_dir(tmp_path_factory) -> Path:
    """A random model with realistic sizes: max_len 512, d_model 128, 2 layers, 4 heads."""
    from model import EncoderConfig
    from tests.fixtures.tiny_models import make_random_model_dir

    cfg = EncoderConfig(max_len=512, d_model=128, n_heads=4, n_layers=2, d_ff=512)
    return make_random_model_dir(tmp_path_factory.mktemp("model512"), config=cfg)


def open_window(qtbot, model_dir):
    """A MainWindow over ``model_dir``, shown, with its model loaded."""
    from desktop_app.window.main_window import MainWindow

    win = MainWindow(model_dir, device="cpu")
    qtbot.addWidget(win)
    win.resize(1300, 850)
    win.show()
    if win.predictor is None:
        with qtbot.waitSignal(win.predictor_loaded, timeout=LOAD_TIMEOUT_MS):
            pass
    return win


def analyze(qtbot, win, text: str):
    """open_review(text) and wait for its prediction; renders every view."""
    with qtbot.waitSignal(win.state.events.prediction, timeout=LOAD_TIMEOUT_MS) as blocker:
        win.open_review(text)
    pred = blocker.args[0]
    flush(win)
    return pred


def flush(win):
    for v in (win.token_view, win.heatmap, win.links_view, win.model_view, win.pe_view):
        v.flush()


@pytest.fixture
def window(qtbot, tiny_model_dir):
    return open_window(qtbot, tiny_model_dir)


def test_window_opens_with_title_and_loading_state(qtbot, tiny_model_dir):
    from desktop_app.window.main_window import MainWindow

    win = MainWindow(tiny_model_dir, device="cpu")
    qtbot.addWidget(win)
    assert "Attention Explorer" in win.windowTitle()
    assert win.predictor is None
    assert "loading" in win.prediction_panel.label.text().lower()
    with qtbot.waitSignal(win.predictor_loaded, timeout=LOAD_TIMEOUT_MS) as blocker:
        pass
    assert blocker.args[0] is win.predictor
    assert "Attention Explorer" in win.windowTitle()
    assert win.menus.layer_combo.count() == 2 and win.menus.head_combo.count() == 2 + 2  # 2 heads + mean + max


@pytest.mark.skipif(not BUNDLED.is_file(), reason="needs the trained model resources/model/model.safetensors")
def test_typing_a_positive_review_predicts_positive(qtbot):
    win = open_window(qtbot, None)
    text = "A wonderful, moving film. The acting is superb and the story is beautiful. I loved it, a great movie!"
    qtbot.keyClicks(win.editor, text)
    qtbot.waitUntil(lambda: win.current_prediction is not None and win.current_prediction.text == text, timeout=30_000)
    assert win.current_prediction.label == "positive"
    assert win.prediction_panel.label.text() == "positive"


def test_typing_runs_a_debounced_analysis(qtbot, window):
    received = []
    window.state.events.prediction.connect(received.append)
    qtbot.keyClicks(window.editor, "a great film")
    qtbot.waitUntil(lambda: bool(received), timeout=10_000)
    qtbot.wait(window.debounce.interval() + 200)
    # keystrokes within the debounce window produce one analysis of the final text
    assert [p.text for p in received] == ["a great film"]
    pred = received[-1]
    assert window.current_prediction is pred
    assert window.prediction_panel.label.text() == pred.label
    assert f"{pred.num_tokens}" in window.prediction_panel.details.text()
    for name, p in zip(pred.labels, pred.probabilities):
        assert window.prediction_panel.bars[name].text() == f"{float(p) * 100:.1f} %"


def test_ctrl_enter_analyzes_now(qtbot, window):
    window.debounce.setInterval(60_000)  # only the shortcut can trigger it
    window.editor.setPlainText("The acting was superb.")
    window.activateWindow()
    window.editor.setFocus()
    with qtbot.waitSignal(window.state.events.prediction, timeout=10_000) as blocker:
        window.menus.analyze_action.trigger()
    assert blocker.args[0].text == "The acting was superb."
    assert any(s.toString() == "Ctrl+Return" for s in window.menus.analyze_action.shortcuts())


def test_latest_request_wins(qtbot, window):
    received = []
    window.state.events.prediction.connect(received.append)
    texts = [f"review number {i}: boring and far too long" for i in range(5)]
    for t in texts:
        window.open_review(t)
    qtbot.waitUntil(lambda: bool(received), timeout=10_000)
    qtbot.wait(300)
    assert [p.text for p in received] == [texts[-1]]


def test_empty_text_and_bad_model_give_messages_not_tracebacks(qtbot, window, tmp_path):
    window.open_review("   ")
    assert window.current_prediction is None
    assert "review" in window.prediction_panel.label.text().lower()

    from desktop_app.window.main_window import MainWindow

    bad = tmp_path / "broken"
    bad.mkdir()
    (bad / "config.json").write_text("{not json", encoding="utf-8")
    win = MainWindow(bad, device="cpu")
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.model_load_failed, timeout=LOAD_TIMEOUT_MS) as blocker:
        pass
    assert "config" in blocker.args[0]
    assert win.prediction_panel.label.text() == "Error"
    assert win.predictor is None


def test_clicking_a_token_selects_it_in_links_and_heatmap(qtbot, window):
    pred = analyze(qtbot, window, "The acting was superb, but the ending was awful and far too long.")
    window.state.set_layer_head(1, 0)
    flush(window)
    assert window.links_view.focus is None
    before_links = window.links_view.shown_links
    canvas = window.token_view.canvas
    qtbot.mouseClick(canvas, Qt.LeftButton, pos=window.token_view.token_center(3))
    assert window.state.selection == (3,)
    flush(window)
    assert window.links_view.focus == ("query", (3,))
    assert window.links_view.shown_links != before_links or before_links == 0
    assert window.links_view.shown_links <= pred.num_tokens * 2  # only token 3's links, at most T per head
    rect = window.heatmap.selection_item.path().boundingRect()
    assert (rect.top(), rect.height(), rect.width()) == (3.0, 1.0, float(pred.num_tokens))
    # token colours now show token 3's attention row (layer 2, head 1)
    np.testing.assert_allclose(window.token_view.values, pred.attention[1, 0, 3], rtol=1e-6)
    tip = window.token_view.canvas.tooltip_text(4)  # hover text shows the token's value
    assert f"{pred.attention[1, 0, 3, 4]:.4f}" in tip and "token 4" in tip

    # Shift-click adds a second query token; the token view shows the summed rows
    qtbot.mouseClick(canvas, Qt.LeftButton, Qt.ShiftModifier, pos=window.token_view.token_center(5))
    assert window.state.selection == (3, 5)
    flush(window)
    np.testing.assert_allclose(window.token_view.values, pred.attention[1, 0, 3] + pred.attention[1, 0, 5], rtol=1e-6)
    assert window.links_view.focus == ("query", (3, 5))
    assert window.heatmap.selection_item.path().boundingRect().height() == 3.0  # rows 3..5 outlined


def test_clicking_a_heatmap_cell_selects_the_query(qtbot, window):
    analyze(qtbot, window, "A terrible film, boring and badly acted.")
    hm = window.heatmap
    qtbot.wait(50)
    scene_pos = hm.cell_scene_pos(4, 2)
    view_pos = hm.glw.mapFromScene(scene_pos)
    qtbot.mouseClick(hm.glw.viewport(), Qt.LeftButton, pos=view_pos)
    assert window.state.selection == (4,)
    flush(window)
    assert window.links_view.focus == ("query", (4,))


def test_hovering_a_key_shows_only_its_links(qtbot, window):
    pred = analyze(qtbot, window, "I loved every minute of it.")
    window.links_view.slider.setValue(0)
    window.links_view.set_hover("key", 2)
    window.links_view.flush()
    assert window.links_view.focus == ("key", (2,))
    assert (
        window.links_view.shown_links == pred.num_tokens * pred.attention.shape[1]
    )  # threshold 0: every query, every head
    window.links_view.set_head_enabled(0, False)
    window.links_view.flush()
    assert window.links_view.shown_links == pred.num_tokens * (pred.attention.shape[1] - 1)


def test_switching_layer_and_head_shows_exactly_that_matrix(qtbot, window):
    from desktop_app.state import MAX_HEADS, MEAN_HEADS

    pred = analyze(qtbot, window, "Brilliant direction and excellent photography.")
    L, H = pred.attention.shape[:2]
    for layer in range(L):
        for head in range(H):
            window.menus.layer_combo.setCurrentIndex(layer)
            window.menus.layer_combo.activated.emit(layer)
            window.menus.head_combo.setCurrentIndex(head)
            window.menus.head_combo.activated.emit(head)
            assert (window.state.layer, window.state.head) == (layer, head)
            window.heatmap.flush()
            assert np.array_equal(window.heatmap.image_item.image, pred.attention[layer, head])
    window.set_layer_head(0, MEAN_HEADS)
    window.heatmap.flush()
    np.testing.assert_allclose(window.heatmap.image_item.image, pred.attention[0].mean(axis=0))
    # the heatmap's own head selector drives the same state
    hm = window.heatmap
    hm.head_combo.setCurrentIndex(hm.head_combo.findData(MAX_HEADS))
    hm.head_combo.activated.emit(hm.head_combo.currentIndex())
    hm.layer_combo.setCurrentIndex(1)
    hm.layer_combo.activated.emit(1)
    assert (window.state.layer, window.state.head) == (1, MAX_HEADS)
    window.heatmap.flush()
    np.testing.assert_array_equal(window.heatmap.image_item.image, pred.attention[1].max(axis=0))
    assert window.menus.head_combo.currentData() == MAX_HEADS


def test_model_view_thumbnail_opens_layer_head(qtbot, window):
    pred = analyze(qtbot, window, "Dull, predictable and poorly edited.")
    window.model_dock.raise_()
    flush(window)
    thumb = window.model_view.thumbs[(1, 1)]
    assert thumb.pixmap() is not None and not thumb.pixmap().isNull()
    qtbot.mouseClick(thumb, Qt.LeftButton)
    assert (window.state.layer, window.state.head) == (1, 1)
    assert window.menus.head_combo.currentData() == 1 and window.menus.layer_combo.currentData() == 1
    window.heatmap.flush()
    assert np.array_equal(window.heatmap.image_item.image, pred.attention[1, 1])
    assert window.links_view.enabled_heads == {1}


def test_pe_view_shows_exactly_the_positional_encoding(qtbot, window):
    analyze(qtbot, window, "An average thriller.")
    window.pe_dock.raise_()
    max_len = window.predictor.config.max_len
    for P in (10, max_len):
        window.pe_view.set_num_positions(P)
        window.pe_view.flush()
        assert np.array_equal(window.pe_view.pe_image.image, window.predictor.positional_encoding(P))
        assert window.pe_view.sim_image.image.shape == (P, P)
    np.testing.assert_allclose(np.diag(window.pe_view.sim_image.image), 1.0, rtol=1e-5)
    assert window.pe_view.pe_used.value() == window.current_prediction.num_tokens
    assert "sin" in window.pe_view.formula.text() and "cos" in window.pe_view.formula.text()


def test_external_importance_colours_tokens(qtbot, window):
    pred = analyze(qtbot, window, "Great cast, awful script.")
    T = pred.num_tokens
    scores = np.linspace(-1.0, 1.0, T).astype(np.float32)
    window.token_view.set_importance(scores, True, "integrated gradients")
    window.token_view.flush()
    cols = window.token_view.canvas.colours.astype(int)
    assert cols[0, 2] > cols[0, 0]  # most negative: blue
    assert cols[-1, 0] > cols[-1, 2]  # most positive: red
    assert "integrated gradients" in window.token_view.caption.text()
    window.token_view.set_importance(np.ones(T + 3, np.float32), False, "wrong length")
    assert "Ignored" in window.token_view.caption.text()
    window.token_view.set_importance(None, False, "")
    window.token_view.flush()
    np.testing.assert_allclose(window.token_view.values, pred.classification_attention(window.state.layer))


@pytest.mark.filterwarnings("ignore:.*QDragEnterEvent:DeprecationWarning")
def test_dropping_files_emits_paths_and_does_not_paste(qtbot, window, tmp_path):
    f = tmp_path / "reviews.txt"
    f.write_text("good\n", encoding="utf-8")
    window.editor.setPlainText("keep me")
    received = []
    window.paths_dropped.connect(received.append)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(f)), QUrl.fromLocalFile(str(tmp_path))])
    # Qt delivers drop events only during a real drag, so send them as the drag machinery would (through the
    # window's event filter, PathDrops)
    for target in (window.editor, window):
        enter = QDragEnterEvent(QPoint(10, 10), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
        QApplication.sendEvent(target, enter)
        assert enter.isAccepted()
        QApplication.sendEvent(target, QDropEvent(QPointF(10, 10), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier))
    text_only = QMimeData()
    text_only.setText("plain text")
    enter = QDragEnterEvent(QPoint(10, 10), Qt.CopyAction, text_only, Qt.LeftButton, Qt.NoModifier)
    QApplication.sendEvent(window, enter)
    assert not enter.isAccepted()
    assert received == [[str(f), str(tmp_path)]] * 2
    assert window.editor.toPlainText() == "keep me"


def test_export_json_png_svg_atomically(qtbot, window, tmp_path):
    pred = analyze(qtbot, window, "I wanted my money back.")
    out = tmp_path / "analysis.json"
    window.file_actions.save_json(out)
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["label"] == pred.label and data["attention_shape"] == list(pred.attention.shape)
    for name, fname in (("Attention heatmap", "h.png"), ("Token links", "l.svg"), ("Token view", "t.png")):
        window.file_actions.export_view(name, tmp_path / fname)
        assert (tmp_path / fname).stat().st_size > 100
    assert (tmp_path / "h.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in (tmp_path / "l.svg").read_bytes()[:2000]
    window.file_actions.export_view("Token view", tmp_path / "t.svg")
    assert b"<svg" in (tmp_path / "t.svg").read_bytes()[:2000]
    with pytest.raises(ValueError):
        window.file_actions.export_view("Token view", tmp_path / "t.bmp")
    with pytest.raises(ValueError):
        window.file_actions.export_view("No such view", tmp_path / "t.png")
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no temp files left


def test_settings_remember_layer_head_and_layout(qtbot, tiny_model_dir, isolated_settings):
    win = open_window(qtbot, tiny_model_dir)
    win.set_layer_head(1, 0)
    win.pe_dock.raise_()
    win.close()
    assert isolated_settings.is_file()
    win2 = open_window(qtbot, tiny_model_dir)
    assert (win2.state.layer, win2.state.head) == (1, 0)
    assert (win2.menus.layer_combo.currentData(), win2.menus.head_combo.currentData()) == (1, 0)


def test_panels_missing_from_a_saved_layout_are_shown(qtbot, tiny_model_dir, isolated_settings):
    """A layout saved before the batch/explanation panels existed must not hide them; a never-shown window saves nothing."""
    from desktop_app.app import attach_panels
    from desktop_app.window.main_window import MainWindow

    hidden = MainWindow(tiny_model_dir, device="cpu")
    qtbot.addWidget(hidden)
    hidden.close()  # never shown: nothing to remember
    assert not isolated_settings.exists()
    win = open_window(qtbot, tiny_model_dir)
    win.close()  # saves a layout without the panels
    assert isolated_settings.is_file()
    win2 = open_window(qtbot, tiny_model_dir)
    panels = attach_panels(win2)
    try:
        assert not win2.docks.get("Explanations").isHidden()  # a tab behind the heatmap: not hidden
        win2.workspaces.switch("corpus")  # issue 54: the batch table is the Corpus workspace's
        assert win2.docks.get("Batch scoring").isVisible()
    finally:
        panels["batch"].shutdown()
        panels["explain"].shutdown()


def test_about_shows_model_card_and_metrics(qtbot, tmp_path, tiny_model_dir):
    import shutil

    d = tmp_path / "m"
    shutil.copytree(tiny_model_dir, d)
    (d / "README.md").write_text("# Model card\nTrained on IMDB.", encoding="utf-8")
    (d / "metrics.json").write_text(json.dumps({"test": {"accuracy": 0.8765}}), encoding="utf-8")
    win = open_window(qtbot, d)
    card, metrics_html = win.about_html()
    assert "Trained on IMDB" in card
    assert "test.accuracy" in metrics_html and "0.8765" in metrics_html
    dlg = win.show_about()
    qtbot.addWidget(dlg)
    assert dlg.isVisible()


def test_samples_menu_lists_bundled_reviews(qtbot, window):
    titles = [a.text() for a in window.menus.samples_menu.actions()]
    assert len(window.menus.samples) >= 6 and len(titles) == len(window.menus.samples)
    labels = {s["label"] for s in window.menus.samples}
    assert labels == {"positive", "negative"}
    with qtbot.waitSignal(window.state.events.prediction, timeout=10_000) as blocker:
        window.menus.samples_menu.actions()[0].trigger()
    from desktop_app.panels.editor import display_text

    # the editor shows IMDB's <br /> as line breaks (issue 11); the model reads both the same way
    first = Path(window.menus.samples[0]["path"])
    assert blocker.args[0].document.text == display_text(first.read_text(encoding="utf-8"))


@pytest.mark.slow
def test_a_512_token_analysis_of_a_long_review_renders_its_first_window(qtbot, model512_dir):
    """Two full windows of 512 tokens: the prediction is one window of the whole review and the views render it.
    How long the event loop waits meanwhile is measured by ``python -m benchmarks.long_review`` (issue 46: timing
    is never asserted in tests)."""
    win = open_window(qtbot, model512_dir)
    from tests.fixtures.tiny_models import text_of_pieces

    P, S = win.predictor.encoder.specials
    text = text_of_pieces(win.predictor, 2 * (512 - P - S))  # two full windows of 512 tokens
    received = []
    win.state.events.prediction.connect(received.append)
    win.open_review(text)
    qtbot.waitUntil(lambda: bool(received), timeout=60_000)
    pred = received[0]
    assert pred.num_tokens == 512 and pred.num_windows > 1 and not pred.truncated  # one window of it
    qtbot.waitUntil(lambda: win.heatmap.image_item.image is not None
                    and win.heatmap.image_item.image.shape == (512, 512), timeout=10_000)  # the visible views render
