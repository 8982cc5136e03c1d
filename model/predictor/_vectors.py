"""The sentence vectors of ``score_many`` (issue 42): one layer's output recorded by a forward hook during the
scoring pass itself (no second pass), then taken through the model's own read-out steps up to its pooling
(:func:`model.explain.taps.taps_of`: the bundled model's final LayerNorm and pooling; a Hugging Face family's first
token), or mean-pooled. What a vector is and its memory: :mod:`model.records.vectors`.

The hook records only the registering thread's pass (another thread's pass through the shared model is not
recorded), and lives for one pass. Private to :mod:`model.predictor`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import torch

from model.explain.taps import taps_of
from model.records.flow import FlowNotSupported
from model.records.vectors import VectorSpec


class VectorTap:
    """Where and how a model's sentence vectors are read for one :class:`~model.records.vectors.VectorSpec`.

    Args:
        model: the module that runs the pass (float32 or its bfloat16 copy).
        spec: which layer and pooling.

    Raises:
        ValueError: the layer is out of range; the model's architecture has no known read-out (named).
    """

    def __init__(self, model: torch.nn.Module, spec: VectorSpec) -> None:
        try:
            taps = taps_of(model)
        except FlowNotSupported as exc:
            raise ValueError(f"sentence vectors cannot be read from this model: {exc}") from None
        layer = spec.resolve(len(taps.layers))
        self.module = taps.layers[layer].layer
        self.occurrence = sum(t.layer is self.module for t in taps.layers[:layer])  # ALBERT: one module, L calls
        steps = list(taps.head)
        pool_at = next((i for i, (step, _) in enumerate(steps) if step == "pool"), None)
        if pool_at is None:
            raise ValueError("sentence vectors need the model's read-out (a classification head); this model has none")
        self.per_token = [op for step, op in steps[:pool_at]]  # e.g. the final LayerNorm of a pre-LN model
        self.pool = steps[pool_at][1] if spec.pooling == "readout" else "mean"

    @contextmanager
    def recording(self) -> Iterator[list[torch.Tensor]]:
        """Inside the ``with`` block, this thread's calls of the layer are appended to the list it gives."""
        owner, outputs = threading.get_ident(), []

        def hook(_module, _args, out):
            if threading.get_ident() == owner:
                outputs.append(out[0] if isinstance(out, tuple) else out)

        handle = self.module.register_forward_hook(hook)
        try:
            yield outputs
        finally:
            handle.remove()

    def vectors(self, outputs: list[torch.Tensor], mask: torch.Tensor) -> np.ndarray:
        """float32 [B, d] vectors of one pass: the recorded layer output (B, T, d) through the per-token read-out
        steps, pooled (the first token, or the mean over ``mask``'s real tokens, bool (B, T))."""
        h = outputs[self.occurrence]
        for op in self.per_token:
            h = op(h)
        if self.pool == "cls":
            pooled = h[:, 0]
        else:
            m = mask.unsqueeze(-1).to(h.dtype)  # (B, T, 1)
            pooled = (h * m).sum(1) / m.sum(1).clamp_min(1.0)
        return pooled.float().cpu().numpy()


def text_vector(item_vectors: dict[int, np.ndarray], first: int, count: int) -> np.ndarray:
    """One text's float32 [d] vector from its ``count`` items (windows) starting at item ``first``: the mean of their
    vectors (one window: its vector). The items are removed from ``item_vectors``."""
    v = np.mean([item_vectors.pop(first + w) for w in range(count)], axis=0)
    return v.astype(np.float32)
