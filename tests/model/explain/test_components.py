"""Component attribution (issue 53, section 1): the parts sum to the logit ``predict`` gives for the bundled model,
our encoder post- and pre-LN, a tiny model of every Hugging Face family, every task, a pair and a text read in
windows; ``by_position`` sums to the parts; a head the mask removes writes nothing; DeBERTa v1 is refused."""

from __future__ import annotations

import numpy as np
import pytest

from model import Predictor
from model.core.config import EncoderConfig
from model.records.components import ComponentAttribution, ComponentsNotSupported, grid_shape, layer_grid

TEXT = "This movie was not good at all; the acting was superb but the story dull."


def _check(ca: ComponentAttribution, logits: np.ndarray, target: int) -> None:
    """The record's identities: the parts sum to ``logits[target]``, by_position to the parts, names are unique."""
    assert ca.target == target
    assert ca.total == pytest.approx(float(logits[target]), abs=1e-5 * max(1.0, abs(float(logits[target]))))
    tol = 1e-4 * max(1.0, abs(ca.total))
    assert abs(float(ca.values.astype(np.float64).sum()) - ca.total) <= tol
    np.testing.assert_allclose(ca.by_position.sum(-1), ca.values, atol=1e-5 * max(1.0, abs(ca.total)))
    assert len(set(ca.names)) == len(ca.names) == len(ca.values)
    assert ca.values.dtype == np.float32 and not ca.values.flags.writeable


def test_bundled_model_parts_sum_to_each_logit(bundled_predictor):
    p = bundled_predictor
    logits = p.predict(TEXT).logits
    for target in range(len(p.labels)):
        ca = p.component_attribution(TEXT, target=target)
        _check(ca, logits, target)
    assert ca.names[:6] == ("embeddings", "L1.H1", "L1.H2", "L1.H3", "L1.H4", "L1.attn_bias")
    assert p.component_attribution(TEXT).target == int(np.argmax(logits))


@pytest.mark.parametrize("norm_first, pooling", [(False, "mean"), (True, "cls"), (True, "mean")])
def test_our_encoder_post_and_pre_ln(tmp_path, norm_first, pooling):
    from tests.fixtures.tiny_models import make_random_model_dir

    cfg = EncoderConfig(max_len=64, d_model=16, n_heads=2, n_layers=3, d_ff=32, norm_first=norm_first, pooling=pooling)
    p = Predictor.from_pretrained(make_random_model_dir(tmp_path, cfg), device="cpu")
    ca = p.component_attribution(TEXT, target=1)
    _check(ca, p.predict(TEXT).logits, 1)
    assert ("final_ln_beta" in ca.names) == norm_first and ("L1.ln_beta" in ca.names) != norm_first
    if pooling == "cls" and norm_first:  # pre-LN with [CLS] pooling: only row 0 of the stream is read
        written = [k for k, n in enumerate(ca.names) if not n.startswith("L") or n.endswith((".ffn", "attn_bias"))]
        assert np.all(ca.by_position[written, 1:] == 0)


@pytest.mark.parametrize("family", ["bert", "distilbert", "roberta", "xlm-roberta", "deberta-v2", "albert", "electra"])
def test_every_hf_family(hf_predictor, family):
    p = hf_predictor(family)
    logits = p.predict(TEXT).logits
    for target in range(len(logits)):
        _check(p.component_attribution(TEXT, target=target), logits, target)


@pytest.mark.parametrize("task, labels", [("multi_label", ("joy", "anger", "fear")), ("regression", ("score",))])
def test_every_task(predictor_for, task, labels):
    p = predictor_for(labels, task)
    logits = p.predict(TEXT).logits
    for target in range(len(labels)):
        _check(p.component_attribution(TEXT, target=target), logits, target)
    assert p.component_attribution(TEXT).target == int(np.argmax(logits))


def test_sentence_pair_with_segment_embeddings(hf_predictor):
    p = hf_predictor("bert")
    pair = "the film was dull"
    logits = p.predict(TEXT, text_pair=pair).logits
    ca = p.component_attribution(TEXT, target=0, text_pair=pair)
    _check(ca, logits, 0)
    assert ca.tokens == tuple(p.encode(TEXT, pair).tokens)
    single = p.component_attribution(TEXT + " the film was dull", target=0)
    assert not np.isclose(single.value("embeddings"), ca.value("embeddings"))  # the segment embedding is in there


def test_head_mask_removes_the_head_and_keeps_the_sum(bundled_predictor):
    p = bundled_predictor
    mask = np.ones((p.config.n_layers, p.config.n_heads), dtype=np.float32)
    mask[1, 2] = 0.0
    ca = p.component_attribution(TEXT, target=1, head_mask=mask)
    _check(ca, p.predict(TEXT, head_mask=mask).logits, 1)
    assert ca.value("L2.H3") == 0.0 and p.component_attribution(TEXT, target=1).value("L2.H3") != 0.0  # the 3rd


def test_text_read_in_windows_sums_to_the_document_logit(tiny_predictor):
    from tests.fixtures.tiny_models import text_of_pieces

    text = text_of_pieces(tiny_predictor, 150)
    pred = tiny_predictor.predict(text)
    assert pred.num_windows > 1
    ca = tiny_predictor.component_attribution(text, target=0)
    _check(ca, pred.logits, 0)
    assert ca.num_windows == pred.num_windows and len(ca.tokens) == len(pred.document.tokens)
    assert tiny_predictor.component_attribution(text).target == pred.label_index  # the document's verdict
    cut = tiny_predictor.component_attribution(text, target=0, long_text="head_tail")
    _check(cut, tiny_predictor.predict(text, long_text="head_tail").logits, 0)
    assert cut.num_windows == 1


def test_heads_are_named_from_1_as_the_app_counts_them():
    """The app's Head box says "head 3" for the head of index 2: its part is "L2.H3" everywhere."""
    from model.records.components import head_of, head_part

    assert head_part(2, 2) == "L2.H3" and head_of("L2.H3") == (2, 2)
    assert head_of("L2.ffn") is None and head_of("embeddings") is None


def test_top_text_and_grid():
    names = ("embeddings", "L1.H1", "L1.H2", "L1.attn_bias", "L1.ffn", "L1.ln_beta", "L2.H1", "L2.H2", "head_bias")
    values = np.array([0.1, 1.24, -0.8, 0.0, -2.0, 0.3, 0.05, 0.5, 0.01], dtype=np.float32)
    ca = ComponentAttribution(names, values, float(values.sum()), np.diag(values)[:, :9].copy(), 1, "positive",
                              tuple("abcdefghi"), 2, 2)
    assert ca.top_text(3) == "L1.ffn \u22122.00; L1.H1 +1.24; L1.H2 \u22120.80"
    grid, cols = ca.grid()
    assert cols == ("H1", "H2", "ffn", "attn_bias", "ln_beta") and grid.shape == (2, 5)
    assert grid[0, 2] == np.float32(-2.0) and np.isnan(grid[1, 2])
    assert grid_shape(names) == (2, 2)
    assert layer_grid({"L3.H1": 1.0}, 2, 2)[0].shape == (2, 5)  # a layer out of range is left out
    with pytest.raises(ValueError):
        ComponentAttribution(names, values[:3], 0.0, np.zeros((9, 9), np.float32), 0, "", tuple("abcdefghi"), 2, 2)


def test_deberta_v1_is_refused(deberta_v1_predictor):
    with pytest.raises(ComponentsNotSupported, match="DeBERTa"):
        deberta_v1_predictor.component_attribution(TEXT)


def test_bad_target_and_no_head(bundled_predictor, hf_predictor):
    with pytest.raises(ValueError, match="target"):
        bundled_predictor.component_attribution(TEXT, target=5)
    from model.records.prediction import NoClassificationHead

    with pytest.raises(NoClassificationHead):
        hf_predictor("bert", head=False).component_attribution(TEXT)


def _check_neurons(p: Predictor, text: str, layer: int, target: int, **kw) -> None:
    """``ffn_neurons``' every neuron plus the output bias sum to ``component_attribution``'s FFN part (1e-4
    relative), its top neurons are the largest by |value| with their by-position rows summing to their values."""
    ca = p.component_attribution(text, target=target, **kw)
    fn = p.ffn_neurons(text, layer, target=target, top=5, **kw)
    part = ca.value(f"L{layer}.ffn")
    tol = 1e-4 * max(1.0, abs(part))
    assert abs(float(fn.contributions.astype(np.float64).sum()) + fn.bias - part) <= tol
    assert fn.value == pytest.approx(part, abs=tol) and fn.total == pytest.approx(ca.total, abs=tol)
    assert fn.name == f"L{layer}.ffn" and fn.target == target and fn.tokens == ca.tokens
    assert fn.num_windows == ca.num_windows and len(fn.neurons) == 5
    mags = np.abs(fn.contributions)
    assert np.all(np.diff(mags[fn.neurons]) <= 0) and mags[fn.neurons[-1]] >= np.sort(mags)[-5]
    np.testing.assert_allclose(fn.by_position.sum(-1), fn.contributions[fn.neurons], atol=1e-5 * max(1.0, abs(part)))
    assert fn.activations.shape == (5, len(ca.tokens)) and not fn.contributions.flags.writeable


def test_ffn_neurons_sum_to_the_ffn_part_bundled(bundled_predictor):
    p = bundled_predictor
    for layer in (1, 2):
        for target in range(len(p.labels)):
            _check_neurons(p, TEXT, layer, target)
    fn = p.ffn_neurons(TEXT, 2, target=1, top=3)
    assert fn.n_neurons == p.config.d_ff
    j, a = fn.top_tokens(0, 1)[0]
    assert a == pytest.approx(float(fn.activations[0].max())) and 0 <= j < len(fn.tokens)
    # mean pooling: every row of the stream is read, so the contributions spread over the tokens
    assert np.count_nonzero(fn.by_position[0]) > 1


@pytest.mark.parametrize("family", ["bert", "distilbert", "roberta", "xlm-roberta", "deberta-v2", "albert", "electra"])
def test_ffn_neurons_sum_to_the_ffn_part_hf(hf_predictor, family):
    p = hf_predictor(family)
    _check_neurons(p, TEXT, 1, 0)
    _check_neurons(p, TEXT, 2, 1)
    fn = p.ffn_neurons(TEXT, 2, target=1)
    assert np.all(fn.by_position[:, 1:] == 0)  # [CLS] pooling: only row 0 is read


def test_ffn_neurons_pair_pre_ln_windows_and_errors(hf_predictor, tiny_predictor, tmp_path):
    from tests.fixtures.tiny_models import make_random_model_dir, text_of_pieces

    _check_neurons(hf_predictor("bert"), TEXT, 2, 0, text_pair="the film was dull")
    cfg = EncoderConfig(max_len=64, d_model=16, n_heads=2, n_layers=3, d_ff=32, norm_first=True, pooling="cls")
    _check_neurons(Predictor.from_pretrained(make_random_model_dir(tmp_path, cfg), device="cpu"), TEXT, 3, 1)
    text = text_of_pieces(tiny_predictor, 150)
    _check_neurons(tiny_predictor, text, 1, 0)
    assert tiny_predictor.ffn_neurons(text, 1, target=0).num_windows > 1
    with pytest.raises(ValueError, match="layer"):
        tiny_predictor.ffn_neurons(TEXT, 0)
    with pytest.raises(ValueError, match="top"):
        tiny_predictor.ffn_neurons(TEXT, 1, top=0)
