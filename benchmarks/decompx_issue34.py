"""The DecompX implementation of issue 34 (before issue 55), kept verbatim as the reference that
:mod:`model.explain.decompx` is tested and benchmarked against (tests/model/explain/test_decompx.py,
``python -m benchmarks.flow --decompx N``). Not used by the product.

Same method, shares and read-out as :mod:`model.explain.decompx` (its helpers are imported from there, unchanged);
only the arithmetic of the two sublayers differs: every large product got a freshly allocated tensor (its page
faults paid again in every layer), the first layer's attention product took a permuted operand (a slow path of
``bmm``), and the feed-forward maps were formed 16 rows at a time, each block copied into a [maps; bias rows] buffer.
"""

from __future__ import annotations

from dataclasses import replace

import torch

from model.explain.decompx import _coefficients, _ffn_coefficients, _ln_terms, _params, head_decompose
from model.explain.taps import LayerCapture, LayerTaps, ModelTaps

FFN_BLOCK_ROWS = 16  # rows whose (D, F) products W_1^T diag(theta_i) are formed at once


def _attention_ln1(x: torch.Tensor | None, cap: LayerCapture, p: dict, n_heads: int, ln1: tuple,
                   dtype: torch.dtype) -> torch.Tensor:
    """Attention (section 3.1), its bias, the residual and LN1 (section 3.2) on a decomposed state: y (T, K, D).

    The products the shares need are taken first (on the context vectors, through W_O^T); the output projection, the
    bias terms and LN1's scale are then one product per row: [ctx_i[k] / sigma_i, coefficients] @ [W_O^T gamma;
    b_att gamma; gamma; beta] (:func:`_coefficients`), plus the residual x_i[k] g_i. LN1's 1/sigma_i is folded into
    the attention rows. ``x``: (T, K, D) or None for the first layer (x_j[k] = [j = k] x_j: no T^3 term).
    """
    g, inv, beta, gb, gamma = ln1
    T, H, d = cap.x.shape[0], n_heads, p["d"]
    D, HD = p["w_o"].shape
    Ti = cap.attn.shape[1]  # the rows computed (T, or the first ones only: :func:`layer_decompose`)
    R = torch.stack([torch.full((D,), 1.0 / D, device=gb.device), p["b_att"], gb], 1)  # (D, 3)
    rows = torch.stack([p["b_att"] * gamma, gamma, beta])  # (3, D)
    attn = cap.attn * p["scale"][:, None, None]  # (H, T_i, T_j)
    if x is None:  # a_i[k] = sum_h alpha_ik^h (x_k W_V^h W_O^h): one (K, H, D) table
        f0 = ((cap.x @ p["w_v"].T).view(T, H, d).transpose(0, 1) @ p["w_o"].view(D, H, d).permute(1, 2, 0))
        f0 = f0.transpose(0, 1)  # (K, H, D)
        at = attn.permute(2, 1, 0)  # (K, T_i, H)
        s_x = torch.zeros(T, T, 2, device=cap.x.device)
        diag = torch.arange(T, device=cap.x.device)
        s_x[diag, diag] = cap.x @ R[:, ::2]
        coef = _coefficients(torch.bmm(at, f0 @ R).transpose(0, 1), s_x, p["b_att"], ln1)  # (T, K, 3)
        lhs = torch.cat([at * inv[None, :, None], coef.transpose(0, 1)], -1).to(dtype)  # (K, T_i, H + 3)
        rhs = torch.cat([f0 * gamma, rows.expand(T, 3, D)], 1).to(dtype)  # (K, H + 3, D)
        y = torch.bmm(lhs, rhs).transpose(0, 1).contiguous()  # (T, K, D)
        y[diag, diag] += (cap.x * g).to(dtype)  # the residual x_i[i] = x_i
        return y
    K = x.shape[1]  # the T^3 D mixing: one product per head
    vx = (x @ p["w_v"].T.to(dtype)).view(T, K, H, d).permute(2, 0, 1, 3).reshape(H, T, K * d)  # (H, T_j, K d)
    mixed = torch.bmm((attn * inv[None, :, None]).to(dtype), vx)  # (H, T_i, K d)
    del vx
    buf = torch.empty(Ti, K, HD + 3, dtype=dtype, device=x.device)  # [ctx_i[k] / sigma_i, coefficients]
    buf[..., :HD].view(Ti, K, H, d).copy_(mixed.view(H, Ti, K, d).permute(1, 2, 0, 3))
    del mixed
    s_a = (buf[..., :HD] @ (p["w_o"].T @ R).to(dtype)).float() / inv[:, None, None]
    buf[..., HD:] = _coefficients(s_a, (x[:Ti] @ R[:, ::2].to(dtype)).float(), p["b_att"], ln1).to(dtype)
    y = (buf.view(Ti * K, HD + 3) @ torch.cat([p["w_o"].T * gamma, rows]).to(dtype)).view(Ti, K, D)
    del buf
    return y.addcmul_(x[:Ti], g.to(dtype)[:, None])


def _ffn_ln2(y: torch.Tensor, cap: LayerCapture, p: dict, ln2: tuple) -> torch.Tensor:
    """The feed-forward block linearised at the activation (section 3.3), the residual and LN2 on y (T, K, D).

    Per row i: o_i[k] = W_2 diag(theta_i) W_1 y_i[k] with theta_i = act(h_i) / h_i (0 where h_i = 0), the vector
    b_i = W_2 (theta_i * b_1) + b_2 split by absdot over <o_i[k], b_i>, then LN2 as in :func:`_coefficients`. The
    products the shares and the mean need are taken on y through the transposed maps (no pass over o); the rest is
    one product per row: [y_i[k], coefficients] @ [(I + W_1^T diag(theta_i) W_2^T) g_i; b_i g_i; gamma; beta].
    Returns (T, K, D) in y's dtype."""
    g = ln2[0]
    theta, coef, bias_rows = _ffn_coefficients(y, cap, p, ln2)
    T, D = bias_rows.shape[0], bias_rows.shape[2]
    w1t, w2t = p["w1"].T.contiguous().to(y.dtype), p["w2"].T.contiguous().to(y.dtype)  # (D, F), (F, D)
    theta, g = theta.to(y.dtype), g.to(y.dtype)
    out = torch.empty_like(y)
    K, F, b = y.shape[1], w1t.shape[1], min(T, FFN_BLOCK_ROWS)  # blocks of b rows; their buffers are reused
    kw = {"dtype": y.dtype, "device": y.device}
    scaled, m_buf = torch.empty(b, D, F, **kw), torch.empty(b, D, D, **kw)
    rhs, lhs = torch.empty(b, D + 3, D, **kw), torch.empty(b, K, D + 3, **kw)
    for s0 in range(0, T, b):
        e = min(T, s0 + b)
        n = e - s0
        torch.mul(w1t, theta[s0:e, None], out=scaled[:n])  # (n, D, F): W_1^T diag(theta_i)
        m_eq = torch.mm(scaled[:n].view(n * D, F), w2t, out=m_buf[:n].view(n * D, D)).view(n, D, D)
        m_eq.diagonal(dim1=1, dim2=2).add_(1.0)  # (n, D, D): (I + W_2 diag(theta_i) W_1)^T g_i
        rhs[:n, :D] = m_eq.mul_(g[s0:e, None])
        rhs[:n, D:] = bias_rows[s0:e]
        lhs[:n, :, :D], lhs[:n, :, D:] = y[s0:e], coef[s0:e]
        torch.bmm(lhs[:n], rhs[:n], out=out[s0:e])
    return out


def layer_decompose(x: torch.Tensor | None, cap: LayerCapture, taps: LayerTaps, n_heads: int,
                    mask_row: torch.Tensor | None, dtype: torch.dtype = torch.float32,
                    rows: int | None = None) -> torch.Tensor:
    """One post-LN layer on a decomposed state (sections 3.1-3.3): attention, residual, LN1, FFN, residual, LN2.

    Args:
        x: (T_j, K, D) the decomposed layer input, or None for the first layer (x_j[k] = [j = k] x_j: the attention
            then needs no T^3 term).
        cap, taps: the layer. n_heads: H. mask_row: (H,) the layer's head mask, or None.
        dtype: the precision of the (T, K, D) tensors and their products (float32 or bfloat16); the shares, means and
            sigmas are float32.
        rows: compute only the first ``rows`` output rows (T_i = rows; not for the first layer); None: all.

    Returns:
        (T_i, K, D) in ``dtype``, the decomposed layer output.
    """
    p = _params(taps, n_heads, mask_row)
    if rows is not None and x is not None:  # only the first ``rows`` outputs (the read-out's [CLS] row)
        cap = replace(cap, attn=cap.attn[:, :rows], ln1_in=cap.ln1_in[:rows], fc1_out=cap.fc1_out[:rows],
                      fc2_in=cap.fc2_in[:rows], ln2_in=cap.ln2_in[:rows])
    y = _attention_ln1(x, cap, p, n_heads, _ln_terms(taps.ln1, cap.ln1_in), dtype)
    return _ffn_ln2(y, cap, p, _ln_terms(taps.ln2, cap.ln2_in))


def decompx(caps: list[LayerCapture], taps: ModelTaps, rows: list, logits: torch.Tensor,
            contributions_only: bool = False) -> dict:
    """DecompX of one text as in issue 34: ``contributions`` (T, C) and, unless ``contributions_only``, ``matrices``
    (L, T, T); with [CLS] pooling and ``contributions_only`` the last layer's [CLS] row only, as there."""
    x, norms = None, []
    cls = next((op for step, op in taps.head if step == "pool"), None) == "cls"
    for n, (cap, lt, row) in enumerate(zip(caps, taps.layers, rows)):
        last_cls = contributions_only and cls and n == len(caps) - 1
        x = layer_decompose(x, cap, lt, taps.n_heads, row, rows=1 if last_cls else None)  # (T, K, D)
        if not contributions_only:
            norms.append(torch.linalg.vector_norm(x, dim=-1, dtype=torch.float32))  # (T, K)
    return {"contributions": head_decompose(x, taps), "matrices": torch.stack(norms) if norms else None}
