"""The DecompX implementation before issue 34 (row blocks, float32), kept verbatim as the reference that
:mod:`model.explain.decompx` is tested and benchmarked against (tests/model/explain/test_decompx.py, benchmarks/flow.py).
Not used by the product.

Same method and outputs as :mod:`model.explain.decompx` (see its docstring); only the arithmetic differs: the
(T, T, D) decompositions are carried block of rows by block of rows, each bias split in a pass of its own, the ReLU
feed-forward block row by row.
"""

from __future__ import annotations

import torch

from model.explain.decompx import _params, head_decompose
from model.explain.taps import LayerCapture, LayerTaps, ModelTaps

ROW_BLOCK_FLOATS = 1 << 22  # floats of one block of rows (rows x T x D) decomposed at once (16 MB)


def absdot_(vectors: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """Add to ``vectors`` (b, K, D), in place, the bias split over the K input tokens by |<v_i[k], b_i>| (DecompX's
    ``absdot``; equal shares when all those products are 0). ``bias``: (D,) or per row (b, D). Returns ``vectors``."""
    b = bias if bias.dim() == 2 else bias.unsqueeze(0)  # (1 or b, D)
    w = torch.matmul(vectors, b.unsqueeze(-1)).squeeze(-1).abs_()  # (b, K)
    total = w.sum(-1, keepdim=True)
    w = torch.where(total > 0, w / total.clamp_min(1e-30), torch.full_like(w, 1.0 / w.shape[-1]))
    return vectors.addcmul_(w.unsqueeze(-1), b.unsqueeze(1))


def ln_decompose_(z: torch.Tensor, ln_in: torch.Tensor, ln: torch.nn.LayerNorm) -> torch.Tensor:
    """LayerNorm of a decomposed block with the forward pass's sigma (section 3.2), in place: (b, K, D).

    ``ln_in``: (b, D) the LayerNorm's real inputs for those rows (their sigma_i)."""
    inv = torch.rsqrt(ln_in.var(-1, unbiased=False) + ln.eps)  # (b,)
    z.sub_(z.mean(-1, keepdim=True)).mul_(ln.weight.detach().float() * inv[:, None, None])
    return absdot_(z, ln.bias.detach().float())


def _ffn_row(y: torch.Tensor, theta: torch.Tensor, p: dict) -> torch.Tensor:
    """W_2 diag(theta) W_1 y[k] for one row (K, D), over the units with theta != 0 only: (K, D)."""
    on = theta.nonzero().squeeze(-1)
    w1, w2, th = p["w1"][on], p["w2"][:, on], theta[on]  # (A, D), (D, A), (A,)
    K, D = y.shape
    if 2 * K < D + K * D / max(1, len(on)):
        return ((y @ w1.T) * th) @ w2.T
    return y @ ((w2 * th) @ w1).T


def _ffn_block(y: torch.Tensor, h: torch.Tensor, act: torch.Tensor, p: dict) -> torch.Tensor:
    """The feed-forward block on decomposed rows (b, K, D), linearised at the activation (section 3.3).

    Per row i: W_2 diag(theta_i) W_1 with theta_i = act(h_i) / h_i (0 where h_i = 0), plus the vector
    W_2 (theta_i * b_1) + b_2 split by ``absdot``. ``h``, ``act``: (b, F) the block's pre- and post-activation."""
    theta = torch.where(h.abs() > 1e-12, act / torch.where(h == 0, torch.ones_like(h), h), torch.zeros_like(h))
    K, D, F = y.shape[1], y.shape[2], theta.shape[1]
    if (theta == 0).float().mean() > 0.5:  # ReLU: most units off; per row, only the active ones
        o = torch.stack([_ffn_row(y[r], theta[r], p) for r in range(y.shape[0])])
    elif 2 * K * F < D * F + K * D:  # few input tokens: W_2 (theta * (W_1 y)) costs less than building W_2 diag W_1
        o = ((y @ p["w1"].T) * theta.unsqueeze(1)) @ p["w2"].T  # (b, K, D)
    else:
        w_eq = (p["w2"].unsqueeze(0) * theta.unsqueeze(1)) @ p["w1"]  # (b, D, D)
        o = torch.bmm(y, w_eq.transpose(1, 2))  # (b, K, D)
    b_eq = theta * p["b1"] if p["b1"] is not None else torch.zeros_like(theta)
    b_eq = b_eq @ p["w2"].T + (p["b2"] if p["b2"] is not None else 0.0)  # (b, D)
    return absdot_(o, b_eq)


def layer_decompose(x: torch.Tensor | None, cap: LayerCapture, taps: LayerTaps, n_heads: int,
                    mask_row: torch.Tensor | None) -> torch.Tensor:
    """One post-LN layer on a decomposed state (sections 3.1-3.3): attention, residual, LN1, FFN, residual, LN2.

    Args:
        x: (T_j, K, D) the decomposed layer input, or None for the first layer (x_j[k] = [j = k] x_j: the attention
            then needs no T^3 term).
        cap, taps: the layer. n_heads: H. mask_row: (H,) the layer's head mask, or None.

    Returns:
        (T_i, K, D), the decomposed layer output; computed block of rows by block of rows.
    """
    p = _params(taps, n_heads, mask_row)
    T, HD = cap.values.shape
    H, d = n_heads, p["d"]
    attn = cap.attn * p["scale"][:, None, None]  # (H, T, T)
    if x is None:  # a_i[k] = sum_h alpha_ik^h (x_k W_V^h W_O^h): one (H, K, D) table, no per-(i, k) projections
        K = T
        v0 = (cap.x @ p["w_v"].T).view(T, H, d).transpose(0, 1)  # (H, K, d): x_k W_V, no bias
        f0 = (v0 @ p["w_o"].view(-1, H, d).permute(1, 2, 0)).transpose(0, 1).contiguous()  # (K, H, D)
        at0 = attn.permute(1, 2, 0).contiguous()  # (T_i, K, H)
    else:  # the T^3 D mixing as one large product per head (blocks of a few rows would re-read x W_V each time)
        K = x.shape[1]
        vx = (x @ p["w_v"].T).view(T, K, H, d).permute(2, 0, 1, 3).reshape(H, T, K * d)  # (H, T_j, K d)
        mixed = torch.bmm(attn, vx)  # (H, T_i, K d)
        del vx
    out = torch.empty(T, K, p["w_o"].shape[0])
    step = max(1, ROW_BLOCK_FLOATS // (K * max(HD, p["w1"].shape[0])))
    for s in range(0, T, step):
        e = min(T, s + step)
        if x is None:
            z = torch.bmm(at0[s:e].transpose(0, 1).contiguous(), f0).transpose(0, 1).contiguous()  # (b, K, D)
        else:
            ctx = mixed[:, s:e].view(H, e - s, K, d)  # (H, b, K, d)
            z = ctx.permute(1, 2, 0, 3).reshape(e - s, K, HD) @ p["w_o"].T  # (b, K, D)
        z = absdot_(z, p["b_att"])
        if x is None:
            z[torch.arange(e - s), torch.arange(s, e)] += cap.x[s:e]  # the residual: x_i[i] = x_i
        else:
            z += x[s:e]
        y = ln_decompose_(z, cap.ln1_in[s:e], taps.ln1)
        z2 = _ffn_block(y, cap.fc1_out[s:e], cap.fc2_in[s:e], p).add_(y)
        out[s:e] = ln_decompose_(z2, cap.ln2_in[s:e], taps.ln2)
    return out


def decompx(caps: list[LayerCapture], taps: ModelTaps, rows: list, logits: torch.Tensor) -> dict:
    """DecompX of one text, as before issue 34: ``contributions`` (T, C) and ``matrices`` (L, T, T) (the read-out
    is :func:`model.explain.decompx.head_decompose`, unchanged)."""
    x, norms = None, []
    for cap, lt, row in zip(caps, taps.layers, rows):
        x = layer_decompose(x, cap, lt, taps.n_heads, row)  # (T, K, D)
        norms.append(torch.linalg.vector_norm(x, dim=-1))  # (T, K)
    return {"contributions": head_decompose(x, taps), "matrices": torch.stack(norms)}
