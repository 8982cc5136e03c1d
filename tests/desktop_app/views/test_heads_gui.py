"""GUI tests of issue 25 part 3, "Switch heads off": the model view's head toggles, Ctrl+click and context menu on
its thumbnails, "Reset heads", the head-importance overlay (a real JSON of ``model.evaluation.head_importance``),
bad importance files, and the thumbnails under the "Show" choice (pytest-qt, offscreen)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from gui_helpers import loaded_window
from PySide6.QtCore import QPoint, Qt

pytestmark = pytest.mark.gui

ROOT = Path(__file__).resolve().parents[3]
BUNDLED = ROOT / "resources" / "model" / "model.safetensors"
TIMEOUT_MS = 120_000
REVIEW = ("The acting was fine and the music lovely, but the plot dragged on and the ending felt cheap. "
          "Still, a few scenes were genuinely moving.")
needs_bundled = pytest.mark.skipif(not BUNDLED.is_file(), reason="needs the bundled model resources/model")


def _new_prediction(qtbot, win, action):
    """Run ``action()`` and return the next non-None prediction put on the state."""
    with qtbot.waitSignal(win.state.events.prediction, timeout=TIMEOUT_MS, check_params_cb=lambda p, *_: p is not None) \
            as blocker:
        action()
    return blocker.args[0]


def _open(qtbot, model_dir, text=REVIEW):
    win = loaded_window(qtbot, model_dir)
    win.docks.raise_view("Model view")
    _new_prediction(qtbot, win, lambda: win.open_review(text))
    win.model_view.flush()
    return win


def _mask_without(shape, layer, head):
    m = np.ones(shape, np.float32)
    m[layer, head] = 0.0
    return m


def _off_marked(thumb) -> bool:
    """The thumbnail is drawn greyed with the red cross: red at the centre, grey (r == g == b) off the diagonals."""
    img = thumb.pixmap().toImage()
    c = img.pixelColor(img.width() // 2, img.height() // 2)
    g = img.pixelColor(img.width() // 2, img.height() - 12)
    return c.red() > 150 and c.green() < 100 and abs(g.red() - g.green()) <= 2 and abs(g.green() - g.blue()) <= 2


@pytest.fixture(scope="module")
def bundled_dir():
    if not BUNDLED.is_file():
        pytest.skip("the bundled model resources/model/model.safetensors is not present")
    return BUNDLED.parent


@needs_bundled
def test_toggle_in_the_grid_reanalyses_marks_the_thumbnail_and_reset_restores(qtbot, bundled_dir):
    win = _open(qtbot, bundled_dir)
    st, view, predictor = win.state, win.model_view, win.predictor
    L, H = st.n_layers, st.n_heads
    original = st.prediction.probabilities.copy()
    # the head that matters most for this review, found with the predictor itself
    deltas = {(l, h): np.abs(predictor.predict(REVIEW, head_mask=_mask_without((L, H), l, h)).probabilities
                             - original).max() for l in range(L) for h in range(H)}
    layer, head = max(deltas, key=deltas.get)
    assert deltas[(layer, head)] > 1e-3, deltas

    pred = _new_prediction(qtbot, win, lambda: qtbot.mouseClick(view.heads.toggles[(layer, head)], Qt.LeftButton))
    mask = _mask_without((L, H), layer, head)
    np.testing.assert_array_equal(st.head_mask, mask)
    expected = predictor.predict(REVIEW, head_mask=mask).probabilities
    np.testing.assert_allclose(pred.probabilities, expected, rtol=1e-5, atol=1e-6)
    assert np.abs(pred.probabilities - original).max() > 1e-3
    bars = win.prediction_panel.bars
    np.testing.assert_allclose([bars[n].probability for n in pred.labels], expected, atol=1e-6)
    # marked: the toggle, the thumbnail (greyed and crossed out), the caption and the reset button
    view.flush()
    toggle, thumb = view.heads.toggles[(layer, head)], view.thumbs[(layer, head)]
    assert not toggle.isChecked() and toggle.text().startswith("off")
    assert not thumb.is_on and _off_marked(thumb) and "switched OFF" in thumb.toolTip()
    others = [t for k, t in view.thumbs.items() if k != (layer, head)]
    assert all(t.is_on and not _off_marked(t) for t in others)
    assert view.heads.reset_button.text() == "Reset heads (1 off)" and view.heads.reset_button.isEnabled()
    assert f"1 of {L * H} heads switched off" in view.heads.caption.text()

    back = _new_prediction(qtbot, win, lambda: qtbot.mouseClick(view.heads.reset_button, Qt.LeftButton))
    assert st.head_mask is None
    np.testing.assert_array_equal(back.probabilities, original)
    view.flush()
    assert thumb.is_on and not _off_marked(thumb) and toggle.isChecked() and toggle.text() == "on"
    assert view.heads.reset_button.text() == "Reset heads (0 off)" and not view.heads.reset_button.isEnabled()
    assert f"All {L * H} heads on" in view.heads.caption.text()
    win.close()


def test_ctrl_click_and_the_context_menu_switch_a_head_plain_click_selects(qtbot, tiny_model_dir):
    win = _open(qtbot, tiny_model_dir)
    st, view = win.state, win.model_view
    thumb = view.thumbs[(1, 0)]
    qtbot.mouseClick(thumb, Qt.LeftButton)  # plain click: select, no switch
    assert (st.layer, st.head) == (1, 0) and st.head_mask is None
    _new_prediction(qtbot, win, lambda: qtbot.mouseClick(thumb, Qt.LeftButton, Qt.ControlModifier))
    np.testing.assert_array_equal(st.head_mask, _mask_without((2, 2), 1, 0))
    view.flush()
    assert not thumb.is_on and _off_marked(thumb) and not view.heads.toggles[(1, 0)].isChecked()

    menu = thumb.context_menu()
    switch = menu.actions()[0]
    assert switch.text() == "Switch head on again"
    _new_prediction(qtbot, win, switch.trigger)
    assert st.head_mask is None and thumb.is_on
    other = view.thumbs[(0, 1)]
    switch = other.context_menu().actions()[0]
    assert switch.text() == "Switch head off"
    _new_prediction(qtbot, win, switch.trigger)
    np.testing.assert_array_equal(st.head_mask, _mask_without((2, 2), 0, 1))
    other.context_menu().actions()[1].trigger()  # "Open in the heatmap and links views"
    assert (st.layer, st.head) == (0, 1)

    # the view follows the state, whoever changes the mask (a restored session, another view), at once
    def set_mask():
        st.set_head_mask(np.array([[0, 1], [1, 0]], np.float32))
        assert _off_marked(view.thumbs[(0, 0)]) and _off_marked(view.thumbs[(1, 1)])  # before the new prediction
        assert not _off_marked(view.thumbs[(0, 1)]) and not view.heads.toggles[(1, 1)].isChecked()

    _new_prediction(qtbot, win, set_mask)
    view.flush()
    assert [t.is_on for _, t in sorted(view.thumbs.items())] == [False, True, True, False]
    assert [t.isChecked() for _, t in sorted(view.heads.toggles.items())] == [False, True, True, False]
    assert view.heads.reset_button.text() == "Reset heads (2 off)"
    win.close()


def _write_importance(tmp_path, rows=8) -> Path:
    """A real heads.json: ``python -m model.evaluation.head_importance`` on a few reviews of a tiny jsonl."""
    from model.evaluation.head_importance import main

    reviews = [("A wonderful, moving film with a great cast.", 1), ("Dull, predictable and badly acted.", 0),
               ("I loved every minute of it.", 1), ("A waste of time; the plot makes no sense.", 0),
               ("Beautiful photography and a clever script.", 1), ("Boring. I fell asleep twice.", 0),
               ("Funny, warm and smart.", 1), ("The worst film I have seen this year.", 0)][:rows]
    data = tmp_path / "tiny.jsonl"
    data.write_text("".join(json.dumps({"text": t, "label": y}) + "\n" for t, y in reviews), encoding="utf-8")
    out = tmp_path / "heads.json"
    assert main(["--data", str(data), "--n", str(rows), "--out", str(out), "--percents", "0", "50",
                 "--batch-size", "4"]) == 0
    return out


@needs_bundled
def test_head_importance_json_is_overlaid_and_prunes_from_the_gui(qtbot, bundled_dir, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    path = _write_importance(tmp_path)
    written = np.array(json.loads(path.read_text())["importance"], np.float32)
    win = _open(qtbot, bundled_dir)
    st, grid = win.state, win.model_view.heads
    assert written.shape == (st.n_layers, st.n_heads)
    assert not grid.prune_button.isEnabled()
    asked = []
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (asked.append(a) or (str(path), "")))
    qtbot.mouseClick(grid.load_button, Qt.LeftButton)  # the view's signal -> the window's dialog (monkeypatched)
    assert asked and win.errors == []
    np.testing.assert_array_equal(st.head_importance, written)
    assert "heads.json" in st.head_importance_name and "8 reviews" in st.head_importance_name
    top = written.max()
    for (l, h), t in grid.toggles.items():
        assert t.text() == f"on\n{written[l, h]:.2f}" and f"{written[l, h]:.4f}" in t.toolTip()
        assert (t.styleSheet() != "") and (("#ffffff" in t.styleSheet()) == (written[l, h] <= 0))
    strongest = max(grid.toggles.values(), key=lambda t: t.importance)
    assert strongest.importance == pytest.approx(top) and "#e67e22" in strongest.styleSheet()
    assert f"{written[0, 0]:.4f}" in win.model_view.thumbs[(0, 0)].toolTip()

    grid.prune_spin.setValue(3)
    _new_prediction(qtbot, win, lambda: qtbot.mouseClick(grid.prune_button, Qt.LeftButton))
    order = np.argsort(written.reshape(-1), kind="stable")
    expected = np.ones(written.size, np.float32)
    expected[order[:3]] = 0
    np.testing.assert_array_equal(st.head_mask, expected.reshape(written.shape))
    np.testing.assert_allclose(st.prediction.probabilities,
                               win.predictor.predict(REVIEW, head_mask=st.head_mask).probabilities, atol=1e-6)
    assert grid.reset_button.text() == "Reset heads (3 off)"

    qtbot.mouseClick(grid.clear_button, Qt.LeftButton)
    assert st.head_importance is None and all(t.importance is None for t in grid.toggles.values())
    assert not grid.prune_button.isEnabled() and st.head_mask is not None  # clearing the overlay keeps the mask
    win.close()


BAD_FILES = {
    "damaged.json": ('{"importance": [[0.1, 0.2], [0.3', "not valid JSON"),
    "list.json": ("[[0.1, 0.2], [0.3, 0.4]]", "not a head-importance file"),
    "other.json": ('{"accuracy": 0.9}', "not a head-importance file"),
    "shape.json": (json.dumps({"importance": [[0.1, 0.2, 0.3]] * 4}), "4 layers x 3 heads; the loaded model has 2"),
    "ragged.json": ('{"importance": [[0.1, 0.2], [0.3]]}', "different lengths"),
    "words.json": ('{"importance": [["a", "b"], ["c", "d"]]}', "not a finite number"),
    "nan.json": ('{"importance": [[NaN, 0.2], [0.3, 0.4]]}', "not a finite number"),
    "selfcontradicting.json": ('{"importance": [[0.1, 0.2], [0.3, 0.4]], "n_heads": 3}', "the file says 2 layers x 3"),
    "binary.json": (b"\xff\xfe\x00\x81", "not a text"),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_read_head_importance_refuses_bad_files_with_one_clear_line(tmp_path, name):
    from desktop_app.window.head_importance import HeadImportanceError, read_head_importance

    content, words = BAD_FILES[name]
    p = tmp_path / name
    p.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    with pytest.raises(HeadImportanceError) as info:
        read_head_importance(p, (2, 2))
    msg = str(info.value)
    assert words in msg and name in msg and "\n" not in msg
    assert isinstance(info.value, ValueError)


def test_bad_head_importance_files_show_an_error_in_the_window(qtbot, tiny_model_dir, tmp_path):
    from desktop_app.window.head_importance import load_head_importance_dialog, read_head_importance

    win = _open(qtbot, tiny_model_dir)
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"importance": [[0.2, 0.9], [0.5, 0.1]], "n_layers": 2, "n_heads": 2, "n": 3}))
    table = load_head_importance_dialog(win, good)
    np.testing.assert_allclose(table, [[0.2, 0.9], [0.5, 0.1]])
    assert read_head_importance(good)[1] == "head importance (3 reviews; good.json)"
    for name in ("damaged.json", "shape.json"):
        p = tmp_path / name
        p.write_text(BAD_FILES[name][0])
        assert load_head_importance_dialog(win, p) is None
        assert BAD_FILES[name][1] in win.errors[-1] and name in win.errors[-1]
    assert load_head_importance_dialog(win, tmp_path / "missing.json") is None
    assert "cannot read missing.json" in win.errors[-1] and len(win.errors) == 3
    np.testing.assert_allclose(win.state.head_importance, [[0.2, 0.9], [0.5, 0.1]])  # the good table stays
    assert win.model_view.heads.toggles[(0, 1)].text() == "on\n0.90"
    win.close()


def test_thumbnails_follow_the_show_choice(qtbot, tiny_model_dir):
    from desktop_app.views.model_view import THUMB_PX, downsample, matrix_to_qimage

    win = _open(qtbot, tiny_model_dir)
    st, view = win.state, win.model_view
    pred = st.prediction
    for (l, h), t in view.thumbs.items():
        assert t.base == matrix_to_qimage(downsample(pred.attention[l, h], THUMB_PX))
    with qtbot.waitSignal(st.events.flow, timeout=TIMEOUT_MS, check_params_cb=lambda f, *_: f is not None):
        st.set_show("alti")
        view.flush()
        assert "Computing" in view.caption.text() and all(t.base is None for t in view.thumbs.values())
    view.flush()
    flow = st.flow
    assert "one matrix per layer" in view.caption.text()
    assert view._head_labels[0].text() == "all heads (ALTI)"
    for (l, h), t in view.thumbs.items():
        if h == 0:
            assert t.base == matrix_to_qimage(downsample(flow.layer_matrix(l), THUMB_PX))
            assert "ALTI" in t.toolTip()
        else:
            assert t.base is None and t.pixmap().isNull()
    with qtbot.waitSignal(st.events.flow, timeout=TIMEOUT_MS, check_params_cb=lambda f, *_: f is not None):
        st.set_show("value_norm")
    view.flush()
    for (l, h), t in view.thumbs.items():
        assert t.base == matrix_to_qimage(downsample(st.flow.layer_matrix(l, h), THUMB_PX))
    assert "Value-weighted" in view.caption.text()
    st.set_show("attention")
    view.flush()
    assert view.thumbs[(1, 1)].base == matrix_to_qimage(downsample(pred.attention[1, 1], THUMB_PX))
    assert view._head_labels[0].text() == "head 1"
    win.close()


def test_right_click_pops_the_context_menu_up(qtbot, tiny_model_dir):
    """A right-click (a context-menu event) pops the thumbnail's menu up; its first action switches the head off."""
    from PySide6.QtGui import QContextMenuEvent
    from PySide6.QtWidgets import QApplication, QMenu

    win = _open(qtbot, tiny_model_dir)
    thumb = win.model_view.thumbs[(0, 0)]
    QApplication.sendEvent(thumb, QContextMenuEvent(QContextMenuEvent.Mouse, QPoint(5, 5),
                                                    thumb.mapToGlobal(QPoint(5, 5))))
    menus = [m for m in thumb.findChildren(QMenu) if m.isVisible()]
    assert [[a.text() for a in m.actions()] for m in menus] == [["Switch head off",
                                                                 "Open in the heatmap and links views"]]
    _new_prediction(qtbot, win, menus[0].actions()[0].trigger)
    np.testing.assert_array_equal(win.state.head_mask, _mask_without((2, 2), 0, 0))
    menus[0].close()
    win.close()
