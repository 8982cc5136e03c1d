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
rounding; tests: 1e-5).

Arithmetic (issue 34): the shares need only the products <v_i[k], b>, and LayerNorm only the means; both are taken
before the vectors they concern are formed, on the vectors one step earlier through the transposed maps (a (T, K, 3)
product). Each sublayer is then one matrix product per row i: [x_i[k], its three coefficients] times [the
sublayer's matrix scaled by LayerNorm's gamma / sigma_i; the three vectors], plus the residual; no (T, T, D) tensor
is copied for a bias or a normalisation. With [CLS] pooling, an explanation (``contributions_only``) decomposes only
the [CLS] row of the last layer, mixing the rows before W_V (an H T K D product instead of W_V on every row). Why one
vector-Jacobian product through the frozen network cannot replace this: the absdot shares depend on the decomposed
vectors themselves, so the read-out is not linear in them (docs/flow.md).

Memory traffic (issue 55): every large product is written into one of three (T, K, D + 3) buffers that the layers
reuse (:class:`Scratch`; a fresh tensor of that size pays its page faults again), the feed-forward maps are formed a
block of rows at a time with the residual, 1 / sigma_i and gamma folded into them, and no operand is handed to a
batched product in a layout that sends it down a slow path.

Cost: the decomposed states are (T, T, D) tensors; each layer after the first mixes them with the attention
(T^3 D multiply-adds) and projects them through W_V and W_O (2 T^2 D^2); the feed-forward block costs T D^2 F to form
the per-row matrices and T^2 D^2 to apply them (F: its width). Shapes: T tokens (K = T input tokens), D width,
H heads.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

import torch

from model.tasks.types import SINGLE_LABEL, TaskType

from .taps import LayerCapture, LayerTaps, ModelTaps

FFN_BLOCK_BYTES = 64 << 20  # the feed-forward block's largest temporary, W_1^T diag(theta_i) for a block of rows


def _shares(s: torch.Tensor) -> torch.Tensor:
    """DecompX's ``absdot`` shares from the products s[i, k] = <v_i[k], b_i>: |s| / sum_k |s| per row, or 1/K where
    all of a row's products are 0. s: (T, K) float32; returns (T, K) float32 summing to 1 over k."""
    w = s.abs()
    total = w.sum(-1, keepdim=True)
    return torch.where(total > 0, w / total.clamp_min(1e-30), torch.full_like(w, 1.0 / w.shape[-1]))


def _ln_terms(ln: torch.nn.LayerNorm, ln_in: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """A LayerNorm frozen at the forward pass (section 3.2): ``(g (T, D) = gamma / sigma_i, inv (T,) = 1 / sigma_i,
    beta (D,), gamma * beta (D,), gamma (D,))`` from its real inputs ``ln_in`` (T, D)."""
    inv = torch.rsqrt(ln_in.var(-1, unbiased=False) + ln.eps)  # (T,)
    gamma, beta = ln.weight.detach().float(), ln.bias.detach().float()
    return gamma * inv[:, None], inv, beta, gamma * beta, gamma


def _params(taps: LayerTaps, n_heads: int, mask_row: torch.Tensor | None) -> dict:
    """The layer's weights as float32, the head mask folded in (W_V (H d, D), W_O (D, H d), the attention bias
    W_O b_V + b_O, and per-head scales)."""
    w_v, b_v = taps.value_weight()
    w_o = taps.out_proj.weight.detach().float()
    scale = torch.ones(n_heads, device=w_o.device) if mask_row is None else mask_row.to(w_o.device).float()
    d = w_o.shape[1] // n_heads
    bias = torch.zeros(w_o.shape[0], device=w_o.device)
    if b_v is not None:
        bias = bias + w_o @ (b_v.detach().float() * scale.repeat_interleave(d))
    if taps.out_proj.bias is not None:
        bias = bias + taps.out_proj.bias.detach().float()
    f = lambda t: t.detach().float() if t is not None else None  # noqa: E731
    return {"w_v": f(w_v), "w_o": w_o, "b_att": bias, "scale": scale, "d": d, "w1": f(taps.fc1.weight),
            "b1": f(taps.fc1.bias), "w2": f(taps.fc2.weight), "b2": f(taps.fc2.bias)}


def _coefficients(s_a: torch.Tensor, s_x: torch.Tensor, b_att: torch.Tensor, ln1: tuple) -> torch.Tensor:
    """The attention bias shares and LN1's mean and beta shares of every (i, k) (sections 3.2, 3.5): (T, K, 3) float32.

    With z_i[k] = a_i[k] + w_ik b_att + x_i[k] (w: absdot shares over <a_i[k], b_att>) and m_ik its mean over the
    features, LN1 gives y_i[k] = (a_i[k] + x_i[k] + w_ik b_att - m_ik) * g_i + w'_ik beta, w' the absdot shares over
    <(z_i[k] - m_ik) g_i, beta>. Returns (w_ik / sigma_i, -m_ik / sigma_i, w'_ik), the weights of (b_att * gamma,
    gamma, beta). ``s_a`` (T, K, 3): <a_i[k], (1/D, b_att, gamma beta)>; ``s_x`` (T, K, 2): <x_i[k], (1/D, gamma beta)>.
    """
    _, inv, _, gb, _ = ln1
    w = _shares(s_a[..., 1])
    m = s_a[..., 0] + s_x[..., 0] + w * b_att.mean()
    w_ln = _shares((s_a[..., 2] + s_x[..., 1] + w * (b_att @ gb) - m * gb.sum()) * inv[:, None])
    return torch.stack([w * inv[:, None], -m * inv[:, None], w_ln], -1)


class Scratch:
    """The large buffers of one DecompX pass, reused from layer to layer (issue 55).

    A fresh tensor of the decomposed states' size, (T, K, D) floats, costs its page faults every time it is made
    (about 60 ms per 128 MB on our 2-core CPUs, half as much again as the product written into it), so every layer
    writes its large products into these buffers (``out=``). Three state buffers take turns: the layer's input and
    two for its products, the last of which holds its output; the feed-forward block adds two block temporaries.

    Args:
        dtype, device: of every buffer. state: floats of each state buffer (``"a"``, ``"b"``, ``"c"``) made at once,
            so that the largest request of a pass allocates nothing new.
    """

    def __init__(self, dtype: torch.dtype, device: torch.device | str, state: int = 0) -> None:
        self._kw = {"dtype": dtype, "device": device}
        self._floor = dict.fromkeys("abc", state)
        self._flat: dict[str, torch.Tensor] = {}

    def __call__(self, name: str, *shape: int) -> torch.Tensor:
        """A contiguous ``shape`` view of buffer ``name`` (its contents undefined), grown when it is too small."""
        n = math.prod(shape)
        flat = self._flat.get(name)
        if flat is None or flat.numel() < n:
            flat = self._flat[name] = torch.empty(max(n, self._floor.get(name, 0)), **self._kw)
        return flat[:n].view(shape)


def _attention_ln1(x: torch.Tensor | None, cap: LayerCapture, p: dict, n_heads: int, ln1: tuple,
                   dtype: torch.dtype, work: Scratch, spare: tuple[str, str]) -> torch.Tensor:
    """Attention (section 3.1), its bias, the residual and LN1 (section 3.2) on a decomposed state: y (T_i, K, D).

    The products the shares need are taken first (on the context vectors, through W_O^T); the output projection, the
    bias terms and LN1's scale are then one product per row: [ctx_i[k] / sigma_i, coefficients] @ [W_O^T gamma;
    b_att gamma; gamma; beta] (:func:`_coefficients`), plus the residual x_i[k] g_i. LN1's 1/sigma_i is folded into
    the attention rows. ``x``: (T, K, D) or None for the first layer (x_j[k] = [j = k] x_j: no T^3 term). The large
    products go to ``work``'s buffers ``spare`` (neither holds x); y is returned in ``spare[0]``.
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
        at = attn.permute(2, 1, 0).contiguous()  # (K, T_i, H); a permuted operand sends bmm down a slow path
        s_x = torch.zeros(T, T, 2, device=cap.x.device)
        diag = torch.arange(T, device=cap.x.device)
        s_x[diag, diag] = cap.x @ R[:, ::2]
        coef = _coefficients(torch.bmm(at, f0 @ R).transpose(0, 1), s_x, p["b_att"], ln1)  # (T, K, 3)
        lhs = torch.cat([at.mul_(inv[None, :, None]), coef.transpose(0, 1)], -1).to(dtype)  # (K, T_i, H + 3)
        rhs = torch.cat([f0 * gamma, rows.expand(T, 3, D)], 1).to(dtype)  # (K, H + 3, D)
        y = work(spare[0], T, T, D).copy_(torch.bmm(lhs, rhs, out=work(spare[1], T, T, D)).transpose(0, 1))
        y[diag, diag] += (cap.x * g).to(dtype)  # the residual x_i[i] = x_i
        return y
    K = x.shape[1]
    a = (attn * inv[None, :, None]).to(dtype)  # (H, T_i, T_j), LN1's 1 / sigma_i folded in
    buf = work(spare[1], Ti, K, HD + 3)  # [ctx_i[k] / sigma_i, coefficients]
    ctx = buf[..., :HD].view(Ti, K, H, d)
    if Ti * (T * (H - 1) + D) < T * D:  # few rows (the [CLS] row): mixing the x_j before W_V costs less
        z = (a.reshape(H * Ti, T) @ x.view(T, K * D)).view(H, Ti * K, D)  # sum_j alpha_ij^h x_j[k]
        ctx.copy_(torch.bmm(z, p["w_v"].view(H, d, D).transpose(1, 2).to(dtype)).view(H, Ti, K, d).permute(1, 2, 0, 3))
        del z
    else:  # the T^3 D mixing: one product per head, on the value vectors laid out (H, T_j, K d)
        vx = torch.mm(x.view(T * K, D), p["w_v"].T.to(dtype), out=work(spare[0], T * K, HD))
        vh = work(spare[1], H, T, K * d)
        vh.view(H, T, K, d).copy_(vx.view(T, K, H, d).permute(2, 0, 1, 3))
        mixed = torch.bmm(a, vh, out=work(spare[0], H, Ti, K * d))  # (H, T_i, K d)
        ctx.copy_(mixed.view(H, Ti, K, d).permute(1, 2, 0, 3))  # buf takes vh's place: vh is spent
    s_a = (buf[..., :HD] @ (p["w_o"].T @ R).to(dtype)).float() / inv[:, None, None]
    buf[..., HD:] = _coefficients(s_a, (x[:Ti] @ R[:, ::2].to(dtype)).float(), p["b_att"], ln1).to(dtype)
    y = torch.mm(buf.view(Ti * K, HD + 3), torch.cat([p["w_o"].T * gamma, rows]).to(dtype),
                 out=work(spare[0], Ti * K, D)).view(Ti, K, D)
    return y.addcmul_(x[:Ti], g.to(dtype)[:, None])


def _ffn_coefficients(y: torch.Tensor, cap: LayerCapture, p: dict, ln2: tuple) -> tuple[torch.Tensor, ...]:
    """The feed-forward block's slopes and the shares of its bias and of LN2 (sections 3.3, 3.5), from y (T, K, D).

    theta_i = act(h_i) / h_i (0 where h_i = 0); the vector b_i = W_2 (theta_i * b_1) + b_2 is split by absdot over
    <o_i[k], b_i> with o_i[k] = W_2 diag(theta_i) W_1 y_i[k], then LN2 as in :func:`_coefficients`. The products the
    shares and the mean need are taken on y through the transposed maps (no pass over o). Returns ``(theta (T, F)
    float32, coef (T, K, 3), bias_rows (T, 3, D))`` in y's dtype: out_i[k] = (y_i[k] + o_i[k]) g_i + coef_ik @
    bias_rows_i, the rows being b_i gamma, gamma and beta."""
    g, inv, beta, gb, gamma = ln2
    h, act = cap.fc1_out, cap.fc2_in
    theta = torch.where(h.abs() > 1e-12, act / torch.where(h == 0, torch.ones_like(h), h), torch.zeros_like(h))
    b_eq = (theta * p["b1"] if p["b1"] is not None else torch.zeros_like(theta)) @ p["w2"].T
    b_eq = b_eq + (p["b2"] if p["b2"] is not None else 0.0)  # (T, D)
    D = b_eq.shape[1]
    w_t = lambda r: ((r @ p["w2"]) * theta) @ p["w1"]  # noqa: E731  r (T or 1, D) -> (T, D): W_1^T diag W_2^T r
    one = torch.full((1, D), 1.0 / D, device=y.device)
    s = torch.bmm(y, torch.stack([w_t(b_eq), one + w_t(one), gb + w_t(gb[None])], -1).to(y.dtype)).float()
    v = _shares(s[..., 0])  # (T, K)
    m = s[..., 1] + v * b_eq.mean(-1, keepdim=True)
    w_ln = _shares((s[..., 2] + v * (b_eq @ gb)[:, None] - m * gb.sum()) * inv[:, None])
    coef = torch.stack([v * inv[:, None], -m * inv[:, None], w_ln], -1).to(y.dtype)  # weights of b_i gamma, gamma, beta
    bias_rows = torch.stack([b_eq * gamma, gamma.expand_as(b_eq), beta.expand_as(b_eq)], 1).to(y.dtype)  # (T, 3, D)
    return theta, coef, bias_rows


def _ffn_ln2(y: torch.Tensor, cap: LayerCapture, p: dict, ln2: tuple, work: Scratch, out: str) -> torch.Tensor:
    """The feed-forward block linearised at the activation (section 3.3), the residual and LN2 on y (T, K, D).

    Per row i: o_i[k] = W_2 diag(theta_i) W_1 y_i[k], its bias and LN2's shares from :func:`_ffn_coefficients`; the
    rest is y_i[k] @ M_i plus the coefficients times [b_i g_i; gamma; beta], with the per-row map M_i = diag(g_i) +
    W_1^T diag(theta_i / sigma_i) W_2^T diag(gamma) (the residual and LN2's scale folded in) formed a block of rows at
    a time (T D^2 F multiply-adds; the block's temporaries under :data:`FFN_BLOCK_BYTES`). Returns (T, K, D) in y's
    dtype, in ``work``'s buffer ``out``."""
    g, inv, gamma = ln2[0], ln2[1], ln2[4]
    theta, coef, bias_rows = _ffn_coefficients(y, cap, p, ln2)
    T, D = bias_rows.shape[0], bias_rows.shape[2]
    res = torch.bmm(coef, bias_rows, out=work(out, T, y.shape[1], D))
    w1t, w2g = p["w1"].T.contiguous().to(y.dtype), (p["w2"].T * gamma).to(y.dtype)  # (D, F), (F, D)
    theta, g = (theta * inv[:, None]).to(y.dtype), g.to(y.dtype)
    F = w1t.shape[1]
    b = max(1, min(T, FFN_BLOCK_BYTES // (D * F * w1t.element_size())))
    for s0 in range(0, T, b):
        n = min(T, s0 + b) - s0
        scaled = torch.mul(w1t, theta[s0:s0 + n, None, :], out=work("ffn_scaled", n, D, F))
        maps = torch.mm(scaled.view(n * D, F), w2g, out=work("ffn_maps", n * D, D)).view(n, D, D)
        maps.diagonal(dim1=1, dim2=2).add_(g[s0:s0 + n])
        res[s0:s0 + n].baddbmm_(y[s0:s0 + n], maps)
    return res


def layer_decompose(x: torch.Tensor | None, cap: LayerCapture, taps: LayerTaps, n_heads: int,
                    mask_row: torch.Tensor | None, dtype: torch.dtype = torch.float32,
                    rows: int | None = None, work: Scratch | None = None,
                    spare: tuple[str, str] = ("b", "c")) -> torch.Tensor:
    """One post-LN layer on a decomposed state (sections 3.1-3.3): attention, residual, LN1, FFN, residual, LN2.

    Args:
        x: (T_j, K, D) the decomposed layer input, or None for the first layer (x_j[k] = [j = k] x_j: the attention
            then needs no T^3 term).
        cap, taps: the layer. n_heads: H. mask_row: (H,) the layer's head mask, or None.
        dtype: the precision of the (T, K, D) tensors and their products (float32 or bfloat16); the shares, means and
            sigmas are float32.
        rows: compute only the first ``rows`` output rows (T_i = rows; not for the first layer); None: all.
        work: the pass's :class:`Scratch` (None: a new one); ``spare``: the names of two of its state buffers that do
            not hold ``x``, written over.

    Returns:
        (T_i, K, D) in ``dtype``, the decomposed layer output, in ``work``'s buffer ``spare[1]``.
    """
    work = Scratch(dtype, cap.x.device) if work is None else work
    p = _params(taps, n_heads, mask_row)
    if rows is not None and x is not None:  # only the first ``rows`` outputs (the read-out's [CLS] row)
        cap = replace(cap, attn=cap.attn[:, :rows], ln1_in=cap.ln1_in[:rows], fc1_out=cap.fc1_out[:rows],
                      fc2_in=cap.fc2_in[:rows], ln2_in=cap.ln2_in[:rows])
    y = _attention_ln1(x, cap, p, n_heads, _ln_terms(taps.ln1, cap.ln1_in), dtype, work, spare)
    return _ffn_ln2(y, cap, p, _ln_terms(taps.ln2, cap.ln2_in), work, spare[1])


def head_decompose(x: torch.Tensor, taps: ModelTaps) -> torch.Tensor:
    """The classification head on the decomposed last hidden states (section 3.4): (T, K, D) -> (K, C) float32.

    Raises:
        ValueError: a read-out step DecompX does not cover (a final LayerNorm: pre-LN encoders).
    """
    v = None
    for step, op in taps.head:
        if step == "pool":
            v = x[0].float() if op == "cls" else torch.mean(x, 0, dtype=torch.float32)  # (K, D)
        elif step == "linear":
            v = v @ op.weight.detach().float().T  # (K, out)
            if op.bias is not None:
                b = op.bias.detach().float()
                v = v + _shares((v @ b)[None])[0, :, None] * b
        elif step == "act":
            pre = v.sum(0)  # the head's real pre-activation
            theta = torch.where(pre.abs() > 1e-12, op(pre) / torch.where(pre == 0, torch.ones_like(pre), pre),
                                torch.zeros_like(pre))
            v = v * theta
        else:
            raise ValueError(f"DecompX does not decompose the read-out step {step!r}")
    return v


def decompx(caps: list[LayerCapture], taps: ModelTaps, rows: list, logits: torch.Tensor,
            dtype: torch.dtype = torch.float32, contributions_only: bool = False,
            progress: Callable[[int, int], None] | None = None, should_stop: Callable[[], bool] | None = None,
            target: int | None = None, kind: str | TaskType = SINGLE_LABEL) -> dict:
    """DecompX of one text (see the module docstring).

    Args:
        caps: the layers' captures (:func:`.taps.capture`). taps: the model's taps (post-LN, with a head).
        rows: per layer the (H,) head mask or None. logits: (C,) the model's logits.
        dtype: precision of the decomposed states (float32, or bfloat16 where the CPU computes it natively).
        contributions_only: skip ``matrices`` and ``aggregated`` (None), and with [CLS] pooling decompose only the
            [CLS] row of the last layer (the read-out needs no other): what an explanation needs.
        progress: called as ``progress(layers done, L)`` after each layer. should_stop: asked before each layer.
        target: the class ``importance`` is for (default the predicted one, ``argmax(logits)``); kind: the task.

    Returns:
        ``contributions`` (T, C), summing over the tokens to ``logits``; ``matrices`` (L, T, T) = ||x_i^(l)[k]||;
        ``aggregated``: those rows normalised to sum to 1; ``importance`` (T,): the contributions to class
        ``target`` (minus the mean of the other classes' for a single-label head; :func:`model.records.flow.class_scores`).

    Raises:
        ValueError: the model has no classification head. ExplanationCancelled: ``should_stop()`` returned True.
    """
    from model.records.flow import class_scores
    from model.records.explanation import ExplanationCancelled

    if not taps.head:
        raise ValueError("DecompX explains the logits, and this model has no classification head")
    x, norms = None, []
    cls = next((op for step, op in taps.head if step == "pool"), None) == "cls"
    T, D = caps[0].x.shape
    work = Scratch(dtype, caps[0].x.device, state=T * T * (max(D, caps[0].context.shape[1]) + 3))
    names = ("a", "b", "c")  # x's buffer, then the two the layer writes (its output in the last); they take turns
    for n, (cap, lt, row) in enumerate(zip(caps, taps.layers, rows)):
        if should_stop is not None and should_stop():
            raise ExplanationCancelled("DecompX was cancelled")
        last_cls = contributions_only and cls and n == len(caps) - 1
        x = layer_decompose(x, cap, lt, taps.n_heads, row, dtype, rows=1 if last_cls else None, work=work,
                            spare=names[1:])  # (T, K, D)
        names = (names[2], names[0], names[1])
        if not contributions_only:
            norms.append(torch.linalg.vector_norm(x, dim=-1, dtype=torch.float32))  # (T, K)
        if progress is not None:
            progress(n + 1, len(caps))
    contributions = head_decompose(x, taps).cpu()  # (K, C)
    matrices = aggregated = None
    if norms:
        matrices = torch.stack(norms).cpu()
        aggregated = matrices.double() / matrices.double().sum(-1, keepdim=True).clamp_min(1e-30)
    target = int(logits.argmax()) if target is None else int(target)
    return {"matrices": matrices, "aggregated": aggregated, "contributions": contributions,
            "importance": torch.from_numpy(class_scores(contributions.numpy(), target, kind))}
