"""The contribution graph (issue 53, section 2; Ferrando & Voita 2024): ALTI's proportional contribution per head and
token, and the graph pruned backwards from the read-out."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from model.explain.contribution_graph import head_contributions
from model.explain.taps import capture, taps_of
from model.explain.value_flow import head_vectors
from model.records.graph import RESIDUAL
from model.text.segments import one_text_inputs

TEXT = "This movie was wonderful, the acting was superb."


def _naive(cap, lt, f) -> tuple[np.ndarray, np.ndarray]:
    """Every part T_i^h(x_j) and the residual built one by one, contributions as ALTI measures them."""
    gamma, eps = lt.ln1.weight.detach().double(), lt.ln1.eps
    z = cap.ln1_in.double()
    inv = 1 / torch.sqrt(z.var(-1, unbiased=False) + eps)
    y = cap.ln1_out.double()
    H, T, _ = f.shape
    heads, residual = np.zeros((T, H, T)), np.zeros(T)
    for i in range(T):
        parts = []
        for h in range(H):
            for j in range(T):
                v = cap.attn[h, i, j].double() * f[h, j].double()
                parts.append((v - v.mean()) * gamma * inv[i])
        x = cap.x[i].double()
        parts.append((x - x.mean()) * gamma * inv[i])
        c = np.array([max(0.0, float(y[i].abs().sum() - (y[i] - p).abs().sum())) for p in parts])
        c /= c.sum()
        heads[i], residual[i] = c[:-1].reshape(H, T), c[-1]
    return heads, residual


def test_head_contributions_equal_a_part_by_part_computation(tiny_predictor):
    p = tiny_predictor
    ids, att, types = one_text_inputs(p, p.encode(TEXT))
    taps = taps_of(p.model)
    with torch.inference_mode():
        caps, _ = capture(p.model, ids, att, taps)
        for cap, lt in zip(caps, taps.layers):
            f = head_vectors(cap, lt, taps.n_heads, None)
            T = cap.x.shape[0]
            heads, residual = head_contributions(cap, lt, f, torch.arange(T))
            want_h, want_r = _naive(cap, lt, f)
            np.testing.assert_allclose(heads.numpy(), want_h, atol=1e-5)
            np.testing.assert_allclose(residual.numpy(), want_r, atol=1e-5)
            sub, sub_r = head_contributions(cap, lt, f, torch.tensor([T - 1, 0]))  # some rows, any order
            np.testing.assert_allclose(sub.numpy(), want_h[[T - 1, 0]], atol=1e-5)
            np.testing.assert_allclose(sub_r.numpy(), want_r[[T - 1, 0]], atol=1e-5)


def _keys(g) -> set:
    return {(tuple(g.nodes[s]), tuple(g.nodes[t]), int(h)) for (s, t), h in zip(g.edges, g.heads)}


def test_graph_starts_at_the_read_out_and_prunes_by_threshold(bundled_predictor):
    p = bundled_predictor
    L, H, T = p.config.n_layers, p.config.n_heads, len(p.encode(TEXT).ids)
    full = p.contribution_graph(TEXT, 0.0)
    assert set(full.readout.tolist()) == set(range(T))  # the bundled model mean-pools: every token is read out
    levels = full.nodes[:, 0]
    assert levels.max() == L and levels.min() == 0
    src, dst = full.nodes[full.edges[:, 0]], full.nodes[full.edges[:, 1]]
    assert np.all(dst[:, 0] == src[:, 0] + 1)
    residual = full.heads == RESIDUAL
    assert np.all(src[residual, 1] == dst[residual, 1])  # the residual/FFN path stays on its token
    for target in np.unique(full.edges[:, 1]):  # threshold 0: every part of every kept node, summing to 1
        into = full.edges[:, 1] == target
        assert into.sum() == H * T + 1
        assert full.weights[into].sum() == pytest.approx(1.0, abs=1e-5)
    pruned = p.contribution_graph(TEXT, 0.05)
    assert len(pruned.edges) < len(full.edges) and (pruned.weights >= 0.05).all()
    assert _keys(pruned) <= _keys(full) and _keys(p.contribution_graph(TEXT, 0.2)) <= _keys(pruned)
    assert pruned.edge_label(int(np.flatnonzero(pruned.heads == RESIDUAL)[0])).endswith("residual/FFN")
    assert not pruned.weights.flags.writeable


def test_a_cls_model_starts_from_the_classification_token(predictor_for):
    p = predictor_for(("a", "b", "c"), task="multi_label")  # a tiny BERT: the pooler reads [CLS]
    g = p.contribution_graph(TEXT, 0.0)
    assert g.readout.tolist() == [0]
    assert g.nodes[0].tolist() == [p.config.n_layers, 0]
    with pytest.raises(ValueError, match="threshold"):
        p.contribution_graph(TEXT, 1.5)


def _same_graph(a, b) -> None:
    for name in ("nodes", "edges", "heads", "weights", "node_outputs", "readout"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert a.threshold == b.threshold and a.tokens == b.tokens


@pytest.mark.parametrize("kind", ["ours", "bert"])
def test_pruning_a_low_threshold_graph_equals_the_graph_computed_at_the_higher_one(kind, predictor_for):
    """What the view's slider relies on: ``pruned(t)`` of one graph computed at the slider's least threshold is exactly
    the API's graph at t (same nodes, edges, order and weights)."""
    p = predictor_for(("negative", "positive")) if kind == "ours" else predictor_for(("a", "b", "c"), "multi_label")
    low = p.contribution_graph(TEXT, 0.01)
    for t in (0.01, 0.02, 0.04, 0.07, 0.1, 0.2, 0.35, 0.6, 1.0):
        _same_graph(low.pruned(t), p.contribution_graph(TEXT, t))
    for bad in (0.005, 1.5):
        with pytest.raises(ValueError, match="prunes to a threshold"):
            low.pruned(bad)


def test_each_node_says_what_the_read_out_would_say_from_its_state(predictor_for):
    p = predictor_for(("a", "b", "c"), "multi_label")  # a [CLS] read-out: node (l, 0) is the layer's prediction
    g = p.contribution_graph(TEXT, 0.0)
    by_layer = p.layer_predictions(TEXT)
    assert g.node_outputs.shape == (len(g.nodes), 3) and g.labels == ("a", "b", "c") and g.task == "multi_label"
    for n, (level, pos) in enumerate(g.nodes):
        if pos == 0:
            np.testing.assert_allclose(g.node_outputs[n], by_layer[level], atol=1e-5)
    np.testing.assert_allclose(g.node_outputs[0], p.predict(TEXT).probabilities, atol=1e-5)
    label, prob = g.node_readout(0)
    c = int(np.argmax(g.node_outputs[0]))
    assert label == "abc"[c] and prob == pytest.approx(float(g.node_outputs[0, c]))
    reg = predictor_for(("score",), "regression").contribution_graph(TEXT, 0.1)
    assert reg.node_readout(0) == ("value", pytest.approx(float(reg.node_outputs[0, 0])))


def test_a_switched_off_head_carries_nothing_and_the_read_out_follows_the_mask(predictor_for):
    p = predictor_for(("negative", "positive"))
    mask = np.ones((p.config.n_layers, p.config.n_heads), np.float32)
    mask[1, 0] = 0.0
    g = p.contribution_graph(TEXT, 0.0, head_mask=mask)
    layer_of = g.nodes[g.edges[:, 1], 0]
    off = (layer_of == 2) & (g.heads == 0)
    assert off.any() and np.all(g.weights[off] == 0)
    top = g.nodes[:, 0] == p.config.n_layers  # mean pooling: the mean of the top states' read-outs is not the
    assert top.sum() == len(g.tokens)  # output, but the top states are the masked pass's: compare with a recompute
    np.testing.assert_array_equal(g.head_mask, mask)
    unmasked = p.contribution_graph(TEXT, 0.0)
    assert not np.allclose(unmasked.node_outputs[top], g.node_outputs[top])


def test_no_classification_head_no_graph(tmp_path):
    pytest.importorskip("transformers")
    from model import Predictor
    from model.records.prediction import NoClassificationHead
    from tests.fixtures.tiny_hf import make_tiny_hf_dir

    bare = Predictor.from_pretrained(make_tiny_hf_dir(tmp_path / "bare", "bert", head=False), device="cpu")
    with pytest.raises(NoClassificationHead, match="contribution graph needs a classification head"):
        bare.contribution_graph(TEXT)
