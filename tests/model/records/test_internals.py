"""The attention internals API (issue 11, item 1): Q, K, V, pre-softmax scores and head outputs of one layer."""

from __future__ import annotations

import numpy as np
import pytest

from model.records.internals import AttentionInternals, softmax

TEXT = "A slow start, but the second half is wonderful.<br /><br />I would watch it again."


def _check(predictor, text=TEXT):
    pred = predictor.predict(text)
    L = pred.attention.shape[0]
    for layer in range(L):
        inside = predictor.attention_internals(text, layer)
        H, T, d = inside.queries.shape
        assert (H, T) == pred.attention.shape[1:3] and d == predictor.config.d_head
        assert inside.tokens == tuple(pred.tokens) and inside.layer == layer and inside.extra_score_terms is None
        np.testing.assert_allclose(softmax(inside.scores), pred.attention[layer], atol=1e-5)
        qk = inside.queries @ inside.keys.transpose(0, 2, 1) / np.sqrt(d)
        np.testing.assert_allclose(inside.scores, qk, atol=1e-4, rtol=1e-4)
        np.testing.assert_allclose(inside.head_outputs, pred.attention[layer] @ inside.values, atol=1e-4)
        np.testing.assert_allclose(inside.weights(0, 1), pred.attention[layer, 0, 1], atol=1e-5)
        np.testing.assert_allclose(inside.raw_scores(0, 1) / inside.scale, inside.scores[0, 1], atol=1e-4)
        for a in (inside.queries, inside.keys, inside.values, inside.scores, inside.head_outputs):
            assert a.dtype == np.float32 and not a.flags.writeable
        with pytest.raises(ValueError):
            inside.scores[0, 0, 0] = 1.0


def test_internals_match_predict_bundled_model(bundled_predictor):
    _check(bundled_predictor)


def test_internals_match_predict_random_models(tiny_predictor, tmp_path):
    _check(tiny_predictor)
    from model import EncoderConfig, Predictor
    from tests.fixtures.tiny_models import make_random_model_dir

    pre_ln = make_random_model_dir(tmp_path, config=EncoderConfig(d_model=16, n_heads=2, n_layers=3, d_ff=32,
                                                                  max_len=64, norm_first=True, pooling="cls"))
    _check(Predictor.from_pretrained(pre_ln, device="cpu"))


def test_internals_layer_index_and_text_errors(tiny_predictor):
    last = tiny_predictor.attention_internals(TEXT, -1)
    assert last.layer == tiny_predictor.config.n_layers - 1
    with pytest.raises(IndexError):
        tiny_predictor.attention_internals(TEXT, tiny_predictor.config.n_layers)
    with pytest.raises(ValueError):
        tiny_predictor.attention_internals("   ", 0)


def test_synthetic_internals_are_consistent():
    x = AttentionInternals.synthetic(n_heads=2, num_tokens=8, d_head=4)
    assert x.scores.shape == (2, 8, 8) and x.d_head == 4
    np.testing.assert_allclose(softmax(x.scores) @ x.values, x.head_outputs, atol=1e-5)
    with pytest.raises(ValueError):
        AttentionInternals(("a",), 0, x.queries, x.keys, x.values, x.scores, x.head_outputs)


def test_softmax_of_masked_scores_is_zero():
    s = np.array([[1.0, -np.inf, 2.0]], np.float32)
    w = softmax(s)
    assert w[0, 1] == 0.0 and abs(w.sum() - 1) < 1e-6


def test_steps_follow_the_teaching_order():
    x = AttentionInternals.synthetic(n_heads=2, num_tokens=20, d_head=8, seed=3)
    st = x.steps(1, 4, top_k=5)
    np.testing.assert_allclose(st.scaled, st.raw / np.sqrt(8), rtol=1e-5)
    np.testing.assert_allclose(st.masked, x.scores[1, 4])
    np.testing.assert_allclose(st.weights, x.weights(1, 4))
    assert len(st.keys) == 5 and np.all(np.diff(st.weights[st.keys]) <= 0)
    full = x.steps(1, 4)
    np.testing.assert_allclose(full.weighted_values.sum(0), full.output, atol=1e-5)
    np.testing.assert_allclose(full.output, x.head_outputs[1, 4])
    assert abs(full.rest_weight) < 1e-6 and 0 < st.rest_weight < 1
    with pytest.raises(IndexError):
        x.steps(2, 0)
