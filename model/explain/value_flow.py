"""Attention flow: what each head and layer actually moves between tokens (the computation behind
:class:`model.records.flow.AttentionFlow`; DecompX is :mod:`.decompx`).

* Value-weighted norms (Kobayashi, Kuribayashi, Yokoi & Inui 2020, "Attention is Not Only a Weight: Analyzing
  Transformers with Vector Norms", EMNLP, section 3): the attention output of token i is
  sum_h sum_j alpha_ij^h f^h(x_j) + b_O with f^h(x) = (x W_V + b_V)^h W_O^h (the head's slice of the output
  projection, without its bias); the flow of head h from j to i is ||alpha_ij^h f^h(x_j)|| = alpha_ij^h ||f^h(x_j)||,
  and the layer's, ||sum_h alpha_ij^h f^h(x_j)||, is computed from the heads' Gram matrices (no (T, T, D) tensor).
* ALTI (Ferrando, Gallego & Costa-jussa 2022, "Measuring the Mixing of Contextual Information in the Transformer",
  EMNLP, section 3; reference code facebookresearch/transformer-contributions): the attention block's output
  y_i = LN(x_i + attention_i) decomposes, with the LayerNorm's scale 1/sigma_i taken from the forward pass, into
  y_i = sum_j T_i(x_j) + gamma * C(b_O) / sigma_i + beta, T_i(x_j) = gamma * C(sum_h alpha_ij^h f^h(x_j)
  + [i = j] x_i) / sigma_i (C: centring over the features). The contribution of x_j to y_i is
  c_ij = max(0, ||y_i||_1 - ||y_i - T_i(x_j)||_1), normalised over j (Manhattan distance; the reference code's
  ``min_sum`` normalisation with the resultant's norm); a row with no positive entry keeps its own token. Layers are
  aggregated by the rollout R_l = C_l R_{l-1}. The feed-forward block and the second LayerNorm act on each token
  alone, so they mix nothing and ALTI leaves them out, as the paper does.

All tensors are float32 and come from one forward pass of the model's own modules (:func:`.taps.capture`). Shapes:
L layers, H heads, T tokens, D model width.
"""

from __future__ import annotations

import time
from contextlib import AbstractContextManager, nullcontext

import numpy as np
import torch

from model.records.flow import FlowNotSupported, check_flow_method
from model.tasks.types import SINGLE_LABEL, TaskType
from model.explain.heads import head_mask_hooks
from model.explain.rollout import readout_row
from model.explain.taps import LayerCapture, LayerTaps, ModelTaps, capture, read_out, taps_of

ALTI_BLOCK_FLOATS = 1 << 20  # floats per (rows x T x D) block of the ALTI distances (4 MB: stays in the caches)


def head_vectors(cap: LayerCapture, taps: LayerTaps, n_heads: int, mask_row: torch.Tensor | None) -> torch.Tensor:
    """f^h(x_j) = (x_j W_V + b_V)^h W_O^h for every head and token (Kobayashi et al. 2020, section 3).

    Args:
        cap: the layer's capture (its value vectors include b_V). taps: the layer's modules. n_heads: H.
        mask_row: (H,) the layer's head mask, or None; a masked head's vectors are scaled by its mask value.

    Returns:
        (H, T, D) float32.
    """
    T, HD = cap.values.shape
    v = cap.values.view(T, n_heads, HD // n_heads).transpose(0, 1)  # (H, T, d)
    w = taps.out_proj.weight.detach().float()  # (D, H d)
    w_heads = w.view(w.shape[0], n_heads, HD // n_heads).permute(1, 2, 0)  # (H, d, D)
    f = v @ w_heads  # (H, T, D)
    return f if mask_row is None else f * mask_row.view(-1, 1, 1)


def value_norm_layer(attn: torch.Tensor, f: torch.Tensor,
                     out: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One layer's value-weighted norms.

    Args:
        attn: (H, T, T) attention probabilities. f: (H, T, D) from :func:`head_vectors`.
        out: optional (H, T, T) tensor to write ``per_head`` into.

    Returns:
        ``(per_head (H, T, T) = alpha_ij^h ||f^h(x_j)||, summed (T, T) = ||sum_h alpha_ij^h f^h(x_j)||,
        f_norms (H, T) = ||f^h(x_j)||)``; ``summed`` expands the square through the Gram matrix G_j = F_j F_j^T:
        ||sum_h alpha_ij^h f_j^h||^2 = sum_{h,g} alpha_ij^h alpha_ij^g <f_j^h, f_j^g>.
    """
    f_norms = torch.linalg.vector_norm(f, dim=-1)  # (H, T)
    per_head = torch.mul(attn, f_norms[:, None, :], out=out)  # (H, T, T)
    ft = f.transpose(0, 1).contiguous()  # (T_j, H, D)
    gram = torch.bmm(ft, ft.transpose(1, 2))  # (T_j, H, H)
    at = attn.permute(2, 1, 0).contiguous()  # (T_j, T_i, H)
    sq = torch.bmm(at, gram).mul_(at).sum(-1)  # (T_j, T_i)
    return per_head, sq.T.clamp_min(0).sqrt(), f_norms


def residual_norm_rollout(summed: list[torch.Tensor]) -> torch.Tensor:
    """The ``value_norm`` aggregation: per layer A = 0.5 N + 0.5 I with N the row-normalised (T, T) ``summed``
    norms (Abnar & Zuidema 2020, section 3, norms in place of weights), rolled out R_l = A_l R_{l-1}.
    Returns (L, T, T) float32, rows summing to 1 (to float32 rounding)."""
    T = summed[0].shape[-1]
    eye = torch.eye(T, device=summed[0].device)
    out, R = [], eye
    for s in summed:
        n = s / s.sum(-1, keepdim=True).clamp_min(1e-30)
        R = (0.5 * n + 0.5 * eye) @ R
        out.append(R)
    return torch.stack(out)


def _ln_scale(cap_in: torch.Tensor, ln: torch.nn.LayerNorm) -> torch.Tensor:
    """1 / sqrt(var(z_i) + eps) per token, the LayerNorm's scale in the forward pass: (T,)."""
    return torch.rsqrt(cap_in.var(-1, unbiased=False) + ln.eps)


def alti_vectors(cap: LayerCapture, taps: LayerTaps, f: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The transformed vectors T_i(x_j) of one attention block and the rest of its output (Ferrando et al. 2022).

    For the identity y_i = sum_j T_i(x_j) + bias_i (tests; the contributions themselves never build this tensor).

    Returns:
        ``(vectors (T, T, D), bias (T, D))``, bias_i = gamma * C(b_O) / sigma_i + beta.
    """
    gamma, beta = taps.ln1.weight.detach().float(), taps.ln1.bias.detach().float()
    inv = _ln_scale(cap.ln1_in, taps.ln1)  # (T,)
    v = torch.einsum("hij,hjd->ijd", cap.attn, f) + torch.diag_embed(cap.x.T).permute(1, 2, 0)  # (T, T, D)
    v = (v - v.mean(-1, keepdim=True)) * gamma * inv[:, None, None]
    b = taps.out_proj.bias.detach().float() if taps.out_proj.bias is not None else torch.zeros_like(gamma)
    bias = (b - b.mean()) * gamma * inv[:, None] + beta  # (T, D)
    return v, bias


def alti_layer(cap: LayerCapture, taps: LayerTaps, f: torch.Tensor) -> torch.Tensor:
    """ALTI contributions of one attention block (Ferrando et al. 2022, section 3): (T, T), rows >= 0 summing to 1.

    gamma, the centring and 1/sigma_i are folded into the vectors (G_hj = gamma * C(f^h(x_j)), alpha_ij^h / sigma_i),
    so T_i(x_j) is one batched product per block of rows; the residual term is added on the diagonal afterwards.
    """
    gamma = taps.ln1.weight.detach().float()
    inv = _ln_scale(cap.ln1_in, taps.ln1)  # (T,)
    g = ((f - f.mean(-1, keepdim=True)) * gamma).transpose(0, 1).contiguous()  # (T_j, H, D)
    a = cap.attn * inv[None, :, None]  # (H, T_i, T_j)
    at = a.permute(1, 2, 0).contiguous()  # (T_i, T_j, H)
    y = cap.ln1_out  # (T, D)
    T, D = y.shape
    dist = torch.empty(T, T, device=y.device)
    step = max(1, ALTI_BLOCK_FLOATS // (T * D))
    for s in range(0, T, step):
        blk = at[s : s + step].transpose(0, 1).contiguous()  # (T_j, b, H)
        r = torch.bmm(blk, g).sub_(y[s : s + step].unsqueeze(0))  # (T_j, b, D): T_i(x_j) - y_i (j != i)
        dist[s : s + step] = r.abs_().sum(-1).T
    xr = (cap.x - cap.x.mean(-1, keepdim=True)) * gamma * inv[:, None]  # (T, D): the residual's T_i(x_i) part
    diag_attn = torch.einsum("hi,ihd->id", torch.diagonal(a, dim1=1, dim2=2), g)  # (T, D)
    idx = torch.arange(T, device=y.device)
    dist[idx, idx] = (y - diag_attn - xr).abs().sum(-1)
    c = (y.abs().sum(-1, keepdim=True) - dist).clamp_min(0)  # (T, T)
    rows = c.sum(-1, keepdim=True)
    c = torch.where(rows > 0, c / rows.clamp_min(1e-30), torch.eye(T, device=c.device))
    return c


def _mask_rows(head_mask: np.ndarray | None, L: int, device=None) -> list[torch.Tensor | None]:
    if head_mask is None:
        return [None] * L
    m = torch.tensor(np.asarray(head_mask, dtype=np.float32), device=device)
    return [m[i] for i in range(L)]


def _value_norm(caps: list[LayerCapture], taps: ModelTaps, rows) -> dict:
    per_head = torch.empty(len(caps), *caps[0].attn.shape, device=caps[0].attn.device)  # (L, H, T, T)
    summed, norms = [], []
    for n, (cap, lt, row) in enumerate(zip(caps, taps.layers, rows)):
        _, s, fn = value_norm_layer(cap.attn, head_vectors(cap, lt, taps.n_heads, row), out=per_head[n])
        summed.append(s), norms.append(fn)
    return {"matrices": per_head, "summed": torch.stack(summed), "value_norms": torch.stack(norms),
            "aggregated": residual_norm_rollout(summed)}


def _alti(caps: list[LayerCapture], taps: ModelTaps, rows) -> dict:
    mats = [alti_layer(cap, lt, head_vectors(cap, lt, taps.n_heads, row))
            for cap, lt, row in zip(caps, taps.layers, rows)]
    R, agg = torch.eye(mats[0].shape[-1], device=mats[0].device), []
    for c in mats:
        R = c @ R
        agg.append(R)
    return {"matrices": torch.stack(mats), "aggregated": torch.stack(agg)}


def supported_taps(model, method: str) -> ModelTaps:
    """``taps_of(model)`` after checking that ``method`` covers the architecture.

    Raises:
        ValueError: unknown method. FlowNotSupported: ALTI or DecompX on a pre-LayerNorm encoder, or a backend
            family without flow taps.
    """
    check_flow_method(method)
    taps = taps_of(model)
    if method != "value_norm" and not taps.post_ln:
        raise FlowNotSupported(f"{method} is implemented for post-LayerNorm encoders (x = LN(x + sublayer(x))); "
                               "this one is pre-LayerNorm. value_norm works on it")
    return taps


def compute_flow(model, input_ids: torch.Tensor, attention_mask: torch.Tensor, method: str,
                 head_mask: np.ndarray | None = None, lock: AbstractContextManager | None = None,
                 contributions_only: bool = False, progress=None, should_stop=None, types: dict | None = None,
                 target: int | None = None, kind: str | TaskType = SINGLE_LABEL) -> dict:
    """The attention flow of one text.

    Args:
        model: the encoder in eval mode. input_ids: int64 (1, T). attention_mask: bool (1, T).
        method: one of :data:`model.records.flow.FLOW_METHODS`.
        head_mask: a validated (L, H) mask (:func:`.heads.check_head_mask`) or None; it applies to this thread's
            forward passes only (:func:`.heads.head_mask_hooks`).
        lock: the predictor's ``forward_lock``, held for the forward pass with its hooks only (the arithmetic
            after it runs on the recorded tensors); None: the caller holds it.
        contributions_only: ``decompx`` only: what an explanation needs, the contributions (``matrices`` and
            ``aggregated`` are None; see :func:`.decompx.decompx`). progress, should_stop: ``decompx`` only,
            per layer (:func:`.decompx.decompx`; ExplanationCancelled when it stops).
        types: the token-type keyword of a sentence pair (:func:`model.text.segments.types_kw`), or None.
        target, kind: ``decompx``: the class its ``importance`` is for (default the predicted one) and the task
            (:func:`model.records.flow.class_scores`).

    Returns:
        dict of CPU tensors/arrays: ``matrices``, ``aggregated``, ``importance`` (T,), ``logits`` (C,), and per method
        ``summed``, ``value_norms`` (value_norm) or ``contributions`` (T, C) (decompx); ``elapsed_s``.

    Raises:
        ValueError: unknown method; FlowNotSupported: see :func:`supported_taps`.
    """
    t0 = time.perf_counter()
    taps = supported_taps(model, method)
    with torch.inference_mode():
        with lock if lock is not None else nullcontext(), head_mask_hooks(model, head_mask, taps.n_heads):
            caps, logits = capture(model, input_ids, attention_mask, taps, types=types)
        rows = _mask_rows(head_mask, len(caps), caps[0].x.device)
        if method == "value_norm":
            out = _value_norm(caps, taps, rows)
        elif method == "alti":
            out = _alti(caps, taps, rows)
        else:
            from model.explain.decompx import decompx

            out = decompx(caps, taps, rows, logits, contributions_only=contributions_only, progress=progress,
                          should_stop=should_stop, target=target, kind=kind)
    out = {k: v.cpu() if isinstance(v, torch.Tensor) else v for k, v in out.items()}  # the arithmetic ran on the device
    pooling = next((op for step, op in taps.head if step == "pool"), "cls")
    if "importance" not in out:
        out["importance"] = torch.from_numpy(readout_row(out["aggregated"][-1].numpy(), pooling))
    logits = logits.cpu()
    out.update(logits=logits if len(taps.head) else logits[:0], pooling=pooling, elapsed_s=time.perf_counter() - t0)
    return out


def layer_logits(model, input_ids: torch.Tensor, attention_mask: torch.Tensor, types: dict | None = None
                 ) -> torch.Tensor:
    """Logits read out after the embeddings and after every layer (a "logit lens" for encoders): (L + 1, C).

    Row 0 reads the input of the first layer, row l the output of layer l, each through the model's own
    classification read-out (:func:`.taps.read_out`: pooling and head; for a pre-LN encoder its final LayerNorm
    first), so the last row equals the model's logits. The caller holds the ``forward_lock`` and any head-mask hooks.
    ``types``: the token-type keyword of a sentence pair (:func:`model.text.segments.types_kw`), or None.

    Raises:
        ValueError: the model has no classification head.
    """
    taps = taps_of(model)
    with torch.inference_mode():
        caps, _ = capture(model, input_ids, attention_mask, taps, full=False, types=types)
        states = torch.stack([caps[0][0]] + [out for _, out in caps])  # (L + 1, T, D)
        return read_out(taps.head, states, attention_mask.expand(states.shape[0], -1))
