"""Attention flow (value norms, ALTI, DecompX), head masks, prediction by layer and head importance (issue 25).

Identities checked against independent computations: the model's own modules run by hand (our encoder), a naive
per-pair loop, and the logits of ``predict``.
"""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest
import torch

from model import EncoderConfig, Predictor
from model.explain import METHODS, SIGNED_METHODS
from model.explain.value_flow import alti_layer, alti_vectors, head_vectors
from model.explain.taps import capture, taps_of
from model.records.flow import FLOW_METHODS, AttentionFlow, FlowNotSupported
from model.records.prediction import NoClassificationHead
from tests.fixtures.tiny_models import SAMPLE_TEXTS, make_random_model_dir

TEXT = "This movie was wonderful, the acting was superb and the story moving. Not bad at all!"


def _ids(p: Predictor, text: str = TEXT):
    ids = torch.from_numpy(p.encode(text).ids).unsqueeze(0)
    return ids, torch.ones_like(ids, dtype=torch.bool)


def _captured(p: Predictor, text: str = TEXT):
    ids, mask = _ids(p, text)
    taps = taps_of(p.model)
    with torch.inference_mode():
        caps, logits = capture(p.model, ids, mask, taps)
    return taps, caps, logits


def _layer_inputs(p: Predictor, text: str = TEXT) -> list[torch.Tensor]:
    """Each layer's input, by the encoder's own ``run_layers`` (no hooks): (T, D) each."""
    ids, mask = _ids(p, text)
    with torch.inference_mode():
        x = p.model.embed(ids)
        return [p.model.run_layers(x, mask, stop=layer)[0][0] for layer in range(p.config.n_layers)]


# --------------------------------------------------------------------------------------------- value norms


def test_value_norm_equals_a_naive_per_pair_loop(tiny_predictor):
    p = tiny_predictor
    flow = p.attention_flow(TEXT, "value_norm")
    attn = p.predict(TEXT).attention  # (L, H, T, T)
    L, H, T, _ = attn.shape
    for layer in range(L):
        v = p.attention_internals(TEXT, layer).values  # (H, T, d): x W_V + b_V per head
        w_o = p.model.layers[layer].attn.out.weight.detach().numpy()  # (D, H d)
        d = v.shape[-1]
        for i in range(T):
            total = np.zeros((T, w_o.shape[0]))
            for h in range(H):
                for j in range(T):
                    vec = attn[layer, h, i, j] * (v[h, j] @ w_o[:, h * d : (h + 1) * d].T)
                    assert flow.matrices[layer, h, i, j] == pytest.approx(np.linalg.norm(vec), rel=1e-4, abs=1e-6)
                    total[j] += vec
            np.testing.assert_allclose(flow.summed[layer, i], np.linalg.norm(total, axis=1), rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(flow.value_norms[layer], np.linalg.norm(
            np.einsum("htd,ohd->hto", v, w_o.reshape(w_o.shape[0], H, d)), axis=-1), rtol=1e-4, atol=1e-6)


def test_value_norm_vectors_rebuild_the_attention_output(tiny_predictor):
    """sum_j sum_h alpha_ij^h f^h(x_j) + b_O is the attention sublayer's output, computed by its own module."""
    p = tiny_predictor
    taps, caps, _ = _captured(p)
    ids, mask = _ids(p)
    for layer, x in enumerate(_layer_inputs(p)):
        f = head_vectors(caps[layer], taps.layers[layer], p.config.n_heads, None)  # (H, T, D)
        vectors = torch.einsum("hij,hjd->ijd", caps[layer].attn, f)  # (T, T, D)
        with torch.inference_mode():
            ref, _ = p.model.layers[layer].attn(x.unsqueeze(0), mask)
        rebuilt = vectors.sum(1) + p.model.layers[layer].attn.out.bias
        torch.testing.assert_close(rebuilt, ref[0], atol=1e-5, rtol=1e-5)


# ----------------------------------------------------------------------------------------------------- ALTI


def test_alti_vectors_rebuild_the_attention_block_output(tiny_predictor):
    """sum_j T_i(x_j) + bias_i = LN1(x + attention(x)), the block's output by the layer's own modules."""
    p = tiny_predictor
    taps, caps, _ = _captured(p)
    ids, mask = _ids(p)
    for layer, x in enumerate(_layer_inputs(p)):
        block = p.model.layers[layer]
        f = head_vectors(caps[layer], taps.layers[layer], p.config.n_heads, None)
        vectors, bias = alti_vectors(caps[layer], taps.layers[layer], f)
        with torch.inference_mode():
            ref = block.norm1(x + block.attn(x.unsqueeze(0), mask)[0][0])
        torch.testing.assert_close(vectors.sum(1) + bias, ref, atol=1e-5, rtol=1e-5)


def test_alti_contributions_match_the_definition_and_are_distributions(tiny_predictor):
    """The blocked, folded computation equals c_ij = max(0, |y_i|_1 - |y_i - T_i(x_j)|_1) / sum_j from the vectors."""
    p = tiny_predictor
    taps, caps, _ = _captured(p)
    flow = p.attention_flow(TEXT, "alti")
    for layer in range(p.config.n_layers):
        f = head_vectors(caps[layer], taps.layers[layer], p.config.n_heads, None)
        vectors, _ = alti_vectors(caps[layer], taps.layers[layer], f)
        y = caps[layer].ln1_out
        c = (y.abs().sum(-1, keepdim=True) - (y.unsqueeze(1) - vectors).abs().sum(-1)).clamp_min(0)
        c = c / c.sum(-1, keepdim=True)
        np.testing.assert_allclose(flow.matrices[layer], c.numpy(), atol=1e-5)
        torch.testing.assert_close(alti_layer(caps[layer], taps.layers[layer], f), c, atol=1e-5, rtol=1e-4)
    assert (flow.matrices >= 0).all() and (flow.aggregated >= -1e-7).all()
    np.testing.assert_allclose(flow.matrices.sum(-1), 1.0, atol=1e-5)
    np.testing.assert_allclose(flow.aggregated.sum(-1), 1.0, atol=1e-5)
    np.testing.assert_allclose(flow.aggregated[0], flow.matrices[0], atol=1e-6)
    np.testing.assert_allclose(flow.aggregated[1], flow.matrices[1] @ flow.matrices[0], atol=1e-5)
    np.testing.assert_allclose(flow.importance, flow.aggregated[-1].mean(0), atol=1e-6)  # mean pooling


# -------------------------------------------------------------------------------------------------- DecompX


def test_decompx_contributions_sum_to_the_logits(tiny_predictor):
    flow = tiny_predictor.attention_flow(TEXT, "decompx")
    pred = tiny_predictor.predict(TEXT)
    assert flow.contributions.shape == (pred.num_tokens, 2)
    np.testing.assert_allclose(flow.contributions.sum(0), pred.logits, atol=1e-4)
    np.testing.assert_allclose(flow.logits, pred.logits, atol=1e-5)
    np.testing.assert_allclose(flow.importance, flow.contributions[:, pred.label_index]
                               - flow.contributions[:, 1 - pred.label_index], atol=1e-6)
    np.testing.assert_allclose(flow.target_scores(0), -flow.target_scores(1), atol=1e-6)
    np.testing.assert_allclose(flow.aggregated.sum(-1), 1.0, atol=1e-5)


def test_decompx_on_the_bundled_model_at_full_length(bundled_predictor):
    from imdb_data import imdb_sample

    text = max((r["text"] for r in imdb_sample("first80")), key=len)
    flow = bundled_predictor.attention_flow(text, "decompx", long_text="head_tail")
    pred = bundled_predictor.predict(text, long_text="head_tail")  # the cut: one input of up to 512 tokens
    assert flow.num_tokens == pred.num_tokens >= 400
    np.testing.assert_allclose(flow.contributions.astype(np.float64).sum(0), pred.logits, atol=1e-4)


# ------------------------------------------------------------------------------------------ API and records


def test_unknown_method_names_the_methods(tiny_predictor):
    with pytest.raises(ValueError, match="value_norm, alti, decompx"):
        tiny_predictor.attention_flow(TEXT, "attention_rollout")


def test_records_are_read_only_and_views_get_their_matrices(tiny_predictor):
    L, H = tiny_predictor.config.n_layers, tiny_predictor.config.n_heads
    for method in FLOW_METHODS:
        flow = tiny_predictor.attention_flow(TEXT, method)
        assert isinstance(flow, AttentionFlow) and flow.method == method
        assert flow.tokens == tuple(tiny_predictor.predict(TEXT).tokens)
        T = flow.num_tokens
        assert flow.aggregated.shape == (L, T, T) and flow.layer_matrix(-1).shape == (T, T)
        for name in ("matrices", "aggregated", "importance", "logits", "summed", "value_norms", "contributions"):
            arr = getattr(flow, name)
            if arr is not None:
                assert arr.dtype == np.float32 and not arr.flags.writeable
        with pytest.raises(ValueError):
            flow.matrices[0, 0, 0] = 1.0
    vn = tiny_predictor.attention_flow(TEXT, "value_norm")
    assert vn.matrices.shape == (L, H, vn.num_tokens, vn.num_tokens) and vn.per_head
    np.testing.assert_array_equal(vn.layer_matrix(0), vn.summed[0])
    np.testing.assert_array_equal(vn.layer_matrix(0, 1), vn.matrices[0, 1])
    with pytest.raises(ValueError, match="per head"):
        tiny_predictor.attention_flow(TEXT, "alti").layer_matrix(0, 0)


def test_pre_layernorm_models_get_value_norms_and_a_clear_refusal(tmp_path):
    cfg = EncoderConfig(max_len=64, d_model=16, n_heads=2, n_layers=2, d_ff=32, norm_first=True)
    p = Predictor.from_pretrained(make_random_model_dir(tmp_path, cfg), device="cpu")
    assert p.attention_flow(TEXT, "value_norm").matrices.shape[:2] == (2, 2)
    for method in ("alti", "decompx"):
        with pytest.raises(FlowNotSupported, match="post-LayerNorm"):
            p.attention_flow(TEXT, method)
    np.testing.assert_allclose(p.layer_predictions(TEXT)[-1], p.predict(TEXT).probabilities, atol=1e-6)


# ------------------------------------------------------------------------------------------------ head mask


def _manual_logits(p: Predictor, text: str, layer: int, head: int) -> torch.Tensor:
    """Our post-LN forward pass written out with the layer's own modules, head ``head`` of ``layer`` zeroed in the
    context before the output projection."""
    ids, mask = _ids(p, text)
    model = p.model
    with torch.inference_mode():
        x = model.embed(ids)
        for n, block in enumerate(model.layers):
            q, k, v = block.attn.project_qkv(x)  # (1, H, T, d)
            ctx = torch.softmax(q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5, -1) @ v  # (1, H, T, d)
            if n == layer:
                ctx[:, head] = 0.0
            a = block.attn.out(ctx.transpose(1, 2).reshape(x.shape))
            x = block.norm1(x + a)
            x = block.norm2(x + block.ff(x))
        return model.read_out(x, mask)[0]


def test_masking_a_head_equals_zeroing_its_context_by_hand(tiny_predictor):
    p = tiny_predictor
    L, H = p.config.n_layers, p.config.n_heads
    for layer in range(L):
        for head in range(H):
            m = np.ones((L, H))
            m[layer, head] = 0
            got = p.predict(TEXT, head_mask=m)
            np.testing.assert_allclose(got.logits, _manual_logits(p, TEXT, layer, head).numpy(), atol=1e-5)
            score = p.score_many([TEXT], head_mask=m)[0]
            np.testing.assert_allclose(score.probabilities, got.probabilities, atol=1e-5)
    assert not np.allclose(p.predict(TEXT, head_mask=np.zeros((L, H))).logits, p.predict(TEXT).logits)


def test_an_all_ones_mask_changes_nothing(tiny_predictor):
    p = tiny_predictor
    ones = np.ones((p.config.n_layers, p.config.n_heads))
    a, b = p.predict(TEXT), p.predict(TEXT, head_mask=ones)
    assert np.array_equal(a.logits, b.logits) and np.array_equal(a.attention, b.attention)
    s0, s1 = p.score_many(SAMPLE_TEXTS), p.score_many(SAMPLE_TEXTS, head_mask=ones.tolist())
    assert all(np.array_equal(x.probabilities, y.probabilities) for x, y in zip(s0, s1))
    e0, e1 = p.explain(TEXT, "grad_x_input"), p.explain(TEXT, "grad_x_input", head_mask=ones)
    assert np.array_equal(e0.scores, e1.scores)


@pytest.mark.parametrize("bad, message", [
    (np.ones((3, 2)), r"must be \(2, 2\)"), (np.ones(4), r"must be \(2, 2\)"), ([[1, 2], [1, 1]], r"\[0, 1\]"),
    ([[np.nan, 1], [1, 1]], r"\[0, 1\]"), ([["a", 1], [1, 1]], "numbers"),
])
def test_bad_head_masks_are_refused_clearly(tiny_predictor, bad, message):
    for call in (lambda: tiny_predictor.predict(TEXT, head_mask=bad),
                 lambda: tiny_predictor.score_many([TEXT], head_mask=bad),
                 lambda: tiny_predictor.explain(TEXT, "rollout", head_mask=bad),
                 lambda: tiny_predictor.attention_flow(TEXT, "alti", head_mask=bad),
                 lambda: tiny_predictor.layer_predictions(TEXT, head_mask=bad)):
        with pytest.raises(ValueError, match=message):
            call()


def test_explanations_and_flows_follow_the_head_mask(tiny_predictor):
    """A masked head equals a model whose output projection ignores that head (its W_O columns zeroed)."""
    p = tiny_predictor
    L, H = p.config.n_layers, p.config.n_heads
    m = np.ones((L, H))
    m[0, 1] = 0
    q = type(p).from_pretrained(p.model_dir, device="cpu")  # a second copy of the weights, to change
    d = p.config.d_head
    with torch.no_grad():
        q.model.layers[0].attn.out.weight[:, d : 2 * d] = 0
    for method in ("grad_x_input", "rollout", "decompx", "alti"):
        np.testing.assert_allclose(p.explain(TEXT, method, head_mask=m).scores, q.explain(TEXT, method).scores,
                                   atol=1e-5)
    vn = p.attention_flow(TEXT, "value_norm", head_mask=m)
    assert (vn.matrices[0, 1] == 0).all() and vn.head_mask is not None and not vn.head_mask.flags.writeable
    np.testing.assert_allclose(vn.summed, q.attention_flow(TEXT, "value_norm").summed, atol=1e-5)
    dx = p.attention_flow(TEXT, "decompx", head_mask=m)
    np.testing.assert_allclose(dx.contributions.sum(0), p.predict(TEXT, head_mask=m).logits, atol=1e-4)
    f = p.faithfulness(TEXT, p.explain(TEXT, "alti", head_mask=m), head_mask=m)
    assert f.p_full == pytest.approx(float(p.predict(TEXT, head_mask=m).probabilities[f.target]), abs=1e-5)


# --------------------------------------------------------------------------------------- prediction by layer


def test_layer_predictions_end_with_the_prediction(tiny_predictor):
    p = tiny_predictor
    probs = p.layer_predictions(TEXT)
    assert probs.shape == (p.config.n_layers + 1, 2) and probs.dtype == np.float32 and not probs.flags.writeable
    np.testing.assert_allclose(probs.sum(-1), 1.0, atol=1e-6)
    np.testing.assert_allclose(probs[-1], p.predict(TEXT).probabilities, atol=1e-6)
    m = np.ones((p.config.n_layers, p.config.n_heads))
    m[1, 0] = 0
    masked = p.layer_predictions(TEXT, head_mask=m)
    np.testing.assert_allclose(masked[-1], p.predict(TEXT, head_mask=m).probabilities, atol=1e-6)
    np.testing.assert_allclose(masked[:2], probs[:2], atol=1e-6)  # layers before the masked one are unchanged


# ------------------------------------------------------------------------------------------- registry, CLI


def test_flow_methods_join_the_explanation_registry(tiny_predictor):
    for method in ("value_norm", "alti", "decompx"):
        assert method in METHODS
        e = tiny_predictor.explain(TEXT, method)
        flow = tiny_predictor.attention_flow(TEXT, method)
        np.testing.assert_allclose(e.scores, flow.importance, atol=1e-6)
    assert "decompx" in SIGNED_METHODS and "alti" not in SIGNED_METHODS


def test_head_importance_cli_writes_scores_and_the_pruning_curve(tiny_model_dir, tmp_path, capsys):
    from model.evaluation.head_importance import head_importance, main

    data = tmp_path / "d.jsonl.gz"
    with gzip.open(data, "wt", encoding="utf-8") as fh:
        for i, t in enumerate(SAMPLE_TEXTS * 2):
            fh.write(json.dumps({"text": t, "label": i % 2}) + "\n")
    out = tmp_path / "heads.json"
    argv = ["--data", str(data), "--n", "10", "--model", str(tiny_model_dir), "--out", str(out), "--batch-size", "3"]
    assert main(argv) == 0
    result = json.loads(out.read_text())
    imp = np.array(result["importance"])
    assert imp.shape == (2, 2) and np.allclose(np.linalg.norm(imp, axis=1), 1.0)
    assert [r["percent"] for r in result["pruning"]] == [0, 10, 20, 30, 40, 50, 60, 70, 80, 90]
    assert result["pruning"][0]["heads_pruned"] == 0 and result["pruning"][-1]["heads_pruned"] == 4
    assert all(0 <= r["accuracy"] <= 1 for r in result["pruning"])
    assert "accuracy" in capsys.readouterr().out
    # eq. 2 by finite differences: d L / d xi_h at xi = 1 for one review
    p = Predictor.from_pretrained(tiny_model_dir, device="cpu")
    target = np.array([1])
    grad = head_importance(p, [TEXT], target)

    def loss(m):
        return -np.log(p.predict(TEXT, head_mask=m).probabilities[1])

    eps = 1e-3
    for layer, head in ((0, 0), (1, 1)):
        m = np.ones((2, 2))
        m[layer, head] = 1 - eps
        assert grad[layer, head] == pytest.approx(abs(loss(np.ones((2, 2))) - loss(m)) / eps, rel=2e-2, abs=1e-4)
    assert main(["--data", str(tmp_path / "missing.jsonl"), "--model", str(tiny_model_dir)]) == 2


# ------------------------------------------------------------------------------------------- Hugging Face


HF_FAMILIES = ("bert", "distilbert", "roberta", "xlm-roberta", "electra", "deberta-v2", "albert")


@pytest.fixture(scope="module")
def hf_predictors(tmp_path_factory):
    pytest.importorskip("transformers")
    from tests.fixtures.tiny_hf import make_tiny_hf_dir

    root = tmp_path_factory.mktemp("hf_flow")
    return {f: Predictor.from_pretrained(make_tiny_hf_dir(root / f, f, seed=3), device="cpu") for f in HF_FAMILIES}


@pytest.mark.parametrize("family", HF_FAMILIES)
def test_hf_families_flow_identities(hf_predictors, family):
    p = hf_predictors[family]
    pred = p.predict(TEXT)
    taps, caps, logits = _captured(p)
    vn = p.attention_flow(TEXT, "value_norm")
    for layer in range(p.config.n_layers):
        v = torch.from_numpy(p.attention_internals(TEXT, layer).values.copy())  # (H, T, d)
        w_o = taps.layers[layer].out_proj.weight.detach()  # (D, H d)
        H, T, d = v.shape
        f = torch.einsum("htd,ohd->hto", v, w_o.view(-1, H, d))  # f^h(x_j)
        attn = torch.from_numpy(pred.attention[layer].copy())
        np.testing.assert_allclose(vn.matrices[layer], (attn * f.norm(dim=-1)[:, None, :]).numpy(), atol=1e-5)
        rebuilt = torch.einsum("hij,hjd->id", attn, f) + taps.layers[layer].out_proj.bias.detach()
        torch.testing.assert_close(rebuilt, caps[layer].attn_out, atol=1e-5, rtol=1e-4)
        vectors, bias = alti_vectors(caps[layer], taps.layers[layer], head_vectors(caps[layer], taps.layers[layer],
                                                                                    H, None))
        torch.testing.assert_close(vectors.sum(1) + bias, caps[layer].ln1_out, atol=1e-5, rtol=1e-4)
    alti = p.attention_flow(TEXT, "alti")
    assert (alti.matrices >= 0).all()
    np.testing.assert_allclose(alti.matrices.sum(-1), 1.0, atol=1e-5)
    np.testing.assert_allclose(alti.importance, alti.aggregated[-1][0], atol=1e-6)  # [CLS] read-out
    dx = p.attention_flow(TEXT, "decompx")
    np.testing.assert_allclose(dx.contributions.sum(0), pred.logits, atol=1e-4)
    np.testing.assert_allclose(p.layer_predictions(TEXT)[-1], pred.probabilities, atol=1e-6)


@pytest.mark.parametrize("family", ("bert", "distilbert", "albert"))
def test_hf_head_mask_equals_zeroing_the_heads_output_columns(hf_predictors, family):
    p = hf_predictors[family]
    L, H = p.config.n_layers, p.config.n_heads
    m = np.ones((L, H))
    m[1, 2] = 0
    q = type(p).from_pretrained(p.model_dir, device="cpu")  # a second copy of the weights, to change
    d = p.config.d_model // H
    proj = q.model.output_projections()[1]
    if family == "albert":  # one layer shared by all: zeroing its columns would remove the head everywhere
        m = np.ones((L, H))
        m[:, 2] = 0
    with torch.no_grad():
        proj.weight[:, 2 * d : 3 * d] = 0
    np.testing.assert_allclose(p.predict(TEXT, head_mask=m).logits, q.predict(TEXT).logits, atol=1e-5)
    np.testing.assert_allclose(p.score_many([TEXT], head_mask=m)[0].probabilities, q.predict(TEXT).probabilities,
                               atol=1e-5)
    assert np.array_equal(p.predict(TEXT, head_mask=np.ones((L, H))).logits, p.predict(TEXT).logits)
    dx = p.attention_flow(TEXT, "decompx", head_mask=m)
    np.testing.assert_allclose(dx.contributions.sum(0), q.predict(TEXT).logits, atol=1e-4)


def test_hf_attention_only_and_unsupported_families_say_so(tmp_path):
    pytest.importorskip("transformers")
    from tests.fixtures.tiny_hf import make_tiny_hf_dir

    bare = Predictor.from_pretrained(make_tiny_hf_dir(tmp_path / "bare", "bert", head=False), device="cpu")
    assert bare.attention_flow(TEXT, "alti").logits.shape == (0,)
    with pytest.raises(NoClassificationHead):
        bare.attention_flow(TEXT, "decompx")
    bare.model.config = type(bare.model.config)(**{**bare.model.config.__dict__, "model_type": "deberta",
                                                   "family": "DeBERTa"})
    with pytest.raises(FlowNotSupported, match="BERT/MiniLM, RoBERTa"):
        bare.attention_flow(TEXT, "value_norm")
