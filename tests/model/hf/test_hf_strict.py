"""Issue 32: broken Hugging Face folders are refused with one clear paragraph, never loaded as a random or NaN model.

Each folder is a tiny random BERT classifier (tests.fixtures.tiny_hf) damaged one way (tests.fixtures.broken_hf.BREAKERS).
"""

from __future__ import annotations

import json
import os
import re

import numpy as np
import pytest

pytest.importorskip("transformers")

from model import Predictor
from tests.fixtures.broken_hf import ACCEPTED, BREAKERS, break_folder
from tests.fixtures.tiny_hf import make_tiny_hf_dir


@pytest.fixture(scope="module")
def bert_dir(tmp_path_factory):
    return make_tiny_hf_dir(tmp_path_factory.mktemp("hf") / "bert", "bert")


@pytest.mark.parametrize("name", sorted(BREAKERS))
def test_broken_folder_is_refused_clearly_or_opens_with_a_note(bert_dir, tmp_path, name):
    folder = tmp_path / "broken"
    expected = break_folder(bert_dir, folder, name)
    if expected == ACCEPTED:
        p = Predictor.from_pretrained(folder, device="cpu")
        assert "extra weight" in p.config.load_note and "cls.predictions" in p.config.load_note
        assert "extra weight" in p.model_info().load_note
        assert np.isfinite(p.predict("A good film.").probabilities).all()
        return
    with pytest.raises(ValueError) as info:
        Predictor.from_pretrained(folder, device="cpu")
    message = str(info.value)
    assert re.search(expected, message, re.S), message
    assert "\n" not in message and "above" not in message.lower() and str(folder) in message
    if name.startswith(("hidden_size", "dropout", "num_attention", "architectures", "id2label")):
        assert "config.json" in message and "tokenizer" not in message


@pytest.mark.parametrize("name", ["token id 10^9", "two tokens with one id", "token id a string"])
def test_a_damaged_tokenizer_json_is_refused_before_the_tokenizer_library_reads_it(bert_dir, tmp_path, monkeypatch,
                                                                                   name):
    """Issue 46: an id of 10^9 made the Rust library allocate about 4 GB while loading (SIGABRT where memory is
    short): tokenizer.json is checked in Python first, so neither library ever opens such a file."""
    import tokenizers
    import transformers

    opened = []
    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", lambda *a, **k: opened.append(a))
    monkeypatch.setattr(tokenizers.Tokenizer, "from_file", lambda *a, **k: opened.append(a))
    folder = tmp_path / "broken"
    expected = break_folder(bert_dir, folder, name)
    with pytest.raises(ValueError, match=expected):
        Predictor.from_pretrained(folder, device="cpu")
    assert opened == []


def test_an_own_format_folder_s_tokenizer_json_is_checked_too(tiny_model_dir, tmp_path, monkeypatch):
    import shutil

    import tokenizers

    folder = tmp_path / "own"
    shutil.copytree(tiny_model_dir, folder)
    data = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    data["model"]["vocab"]["zzzfar"] = 10**9
    (folder / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
    opened = []
    monkeypatch.setattr(tokenizers.Tokenizer, "from_file", lambda *a, **k: opened.append(a))
    with pytest.raises(ValueError, match=r"tokenizer.json: the vocabulary gives the token 'zzzfar' the id 1000000000"):
        Predictor.from_pretrained(folder, device="cpu")
    assert opened == []


def test_unbroken_folder_opens_without_a_note(bert_dir):
    p = Predictor.from_pretrained(bert_dir, device="cpu")
    assert p.config.load_note == "" and p.model_info().load_note == ""


def test_attention_only_folder_may_lack_the_pooler_and_notes_an_unused_classifier(bert_dir, tmp_path):
    from tests.fixtures.broken_hf import DELETE, edit_config, edit_weights

    folder = tmp_path / "no_arch"
    break_folder(bert_dir, folder, "extra MLM head")
    edit_config(folder, architectures=DELETE)
    edit_weights(folder, lambda t: {k: v for k, v in t.items() if ".pooler." not in k})
    p = Predictor.from_pretrained(folder, device="cpu")
    assert not p.has_head and "classifier" in p.config.load_note and "pooler" not in p.config.load_note
    assert not any("pooler" in name for name, _ in p.model.hf.named_parameters())  # not built: nothing random


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_the_finiteness_check_finds_one_bad_value_in_any_dtype_and_layout(dtype, bad):
    """check_finite reads float32/16/64 through NumPy and bfloat16 through torch: one bad value anywhere, also in a
    transposed (non-contiguous) view, refuses the model."""
    import torch

    from model.hf.strict import check_finite

    layer = torch.nn.Linear(6, 4).to(getattr(torch, dtype))
    check_finite(layer, "w.safetensors")  # finite: accepted
    with torch.no_grad():
        layer.weight[3, 5] = bad
    layer.weight = torch.nn.Parameter(layer.weight.detach().t())  # a strided view
    with pytest.raises(ValueError, match="weight holds NaN or infinite"):
        check_finite(layer, "w.safetensors")


def test_the_pair_tokenizer_copy_is_built_only_when_a_pair_is_read(bert_dir):
    p = Predictor.from_pretrained(bert_dir, device="cpu")
    assert p.encoder.reads_pairs and p.encoder._pair_twin is None  # not at load: copying a tokenizer costs
    enc = p.encoder.encode_pair("A good film.", "It was fine.")
    assert p.encoder._pair_twin is not None and enc.segment_ids.max() == 1


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_pipe_in_the_folder_is_refused_at_once(bert_dir, tmp_path):
    import shutil

    folder = tmp_path / "fifo"
    shutil.copytree(bert_dir, folder)
    (folder / "tokenizer_config.json").unlink()
    os.mkfifo(folder / "tokenizer_config.json")
    with pytest.raises(ValueError, match="not a regular file"):
        Predictor.from_pretrained(folder, device="cpu")
    (folder / "tokenizer_config.json").unlink()
    os.mkfifo(folder / "config.json.tmp")
    (folder / "config.json").unlink()
    os.mkfifo(folder / "config.json")
    with pytest.raises(ValueError, match="config.json is not a regular file"):
        Predictor.from_pretrained(folder, device="cpu")


def test_a_token_id_beyond_the_table_is_a_clear_error_at_predict(bert_dir):
    import torch

    p = Predictor.from_pretrained(bert_dir, device="cpu")
    ids = torch.tensor([[2, 10_000, 3]])
    with pytest.raises(ValueError, match="embedding table"):
        p.model(ids)
    with pytest.raises(ValueError, match="embedding table"):
        p.model.embed(ids)


@pytest.mark.gui
def test_in_the_window_a_wrong_folder_is_refused_and_extra_weights_are_noted(qtbot, tiny_model_dir, bert_dir,
                                                                             tmp_path):
    from gui_helpers import LOAD_TIMEOUT_MS, loaded_window

    win = loaded_window(qtbot, tiny_model_dir)
    wrong = tmp_path / "wrong"
    break_folder(bert_dir, wrong, "model_type distilbert over BERT weights")
    with qtbot.waitSignal(win.model_load_failed, timeout=LOAD_TIMEOUT_MS) as blocker:
        win.switch_model(str(wrong))
    assert "the weights are BERT's" in blocker.args[0] and win.predictor.model_dir == tiny_model_dir
    extra = tmp_path / "extra"
    break_folder(bert_dir, extra, "extra MLM head")
    with qtbot.waitSignal(win.predictor_loaded, timeout=LOAD_TIMEOUT_MS):
        win.switch_model(str(extra))
    assert "extra weight" in win.model_label.text() and "cls.predictions.bias" in win.model_label.toolTip()
