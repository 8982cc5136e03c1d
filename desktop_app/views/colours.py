"""Colours of the views: the colour maps, per-token colours from scores, head colours and legend bars; the class
colours are the one palette of :mod:`model.palette` (shared with the HTML report), re-exported here.

NumPy and Qt only (no torch).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor, QImage, QPixmap

from model.palette import NEUTRAL, TOWARD_NEGATIVE, TOWARD_POSITIVE, class_colour, label_colour  # noqa: F401

SEQUENTIAL_CMAP = "CET-L18"  # white -> yellow -> red; black text stays readable on it
HEATMAP_CMAP = "viridis"
DIVERGING_CMAP = "CET-D1A"  # blue -> white -> red
HIGHLIGHT_COLOUR = "#7b1fa2"  # the token view's frame of highlighted words (purple: in neither colour map)
NEGATIVE_COLOUR = TOWARD_NEGATIVE  # class 0 / "toward negative" (blue, as the diverging map's low end)
POSITIVE_COLOUR = TOWARD_POSITIVE  # class 1 / "toward positive" (vermillion, as its high end)
ALL_HEADS_COLOUR = "#555555"  # the token links of a whole layer (ALTI: one matrix for all heads)

HEAD_COLOURS = [
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#ff7f0e",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#17becf",
    "#bcbd22",
    "#7f7f7f",
    "#393b79",
    "#000000",
]


def head_colour(head: int) -> QColor:
    """A distinct colour for attention head ``head`` (0-based); 12 colours (BERT-base has 12 heads), then cycles."""
    return QColor(HEAD_COLOURS[head % len(HEAD_COLOURS)])


@lru_cache(maxsize=16)
def colormap(name: str) -> pg.ColorMap:
    """The :class:`pyqtgraph.ColorMap` called ``name`` (cached)."""
    return pg.colormap.get(name)


@lru_cache(maxsize=16)
def lookup_table(name: str, n: int = 256) -> np.ndarray:
    """uint8 [n, 4] RGBA lookup table of colour map ``name``."""
    return colormap(name).getLookupTable(0.0, 1.0, n, alpha=True).astype(np.uint8)


def colours_for(values: np.ndarray, signed: bool) -> tuple[np.ndarray, float]:
    """Map per-token values to RGBA colours.

    Unsigned values are scaled by their maximum onto the sequential map
    (0 -> white); signed values by their largest magnitude onto the diverging
    map (0 -> white, negative -> blue, positive -> red).

    Args:
        values: float [T].
        signed: use the diverging map.

    Returns:
        (uint8 [T, 4] RGBA, the scale: the value that maps to the strongest colour).
    """
    v = np.nan_to_num(np.asarray(values, dtype=np.float64))
    if signed:
        scale = float(np.max(np.abs(v))) if v.size else 0.0
        x = 0.5 + 0.5 * v / scale if scale > 0 else np.full_like(v, 0.5)
        lut = lookup_table(DIVERGING_CMAP)
    else:
        scale = float(np.max(v)) if v.size else 0.0
        x = np.clip(v / scale, 0.0, 1.0) if scale > 0 else np.zeros_like(v)
        lut = lookup_table(SEQUENTIAL_CMAP)
    idx = np.clip((x * (len(lut) - 1)).round().astype(int), 0, len(lut) - 1)
    return lut[idx], scale


def gradient_pixmap(cmap: str, width: int = 120, height: int = 12) -> QPixmap:
    """A horizontal colour-bar pixmap of colour map ``cmap`` (for the legend)."""
    lut = lookup_table(cmap)
    idx = np.linspace(0, len(lut) - 1, width).astype(int)
    row = np.ascontiguousarray(np.repeat(lut[idx][None, :, :], height, axis=0))
    img = QImage(row.data, width, height, 4 * width, QImage.Format_RGBA8888)
    return QPixmap.fromImage(img.copy())
