"""Where the attention-flow methods read an encoder: its modules per layer (:class:`ModelTaps`), one forward pass
that records what they see (:func:`capture`) and the classification read-out as a chain of the model's own modules
(:func:`read_out`).

Nothing is re-implemented: :func:`capture` registers forward hooks on the model's own modules, runs the model's own
forward pass once (under the caller's ``forward_lock``) and removes the hooks; the hooks record the registering
thread's pass only, so another thread's pass through the shared model at the same time is neither recorded nor
disturbed (issue 41: one model for every thread). The bundled
:class:`~model.core.encoder.TransformerClassifier` is described here (:func:`classifier_taps`); a backend with other
module names supplies ``flow_taps()`` (the Hugging Face families: :mod:`model.hf.flow_taps`). Modules shared by
several layers (ALBERT) are listed once per layer; their calls are taken in order.

Shapes: B = 1 (one text), T tokens, D model width, H heads, d = D / H, F the feed-forward width.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn


@dataclass(frozen=True)
class LayerTaps:
    """The modules of one post- or pre-LayerNorm encoder layer that the flow methods read.

    Attributes:
        layer: the layer module (its input is the residual stream x, its output the layer output).
        value: the module whose output holds the value vectors (B, T, H d), heads concatenated; with ``value_slice``
            (start, stop) when it is a fused query/key/value projection.
        out_proj: the attention output projection W_O (a Linear); its input is the heads' context vectors.
        ln1: the LayerNorm after (post-LN) or before (pre-LN) the attention sublayer.
        fc1, fc2: the feed-forward block's two Linears (the activation between them is read from their
            input/output, so any elementwise activation works).
        ln2: the LayerNorm after (post-LN) or before (pre-LN) the feed-forward sublayer.
    """

    layer: nn.Module
    value: nn.Module
    out_proj: nn.Linear
    ln1: nn.LayerNorm
    fc1: nn.Linear
    fc2: nn.Linear
    ln2: nn.LayerNorm
    value_slice: tuple[int, int] | None = None

    def value_weight(self) -> tuple[torch.Tensor, torch.Tensor | None]:
        """``(W_V (H d, D), b_V (H d,) or None)`` of the value projection."""
        w, b = self.value.weight, self.value.bias
        if self.value_slice is not None:
            s = slice(*self.value_slice)
            w, b = w[s], (b[s] if b is not None else None)
        return w, b


ReadOutOp = tuple[str, Any]
"""One step of the classification read-out: ``("pool", "mean" | "cls")``, ``("norm", LayerNorm)`` (per token),
``("linear", Linear)`` or ``("act", callable)`` (elementwise)."""


@dataclass(frozen=True)
class ModelTaps:
    """An encoder as the flow methods see it.

    Attributes:
        family: display name, e.g. "Attention Explorer encoder", "BERT".
        layers: one :class:`LayerTaps` per layer, in forward order.
        n_heads: H.
        post_ln: True for post-LayerNorm layers (x = LN(x + sublayer(x))), False for pre-LN.
        head: the read-out from the last hidden states to the logits, as :data:`ReadOutOp` steps; () without a
            classification head.
        ffn_act: ``(name, elementwise callable)`` of the feed-forward activation between fc1 and fc2 (e.g. ``("gelu",
            GELUActivation())``; the Block view's step), or None where it is not known.
    """

    family: str
    layers: tuple[LayerTaps, ...]
    n_heads: int
    post_ln: bool
    head: tuple[ReadOutOp, ...]
    ffn_act: tuple[str, Any] | None = None


def classifier_taps(model) -> ModelTaps:
    """:class:`ModelTaps` of a :class:`~model.core.encoder.TransformerClassifier` (fused qkv: V is its last third)."""
    cfg = model.config
    D = cfg.d_model
    layers = tuple(LayerTaps(layer=b, value=b.attn.qkv, out_proj=b.attn.out, ln1=b.norm1, fc1=b.ff.fc1, fc2=b.ff.fc2,
                             ln2=b.norm2, value_slice=(2 * D, 3 * D)) for b in model.layers)
    head: tuple[ReadOutOp, ...] = (("norm", model.final_norm),) if cfg.norm_first else ()
    head += (("pool", cfg.pooling), ("linear", model.head))
    return ModelTaps("Attention Explorer encoder", layers, cfg.n_heads, not cfg.norm_first, head,
                     ("relu", torch.relu))  # FeedForward: ReLU


def taps_of(model) -> ModelTaps:
    """The model's :class:`ModelTaps`: ``model.flow_taps()`` when the backend has one, else our encoder's.

    Raises:
        model.records.flow.FlowNotSupported: the backend's architecture is not covered (the message says which are).
    """
    if hasattr(model, "flow_taps"):
        return model.flow_taps()
    return classifier_taps(model)


def output_projections(model) -> list[nn.Module]:
    """The L attention output projections (one per layer, the same module repeated for shared layers), whose input
    a head mask scales: ``model.output_projections()`` when the backend has one, else our encoder's ``attn.out``."""
    if hasattr(model, "output_projections"):
        return list(model.output_projections())
    return [layer.attn.out for layer in model.layers]


@dataclass
class LayerCapture:
    """What one layer computed for one text (batch dimension dropped); float tensors, detached.

    Attributes:
        x: (T, D) the layer input. attn: (H, T, T) the attention probabilities.
        values: (T, H d) the value vectors x W_V + b_V, heads concatenated.
        context: (T, H d) the output projection's input (after any head mask). attn_out: (T, D) its output.
        ln1_in, ln1_out, ln2_in, ln2_out: (T, D) the two LayerNorms' inputs and outputs.
        fc1_out: (T, F) the pre-activation. fc2_in: (T, F) the activation's output. fc2_out: (T, D).
        out: (T, D) the layer output.
    """

    x: torch.Tensor
    attn: torch.Tensor
    values: torch.Tensor
    context: torch.Tensor
    attn_out: torch.Tensor
    ln1_in: torch.Tensor
    ln1_out: torch.Tensor
    fc1_out: torch.Tensor
    fc2_in: torch.Tensor
    fc2_out: torch.Tensor
    ln2_in: torch.Tensor
    ln2_out: torch.Tensor
    out: torch.Tensor


_ROLES = ("value", "out_proj", "ln1", "fc1", "fc2", "ln2")


def _first_tensor(args: tuple, kwargs: dict) -> torch.Tensor:
    if args and isinstance(args[0], torch.Tensor):
        return args[0]
    return next(v for v in kwargs.values() if isinstance(v, torch.Tensor))


def _record(calls: dict[int, list], module: nn.Module, with_kwargs: bool) -> Any:
    owner = threading.get_ident()

    def hook(_m, args, *rest):
        if threading.get_ident() != owner:  # another thread's pass through the shared model: not ours to record
            return
        kwargs, out = (rest[0], rest[1]) if with_kwargs else ({}, rest[0])
        out = out[0] if isinstance(out, tuple) else out
        calls[id(module)].append((_first_tensor(args, kwargs).detach()[0], out.detach()[0]))

    return module.register_forward_hook(hook, with_kwargs=with_kwargs)


def capture(model, input_ids: torch.Tensor, attention_mask: torch.Tensor, taps: ModelTaps,
            full: bool = True, types: dict | None = None,
            ) -> tuple[list[LayerCapture] | list[tuple[torch.Tensor, torch.Tensor]], torch.Tensor]:
    """One forward pass of ``model`` (its own ``forward``, attention maps on) recording every layer.

    The caller holds the predictor's ``forward_lock`` (the hooks live only for this pass) and any head-mask hooks
    (:func:`model.explain.heads.head_mask_hooks`), which act before the output projection records its input.

    Args:
        model: the encoder (``forward(ids, mask, need_weights=True) -> (logits (1, C), attentions (1, L, H, T, T))``).
        input_ids: int64 (1, T). attention_mask: bool (1, T).
        taps: ``taps_of(model)``.
        full: record every module (:class:`LayerCapture`); False: only each layer's (input, output).
        types: the token-type keyword of a sentence pair for ``model`` (:func:`model.text.segments.types_kw`), or None.

    Returns:
        ``(layers, logits (C,))``: per layer a :class:`LayerCapture` (``full``) or ``(x_in (T, D), out (T, D))``.

    Raises:
        ValueError: a batch of more than one text.
    """
    if input_ids.shape[0] != 1:
        raise ValueError("attention flow is computed for one text at a time")
    modules = {id(t.layer): t.layer for t in taps.layers}
    if full:
        modules.update({id(getattr(t, r)): getattr(t, r) for t in taps.layers for r in _ROLES})
    calls: dict[int, list] = {k: [] for k in modules}
    layer_ids = {id(t.layer) for t in taps.layers}
    hooks = [_record(calls, m, with_kwargs=k in layer_ids) for k, m in modules.items()]
    try:
        logits, attn = model(input_ids, attention_mask, need_weights=True, **(types or {}))  # (1, C), (1, L, H, T, T)
    finally:
        for h in hooks:
            h.remove()
    seen: dict[int, int] = {}

    def take(module: nn.Module) -> tuple[torch.Tensor, torch.Tensor]:
        k = id(module)
        i = seen.get(k, 0)
        seen[k] = i + 1
        return calls[k][i]

    out = []
    for n, t in enumerate(taps.layers):
        x, y = take(t.layer)
        if not full:
            out.append((x.float(), y.float()))
            continue
        (_, v), (ctx, a), (l1i, l1o), (_, f1), (f2i, f2), (l2i, l2o) = (take(getattr(t, r)) for r in _ROLES)
        if t.value_slice is not None:
            v = v[..., slice(*t.value_slice)]
        out.append(LayerCapture(*(z.float() for z in (x, attn[0, n], v, ctx, a, l1i, l1o, f1, f2i, f2, l2i, l2o, y))))
    return out, logits[0].detach().float()


def read_out(head: tuple[ReadOutOp, ...], hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """The classification read-out on hidden states, step by step with the model's own modules.

    Args:
        head: :attr:`ModelTaps.head`.
        hidden: (B, T, D) hidden states (the last layer's output gives the model's logits).
        attention_mask: bool (B, T), True for real tokens.

    Returns:
        logits (B, C).

    Raises:
        ValueError: an empty ``head`` (no classification head) or an unknown step.
    """
    if not head:
        raise ValueError("the model has no classification head")
    h = hidden
    for step, op in head:
        if step == "pool":
            if op == "cls":
                h = h[:, 0]  # (B, D)
            else:
                m = attention_mask.unsqueeze(-1).to(h.dtype)  # (B, T, 1)
                h = (h * m).sum(1) / m.sum(1).clamp_min(1.0)  # (B, D)
        elif step in ("norm", "linear", "act"):
            h = op(h)
        else:
            raise ValueError(f"unknown read-out step {step!r}")
    return h

