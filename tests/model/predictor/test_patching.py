"""Activation patching between two texts (issue 53, section 3): Predictor.activation_patching, its hooks
(model.explain.patching) and its record (model.records.patching), against independent implementations."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from model.explain.patching import patched_logits, recording
from model.explain.taps import taps_of
from model.records.patching import PatchingCancelled, check_patching
from model.text.segments import one_text_inputs

CLEAN = "This movie was wonderful, the acting was superb."
CORRUPTED = "This movie was terrible, the acting was superb."
LONGER = "This movie was really terrible, the acting was superb."


@pytest.fixture(scope="module")
def hf_predictors(tmp_path_factory):
    """family -> a tiny random Hugging Face classifier (larger weights, so the logits move)."""
    pytest.importorskip("transformers")
    from model import Predictor
    from tests.fixtures.tiny_hf import FAMILIES, make_tiny_hf_dir

    root = tmp_path_factory.mktemp("patching")
    return {f: Predictor.from_pretrained(make_tiny_hf_dir(root / f, f, init_std=0.5), device="cpu") for f in FAMILIES}


def _predictors(bundled_predictor, hf_predictors) -> dict:
    return {"bundled": bundled_predictor, **hf_predictors}


def _logits(predictor, text: str) -> np.ndarray:
    return predictor.predict(text).logits.astype(np.float64)


@pytest.mark.parametrize("family", ["bundled", "bert", "distilbert", "roberta", "deberta-v2", "albert", "electra",
                                    "xlm-roberta"])
def test_first_layer_input_patched_everywhere_restores_the_clean_logits(family, bundled_predictor, hf_predictors):
    """Every position of layer 1's input taken from the clean text gives the clean logits; no position patched
    leaves the corrupted ones; both through the batched pass (three copies: all, none, all)."""
    p = _predictors(bundled_predictor, hf_predictors)[family]
    clean, corrupted = p.encode(CLEAN), p.encode(CORRUPTED)
    assert len(clean.ids) == len(corrupted.ids)
    taps, T = taps_of(p.model), len(clean.ids)
    with torch.inference_mode():
        with recording(taps, "resid") as acts:
            ids, att, types = one_text_inputs(p, clean)
            p.model(ids, att, **types)
        ids, att, types = one_text_inputs(p, corrupted)
        mask = torch.tensor([[True] * T, [False] * T, [True] * T])
        got = patched_logits(taps, "resid", 0, acts[0], mask, lambda: p.model(ids, att, **types)[0],
                             p.config.n_heads).double().numpy()
    np.testing.assert_allclose(got[0], _logits(p, CLEAN), atol=1e-4)
    np.testing.assert_allclose(got[2], _logits(p, CLEAN), atol=1e-4)
    np.testing.assert_allclose(got[1], _logits(p, CORRUPTED), atol=1e-4)
    r = p.activation_patching(CLEAN, CORRUPTED, site="resid")
    assert r.clean_score == pytest.approx(_logits(p, CLEAN)[r.target], rel=1e-5, abs=1e-5)
    assert r.corrupted_score == pytest.approx(_logits(p, CORRUPTED)[r.target], abs=1e-5)


def test_resid_grid_of_a_one_word_edit(bundled_predictor):
    """Layer 1's input differs at the edited word only: patching it restores the clean logit (share 1), patching
    any other position changes nothing (share 0); noising mirrors it."""
    p = bundled_predictor
    r = p.activation_patching(CLEAN, CORRUPTED, site="resid")
    changed = r.tokens.index("terrible")
    assert r.effects.shape == (p.config.n_layers, len(r.tokens))
    assert r.effects[0, changed] == pytest.approx(1.0, abs=1e-4)
    assert np.all(np.delete(r.effects[0], changed) == 0)
    assert r.target == int(np.argmax(_logits(p, CLEAN))) and r.label == p.labels[r.target]
    noise = p.activation_patching(CLEAN, CORRUPTED, site="resid", direction="noise")
    assert noise.tokens == tuple(p.encode(CLEAN).tokens)
    assert noise.effects[0, changed] == pytest.approx(0.0, abs=1e-4)  # clean run given the corrupted word
    assert np.all(np.delete(noise.effects[0], changed) == 1)
    assert not r.effects.flags.writeable and not r.approximate


def test_unaligned_positions_are_named_nan_and_never_patched(bundled_predictor):
    r = bundled_predictor.activation_patching(CLEAN, LONGER, site="resid")
    assert len(r.corrupted_tokens) == len(r.clean_tokens) + 1
    missing = np.flatnonzero(r.alignment < 0)
    assert len(missing) == 1 and r.unaligned == (f"{missing[0]}:{r.tokens[missing[0]]}",)
    assert np.isnan(r.effects[:, missing]).all()
    assert np.isfinite(np.delete(r.effects, missing, axis=1)).all()


def test_head_patching_equals_hooks_on_transformers_self_attention(hf_predictors):
    """Head h of layer l patched by a plain forward hook on transformers' own BertSelfAttention (its context output,
    before BertSelfOutput's W_O), one head per pass, gives the effects of the batched head grid."""
    p = hf_predictors["bert"]
    r = p.activation_patching(CLEAN, CORRUPTED, site="head")
    hf, H = p.model.hf, p.config.n_heads
    attn = [layer.attention.self for layer in hf.bert.encoder.layer]

    def run(text: str, hook=None, module=None) -> tuple[torch.Tensor, list]:
        ids = torch.tensor(p.encode(text).ids)[None]
        seen = []

        def keep(_m, _a, out):
            seen.append(out[0].detach().clone())

        handles = ([m.register_forward_hook(keep) for m in attn] if hook is None
                   else [module.register_forward_hook(hook)])
        try:
            with torch.inference_mode():
                logits = hf(input_ids=ids, attention_mask=torch.ones_like(ids)).logits[0]
        finally:
            for h in handles:
                h.remove()
        return logits, seen

    clean_logits, clean_ctx = run(CLEAN)
    corrupted_logits, _ = run(CORRUPTED)
    t = r.target
    gap = float(clean_logits[t] - corrupted_logits[t])
    d = clean_ctx[0].shape[-1] // H
    for layer in range(p.config.n_layers):
        for head in range(H):
            def swap(_m, _a, out, layer=layer, head=head):
                ctx = out[0].clone()
                ctx[..., head * d:(head + 1) * d] = clean_ctx[layer][..., head * d:(head + 1) * d]
                return (ctx,) + tuple(out[1:])

            patched, _ = run(CORRUPTED, swap, attn[layer])
            want = float(patched[t] - corrupted_logits[t]) / gap
            assert r.effects[layer, head] == pytest.approx(want, abs=1e-4), (layer, head)


def test_ffn_patching_equals_a_hand_run_of_the_bundled_layers(bundled_predictor):
    """Layer l's FFN output taken from the clean text, the layers run by hand from their own modules (post-LN:
    x = norm1(x + attn(x)); x = norm2(x + ffn)), gives the ffn grid's effects, layer by layer."""
    p = bundled_predictor
    m = p.model
    r = p.activation_patching(CLEAN, CORRUPTED, site="ffn")

    def forward(text: str, ffn_from: dict[int, torch.Tensor]) -> tuple[torch.Tensor, list]:
        ids = torch.tensor(p.encode(text).ids)[None]
        mask = torch.ones_like(ids, dtype=torch.bool)
        x, outs = m.embed(ids), []
        for n, layer in enumerate(m.layers):
            x = layer.norm1(x + layer.attn(x, mask)[0])
            f = ffn_from.get(n, layer.ff(x))
            outs.append(f)
            x = layer.norm2(x + f)
        return m.read_out(m.final_norm(x), mask)[0], outs

    with torch.inference_mode():
        clean, clean_ffn = forward(CLEAN, {})
        corrupted, _ = forward(CORRUPTED, {})
        t = r.target
        for layer in range(p.config.n_layers):
            patched, _ = forward(CORRUPTED, {layer: clean_ffn[layer]})
            want = float(patched[t] - corrupted[t]) / float(clean[t] - corrupted[t])
            assert r.effects[layer] == pytest.approx(want, abs=1e-4)
        assert np.ptp(r.effects) > 0.01  # the layers differ: a test of something


def test_batched_equals_one_patch_per_pass(bundled_predictor, hf_predictors):
    for p in (bundled_predictor, hf_predictors["bert"]):
        for site in ("resid", "head"):
            batched = p.activation_patching(CLEAN, LONGER, site=site)
            single = p.activation_patching(CLEAN, LONGER, site=site, batch_tokens=1)
            scale = np.nanmax(np.abs(single.effects))  # float32 GEMMs of other sizes round ~1e-7 of the scale
            np.testing.assert_allclose(batched.effects, single.effects, rtol=1e-5, atol=1e-6 * scale)
            assert batched.passes < single.passes or site == "head"


@pytest.mark.parametrize("family", ["bundled", "bert", "albert"])
def test_the_scores_do_not_depend_on_how_passes_are_batched(family, bundled_predictor, hf_predictors):
    """The residual grid (the site whose passes ``batch_tokens`` sizes; head and FFN passes are one layer's) with one
    patch per pass, passes of 3 copies (dividing no layer's cells evenly) and the default (one pass per layer): the
    same patched scores within 1e-5 relative (a score near 0 within 1e-6 of the grid's largest: float32 GEMMs of other
    batch sizes round the hidden states differently, ~1e-7 of their scale, which a near-zero logit keeps)."""
    p = _predictors(bundled_predictor, hf_predictors)[family]
    T = len(p.encode(LONGER).ids)
    runs = [p.activation_patching(CLEAN, LONGER, site="resid", batch_tokens=b) for b in (None, 3 * T, 1)]
    assert runs[0].passes < runs[1].passes < runs[2].passes
    for r in runs[1:]:
        np.testing.assert_array_equal(np.isnan(r.patched_scores), np.isnan(runs[0].patched_scores))
        scale = np.nanmax(np.abs(runs[0].patched_scores))
        np.testing.assert_allclose(r.patched_scores, runs[0].patched_scores, rtol=1e-5, atol=1e-6 * scale)


def _layer_calls(p) -> tuple[list[int], list]:
    """``(counts, handles)``: counts[0] layer calls started, counts[1] layer calls finished (every layer of every
    pass, counted by hooks on the layer modules)."""
    counts, handles = [0, 0], []
    for m in {t.layer: None for t in taps_of(p.model).layers}:
        handles.append(m.register_forward_pre_hook(lambda *_: counts.__setitem__(0, counts[0] + 1)))
        handles.append(m.register_forward_hook(lambda *_: counts.__setitem__(1, counts[1] + 1)))
    return counts, handles


@pytest.mark.parametrize("family", ["bundled", "bert"])
def test_a_cancel_during_a_pass_stops_inside_its_first_layer(family, bundled_predictor, hf_predictors):
    """should_stop turns True once the first patched pass has entered its first layer: the pass stops inside that
    layer (no layer of it finishes), not at the pass's end (L more layers) nor at the layer's end."""
    p = _predictors(bundled_predictor, hf_predictors)[family]
    L = p.config.n_layers
    counts, handles = _layer_calls(p)
    try:
        with pytest.raises(PatchingCancelled, match="stopped after 0 of"):
            p.activation_patching(CLEAN, LONGER, site="resid", should_stop=lambda: counts[0] > 2 * L)
    finally:
        for h in handles:
            h.remove()
    assert counts == [2 * L + 1, 2 * L]  # the two unpatched passes ran; the patched pass's first layer never ended


def test_progress_and_cancel(bundled_predictor):
    seen = []
    bundled_predictor.activation_patching(CLEAN, LONGER, site="resid", batch_tokens=1,
                                          progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1][0] == seen[-1][1] and [d for d, _ in seen] == sorted(d for d, _ in seen)
    calls = []
    with pytest.raises(PatchingCancelled):
        bundled_predictor.activation_patching(CLEAN, LONGER, site="resid", batch_tokens=1,
                                              should_stop=lambda: len(calls) > 2 or calls.append(1) is not None)
    assert len(calls) == 3  # stopped at the fourth pass, not at the end


def test_attribution_patching_is_the_gradient_estimate(bundled_predictor):
    """Attribution patching at layer 1's input equals grad . (clean - corrupted) of the embeddings, the gradient
    taken through the model's own encode (no hooks), and runs 2 forward passes and one backward pass."""
    p = bundled_predictor
    r = p.activation_patching(CLEAN, CORRUPTED, site="resid", method="attribution")
    assert r.approximate and r.passes == 2 and "approximation" in r.title
    m = p.model
    ids_c, ids_x = (torch.tensor(p.encode(t).ids)[None] for t in (CLEAN, CORRUPTED))
    mask = torch.ones_like(ids_x, dtype=torch.bool)
    x = m.embed(ids_x).detach().requires_grad_()
    logits = m.encode(x, mask)[0][0]
    (grad,) = torch.autograd.grad(logits[r.target], x)
    delta = (m.embed(ids_c) - m.embed(ids_x)).detach()
    want = (grad * delta).sum(-1)[0].numpy() / (r.clean_score - r.corrupted_score)
    np.testing.assert_allclose(r.effects[0], want, atol=1e-5)
    for site, shape in (("head", (2, 4)), ("ffn", (2,))):
        assert p.activation_patching(CLEAN, CORRUPTED, site=site, method="attribution").effects.shape == shape


@pytest.mark.parametrize("task", ["multi_label", "regression"])
def test_other_task_types_score_their_output(task, predictor_for):
    p = predictor_for(("a", "b", "c") if task == "multi_label" else ("score",), task=task)
    r = p.activation_patching(CLEAN, CORRUPTED, site="ffn")
    logits = _logits(p, CLEAN)
    assert r.target == int(np.argmax(logits)) and r.clean_score == pytest.approx(logits[r.target], rel=1e-5, abs=1e-5)
    r = p.activation_patching(CLEAN, CORRUPTED, site="resid", target=0)
    assert r.corrupted_score == pytest.approx(_logits(p, CORRUPTED)[0], abs=1e-5)


def test_bad_arguments_are_refused_by_name(bundled_predictor):
    for kw, word in (({"site": "mlp"}, "site"), ({"direction": "both"}, "direction"),
                     ({"method": "fast"}, "method"), ({"target": 5}, "target")):
        with pytest.raises(ValueError, match=word):
            bundled_predictor.activation_patching(CLEAN, CORRUPTED, **kw)
    with pytest.raises(ValueError):
        bundled_predictor.activation_patching(CLEAN, "   ")
    check_patching("resid", "noise", "attribution", 1, 2)


def test_a_pre_layernorm_encoder_is_patched_and_its_graph_refused(tmp_path):
    """Patching needs no LayerNorm algebra: a pre-LN encoder's first-layer input patched at the edited word restores
    its clean logit; the contribution graph (ALTI's algebra, post-LN only) refuses it by name."""
    from model import Predictor
    from model.core.config import EncoderConfig
    from model.records.flow import FlowNotSupported
    from tests.fixtures.tiny_models import make_random_model_dir

    config = EncoderConfig(max_len=64, d_model=16, n_heads=2, n_layers=2, d_ff=32, norm_first=True)
    p = Predictor.from_pretrained(make_random_model_dir(tmp_path / "pre_ln", config), device="cpu")
    clean, corrupted = "the acting was wonderful", "the acting was terrible"
    r = p.activation_patching(clean, corrupted, site="resid")
    assert len(r.clean_tokens) == len(r.corrupted_tokens)
    differs = [t for t, (a, b) in enumerate(zip(r.clean_tokens, r.corrupted_tokens)) if a != b]
    assert len(differs) == 1 and r.effects[0, differs[0]] == pytest.approx(1.0, abs=1e-4)
    with pytest.raises(FlowNotSupported, match="pre-LayerNorm"):
        p.contribution_graph(clean)
