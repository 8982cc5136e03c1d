"""One token through one encoder layer, step by step as the model computes it, then the read-out (issue 53,
section 4; the record: :mod:`model.records.block`).

Every step is computed here from the step before it and the model's own weights, with the formula it shows
(LayerNorm: gamma (z - mean) / sqrt(variance + eps) + beta; a Linear: z W^T + b; the FFN's activation: the model's
own function), except the attention's query, key, value and weights, which are the app's one copy of them
(:class:`model.records.internals.AttentionInternals`, the Attention steps view's record). Then each step is checked
against what the model's own forward pass computed at that point (:func:`model.explain.taps.capture`'s hooks):
a family whose layer does not follow the steps (another order, a fused or missing module) is refused with
:class:`~model.records.block.BlockNotSupported` naming the step, so no number that the model did not compute is
shown. The tests compare every step with the captured activations within 1e-5 (tests/model/explain/test_block_trace.py).

Sources: Vaswani et al. 2017, section 3 (attention, equation 1; the FFN, equation 2; residual + LayerNorm); Ba et
al. 2016 (LayerNorm); Xiong et al. 2020 (pre-LN). Shapes: T tokens, D = d_model, H heads, d = D / H, F = d_ff.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from model.records.block import BlockNotSupported, BlockStep, LayerNormStats, TopNeurons
from model.records.internals import AttentionInternals, softmax

from .taps import LayerCapture, ModelTaps

TOP_NEURONS = 8
"""How many feed-forward neurons the W2 step names."""

FIT_TOLERANCE = 1e-3
"""A step recomputed here may differ from the forward pass's by at most this x max(1, max |captured|) before the
family is refused (float32 rounding is ~1e-6; a step that does not fit differs by O(1))."""


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().float().cpu().numpy().astype(np.float32).copy()


def layer_norm(ln: torch.nn.LayerNorm, z: torch.Tensor) -> tuple[torch.Tensor, LayerNormStats]:
    """LN(z) = gamma (z - mean) / sqrt(variance + eps) + beta of one vector z (D,), written out (Ba et al. 2016).

    Returns ``(LN(z) (D,), its statistics)``; gamma 1 and beta 0 where the module has none."""
    mean = z.mean()
    var = ((z - mean) ** 2).mean()  # the biased variance, as torch's layer_norm
    gamma = ln.weight if ln.weight is not None else torch.ones_like(z)
    beta = ln.bias if ln.bias is not None else torch.zeros_like(z)
    out = gamma * ((z - mean) / torch.sqrt(var + ln.eps)) + beta
    return out, LayerNormStats(float(mean), float(var), float(ln.eps), _np(gamma), _np(beta))


def _ln_formula(out: str, z: str) -> str:
    return f"{out} = \u03b3 \u2299 ({z} \u2212 \u03bc) / \u221a(\u03c3\u00b2 + \u03b5) + \u03b2"


def _top_neurons(act: torch.Tensor, fc2: torch.nn.Linear, k: int = TOP_NEURONS) -> TopNeurons:
    """The ``k`` hidden units with the largest |a_k| x ||W2[k]|| (W2[k]: column k of fc2.weight (D, F))."""
    w2 = fc2.weight.detach().float().norm(dim=0)  # (F,)
    score = act.abs() * w2
    idx = torch.argsort(score, descending=True, stable=True)[:k]
    return TopNeurons(idx.cpu().numpy().astype(np.int64), _np(act[idx]), _np(w2[idx]), _np(score[idx]))


def _attention_steps(att: AttentionInternals, i: int, x: str) -> tuple[list[BlockStep], np.ndarray]:
    """Q, K, V and the attention of token ``i`` from the internals record: ``(steps, context (H d,) as float32)``,
    the context each head's output o_h = softmax(q k^T / sqrt(d)) V times the head mask's scale; ``x``: the name of
    what the projections read."""
    H, _, d = att.queries.shape
    scale = np.ones(H, np.float32) if att.head_scale is None else att.head_scale.astype(np.float32)
    context = (att.head_outputs[:, i] * scale[:, None]).reshape(-1).astype(np.float32)
    w = softmax(att.scores[:, i])  # (H, T)
    extra = f" + {att.extra_score_terms}" if att.extra_score_terms else ""
    steps = [
        BlockStep("q", "Query q", f"q = {x} W_Q + b_Q  (H heads \u00d7 d)", att.queries[:, i].reshape(-1).copy(),
                  "attention"),
        BlockStep("k", "Key k", f"k = {x} W_K + b_K  (this token's key)",
                  att.keys[:, i].reshape(-1).copy(), "attention"),
        BlockStep("v", "Value v", f"v = {x} W_V + b_V", att.values[:, i].reshape(-1).copy(), "attention"),
        BlockStep("attention", "Attention (heads)", f"o_h = softmax(q_h K_h\u1d40 / \u221a{d}{extra}) V_h, "
                  "heads side by side", context, "attention", weights=w.astype(np.float32)),
    ]
    return steps, context


def layer_steps(cap: LayerCapture, lt, att: AttentionInternals, i: int, post_ln: bool, ffn_act) -> list[BlockStep]:
    """The steps of token ``i`` through one layer (module docstring), post- or pre-LN.

    Args:
        cap: the layer's capture (its input ``cap.x`` is where the steps start). lt: its
            :class:`~model.explain.taps.LayerTaps`. att: the layer's internals record. i: the token.
        post_ln: the family's LayerNorm placement. ffn_act: ``(name, callable)``, :attr:`ModelTaps.ffn_act`.

    Raises:
        BlockNotSupported: a step differs from the forward pass's (:data:`FIT_TOLERANCE`), or no known activation.
    """
    if ffn_act is None:
        raise BlockNotSupported("the Block view needs the feed-forward activation's name, and this model's is not "
                                "a known one")
    act_name, act = ffn_act
    x = cap.x[i]
    steps = [BlockStep("input", "Layer input x", "x = the residual stream entering the layer", _np(x))]
    checks = []  # (step key, recomputed, captured)
    if not post_ln:
        a_in, stats = layer_norm(lt.ln1, x)
        steps.append(BlockStep("ln1", "LayerNorm 1", _ln_formula("x\u0302", "x"), _np(a_in), "attention",
                               layer_norm=stats))
        checks.append(("ln1", a_in, cap.ln1_out[i]))
    attn_steps, context = _attention_steps(att, i, "x" if post_ln else "x\u0302")
    steps += attn_steps
    ctx = torch.tensor(context, device=x.device)
    checks.append(("attention", ctx, cap.context[i]))
    w_o = F.linear(ctx, lt.out_proj.weight, lt.out_proj.bias)  # (D,)
    steps.append(BlockStep("w_o", "Heads joined by W_O", "a = concat(o_1..o_H) W_O + b_O", _np(w_o), "attention"))
    checks.append(("w_o", w_o, cap.attn_out[i]))
    r1 = x + w_o
    steps.append(BlockStep("add1", "Residual add", "r = x + a", _np(r1)))
    checks.append(("add1", r1, cap.ln1_in[i] if post_ln else cap.ln2_in[i]))
    if post_ln:
        r1, stats = layer_norm(lt.ln1, r1)
        steps.append(BlockStep("ln1", "LayerNorm 1", _ln_formula("y", "r"), _np(r1), layer_norm=stats))
        checks.append(("ln1", r1, cap.ln1_out[i]))
        f_in = r1
    else:
        f_in, stats = layer_norm(lt.ln2, r1)
        steps.append(BlockStep("ln2", "LayerNorm 2", _ln_formula("y", "r"), _np(f_in), "ffn", layer_norm=stats))
        checks.append(("ln2", f_in, cap.ln2_out[i]))
    h = F.linear(f_in, lt.fc1.weight, lt.fc1.bias)  # (F,)
    g = act(h)
    f = F.linear(g, lt.fc2.weight, lt.fc2.bias)  # (D,)
    steps += [BlockStep("w1", "FFN: W1", "h = y W1 + b1  (d_ff units)", _np(h), "ffn"),
              BlockStep("act", f"FFN: {act_name}", f"g = {act_name}(h)", _np(g), "ffn"),
              BlockStep("w2", "FFN: W2", "f = g W2 + b2  (top units: |g_k| \u00b7 \u2016W2[k]\u2016)", _np(f), "ffn",
                        neurons=_top_neurons(g, lt.fc2))]
    checks += [("w1", h, cap.fc1_out[i]), ("act", g, cap.fc2_in[i]), ("w2", f, cap.fc2_out[i])]
    r2 = r1 + f
    steps.append(BlockStep("add2", "Residual add", "r\u2032 = " + ("y" if post_ln else "r") + " + f", _np(r2)))
    if post_ln:
        checks.append(("add2", r2, cap.ln2_in[i]))
        r2, stats = layer_norm(lt.ln2, r2)
        steps.append(BlockStep("ln2", "LayerNorm 2", _ln_formula("x\u2032", "r\u2032"), _np(r2), layer_norm=stats))
        checks.append(("ln2", r2, cap.ln2_out[i]))
    steps.append(BlockStep("output", "Layer output", "x\u2032 = " + ("" if post_ln else "r\u2032, ")
                           + "the next layer's input", _np(r2)))
    checks.append(("output", r2, cap.out[i]))
    check_fit(checks)
    return steps


def check_fit(checks) -> None:
    """Raise BlockNotSupported naming the first step whose recomputed vector differs from the captured one by more
    than :data:`FIT_TOLERANCE` x max(1, max |captured|)."""
    for key, ours, theirs in checks:
        ours, theirs = ours.detach().float().cpu(), theirs.detach().float().cpu()
        if ours.shape != theirs.shape:
            raise BlockNotSupported(f"this model's layer does not fit the Block view's steps: step {key!r} has shape "
                                    f"{tuple(ours.shape)}, the model computed {tuple(theirs.shape)}")
        diff = float((ours - theirs).abs().max()) if ours.numel() else 0.0
        if diff > FIT_TOLERANCE * max(1.0, float(theirs.abs().max()) if theirs.numel() else 0.0):
            raise BlockNotSupported(f"this model's layer does not fit the Block view's steps: step {key!r} differs "
                                    f"from the model's own by {diff:.3g}")


def _op_name(op) -> str:
    return getattr(op, "__name__", None) or type(op).__name__


def readout_steps(taps: ModelTaps, last: torch.Tensor, i: int, kind) -> tuple[list[BlockStep], torch.Tensor]:
    """The read-out after the last layer (``taps.head``), written out: ``(steps, logits (C,))``.

    Args:
        taps: the model's taps (``head`` not empty). last: (T, D) the last layer's output. i: the token followed (the
            final LayerNorm's step shows the row the pooling reads: [CLS], or token ``i`` under mean pooling).
        kind: the task type (:class:`model.tasks.types.TaskType`): how the logits are read.

    Raises:
        BlockNotSupported: a read-out step not covered.
    """
    from model.tasks.readout import outputs

    steps: list[BlockStep] = []
    h, pooled, n_linear = last, False, sum(step == "linear" for step, _ in taps.head)
    seen_linear = 0
    cls = any(step == "pool" and op == "cls" for step, op in taps.head)
    for step, op in taps.head:
        if step == "norm":
            rows = [layer_norm(op, z) for z in h]
            h = torch.stack([r for r, _ in rows])
            shown = 0 if cls else i
            steps.append(BlockStep("final_ln", "Final LayerNorm", _ln_formula("x\u0302", "x") + "  (every token)",
                                   _np(h[shown]), "readout", layer_norm=rows[shown][1]))
        elif step == "pool":
            h, pooled = (h[0], True) if op == "cls" else (h.mean(0), True)
            steps.append(BlockStep("pool", "[CLS] token" if op == "cls" else "Mean pooling",
                                   "p = the first token's state" if op == "cls" else f"p = mean of the {len(last)} "
                                   "tokens' states", _np(h), "readout"))
        elif step == "linear":
            seen_linear += 1
            h = F.linear(h, op.weight, op.bias)
            last_one = seen_linear == n_linear
            steps.append(BlockStep(f"linear{seen_linear}", "Classifier (logits)" if last_one else "Pooler: dense",
                                   "z = p W_c + b_c" if last_one else "u = p W_p + b_p", _np(h), "readout"))
        elif step == "act":
            h = op(h)
            steps.append(BlockStep(f"act{seen_linear}", f"Pooler: {_op_name(op)}", f"p\u2032 = {_op_name(op)}(u)",
                                   _np(h), "readout"))
        else:
            raise BlockNotSupported(f"the Block view does not read the read-out step {step!r}")
    if not pooled:
        raise BlockNotSupported("this model's read-out has no pooling step")
    logits = h
    out = outputs(logits[None].float(), kind)[0]
    formula = {"single_label": "P = softmax(z)", "multi_label": "P_c = sigmoid(z_c)"}.get(kind.id, "the value = z")
    title = {"single_label": "Softmax", "multi_label": "Sigmoid"}.get(kind.id, "Regression value")
    steps.append(BlockStep("probabilities", title, formula, _np(out), "readout"))
    return steps, logits
