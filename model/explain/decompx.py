"""DecompX: token contributions to the logits, propagated through every part of a post-LN encoder.

Source: Modarressi, Fayyaz, Aghazadeh, Yaghoobzadeh & Pilehvar 2023, "DecompX: Explaining Transformers Decisions
by Propagating Token Decomposition" (ACL), section 3; reference code mohsenfayyaz/DecompX (``DecompXConfig``
defaults: biases included and decomposed by ``absdot``, LN1, FFN and LN2 included, the classifier included).

Every token representation x_i is carried as a sum over the input tokens k, x_i = sum_k x_i[k]
(the input of layer 1: x_i[k] = [i = k] x_i), through:

* attention (section 3.1): a_i[k] = sum_h sum_j alpha_ij^h x_j[k] W_V^h W_O^h (the forward pass's alpha);
* residual: z_i[k] = x_i[k] + a_i[k];
* LayerNorm (section 3.2), with the forward pass's sigma_i: LN(z)_i[k] = gamma * (z_i[k] - mean(z_i[k])) / sigma_i;
* the feed-forward network (section 3.3), linearised at the activation: theta_i = act(h_i) / h_i per unit (the
  "zero-origin" slope; for ReLU the 0/1 gate), so FFN(y)_i[k] = W_2 diag(theta_i) W_1 y_i[k]; exact, since
  sum_k theta_i * (W_1 y_i[k]) + theta_i * b_1 = act(h_i);
* the classification head (section 3.4): pooling (the mean of the rows, or the first token), then each Linear and
  elementwise activation (tanh, GELU, ReLU) of the head the same way.

Bias terms (the paper's ``absdot`` rule, section 3.5): every bias vector b added to a decomposed vector is split
among the input tokens in proportion to |<v_i[k], b>| (v_i[k] the decomposed vector it is added to), or equally when
all those products are zero. Three simplifications, all exact in the sum: the value bias b_V and the output
projection's b_O enter as the one constant W_O b_V + b_O (the attention rows sum to 1); the FFN's b_1 and b_2 enter
as the one vector W_2 (theta_i * b_1) + b_2 (the reference code's ``FFN_fast_mode``); LayerNorm's beta and the
head's biases are split as in the paper. The contributions therefore sum to the logits exactly (up to float32
rounding; tests: 1e-4).

Cost: the decomposed states are (T, T, D) tensors; each layer after the first mixes them with the attention
(T^3 D multiply-adds), and the FFN costs T D^2 F + T^2 D^2 (F: its width). Shapes: T tokens, D width, H heads.
"""

from __future__ import annotations

import torch

from .taps import LayerCapture, LayerTaps, ModelTaps

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


def _params(taps: LayerTaps, n_heads: int, mask_row: torch.Tensor | None) -> dict:
    """The layer's weights as float32, the head mask folded in (W_V (H d, D), W_O (D, H d), the attention bias
    W_O b_V + b_O, and per-head scales)."""
    w_v, b_v = taps.value_weight()
    w_o = taps.out_proj.weight.detach().float()
    scale = torch.ones(n_heads) if mask_row is None else mask_row.float()
    d = w_o.shape[1] // n_heads
    bias = torch.zeros(w_o.shape[0])
    if b_v is not None:
        bias = bias + w_o @ (b_v.detach().float() * scale.repeat_interleave(d))
    if taps.out_proj.bias is not None:
        bias = bias + taps.out_proj.bias.detach().float()
    f = lambda t: t.detach().float() if t is not None else None  # noqa: E731
    return {"w_v": f(w_v), "w_o": w_o, "b_att": bias, "scale": scale, "d": d, "w1": f(taps.fc1.weight),
            "b1": f(taps.fc1.bias), "w2": f(taps.fc2.weight), "b2": f(taps.fc2.bias)}


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


def head_decompose(x: torch.Tensor, taps: ModelTaps) -> torch.Tensor:
    """The classification head on the decomposed last hidden states (section 3.4): (T, K, D) -> (K, C).

    Raises:
        ValueError: a read-out step DecompX does not cover (a final LayerNorm: pre-LN encoders).
    """
    v = None
    for kind, op in taps.head:
        if kind == "pool":
            v = x[0] if op == "cls" else x.mean(0)  # (K, D)
        elif kind == "linear":
            v = v @ op.weight.detach().float().T  # (K, out)
            if op.bias is not None:
                v = absdot_(v.unsqueeze(0), op.bias.detach().float()).squeeze(0)
        elif kind == "act":
            pre = v.sum(0)  # the head's real pre-activation
            theta = torch.where(pre.abs() > 1e-12, op(pre) / torch.where(pre == 0, torch.ones_like(pre), pre),
                                torch.zeros_like(pre))
            v = v * theta
        else:
            raise ValueError(f"DecompX does not decompose the read-out step {kind!r}")
    return v


def decompx(caps: list[LayerCapture], taps: ModelTaps, rows: list, logits: torch.Tensor) -> dict:
    """DecompX of one text (see the module docstring).

    Args:
        caps: the layers' captures (:func:`.taps.capture`). taps: the model's taps (post-LN, with a head).
        rows: per layer the (H,) head mask or None. logits: (C,) the model's logits.

    Returns:
        ``contributions`` (T, C), summing over the tokens to ``logits``; ``matrices`` (L, T, T) = ||x_i^(l)[k]||;
        ``aggregated``: those rows normalised to sum to 1; ``importance`` (T,): the contributions to the predicted
        class minus the mean of the other classes' (:func:`model.flow.class_scores`).

    Raises:
        ValueError: the model has no classification head.
    """
    from ..flow import class_scores

    if not taps.head:
        raise ValueError("DecompX explains the logits, and this model has no classification head")
    x, norms = None, []
    for cap, lt, row in zip(caps, taps.layers, rows):
        x = layer_decompose(x, cap, lt, taps.n_heads, row)  # (T, K, D)
        norms.append(torch.linalg.vector_norm(x, dim=-1))  # (T, K)
    contributions = head_decompose(x, taps)  # (K, C)
    matrices = torch.stack(norms)
    aggregated = matrices.double() / matrices.double().sum(-1, keepdim=True).clamp_min(1e-30)
    target = int(logits.argmax())
    return {"matrices": matrices, "aggregated": aggregated, "contributions": contributions,
            "importance": torch.from_numpy(class_scores(contributions.numpy(), target))}
