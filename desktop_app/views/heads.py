"""The head choice of the views: its name and the query x key matrix it shows (NumPy only).

A head choice is a 0-based head or :data:`~desktop_app.state.MEAN_HEADS` / :data:`~desktop_app.state.MAX_HEADS`
(the values of :attr:`desktop_app.state.ExplorerState.head`).
"""

from __future__ import annotations

import numpy as np

from ..state import MAX_HEADS, MEAN_HEADS


def head_name(head: int) -> str:
    """Human name of a head choice: "head 1".., "mean of heads" or "max of heads"."""
    if head == MEAN_HEADS:
        return "mean of heads"
    if head == MAX_HEADS:
        return "max of heads"
    return f"head {head + 1}"


def head_matrix(attention: np.ndarray, layer: int, head: int) -> np.ndarray:
    """The query x key attention matrix shown for one layer and head choice.

    Args:
        attention: float32 [L, H, T, T], ``attention[l, h, i, j]`` = weight of key j for query i.
        layer: 0-based layer index.
        head: 0-based head index, or :data:`MEAN_HEADS` / :data:`MAX_HEADS`.

    Returns:
        float32 [T, T]; for a single head this is exactly ``attention[layer, head]`` (a view, no copy).

    Raises:
        IndexError: if ``layer`` or ``head`` is out of range.
    """
    if not 0 <= layer < attention.shape[0]:
        raise IndexError(f"layer {layer} out of range 0..{attention.shape[0] - 1}")
    if head == MEAN_HEADS:
        return attention[layer].mean(axis=0)
    if head == MAX_HEADS:
        return attention[layer].max(axis=0)
    if not 0 <= head < attention.shape[1]:
        raise IndexError(f"head {head} out of range 0..{attention.shape[1] - 1}")
    return attention[layer, head]
