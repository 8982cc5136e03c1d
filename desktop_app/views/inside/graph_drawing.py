"""How the Contribution graph view paints and picks (issue 53, section 2): the edges' pens by weight and path, the
edges painted in runs of equal pens, the token axis naming the columns that carry nodes, and the nearest edge to a
click. NumPy and Qt only (no torch); the view is :mod:`desktop_app.views.inside.contribution_graph`.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtGui
from PySide6.QtCore import QLineF

from model.palette import NEUTRAL, OKABE_ITO
from model.records.graph import RESIDUAL

from ..colours import HIGHLIGHT_COLOUR
from ..widgets import TokenAxis

HEAD_COLOUR = OKABE_ITO[2]  # bluish green: a head's path (the class colours blue/vermillion fill the nodes)
RESIDUAL_COLOUR = NEUTRAL  # grey: the residual/FFN path
BINS = 8  # edge weights drawn in this many widths/opacities (few pens: a fast QPicture)


def edge_pens(graph, selected: tuple[int, int] | None, max_width: float = 4.0) -> tuple[np.ndarray, np.ndarray]:
    """The drawing order and pens of ``graph``'s edges.

    Args:
        graph: a :class:`model.records.graph.ContributionGraph`. selected: the explorer's (layer 0-based, head) when a
            single head is selected, else None. max_width: the pixels of a weight-1 edge.

    Returns:
        ``(order int64 (E,), pens)``: draw edge ``order[k]`` with ``pens[k]`` (a record array with fields red, green,
        blue, alpha, width, as ``GraphItem`` takes), weak edges first so strong ones stay on top.
    """
    w = np.clip(graph.weights, 0.0, 1.0)
    level = np.clip(np.ceil(np.sqrt(w) * BINS).astype(np.int64), 1, BINS)  # sqrt: weak edges stay visible
    kind = np.where(graph.heads == RESIDUAL, 0, 1)
    if selected is not None and len(graph.edges):
        layer_of = graph.nodes[graph.edges[:, 1], 0] - 1
        kind[(layer_of == selected[0]) & (graph.heads == selected[1])] = 2
    order = np.lexsort((kind, level))
    colours = np.array([pg.mkColor(c).getRgb()[:3] for c in (RESIDUAL_COLOUR, HEAD_COLOUR, HIGHLIGHT_COLOUR)])
    pens = np.empty(len(order), dtype=[("red", np.ubyte), ("green", np.ubyte), ("blue", np.ubyte),
                                       ("alpha", np.ubyte), ("width", float)])
    lv = level[order] / BINS
    opacity = (0.3 + 0.7 * lv)[:, None]  # drawn opaque, mixed with the white background: wide translucent lines
    rgb = np.rint(255 * (1 - opacity) + colours[kind[order]] * opacity)  # paint ~8x slower (benchmarks/graph_view.py)
    pens["red"], pens["green"], pens["blue"] = rgb[:, 0], rgb[:, 1], rgb[:, 2]
    pens["alpha"] = 255
    pens["width"] = 0.6 + (max_width - 0.6) * lv
    return order, pens


def nearest_segment(points: np.ndarray, segments: np.ndarray, at: np.ndarray) -> tuple[int, float]:
    """The segment nearest to point ``at``: ``(index, distance)`` ((-1, inf) when there is none).

    Args:
        points: float (N, 2) in pixels. segments: int (E, 2) indices into ``points``. at: float (2,) in pixels.
    """
    if len(segments) == 0:
        return -1, float("inf")
    a, b = points[segments[:, 0]], points[segments[:, 1]]
    ab = b - a
    t = np.clip(((at - a) * ab).sum(1) / np.maximum((ab * ab).sum(1), 1e-12), 0.0, 1.0)
    d = np.hypot(*(a + t[:, None] * ab - at).T)
    i = int(np.argmin(d))
    return i, float(d[i])


class GraphTokenAxis(TokenAxis):
    """The token axis of the graph: labels the tokens that carry nodes first (left to right, each at least the axis'
    spacing from the last), so the columns drawn are named; every k-th token (:class:`TokenAxis`) when none does."""

    positions: np.ndarray = np.zeros(0, np.int64)

    def set_positions(self, positions) -> None:
        """The token positions that carry nodes (int, any order)."""
        self.positions = np.unique(np.asarray(positions, np.int64))
        self.picture = None
        self.update()

    def tickValues(self, minVal: float, maxVal: float, size: float):
        """Tick positions (i + 0.5) of the node-carrying tokens in view that fit; see the class docstring."""
        lo, hi = min(minVal, maxVal), max(minVal, maxVal)
        shown = self.positions[(self.positions + 0.5 >= lo) & (self.positions + 0.5 <= hi)]
        if not len(shown) or size <= 0 or hi <= lo:
            return super().tickValues(minVal, maxVal, size)
        gap = self._min_spacing * (hi - lo) / size  # the least distance between labels, in tokens
        ticks, last = [], -np.inf
        for p in shown.tolist():
            if p - last >= gap:
                ticks.append(p + 0.5)
                last = p
        return [(1.0, ticks)]


class BatchedGraphItem(pg.GraphItem):
    """A ``GraphItem`` that paints its edges with one ``drawLines`` per run of equal pens (the pens of
    :func:`edge_pens` come in at most 3 x :data:`BINS` runs) instead of a pen and a ``drawLine`` per edge
    (benchmarks/graph_view.py measures it)."""

    def generatePicture(self) -> None:
        """Build the edges' picture (what ``GraphItem.paint`` plays)."""
        pens = self.pen
        if not isinstance(pens, np.ndarray) or self.pos is None or self.adjacency is None:
            super().generatePicture()
            return
        self.picture = QtGui.QPicture()
        painter = QtGui.QPainter(self.picture)
        try:
            pts = self.pos[self.adjacency]  # (E, 2, 2)
            keys = np.stack([pens[f] for f in ("red", "green", "blue", "alpha")] + [pens["width"] * 100], 1)
            cuts = np.flatnonzero(np.any(keys[1:] != keys[:-1], axis=1)) + 1
            for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, len(pens)]):
                pen = pens[lo]
                painter.setPen(pg.mkPen(color=(pen["red"], pen["green"], pen["blue"], pen["alpha"]),
                                        width=float(pen["width"])))
                painter.drawLines([QLineF(*xy) for xy in pts[lo:hi].reshape(-1, 4).tolist()])
        finally:
            painter.end()


__all__ = ["BINS", "HEAD_COLOUR", "RESIDUAL_COLOUR", "BatchedGraphItem", "GraphTokenAxis", "edge_pens",
           "nearest_segment"]
