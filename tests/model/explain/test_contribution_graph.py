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
