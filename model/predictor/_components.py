"""``Predictor.component_attribution``: one logit of a text split into the encoder's components (issue 53; the
algorithm: :mod:`model.explain.components`, the record: :mod:`model.records.components`).

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
from model.explain.components import part_names
from model.explain.taps import capture, taps_of
from model.records.components import ComponentAttribution, ComponentsNotSupported
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


def _window_parts(parts: Parts, taps, ids: np.ndarray, segment_ids, options: PredictOptions,
                  target: int | None) -> tuple[torch.Tensor, torch.Tensor]:
    """One input's ``(parts (K, T) float32, logits (C,))``; ``target`` None: the input's argmax."""
    x = torch.from_numpy(np.asarray(ids, dtype=np.int64)).unsqueeze(0).to(parts.device)  # (1, T)
    with torch.inference_mode():
        with forward_scope(parts, options) as model:
            caps, logits = capture(model, x, torch.ones_like(x, dtype=torch.bool), taps,
                                   types=types_kw(model, segment_ids, parts.device))
        mask = options.head_mask
        rows = [None if mask is None else torch.tensor(np.asarray(mask[n], np.float32)) for n in range(len(caps))]
        target = int(logits.argmax()) if target is None else target
        return split_logit(caps, taps, rows, target).cpu(), logits.cpu()


@torch.inference_mode()
def component_attribution(parts: Parts, text: str, pair: str | None, target: int | None,
                          options: PredictOptions) -> ComponentAttribution:
    """``Predictor.component_attribution`` of ``text`` (or the checked pair ``text``, ``pair``) under ``options`` (its
    head mask and long-text policy): see the module docstring.

    Raises:
        ValueError: a bad text or target. ComponentsNotSupported: see :func:`_taps`.
    """
    t0 = time.perf_counter()
    check_target(parts.labels, target)
    taps = _taps(parts)
    enc_ = parts.encoder
    enc = enc_.encode(check_text(text), whole=options.windowed) if pair is None else enc_.encode_pair(check_text(text),
                                                                                                       pair)
    inputs, ranges = window_inputs(enc_, enc.ids) if pair is None else ([enc.ids], None)
    seg = getattr(enc, "segment_ids", None)
    if len(inputs) == 1:
        split, logits = _window_parts(parts, taps, inputs[0], seg, options, target)
        target = int(logits.argmax()) if target is None else int(target)
        values, by_position, total = split.sum(-1), split, float(logits[target])
    else:
        if target is None:  # the document's verdict first, as predict reads it
            target = int(np.argmax(aggregate(window_logits(parts, inputs, options).numpy(), ranges)))
        weights, windows = window_weights(ranges), whole_windows(enc_, enc)
        by_position = torch.zeros(len(part_names(len(taps.layers), taps.n_heads, taps.post_ln)), len(enc.ids),
                                  dtype=torch.float64)
        window_out = []
        for w, ids in enumerate(inputs):
            split, logits = _window_parts(parts, taps, ids, None, options, int(target))
            window_out.append(logits.numpy())
            by_position.index_add_(1, torch.from_numpy(windows.tokens_of(w)), split.double() * float(weights[w]))
        values, total = by_position.sum(-1), float(aggregate(np.stack(window_out), ranges)[target])
    names = part_names(len(taps.layers), taps.n_heads, taps.post_ln)
    return ComponentAttribution(
        names=tuple(names), values=values.float().numpy(), total=total, by_position=by_position.float().numpy(),
        target=int(target), label=parts.labels[target], tokens=tuple(enc.tokens), n_layers=len(taps.layers),
        n_heads=taps.n_heads, num_windows=len(inputs), elapsed_s=time.perf_counter() - t0)
