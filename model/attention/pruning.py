"""Pruning attention heads by importance (NumPy only): the order and the head mask.

Michel, Levy & Neubig 2019, "Are Sixteen Heads Really Better than One?" (NeurIPS), section 4.2: heads are removed
least important first, across all layers. Shared by ``python -m model.evaluation.head_importance`` (the accuracy
curve) and the GUI's "Switch off the k least important" (:mod:`desktop_app.views.head_grid`).
"""

from __future__ import annotations

import numpy as np


def pruning_order(scores: np.ndarray) -> list[tuple[int, int]]:
    """(layer, head) pairs of ``scores`` (float (L, H), higher = more important), least important first (a stable
    sort: ties go to the earlier layer, then head)."""
    scores = np.asarray(scores)
    flat = np.argsort(scores.reshape(-1), kind="stable")
    H = scores.shape[1]
    return [(int(i // H), int(i % H)) for i in flat]


def pruning_mask(scores: np.ndarray, k: int) -> np.ndarray:
    """The head mask that switches off the ``k`` least important heads (:func:`pruning_order`; ``k`` clamped to
    0..L*H): float32 (L, H) of 1 (on) and 0 (off)."""
    scores = np.asarray(scores, dtype=np.float64)
    mask = np.ones(scores.shape, np.float32)
    for layer, head in pruning_order(scores)[: max(0, min(int(k), scores.size))]:
        mask[layer, head] = 0.0
    return mask
