"""The attention chapter's other steps (issue 36, model side): attention without trainable weights, the causal
what-if and the heads joined by W^O, each checked against a direct computation."""

from __future__ import annotations

import numpy as np
import pytest

from model.records.internals import AttentionInternals
from model.attention.lessons import causal_weights, causal_what_if, heads_joined, plain_attention

TEXT = "The film was not good, but the music was lovely."


def _direct_softmax(s: np.ndarray) -> np.ndarray:
    s = np.asarray(s, np.float64)
    e = np.exp(s - s[np.isfinite(s)].max())
    return e / e.sum()


def _check_lessons(predictor, head_mask=None) -> None:
    """Step 0, the causal row and the heads joined of every layer, against direct computations."""
    pred = predictor.predict(TEXT, head_mask=head_mask)
    for layer in range(predictor.config.n_layers):
        x = predictor.attention_internals(TEXT, layer, head_mask=head_mask)
        T, D = x.num_tokens, x.inputs.shape[1]
        assert x.inputs.shape == (T, D) and not x.inputs.flags.writeable
        for query in (0, 1, T - 1):
            # step 0: x_i . x_j of the layer input, softmax, context vector
            plain = plain_attention(x, query)
            states = x.inputs.astype(np.float64)
            direct = np.array([states[query] @ states[j] for j in range(T)])
            np.testing.assert_allclose(plain.scores, direct, rtol=1e-5, atol=1e-4)
            w = _direct_softmax(direct)
            np.testing.assert_allclose(plain.weights, w, atol=1e-6)
            np.testing.assert_allclose(plain.context, (w[:, None] * states).sum(0), rtol=1e-5, atol=1e-5)
            # the causal what-if: a direct masked softmax of the real scores
            for head in range(x.n_heads):
                c = causal_what_if(x, head, query)
                s = np.array(x.scores[head, query], np.float64)
                s[query + 1:] = -np.inf
                np.testing.assert_allclose(c.weights, _direct_softmax(s), atol=1e-6)
                assert abs(float(c.weights.sum()) - 1.0) < 1e-5 and np.all(c.weights[query + 1:] == 0)
                np.testing.assert_array_equal(c.masked, np.arange(T) > query)
                np.testing.assert_allclose(c.real_weights, pred.attention[layer, head, query], atol=1e-5)
                np.testing.assert_allclose(c.output, _direct_softmax(s) @ x.values[head], atol=1e-5)
                np.testing.assert_allclose(c.difference, c.output - x.head_outputs[head, query], atol=1e-6)
                if query == 0:  # the first query attends only to itself
                    assert c.weights[0] == pytest.approx(1.0) and np.all(c.weights[1:] == 0)
                    np.testing.assert_allclose(c.output, x.values[head, 0], atol=1e-6)
            # heads joined: the per-head parts o_h W^O_h + b^O add up to the model's own attention output
            joined = heads_joined(x, query)
            assert joined.parts.shape == (x.n_heads, D)
            np.testing.assert_allclose(joined.parts.sum(0) + joined.bias, x.attention_output[query], atol=1e-5)
            assert joined.max_error < 1e-5


def test_lessons_bundled_model(bundled_predictor):
    _check_lessons(bundled_predictor)


def test_lessons_random_models_pre_ln_and_head_mask(tiny_predictor, tmp_path):
    _check_lessons(tiny_predictor)
    L, H = tiny_predictor.config.n_layers, tiny_predictor.config.n_heads
    mask = np.ones((L, H), np.float32)
    mask[:, 0] = 0.0
    _check_lessons(tiny_predictor, head_mask=mask)  # a switched-off head's part is 0, still adding up
    x = tiny_predictor.attention_internals(TEXT, 0, head_mask=mask)
    assert np.all(heads_joined(x, 1).parts[0] == 0)
    from model import EncoderConfig, Predictor
    from tests.fixtures.tiny_models import make_random_model_dir

    pre_ln = make_random_model_dir(tmp_path, config=EncoderConfig(d_model=16, n_heads=2, n_layers=2, d_ff=32,
                                                                  max_len=64, norm_first=True, pooling="cls"))
    _check_lessons(Predictor.from_pretrained(pre_ln, device="cpu"))


@pytest.mark.parametrize("family", ["bert", "distilbert", "deberta-v2", "albert"])
def test_lessons_tiny_hf_models(tmp_path, family):
    pytest.importorskip("transformers")
    from model import Predictor
    from tests.fixtures.tiny_hf import make_tiny_hf_dir

    predictor = Predictor.from_pretrained(make_tiny_hf_dir(tmp_path / family, family=family), device="cpu")
    _check_lessons(predictor)
    L, H = predictor.config.n_layers, predictor.config.n_heads
    mask = np.ones((L, H), np.float32)
    mask[0, 1] = 0.0
    _check_lessons(predictor, head_mask=mask)


def test_deberta_position_part_is_its_own_score_part(tmp_path):
    pytest.importorskip("transformers")
    from model import Predictor
    from tests.fixtures.tiny_hf import make_tiny_hf_dir

    predictor = Predictor.from_pretrained(make_tiny_hf_dir(tmp_path / "deb", family="deberta-v2"), device="cpu")
    pred = predictor.predict(TEXT)
    x = predictor.attention_internals(TEXT, 1)
    assert x.position_scores is not None and np.abs(x.position_scores).max() > 0
    assert x.scale == pytest.approx(np.sqrt(3 * x.d_head))  # c2p and p2c: sqrt(3 d), He et al. 2021 eq. 4
    content = x.queries @ x.keys.transpose(0, 2, 1) / x.scale
    np.testing.assert_allclose(x.scores, content + x.position_scores, atol=1e-5)
    e = np.exp(x.scores - x.scores.max(-1, keepdims=True))
    np.testing.assert_allclose(e / e.sum(-1, keepdims=True), pred.attention[1], atol=1e-5)
    st = x.steps(0, 2)
    np.testing.assert_allclose(st.scaled + st.position, st.masked, atol=1e-5)


def test_causal_weights_of_matrices_equal_the_masked_softmax():
    x = AttentionInternals.synthetic(n_heads=3, num_tokens=9, d_head=4, seed=2)
    e = np.exp(x.scores - x.scores.max(-1, keepdims=True))
    w = causal_weights(e / e.sum(-1, keepdims=True))  # (H, T, T)
    assert w.shape == (3, 9, 9)
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-6)
    assert np.all(np.triu(w, 1) == 0) and np.all(w[:, 0, 0] == pytest.approx(1.0))
    for h in range(3):
        for i in range(9):
            np.testing.assert_allclose(w[h, i], causal_what_if(x, h, i).weights, atol=1e-6)


def test_synthetic_lessons_and_errors():
    x = AttentionInternals.synthetic(n_heads=2, num_tokens=6, d_head=4)
    assert heads_joined(x, 3).max_error < 1e-5
    with pytest.raises(IndexError):
        causal_what_if(x, 2, 0)
    with pytest.raises(IndexError):
        plain_attention(x, 6)
    bare = AttentionInternals(x.tokens, 0, x.queries, x.keys, x.values, x.scores, x.head_outputs)
    with pytest.raises(ValueError, match="input states"):
        plain_attention(bare, 0)
    with pytest.raises(ValueError, match="W\\^O"):
        heads_joined(bare, 0)
    with pytest.raises(ValueError, match="output_weight"):
        AttentionInternals(x.tokens, 0, x.queries, x.keys, x.values, x.scores, x.head_outputs,
                           output_weight=x.output_weight[:, :2])
