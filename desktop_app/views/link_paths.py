"""The token links view's lines (:mod:`desktop_app.views.links_view`): which links a focus draws, and how.

:func:`candidate_links` picks the candidate links of the enabled heads for the focus (all queries, some queries, or
one key); :func:`link_segments` keeps those above the threshold (the strongest ``cap`` of a head without a focus);
:func:`draw_links` bins each head's kept links into :data:`N_OPACITY_BINS` opacity levels and sets every (head, bin)
``QGraphicsPathItem`` to ONE path built with ``pg.arrayToQPath(..., connect="pairs")``: a few dozen items, never one
item per line. Queries stand at ``x =`` :data:`QUERY_X`, keys at :data:`KEY_X`, token ``i`` at ``y = i + 0.5``.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QPainterPath

N_OPACITY_BINS = 8
MAX_LINES_PER_HEAD = 1500  # without a focus token, only the strongest links per head are drawn
QUERY_X, KEY_X = 0.0, 1.0


def link_segments(weights: np.ndarray, rows: np.ndarray, cols: np.ndarray, threshold: float, cap: int | None):
    """Select and bin the links of one head.

    Args:
        weights: float [N] attention weights of candidate links.
        rows, cols: int [N] query and key index of each candidate.
        threshold: drop links with weight < threshold.
        cap: keep at most this many (the strongest); None for all.

    Returns:
        (rows, cols, weights) of the kept links.
    """
    keep = np.nonzero(weights >= threshold)[0]
    if cap is not None and len(keep) > cap:
        part = np.argpartition(weights[keep], len(keep) - cap)[len(keep) - cap :]
        keep = keep[part]
    return rows[keep], cols[keep], weights[keep]


def candidate_links(A: np.ndarray, show: str, enabled_heads, all_heads_row: int, focus):
    """The candidate links of the enabled heads (ALTI: of the layer) for ``focus``.

    Args:
        A: float32 [H, T, T], one layer's matrices under the "Show" choice ``show`` (attention weights or
            value-weighted norms), or [1, T, T] for ALTI (one matrix per layer, drawn as the "all heads" set, path
            row ``all_heads_row``, i.e. H).
        enabled_heads: the heads (0-based) whose links are drawn.
        focus: None (every query), ``("query", (i, ...))`` (those queries' rows) or ``("key", (j,))`` (key j's
            column).

    Returns:
        (per_head {path row: values [N]}, query rows [N], key cols [N], cap: links kept per head or None).
    """
    T = A.shape[-1]
    if A.shape[0] == 1 and show == "alti":
        mats = {all_heads_row: A[0]}
    else:
        mats = {h: A[h] for h in sorted(enabled_heads) if h < A.shape[0]}
    if focus is None:
        rows, cols = np.divmod(np.arange(T * T), T)
        return {h: m.ravel() for h, m in mats.items()}, rows, cols, MAX_LINES_PER_HEAD  # row-major: i * T + j
    if focus[0] == "query":
        sel = np.array(focus[1], dtype=np.int64)
        rows = np.repeat(sel, T)
        cols = np.tile(np.arange(T), len(sel))
    else:
        rows = np.arange(T)
        cols = np.full(T, focus[1][0])
    return {h: m[rows, cols] for h, m in mats.items()}, rows, cols, None


def draw_links(path_items, per_head: dict, rows: np.ndarray, cols: np.ndarray, cap: int | None, wmax: float,
               threshold_fraction: float) -> int:
    """Set each (head, opacity bin) path of ``path_items`` (rows of :data:`N_OPACITY_BINS` ``QGraphicsPathItem``) to
    its links of ``per_head`` at or above ``threshold_fraction * wmax``; returns how many are drawn."""
    threshold = threshold_fraction * wmax
    total = 0
    for h, row in enumerate(path_items):
        if h not in per_head or wmax <= 0:
            for item in row:
                item.setPath(QPainterPath())
                item.setVisible(False)
            continue
        r, c, w = link_segments(per_head[h], rows, cols, max(threshold, 1e-12), cap)
        total += len(w)
        bins = np.minimum((w / wmax * N_OPACITY_BINS).astype(np.int64), N_OPACITY_BINS - 1)
        for b, item in enumerate(row):
            m = bins == b
            n = int(m.sum())
            if n == 0:
                item.setPath(QPainterPath())
                item.setVisible(False)  # empty paths also break pyqtgraph's SVG export
                continue
            item.setVisible(True)
            x = np.empty(2 * n)
            y = np.empty(2 * n)
            x[0::2], x[1::2] = QUERY_X, KEY_X
            y[0::2] = r[m] + 0.5
            y[1::2] = c[m] + 0.5
            item.setPath(pg.arrayToQPath(x, y, connect="pairs"))
    return total


__all__ = ["KEY_X", "MAX_LINES_PER_HEAD", "N_OPACITY_BINS", "QUERY_X", "candidate_links", "draw_links", "link_segments"]
