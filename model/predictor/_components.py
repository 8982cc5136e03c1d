"""``Predictor.component_attribution``: one logit of a text split into the encoder's components, and
``Predictor.ffn_neurons``: one FFN's part split by neuron (issue 53; the algorithm: :mod:`model.explain.components`,
the records: :mod:`model.records.components`).

A text that fits (or a pair, or a text cut head+tail) is one forward pass with capture and one backward sweep. A text
read in windows (policy ``"windows"``) is split window by window, each window's input exactly as ``predict`` builds it
(:func:`model.text.document_windows.window_inputs`), and the windows' parts weighted as the document's logits weight
the windows' (:func:`model.text.document_windows.window_weights`), so they still sum to ``predict(text).logits``;
``by_position`` is merged over the document's tokens by :func:`model.text.document_windows.merge_token_scores`' rule.
Always float32, whatever the predictor's precision. Private to :mod:`model.predictor`.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from model.explain.components import component_attribution as split_logit
from model.explain.components import ffn_neuron_parts, part_names
from model.explain.taps import capture, taps_of
from model.records.components import ComponentAttribution, ComponentsNotSupported, FfnNeurons
from model.records.flow import FlowNotSupported
from model.text.document_windows import aggregate, window_inputs, window_weights
from model.text.inputs import check_text
from model.text.segments import types_kw

from ._analysis import check_target
from ._long_text import whole_windows
from ._reading import Parts
from ._scoring import forward_scope, window_logits
from .options import PredictOptions


def _taps(parts: Parts):
    """The model's taps, or ComponentsNotSupported naming what is covered."""
    try:
        taps = taps_of(parts.model)
    except FlowNotSupported as exc:
        raise ComponentsNotSupported(f"component attribution cannot split this model's logits exactly: {exc}") from exc
    return taps


def _window_run(parts: Parts, taps, ids: np.ndarray, segment_ids, options: PredictOptions, target: int | None,
                split) -> tuple[tuple[torch.Tensor, ...], torch.Tensor]:
    """One input's ``(split(caps, taps, rows, target) (tensors (X, T), on the CPU), logits (C,))``; ``target`` None:
    the input's argmax."""
    x = torch.from_numpy(np.asarray(ids, dtype=np.int64)).unsqueeze(0).to(parts.device)  # (1, T)
    with torch.inference_mode():
        with forward_scope(parts, options) as model:
            caps, logits = capture(model, x, torch.ones_like(x, dtype=torch.bool), taps,
                                   types=types_kw(model, segment_ids, parts.device))
        mask = options.head_mask
        rows = [None if mask is None else torch.tensor(np.asarray(mask[n], np.float32)) for n in range(len(caps))]
        target = int(logits.argmax()) if target is None else target
        return tuple(t.cpu() for t in split(caps, taps, rows, target)), logits.cpu()


@torch.inference_mode()
def _split_document(parts: Parts, taps, text: str, pair: str | None, target: int | None, options: PredictOptions,
                    split):
    """Run ``split(caps, taps, rows, target) -> (summed (X, T), maxed (Y, T), ...)`` on every window of ``text`` (or the
    pair) as ``predict`` reads it, and merge the windows over the document's tokens: the first tensor weighted as the
    document's logits weight the windows (float64), the others by their largest value over the windows reading a
    token.

    Returns:
        ``(target, total (the document's logit), merged tensors, tokens, number of windows)``.
    """
    check_target(parts.labels, target)
    enc_ = parts.encoder
    enc = enc_.encode(check_text(text), whole=options.windowed) if pair is None else enc_.encode_pair(check_text(text),
                                                                                                       pair)
    inputs, ranges = window_inputs(enc_, enc.ids) if pair is None else ([enc.ids], None)
    if len(inputs) == 1:
        out, logits = _window_run(parts, taps, inputs[0], getattr(enc, "segment_ids", None), options, target, split)
        target = int(logits.argmax()) if target is None else int(target)
        return target, float(logits[target]), [out[0].double(), *out[1:]], tuple(enc.tokens), 1
    if target is None:  # the document's verdict first, as predict reads it
        target = int(np.argmax(aggregate(window_logits(parts, inputs, options).numpy(), ranges)))
    weights, windows = window_weights(ranges), whole_windows(enc_, enc)
    merged, window_out = None, []
    for w, ids in enumerate(inputs):
        out, logits = _window_run(parts, taps, ids, None, options, int(target), split)
        window_out.append(logits.numpy())
        if merged is None:
            merged = [torch.zeros(out[0].shape[0], len(enc.ids), dtype=torch.float64)]
            merged += [torch.full((t.shape[0], len(enc.ids)), -torch.inf) for t in out[1:]]
        at = torch.from_numpy(windows.tokens_of(w))
        merged[0].index_add_(1, at, out[0].double() * float(weights[w]))
        for m, t in zip(merged[1:], out[1:]):  # a window reads a document token once
            m[:, at] = torch.maximum(m[:, at], t.float())
    total = float(aggregate(np.stack(window_out), ranges)[target])
    return target, total, merged, tuple(enc.tokens), len(inputs)


def component_attribution(parts: Parts, text: str, pair: str | None, target: int | None,
                          options: PredictOptions) -> ComponentAttribution:
    """``Predictor.component_attribution`` of ``text`` (or the checked pair ``text``, ``pair``) under ``options`` (its
    head mask and long-text policy): see the module docstring.

    Raises:
        ValueError: a bad text or target. ComponentsNotSupported: see :func:`_taps`.
    """
    t0 = time.perf_counter()
    taps = _taps(parts)
    target, total, (by_position,), tokens, windows = _split_document(
        parts, taps, text, pair, target, options, lambda *a: (split_logit(*a),))
    names = part_names(len(taps.layers), taps.n_heads, taps.post_ln)
    return ComponentAttribution(
        names=tuple(names), values=by_position.sum(-1).float().numpy(), total=total,
        by_position=by_position.float().numpy(), target=int(target), label=parts.labels[target], tokens=tokens,
        n_layers=len(taps.layers), n_heads=taps.n_heads, num_windows=windows, elapsed_s=time.perf_counter() - t0)


def ffn_neurons(parts: Parts, text: str, pair: str | None, target: int | None, options: PredictOptions,
                layer: int, top: int) -> FfnNeurons:
    """``Predictor.ffn_neurons``: layer ``layer``'s (1-based) FFN part of ``text``'s logit ``target`` split by neuron
    (:func:`model.explain.components.ffn_neuron_parts`), windows merged as :func:`component_attribution` merges them.

    Raises:
        ValueError: a bad text, target, layer or ``top``. ComponentsNotSupported: see :func:`_taps`.
    """
    t0 = time.perf_counter()
    taps = _taps(parts)
    L = len(taps.layers)
    if not 1 <= int(layer) <= L:
        raise ValueError(f"layer {layer} is not one of the model's layers 1..{L}")
    if int(top) < 1:
        raise ValueError(f"top must be at least 1, not {top}")
    layer = int(layer)

    def split(caps, taps_, rows, target_):
        contributions, bias, activations = ffn_neuron_parts(caps, taps_, target_, layer - 1)
        ffn = split_logit(caps, taps_, rows, target_)[part_names(L, taps.n_heads, taps.post_ln).index(f"L{layer}.ffn")]
        return torch.cat([contributions, bias[None], ffn[None]]), activations

    target, total, (summed, activations), tokens, windows = _split_document(parts, taps, text, pair, target, options,
                                                                            split)
    F = activations.shape[0]
    per_neuron = summed[:F].sum(-1)
    neurons = torch.argsort(-per_neuron.abs(), stable=True)[:int(top)]
    return FfnNeurons(
        layer=layer, name=f"L{layer}.ffn", contributions=per_neuron.float().numpy(), bias=float(summed[F].sum()),
        value=float(summed[F + 1].sum()), total=total, neurons=neurons.numpy().astype(np.int64),
        activations=activations[neurons].float().numpy(), by_position=summed[neurons].float().numpy(),
        target=int(target), label=parts.labels[target], tokens=tokens, num_windows=windows,
        elapsed_s=time.perf_counter() - t0)
