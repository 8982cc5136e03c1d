"""Token-importance methods: attention rollout by hand, exact gradient x input, IG completeness."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch
from torch import nn

from model.explain import (
    CHEAP_METHODS,
    EXPLANATION_METHODS,
    SIGNED_METHODS,
    ExplanationCancelled,
    attention_rollout,
    class_log_odds,
    explain,
    forward_with_attention,
    gradient_x_input,
    ig_baseline_ids,
    integrated_gradients,
    random_importance,
    rollout_importance,
)

TEXT = "This movie was wonderful, the acting was superb and the story moving."


# --------------------------------------------------------------------------- attention rollout


def test_rollout_matches_hand_computed_two_layer_example():
    # Two layers, two heads, two tokens. Head means: A1 = [[1, 0], [.5, .5]], A2 = [[.5, .5], [0, 1]].
    a1 = np.array([[[1.0, 0.0], [1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]]])  # (H, T, T)
    a2 = np.array([[[0.0, 1.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]]])
    attn = np.stack([a1, a2])  # (L, H, T, T)
    # A'1 = .5 A1 + .5 I = [[1, 0], [.25, .75]];  A'2 = [[.75, .25], [0, 1]]
    # R = A'2 A'1 = [[.75 + .25 * .25, .25 * .75], [.25, .75]]
    expected = np.array([[0.8125, 0.1875], [0.25, 0.75]])
    R = attention_rollout(attn)
    np.testing.assert_allclose(R, expected, atol=1e-12)
    np.testing.assert_allclose(rollout_importance(attn, "cls"), expected[0], atol=1e-6)
    np.testing.assert_allclose(rollout_importance(attn, "mean"), expected.mean(0), atol=1e-6)


def test_rollout_rows_sum_to_one_on_random_attention():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(3, 4, 9, 9))
    attn = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    R = attention_rollout(attn)
    np.testing.assert_allclose(R.sum(-1), np.ones(9), atol=1e-12)
    assert (R >= 0).all()
    # one layer of uniform attention: A' = .5 U + .5 I exactly
    uniform = np.full((1, 2, 4, 4), 0.25)
    np.testing.assert_allclose(attention_rollout(uniform), 0.5 * 0.25 + 0.5 * np.eye(4))


def test_rollout_rejects_bad_shape():
    with pytest.raises(ValueError, match="L, H, T, T"):
        attention_rollout(np.ones((2, 3, 3)))


def test_attention_and_rollout_methods_use_the_prediction(tiny_predictor):
    pred = tiny_predictor.predict(TEXT)
    e = explain(tiny_predictor, TEXT, "attention", layer=0, prediction=pred)
    np.testing.assert_allclose(e.scores, pred.classification_attention(0))
    assert e.tokens == pred.tokens and not e.signed and e.target == pred.label_index
    r = tiny_predictor.explain(TEXT, "rollout")
    np.testing.assert_allclose(r.scores, rollout_importance(pred.attention, pred.pooling), atol=1e-6)
    assert r.scores.sum() == pytest.approx(1.0, abs=1e-5)


# --------------------------------------------------------------------------- gradients on a linear model


class LinearToy(nn.Module):
    """logits = W mean_t(E[ids_t]) + b: the gradient wrt x_t is (W_c - W_other) / T in closed form."""

    def __init__(self, vocab=20, d=5, seed=0):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.E = nn.Parameter(torch.randn(vocab, d, generator=g))
        with torch.no_grad():
            self.E[0].zero_()  # [PAD]
        self.W = nn.Parameter(torch.randn(2, d, generator=g))
        self.b = nn.Parameter(torch.randn(2, generator=g))
        self.config = SimpleNamespace(pad_id=0, cls_id=2)

    def embed(self, ids):
        return self.E[ids]

    def encode(self, x, mask):
        m = mask.unsqueeze(-1).to(x.dtype)
        pooled = (x * m).sum(1) / m.sum(1)
        return pooled @ self.W.T + self.b, None


def test_gradient_x_input_is_exact_on_linear_model():
    model = LinearToy().eval()
    ids = torch.tensor([[2, 5, 7, 11, 5, 19]])
    mask = torch.ones_like(ids, dtype=torch.bool)
    T = ids.shape[1]
    for target in (0, 1):
        scores = gradient_x_input(model, ids, mask, target)
        w = (model.W[target] - model.W[1 - target]).detach()
        expected = (model.E[ids[0]].detach() @ w) / T
        np.testing.assert_allclose(scores, expected.numpy(), rtol=1e-5, atol=1e-6)
        # completeness of a linear model with a zero baseline: sum = f(x) - bias difference
        f = class_log_odds(model.encode(model.embed(ids), mask)[0], target).item()
        assert scores.sum() == pytest.approx(f - (model.b[target] - model.b[1 - target]).item(), abs=1e-5)


def test_integrated_gradients_on_linear_model_equals_delta_x_times_gradient():
    model = LinearToy(seed=1).eval()
    ids = torch.tensor([[2, 4, 9, 3]])
    mask = torch.ones_like(ids, dtype=torch.bool)
    scores, delta = integrated_gradients(model, ids, mask, target=1, n_steps=8)
    x, x0 = model.embed(ids).detach(), model.embed(ig_baseline_ids(ids, 0, 2)).detach()
    w = (model.W[1] - model.W[0]).detach()
    expected = ((x - x0)[0] @ w) / ids.shape[1]
    np.testing.assert_allclose(scores, expected.numpy(), rtol=1e-4, atol=1e-6)
    assert scores[0] == 0.0  # [CLS] is kept in the baseline
    assert abs(delta) < 1e-4


def test_class_log_odds_matches_probabilities():
    logits = torch.tensor([[0.3, -1.2, 2.0], [1.0, 1.0, 1.0]])
    p = logits.softmax(-1)
    for c in range(3):
        np.testing.assert_allclose(class_log_odds(logits, c), torch.log(p[:, c] / (1 - p[:, c])), rtol=1e-5)


def test_ig_baseline_keeps_cls_and_pads_the_rest():
    ids = torch.tensor([[2, 17, 2, 33]])
    assert ig_baseline_ids(ids, pad_id=0, cls_id=2).tolist() == [[2, 0, 2, 0]]


# --------------------------------------------------------------------------- the real encoder (tiny, random)


def _ids(predictor, text=TEXT):
    enc = predictor.encode(text)
    ids = torch.from_numpy(enc.ids).unsqueeze(0)
    return ids, torch.ones_like(ids, dtype=torch.bool)


def test_integrated_gradients_completeness_on_tiny_model(tiny_predictor):
    e = tiny_predictor.explain(TEXT, "integrated_gradients", n_steps=32)
    ids, mask = _ids(tiny_predictor)
    model = tiny_predictor.model
    with torch.no_grad():
        f_x = class_log_odds(model(ids, mask)[0], e.target).item()
        f_b = class_log_odds(model(ig_baseline_ids(ids, 0, 2), mask)[0], e.target).item()
    total = float(e.scores.astype(np.float64).sum())
    # captum's delta is exactly the completeness gap, and with 32 points the gap is small (log-odds units).
    # The bounds are absolute plus relative: the tiny random model's f(x) - f(baseline) can itself be
    # small (0.05-0.5 over tokenizer variants: HF WordPiece training is not deterministic, tokenizers#1794).
    assert total - (f_x - f_b) == pytest.approx(e.convergence_delta, abs=1e-4)
    assert abs(e.convergence_delta) <= 0.05 * abs(f_x - f_b) + 1e-2
    # and the quadrature converges: with 512 points the gap is within 1% (+ float32 noise)
    fine = tiny_predictor.explain(TEXT, "integrated_gradients", n_steps=512)
    assert abs(float(fine.scores.astype(np.float64).sum()) - (f_x - f_b)) <= 0.01 * abs(f_x - f_b) + 1e-3
    assert e.signed and e.scores.shape == (len(ids[0]),) and e.scores[0] == 0.0


def test_integrated_gradients_progress_and_cancel(tiny_predictor):
    seen = []
    e = tiny_predictor.explain(TEXT, "integrated_gradients", n_steps=8, progress=lambda d, t: seen.append((d, t)))
    assert seen[-1][0] == seen[-1][1] and len(seen) >= 3
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert e.convergence_delta is not None

    calls = []

    def stop():
        calls.append(1)
        return len(calls) > 2

    with pytest.raises(ExplanationCancelled):
        tiny_predictor.explain(TEXT, "integrated_gradients", n_steps=16, should_stop=stop)


def test_grad_attention_forward_matches_model_and_scores_are_nonnegative(tiny_predictor):
    ids, mask = _ids(tiny_predictor)
    model = tiny_predictor.model
    with torch.no_grad():
        logits, maps = forward_with_attention(model, model.embed(ids), mask)
        ref, attn = model(ids, mask, need_weights=True)
    torch.testing.assert_close(logits, ref)
    torch.testing.assert_close(torch.stack(maps, 1), attn)
    e = tiny_predictor.explain(TEXT, "grad_attention")
    assert e.scores.shape == (ids.shape[1],) and (e.scores >= 0).all() and e.scores.sum() > 0


@pytest.mark.parametrize("method", EXPLANATION_METHODS)
def test_every_method_gives_one_finite_score_per_token(tiny_predictor, method):
    pred = tiny_predictor.predict(TEXT)
    e = tiny_predictor.explain(TEXT, method, prediction=pred, n_steps=4)
    assert e.method == method and e.tokens == pred.tokens
    assert e.scores.dtype == np.float32 and e.scores.shape == (pred.num_tokens,)
    assert np.isfinite(e.scores).all() and e.elapsed_s >= 0
    assert e.signed == (method in SIGNED_METHODS)
    assert (e.convergence_delta is not None) == (method == "integrated_gradients")
    other = 1 - pred.label_index
    assert tiny_predictor.explain(TEXT, method, target=other, n_steps=4).target == other


def test_grad_x_input_changes_sign_with_the_target(tiny_predictor):
    a = tiny_predictor.explain(TEXT, "grad_x_input", target=0).scores
    b = tiny_predictor.explain(TEXT, "grad_x_input", target=1).scores
    np.testing.assert_allclose(a, -b, rtol=1e-4, atol=1e-6)  # two classes: log-odds(0) = -log-odds(1)


def test_random_baseline_is_seeded():
    a, b = random_importance(30, "x", 0), random_importance(30, "x", 0)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, random_importance(30, "x", 1))
    assert not np.array_equal(a, random_importance(30, "y", 0))
    assert ((a >= 0) & (a < 1)).all()


def test_bad_input_gives_clear_errors(tiny_predictor):
    with pytest.raises(ValueError, match="unknown explanation method"):
        tiny_predictor.explain(TEXT, "saliency")
    with pytest.raises(ValueError, match="empty"):
        tiny_predictor.explain("   ", "grad_x_input")
    with pytest.raises(ValueError, match="target"):
        tiny_predictor.explain(TEXT, "random", target=5)
    with pytest.raises(ValueError, match="layer"):
        tiny_predictor.explain(TEXT, "attention", layer=7)
    with pytest.raises(ValueError, match="different text"):
        tiny_predictor.explain(TEXT, "attention", prediction=tiny_predictor.predict("another review"))


def test_cheap_methods_are_a_subset():
    assert set(CHEAP_METHODS) < set(EXPLANATION_METHODS) and "integrated_gradients" not in CHEAP_METHODS


def test_cls_pooling_reads_row_zero(tmp_path):
    from model import Predictor
    from model.core.config import EncoderConfig
    from tests.fixtures.tiny_models import make_random_model_dir

    cfg = EncoderConfig(max_len=64, d_model=16, n_heads=2, n_layers=2, d_ff=32, pooling="cls")
    p = Predictor.from_pretrained(make_random_model_dir(tmp_path, config=cfg, seed=3), device="cpu")
    pred = p.predict(TEXT)
    r = p.explain(TEXT, "rollout", prediction=pred)
    np.testing.assert_allclose(r.scores, attention_rollout(pred.attention)[0], atol=1e-6)
    np.testing.assert_allclose(p.explain(TEXT, "attention", prediction=pred).scores, pred.attention[-1].mean(0)[0])
    ids, mask = _ids(p)
    with torch.no_grad():
        logits, _ = forward_with_attention(p.model, p.model.embed(ids), mask)
    torch.testing.assert_close(logits, p.model(ids, mask)[0])
