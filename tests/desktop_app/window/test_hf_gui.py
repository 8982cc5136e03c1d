"""GUI: open Hugging Face encoder folders through the Model menu (pytest-qt, offscreen; tiny local models)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("transformers")

from test_gui_explorer import open_window

pytestmark = pytest.mark.gui

ROOT = Path(__file__).resolve().parents[3]
BUNDLED = ROOT / "resources" / "model" / "model.safetensors"
TIMEOUT_MS = 120_000



@pytest.fixture(scope="module")
def hf12_dir(tmp_path_factory) -> Path:
    """A tiny random BERT classifier with 12 layers x 12 heads and 512 positions."""
    from tests.fixtures.tiny_hf import make_tiny_hf_dir

    return make_tiny_hf_dir(tmp_path_factory.mktemp("hf12") / "bert12", "bert", layers=12, heads=12, positions=512)


@pytest.fixture(scope="module")
def deberta_base_dir(tmp_path_factory) -> Path:
    """A tiny DeBERTa-v2 encoder without a classification head (relative positions: no PE matrix)."""
    from tests.fixtures.tiny_hf import make_tiny_hf_dir

    return make_tiny_hf_dir(tmp_path_factory.mktemp("deb") / "deberta_base", "deberta-v2", head=False)


def _open_via_menu(qtbot, win, folder, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(lambda *a, **k: str(folder)))
    with qtbot.waitSignal(win.predictor_loaded, timeout=TIMEOUT_MS):
        win.model_menu.open_action.trigger()


def _analyze(qtbot, win, text):
    with qtbot.waitSignal(win.state.events.prediction, timeout=TIMEOUT_MS,
                          check_params_cb=lambda p, *_: p is not None) as blocker:
        win.open_review(text)
    for v in (win.token_view, win.heatmap, win.links_view, win.model_view, win.pe_view):
        v.flush()
    return blocker.args[0]


def test_open_hf_folder_analyse_switch_heads_and_back_to_bundled(qtbot, tiny_model_dir, hf12_dir, monkeypatch):
    start = tiny_model_dir if not BUNDLED.is_file() else None
    win = open_window(qtbot, start)
    _open_via_menu(qtbot, win, hf12_dir, monkeypatch)
    info = win.model_info
    assert (info.n_layers, info.n_heads, info.family) == (12, 12, "BERT")
    assert "BERT" in win.model_label.text() and "12 layers" in win.model_label.text() and "learned" in info.pe_kind
    from tests.fixtures.tiny_models import text_of_pieces

    pred = _analyze(qtbot, win, text_of_pieces(win.predictor, 2 * 510))  # two full windows of 512 tokens
    assert pred.attention.shape == (12, 12, 512, 512) and pred.num_windows > 1 and pred.tokens[-1] == "[SEP]"
    assert win.menus.head_combo.count() >= 12 and win.menus.layer_combo.count() >= 12
    for head in range(12):
        win.set_layer_head(11, head)
        for v in (win.heatmap, win.links_view, win.model_view):
            v.flush()
    assert win.state.layer == 11 and win.state.head == 11
    np.testing.assert_allclose(win.heatmap.image_item.image, pred.attention[11, 11], atol=1e-6)
    assert win.pe_view.pe_matrix.shape == (512, 96)
    colours = {b.styleSheet() for b in win.links_view.heads.boxes}
    assert len(win.links_view.heads.boxes) == 12 and len(colours) == 12  # 12 distinct head colours
    win.links_view.set_head_enabled(11, False)
    assert 11 not in win.links_view.enabled_heads
    assert str(hf12_dir.resolve()) in win.model_menu.recent()
    _, about_metrics = win.about_html()
    assert "BERT" in about_metrics and "learned absolute" in about_metrics

    # back to the bundled (or the start-up) model through the Model menu
    with qtbot.waitSignal(win.predictor_loaded, timeout=TIMEOUT_MS):
        if start is None:
            next(a for a in win.model_menu.menu.actions() if a.text().startswith("&Bundled")).trigger()
        else:
            win.model_menu.open_model(start)
    assert win.model_info.n_layers != 12
    pred = _analyze(qtbot, win, "A wonderful film.")
    assert pred.attention.shape[0] == win.model_info.n_layers and pred.probabilities.shape == (2,)
    win.close()


def test_attention_only_model_and_a_failing_folder_keep_the_app_usable(qtbot, tiny_model_dir, deberta_base_dir,
                                                                        tmp_path, monkeypatch):
    win = open_window(qtbot, tiny_model_dir)
    _open_via_menu(qtbot, win, deberta_base_dir, monkeypatch)
    info = win.model_info
    assert not info.has_head and info.positional_encoding is None and "relative" in info.pe_kind
    pred = _analyze(qtbot, win, "A wonderful film.<br />Great cast!")
    assert pred.probabilities.shape == (0,) and pred.labels == ()
    assert "attention only" in win.prediction_panel.label.text()
    assert "No positional matrix" in win.pe_view.formula.text()
    assert "attention only" in win.model_label.text()

    broken = shutil.copytree(deberta_base_dir, tmp_path / "bin_only")
    (broken / "model.safetensors").unlink()
    (broken / "pytorch_model.bin").write_bytes(b"x")
    with qtbot.waitSignal(win.model_load_failed, timeout=TIMEOUT_MS) as blocker:
        win.model_menu.open_model(broken)
    assert "pickled" in blocker.args[0]
    assert win.model_menu.error_box is not None and win.model_menu.error_box.isVisible()
    win.model_menu.error_box.close()
    assert win.model_info.family == "DeBERTa-v2/v3" and win.predictor is not None
    assert "DeBERTa" in win.model_label.text()

    gpt2 = shutil.copytree(deberta_base_dir, tmp_path / "gpt2")
    cfg = json.loads((gpt2 / "config.json").read_text())
    (gpt2 / "config.json").write_text(json.dumps({**cfg, "model_type": "gpt2"}))
    with qtbot.waitSignal(win.model_load_failed, timeout=TIMEOUT_MS) as blocker:
        win.model_menu.open_model(gpt2)
    assert "unsupported architecture 'gpt2'" in blocker.args[0]
    win.model_menu.error_box.close()
    win.close()


def _labelled_csv(path: Path, n: int = 12) -> Path:
    import csv

    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["text", "label"])
        for i in range(n):
            w.writerow([f"review {i}: a {'wonderful' if i % 2 else 'dreadful'} film", "positive" if i % 2 else "negative"])
    return path


def test_a_model_without_classes_after_a_batch_keeps_every_view_current(qtbot, tiny_model_dir, deberta_base_dir,
                                                                        tmp_path, monkeypatch):
    """Issue 56: File > Open model folder... of a model without a classification head, with a classifier's rows in
    the batch table: the Map's slices box raised (no classes to split the histogram by) and the new model's analysis
    was not shown. Now the slices describe the rows by their own classes, and the window shows the new model."""
    from gui_helpers import loaded_window, wait_slices

    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    batch, corpus = win.panels["batch"], win.panels["corpus"]
    batch.ui.label_column_edit.setText("label")
    with qtbot.waitSignal(batch.scoring_finished, timeout=TIMEOUT_MS):
        batch.add_paths([str(_labelled_csv(tmp_path / "reviews.csv"))])
    before = wait_slices(qtbot, corpus)
    assert [name for name, *_ in before] == ["All rows"] and "12 scored" in before[0][2]
    with qtbot.capture_exceptions() as raised:
        _open_via_menu(qtbot, win, deberta_base_dir, monkeypatch)
        pred = _analyze(qtbot, win, "A wonderful film.")
    assert [e[1] for e in raised] == []
    assert pred.labels == () and "attention only" in win.prediction_panel.label.text()
    assert win.menus.head_combo.count() >= 4 and win.model_info.n_heads == 4  # the new model's heads are offered
    assert wait_slices(qtbot, corpus) == before  # the rows are still the first model's: the same numbers
    assert len(batch.table_model.rows()) == 12 and not win.errors
    win.close()


def test_a_failing_state_subscriber_leaves_the_other_views_current(qtbot, tiny_model_dir, deberta_base_dir,
                                                                   monkeypatch):
    """Issue 56: psygnal stops an emission at the first subscriber that raises, so every view connected after it
    kept the old model. Now the failure is reported (sys.excepthook) and the other subscribers still run."""
    win = open_window(qtbot, tiny_model_dir)

    def broken(*_):
        raise RuntimeError("a broken view")

    win.state.events.info.connect(broken, priority=100)  # before every view
    win.state.events.prediction.connect(broken, priority=100)
    with qtbot.capture_exceptions() as raised:
        _open_via_menu(qtbot, win, deberta_base_dir, monkeypatch)
        pred = _analyze(qtbot, win, "A wonderful film.")
    messages = [str(e[1]) for e in raised]
    assert messages and set(messages) == {"a broken view"}
    assert win.menus.head_combo.count() == 4 + 2  # the new model's 4 heads, mean and max
    assert pred.labels == () and "attention only" in win.prediction_panel.label.text()
    win.close()
