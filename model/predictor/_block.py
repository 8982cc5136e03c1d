"""``Predictor.block_trace``: one token followed through one encoder layer and, after the last layer, the read-out
(issue 53, section 4; the algorithm: :mod:`model.explain.block`, the record: :mod:`model.records.block`).

Two passes of one text (cut head+tail as :meth:`model.Predictor.encode` cuts it; a pair as it is encoded): the
layer's attention internals (the Attention steps view's record, :func:`._analysis.attention_internals`) and one
forward pass with capture (:func:`model.explain.taps.capture`), both under the call's head mask. Always float32.
Private to :mod:`model.predictor`.
"""

from __future__ import annotations

import time

import torch

from model.explain.block import check_fit, layer_steps, readout_steps
from model.explain.taps import capture, taps_of
from model.records.block import BlockNotSupported, BlockTrace
from model.records.flow import FlowNotSupported
from model.text.segments import one_text_inputs

from ._analysis import attention_internals
from ._reading import Parts
from ._scoring import forward_scope
from .options import PredictOptions


@torch.inference_mode()
def block_trace(parts: Parts, enc, layer: int, position: int, options: PredictOptions) -> BlockTrace:
    """``Predictor.block_trace`` of one encoding under ``options`` (head mask, task): see the module docstring.

    Raises:
        IndexError: ``layer`` or ``position`` out of range. BlockNotSupported: a family whose layer does not fit.
    """
    t0 = time.perf_counter()
    n_layers, T = parts.model.config.n_layers, len(enc.ids)
    if not -n_layers <= layer < n_layers:
        raise IndexError(f"layer {layer} out of range for {n_layers} layers")
    if not -T <= position < T:
        raise IndexError(f"position {position} out of range for {T} tokens")
    layer, position = layer % n_layers, position % T
    try:
        taps = taps_of(parts.model)
    except FlowNotSupported as exc:
        raise BlockNotSupported(f"the Block view cannot follow this model's layers: {exc}") from exc
    internals = attention_internals(parts, enc, layer, options)
    ids, mask, types = one_text_inputs(parts, enc)
    with forward_scope(parts, options) as model:
        caps, logits = capture(model, ids, mask, taps, types=types)
    steps = layer_steps(caps[layer], taps.layers[layer], internals, position, taps.post_ln, taps.ffn_act)
    readout, out_logits = (), None
    if layer == n_layers - 1 and taps.head:
        readout, z = readout_steps(taps, caps[-1].out, position, options.task.type)
        check_fit([("read-out", z, logits)])
        out_logits = z.float().cpu().numpy()
    pooling = next((op for step, op in taps.head if step == "pool"), "cls")
    return BlockTrace(tokens=tuple(enc.tokens), layer=layer, position=position, n_layers=n_layers,
                      n_heads=taps.n_heads, family=taps.family, post_ln=taps.post_ln, steps=tuple(steps),
                      readout=tuple(readout), pooling=pooling, task=options.task.kind, labels=tuple(parts.labels),
                      logits=out_logits, elapsed_s=time.perf_counter() - t0)
