"""The contribution graph of one text (Ferrando & Voita 2024, "Information Flow Routes: Automatically Interpreting
Language Models at Scale", section 3): which residual states the read-out's state is built from, through which
heads, pruned by a threshold. The record is :class:`model.records.graph.ContributionGraph`.

Nodes are residual states (layer, token): level 0 the embeddings (layer 1's input), level l the output of layer l.
Each layer's attention block (post-LN, as ALTI: y_i = LN(x_i + sum_h sum_j alpha_ij^h f^h(x_j) + b_O), the
LayerNorm's scale taken from the forward pass) writes token i's state as a sum of parts: one per head h and source
token j, T_i^h(x_j) = gamma C(alpha_ij^h f^h(x_j)) / sigma_i, and the residual, T_i(x_i) = gamma C(x_i) / sigma_i
(:func:`model.explain.value_flow.alti_vectors`, split by head). Each part's proportional contribution is ALTI's,
c = max(0, ||y_i||_1 - ||y_i - T||_1), normalised over the H T + 1 parts of row i (Ferrando et al. 2022, section 3;
Ferrando & Voita 2024, eq. 3: the same measure per edge). The feed-forward block and the second LayerNorm act on
token i alone, so the residual part's edge (l, i) -> (l + 1, i) is the residual/FFN path.

The graph is built backwards from the read-out (the classification token at the last level, or every token for a
mean-pooled read-out): an edge into a kept node is kept when its contribution is at least ``threshold``, and its
source becomes a kept node of the level below (Ferrando & Voita 2024, Algorithm 1). Only the kept nodes' rows are
computed, so a high threshold costs little more than the forward pass.

Each kept node also carries what the read-out would say from that state alone (a per-token "logit lens" for encoders,
as :func:`model.explain.value_flow.layer_logits` per layer): the model's own read-out steps (final LayerNorm, pooling,
pooler, classifier) applied to the one state as if it were the whole sequence, so the pooling is that state; for a
[CLS] read-out the node (l, 0) gives ``Predictor.layer_predictions``' row l, the top node the model's output.

Shapes: L layers, H heads, T tokens, D model width.
"""

from __future__ import annotations

import time
from contextlib import nullcontext

import numpy as np
import torch

from model.tasks.readout import outputs
from model.tasks.types import SINGLE_LABEL, TaskType

from .heads import head_mask_hooks
from .taps import LayerCapture, LayerTaps, capture, read_out
from .value_flow import ALTI_BLOCK_FLOATS, _ln_scale, _mask_rows, head_vectors, supported_taps


def head_contributions(cap: LayerCapture, taps: LayerTaps, f: torch.Tensor,
                       rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The proportional contributions of every head's part from every token and of the residual to the attention
    block's output at token positions ``rows`` (module docstring).

    Args:
        cap: the layer's capture. taps: its modules. f: (H, T, D) the heads' vectors f^h(x_j)
            (:func:`model.explain.value_flow.head_vectors`). rows: int64 (R,) the positions i.

    Returns:
        ``(heads (R, H, T), residual (R,))``, >= 0, each row summing to 1 with its residual (a row where no part
        contributes keeps its residual: 1).
    """
    gamma = taps.ln1.weight.detach().float()
    inv = _ln_scale(cap.ln1_in, taps.ln1)[rows]  # (R,)
    g = (f - f.mean(-1, keepdim=True)) * gamma  # (H, T, D): gamma C(f^h(x_j))
    a = cap.attn[:, rows, :] * inv[None, :, None]  # (H, R, T): alpha_ij^h / sigma_i
    y = cap.ln1_out[rows]  # (R, D)
    H, T, D = g.shape
    R = len(rows)
    norm_y = y.abs().sum(-1)  # (R,)
    heads = torch.empty(R, H, T, device=y.device)
    step = max(1, ALTI_BLOCK_FLOATS // (H * T * D))
    for s in range(0, R, step):
        part = a[:, s : s + step, :, None] * g[:, None]  # (H, b, T, D): T_i^h(x_j)
        dist = part.sub_(y[s : s + step][None, :, None, :]).abs_().sum(-1)  # (H, b, T): ||y_i - T_i^h(x_j)||_1
        heads[s : s + step] = (norm_y[s : s + step][None, :, None] - dist).clamp_min(0).permute(1, 0, 2)
    xr = ((cap.x[rows] - cap.x[rows].mean(-1, keepdim=True)) * gamma * inv[:, None])  # (R, D)
    residual = (norm_y - (y - xr).abs().sum(-1)).clamp_min(0)  # (R,)
    total = heads.sum((1, 2)) + residual
    ok = total > 0
    heads = torch.where(ok[:, None, None], heads / total.clamp_min(1e-30)[:, None, None], torch.zeros_like(heads))
    residual = torch.where(ok, residual / total.clamp_min(1e-30), torch.ones_like(residual))
    return heads, residual


READ_OUT_CHUNK = 64
"""States read out per batch in :func:`node_outputs`: only the chunks holding kept nodes are read, each always whole, so
a node's output is the same float32 at any threshold (``ContributionGraph.pruned`` relies on it)."""


def node_outputs(head: tuple, caps: list[LayerCapture], nodes: np.ndarray, kind: str | TaskType) -> np.ndarray:
    """What the read-out would say from each node's state alone (module docstring).

    Args:
        head: the model's read-out steps (:attr:`model.explain.taps.ModelTaps.head`; () without a head).
        caps: the L layers' captures. nodes: int (N, 2) (level, position). kind: the task reading the logits.

    Returns:
        float32 (N, C): probabilities (single-label softmax, multi-label sigmoids) or the value (regression); (N, 0)
        without a classification head.
    """
    if not head:
        return np.zeros((len(nodes), 0), np.float32)
    states = torch.stack([caps[0].x] + [cap.out for cap in caps])  # (L + 1, T, D): level l's residual states
    flat = states.reshape(-1, 1, states.shape[-1])  # each state read out as a one-token sequence
    index = nodes[:, 0].astype(np.int64) * states.shape[1] + nodes[:, 1]
    out = None
    for c in np.unique(index // READ_OUT_CHUNK):  # fixed chunks: the same floats whichever nodes are kept
        rows = flat[c * READ_OUT_CHUNK : (c + 1) * READ_OUT_CHUNK]
        mask = torch.ones(len(rows), 1, dtype=torch.bool, device=rows.device)
        read = outputs(read_out(head, rows, mask).float(), kind).cpu().numpy().astype(np.float32)
        if out is None:
            out = np.zeros((len(flat), read.shape[1]), np.float32)
        out[c * READ_OUT_CHUNK : c * READ_OUT_CHUNK + len(rows)] = read
    return out[index]


def contribution_graph(model, input_ids: torch.Tensor, attention_mask: torch.Tensor, threshold: float,
                       lock=None, types: dict | None = None, head_mask: np.ndarray | None = None,
                       kind: str | TaskType = SINGLE_LABEL) -> dict:
    """The pruned contribution graph of one text (module docstring).

    Args:
        model: the encoder in eval mode. input_ids: int64 (1, T). attention_mask: bool (1, T).
        threshold: the least contribution an edge keeps, in [0, 1].
        lock: the predictor's ``pass_lock`` for the forward pass with its hooks (None: the caller holds it).
        types: the token-type keyword of a pair, or None.
        head_mask: a validated (L, H) mask or None: the forward pass runs with it (:func:`.heads.head_mask_hooks`)
            and a switched-off head's vectors are scaled by its mask value (as ALTI: its edges weigh 0).
        kind: how the read-out's logits are read for ``node_outputs`` (the task).

    Returns:
        dict: ``nodes`` int32 (N, 2) (level, position), ``edges`` int32 (E, 2) (source node, target node),
        ``heads`` int16 (E,) (the head, -1 for the residual/FFN path), ``weights`` float32 (E,), ``readout`` int64
        positions the graph starts from, ``node_outputs`` float32 (N, C) (:func:`node_outputs`), ``pooling``,
        ``logits`` (C,), ``elapsed_s``.

    Raises:
        FlowNotSupported: a pre-LayerNorm encoder or an unmapped family (as ALTI).
    """
    t0 = time.perf_counter()
    taps = supported_taps(model, "alti")
    with torch.inference_mode():
        with lock if lock is not None else nullcontext(), head_mask_hooks(model, head_mask, taps.n_heads):
            caps, logits = capture(model, input_ids, attention_mask, taps, types=types)
        L, T = len(caps), caps[0].x.shape[0]
        rows = _mask_rows(head_mask, L, caps[0].x.device)
        pooling = next((op for step, op in taps.head if step == "pool"), "cls")
        readout = np.arange(T) if pooling == "mean" else np.array([0])
        kept, first = readout, 0  # the kept positions of the current level, and the node index of its first one
        levels, edges = [np.stack([np.full(len(readout), L), readout], 1)], []
        for layer in range(L - 1, -1, -1):
            cap, lt = caps[layer], taps.layers[layer]
            heads, residual = head_contributions(cap, lt, head_vectors(cap, lt, taps.n_heads, rows[layer]),
                                                 torch.as_tensor(kept, device=cap.x.device))
            heads, residual = heads.cpu().numpy(), residual.cpu().numpy()
            r, h, j = np.nonzero(heads >= threshold)  # head edges (l, j) -> (l + 1, kept[r]) through head h
            res = np.flatnonzero(residual >= threshold)  # residual/FFN edges (l, kept[r]) -> (l + 1, kept[r])
            below = np.union1d(j, kept[res]).astype(np.int64)
            start = first + len(kept)
            src = start + np.searchsorted(below, np.concatenate([kept[res], j]))
            dst = first + np.concatenate([res, r])
            edges.append((src, dst, np.concatenate([np.full(len(res), -1), h]),
                          np.concatenate([residual[res], heads[r, h, j]])))
            levels.append(np.stack([np.full(len(below), layer), below], 1))
            kept, first = below, start
        nodes = np.concatenate(levels).astype(np.int32)
        readouts = node_outputs(taps.head, caps, nodes, kind)
    src, dst, hs, ws = (np.concatenate(parts) for parts in zip(*edges))
    e = np.stack([src, dst], 1)
    return {"nodes": nodes, "edges": e.astype(np.int32), "heads": hs.astype(np.int16),
            "weights": ws.astype(np.float32), "readout": readout, "node_outputs": readouts, "pooling": pooling,
            "logits": logits.cpu().numpy() if len(taps.head) else np.zeros(0, np.float32),
            "elapsed_s": time.perf_counter() - t0}

