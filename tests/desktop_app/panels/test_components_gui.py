"""The Components dock (issue 53, section 1) in the real window, offscreen: the grid's numbers are
``Predictor.component_attribution``'s (our tiny encoder and a tiny BERT), hover names a part and its number, a click
on a head selects it in the explorer state and shows its attention row, a click on an FFN lists neurons that add up
to its part, a hidden dock computes nothing, a new text or class recomputes, a model without a head or a family that
cannot be split says why and shows no number."""

from __future__ import annotations

import re

import numpy as np
import pytest
from gui_helpers import loaded_window
from PySide6.QtCore import Qt

from model import Predictor
from model.core.config import EncoderConfig
from tests.fixtures.tiny_models import make_random_model_dir

pytestmark = [pytest.mark.gui, pytest.mark.timeout(300)]
TIMEOUT_MS = 60_000
TEXT = "A wonderful film, loved it."
OTHER = "Dull and boring, I hated every minute."


@pytest.fixture(scope="module")
def four_heads(tmp_path_factory):
    """Our encoder with 2 layers x 4 heads and a 64-wide FFN (more cells than the 2 x 2 default)."""
    config = EncoderConfig(max_len=64, d_model=16, n_heads=4, n_layers=2, d_ff=64)
    return make_random_model_dir(tmp_path_factory.mktemp("four_heads"), config, seed=3)


def _inside(qtbot, folder, text=TEXT):
    """The window over ``folder``, ``text`` analysed in Read (the Components dock hidden), then Inside shown."""
    win = loaded_window(qtbot, folder, panels=True)
    panel = win.docks.get("Components").widget()
    with qtbot.waitSignal(win.state.events.prediction, timeout=TIMEOUT_MS):
        win.open_review(text)
    qtbot.wait(100)
    assert panel.computed == 0 and win.state.inside.components is None  # hidden: nothing computed
    win.workspaces.switch("inside")
    win.docks.raise_view("Components")
    return win, panel


def _shown(qtbot, win, text):
    qtbot.waitUntil(lambda: win.state.inside.components is not None
                    and tuple(win.state.inside.components.tokens) == tuple(win.state.prediction.tokens)
                    and win.state.prediction.text == text, timeout=TIMEOUT_MS)
    view = win.docks.get("Components").widget().view
    view.flush()
    return win.state.inside.components, view


def _click(qtbot, grid, name):
    pos = grid.mapFromScene(grid.scene_point(name))
    qtbot.mouseClick(grid.viewport(), Qt.MouseButton.LeftButton, pos=pos)


def _rounded(text: str, value: float) -> None:
    """``text`` ("+1.24", "\u22120.0031") is ``value`` rounded to its decimals."""
    places = len(text.split(".")[1])
    assert abs(float(text.replace("\u2212", "-")) - value) <= 0.5 * 10 ** -places + 1e-6


def _same_numbers(ca, alone):
    assert ca.names == alone.names and ca.target == alone.target
    np.testing.assert_allclose(ca.values, alone.values, atol=1e-5)
    assert ca.total == pytest.approx(alone.total, abs=1e-5)


def test_grid_numbers_hover_head_and_ffn_clicks(qtbot, four_heads):
    win, panel = _inside(qtbot, four_heads)
    ca, view = _shown(qtbot, win, TEXT)
    alone = Predictor.from_pretrained(four_heads, device="cpu")
    _same_numbers(ca, alone.component_attribution(TEXT, target=win.state.task.target))
    grid = view.grid
    assert set(grid.cells) == set(ca.names) - {"final_ln_beta"} and len(grid.texts) == len(grid.cells)
    for name, text in grid.texts.items():  # every cell's number is the API's, rounded
        _rounded(text, ca.value(name))
    _rounded(re.search(r"logit (\S+)</b>", view.summary.text()).group(1), ca.total)
    assert f"<b>{ca.label}: logit" in view.summary.text() and f"sum of its {len(ca.names)} parts" in view.summary.text()

    grid.scene().sigMouseMoved.emit(grid.scene_point("L1.H3"))  # hover
    assert view.hover.text().startswith("L1.H3, head 3 of layer 1: ")
    _rounded(view.hover.text().split(": ")[1].split(" ")[0], ca.value("L1.H3"))

    _click(qtbot, grid, "L2.H4")  # a head: selected in the explorer state (the Head box's 4), its attention row
    assert win.state.layer_head == (1, 3) and view.part == "L2.H4"
    view.flush()
    pred = win.state.prediction
    assert view.head_attention.isVisible() and not view.neuron_table.isVisible()
    np.testing.assert_allclose(view.head_attention.values, pred.attention[1, 3].mean(axis=0), atol=1e-6)  # mean pooling
    np.testing.assert_allclose(view.strip.values, ca.by_position[ca.names.index("L2.H4")], atol=1e-6)
    win.state.select_token(2)
    view.flush()
    assert view.strip.selection == (2,)

    _click(qtbot, grid, "L1.ffn")  # an FFN: its neurons, which add up to its part
    qtbot.waitUntil(lambda: view.neurons is not None, timeout=TIMEOUT_MS)
    view.flush()
    fn = view.neurons
    assert fn.name == "L1.ffn" and view.neuron_table.rowCount() == 10 and fn.n_neurons == 64
    part = ca.value("L1.ffn")
    tol = 1e-4 * max(1, abs(part))
    assert float(fn.contributions.astype(np.float64).sum()) + fn.bias == pytest.approx(part, abs=tol)
    assert view.neuron_table.item(0, 0).text() == str(int(fn.neurons[0]))
    panel.top_spin.setValue(5)  # fewer neurons: asked again
    qtbot.waitUntil(lambda: view.neurons is not None and len(view.neurons.neurons) == 5, timeout=TIMEOUT_MS)

    asked = panel.computed
    with qtbot.waitSignal(win.state.events.prediction, timeout=TIMEOUT_MS):
        win.open_review(OTHER)  # a new text: computed again
    ca2, _ = _shown(qtbot, win, OTHER)
    assert panel.computed == asked + 1
    _same_numbers(ca2, alone.component_attribution(OTHER, target=win.state.task.target))
    other = 1 - ca2.target
    win.state.task.pick(other)  # another class to explain
    qtbot.waitUntil(lambda: win.state.inside.components is not None
                    and win.state.inside.components.target == other, timeout=TIMEOUT_MS)
    assert panel.settings() == {"top_neurons": 5, "part": "L1.ffn"}
    with pytest.raises(ValueError, match="top_neurons"):
        panel.apply_settings({"top_neurons": 0})
    panel.apply_settings({"top_neurons": 7, "part": "L2.H1", "unknown": 1})
    assert panel.top_spin.value() == 7 and win.state.layer_head == (1, 0)


def test_a_tiny_bert_shows_the_apis_numbers_with_cls_reads(qtbot, tmp_path):
    pytest.importorskip("transformers")
    from tests.fixtures.tiny_hf import make_tiny_hf_dir

    folder = make_tiny_hf_dir(tmp_path / "bert", init_std=0.3)
    win, _panel = _inside(qtbot, folder)
    ca, view = _shown(qtbot, win, TEXT)
    _same_numbers(ca, Predictor.from_pretrained(folder, device="cpu").component_attribution(TEXT))
    assert "L2.ln_beta" in view.grid.cells and view.grid.selected == view.shown_part()
    _click(qtbot, view.grid, "L1.H2")
    view.flush()
    np.testing.assert_allclose(view.head_attention.values, win.state.prediction.attention[0, 1, 0], atol=1e-6)


@pytest.mark.parametrize("kind", ["no_head", "deberta"])
def test_models_it_cannot_split_say_why_and_show_no_number(qtbot, tmp_path, kind):
    pytest.importorskip("transformers")
    from tests.fixtures.tiny_hf import fast_tokenizer, make_tiny_hf_dir

    if kind == "no_head":
        folder = make_tiny_hf_dir(tmp_path / "bare", head=False)
    else:
        import torch
        from transformers import AutoConfig, AutoModelForSequenceClassification

        tok = fast_tokenizer("bert")
        cfg = AutoConfig.for_model("deberta", vocab_size=len(tok), pad_token_id=tok.pad_token_id, hidden_size=16,
                                   num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
                                   max_position_embeddings=64, num_labels=2)
        torch.manual_seed(0)
        folder = tmp_path / "deberta"
        AutoModelForSequenceClassification.from_config(cfg).save_pretrained(folder, safe_serialization=True)
        tok.save_pretrained(folder)
    win, _panel = _inside(qtbot, folder)
    want = "needs one" if kind == "no_head" else "DeBERTa"
    qtbot.waitUntil(lambda: want in win.state.inside.note("components"), timeout=TIMEOUT_MS)
    view = win.docks.get("Components").widget().view
    view.flush()
    assert win.state.inside.components is None and want in view.summary.text()
    assert not view.grid.cells and not view.grid.texts and not view.grid.numbers.labels and view.strip.values is None


def test_a_long_text_read_in_windows_says_so_and_keeps_its_numbers_across_windows(qtbot, tiny_model_dir):
    long_text = " ".join(f"Sentence {i} of a long review: the film was good fun and well made." for i in range(40))
    win, panel = _inside(qtbot, tiny_model_dir, long_text)
    qtbot.waitUntil(lambda: win.state.inside.components is not None, timeout=TIMEOUT_MS)
    ca, pred = win.state.inside.components, win.state.prediction
    view = panel.view
    view.flush()
    n = pred.document.windows.count
    assert n > 2 and ca.num_windows == n and len(ca.tokens) == len(pred.document.tokens)
    assert ca.total == pytest.approx(float(pred.logits[ca.target]), abs=1e-4 * max(1.0, abs(ca.total)))
    assert f"read in {n} windows" in view.summary.text() and "window 1's tokens" in view.summary.text()
    asked = panel.computed
    with qtbot.waitSignal(win.state.events.prediction, timeout=TIMEOUT_MS):
        win.show_window(2)
    qtbot.waitUntil(lambda: win.state.inside.components is ca, timeout=TIMEOUT_MS)  # the same record, not recomputed
    view.flush()
    assert panel.computed == asked and "window 3's tokens" in view.summary.text()
    k = ca.names.index(view.shown_part())
    doc_index = win.state.prediction.document_index
    np.testing.assert_allclose(view.strip.values[doc_index >= 0], ca.by_position[k, doc_index[doc_index >= 0]])


@pytest.mark.parametrize("task, labels", [("regression", ("score",)), ("multi_label", ("joy", "anger", "fear"))])
def test_regression_shows_the_value_and_multi_label_one_label_at_a_time(qtbot, tmp_path, task, labels):
    pytest.importorskip("transformers")
    from tests.fixtures.tiny_hf import make_tiny_hf_dir

    folder = make_tiny_hf_dir(tmp_path / task, task=task, labels=labels, init_std=0.5)
    win, _panel = _inside(qtbot, folder)
    ca, view = _shown(qtbot, win, TEXT)
    alone = Predictor.from_pretrained(folder, device="cpu")
    _same_numbers(ca, alone.component_attribution(TEXT, target=win.state.task.target))
    if task == "regression":
        assert ca.target == 0 and "<b>score: value " in view.summary.text()
        _rounded(re.search(r"value (\S+)</b>", view.summary.text()).group(1), float(alone.predict(TEXT).logits[0]))
        return
    assert "one label at a time" in view.summary.text()
    other = (ca.target + 1) % len(labels)
    win.state.task.pick(other)
    qtbot.waitUntil(lambda: win.state.inside.components is not None
                    and win.state.inside.components.target == other, timeout=TIMEOUT_MS)
    _same_numbers(win.state.inside.components, alone.component_attribution(TEXT, target=other))
    view.flush()
    assert f"<b>{labels[other]}: logit" in view.summary.text()
