"""Shared pieces of the views: head selection, colour maps, token-labelled axes, deferred rendering.

Views receive immutable NumPy results (``model.Prediction``, :class:`desktop_app.worker.ModelInfo`)
and never import torch.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

MEAN_HEADS = -1  # head choice: mean over heads
MAX_HEADS = -2  # head choice: element-wise max over heads

SEQUENTIAL_CMAP = "CET-L18"  # white -> yellow -> red; black text stays readable on it
HEATMAP_CMAP = "viridis"
DIVERGING_CMAP = "CET-D1A"  # blue -> white -> red

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


@lru_cache(maxsize=16)
def colormap(name: str) -> pg.ColorMap:
    """The pyqtgraph :class:`ColorMap` called ``name`` (cached)."""
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


def fit_table_height(table) -> int:
    """Make ``table`` exactly tall enough for its header and every row (no vertical scrolling); returns pixels.

    Without this the faithfulness table got its default size hint and, in the default 1400x860 window,
    showed one and a half of its rows.
    """
    table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    table.resizeRowsToContents()
    rows = sum(table.rowHeight(r) for r in range(table.rowCount()))
    height = table.horizontalHeader().sizeHint().height() + rows + 2 * table.frameWidth()
    table.setFixedHeight(height)
    return height


def display_token(token: str, max_chars: int = 12) -> str:
    """A token as an axis label: at most ``max_chars`` characters, an ellipsis when cut."""
    return token if len(token) <= max_chars else token[: max_chars - 1] + "\u2026"


def style_plot(plot) -> None:
    """Dark axis text and lines on a white background for a ``pg.PlotItem`` (all four axes)."""
    for name in ("left", "bottom", "right", "top"):
        ax = plot.getAxis(name)
        ax.setTextPen("#222222")
        ax.setPen("#666666")


class TokenAxis(pg.AxisItem):
    """An axis whose ticks are token strings at pixel centres (i + 0.5), decimated to stay legible.

    With T = 512 tokens and a 500-pixel axis only every k-th token is labelled,
    k chosen so labels are at least ``min_spacing_px`` pixels apart; zooming in
    shows every token.
    """

    def __init__(self, orientation: str, min_spacing_px: float | None = None, max_chars: int = 12, **kwargs) -> None:
        super().__init__(orientation, **kwargs)
        self._labels: list[str] = []
        self._max_chars = max_chars
        vertical = orientation in ("left", "right")
        self._min_spacing = min_spacing_px if min_spacing_px is not None else (14.0 if vertical else 7.0 * max_chars)
        self.setStyle(autoExpandTextSpace=False, autoReduceTextSpace=False, hideOverlappingLabels=False)
        if vertical:
            self.setWidth(int(7 * max_chars + 14))

    def set_tokens(self, tokens: list[str]) -> None:
        """Use ``tokens`` (T strings) as the tick labels of positions 0..T-1."""
        self._labels = [display_token(t, self._max_chars) for t in tokens]
        self.picture = None
        self.update()

    def tickValues(self, minVal: float, maxVal: float, size: float):
        """Tick positions (i + 0.5) of every k-th visible token; see the class docstring."""
        n = len(self._labels)
        if minVal > maxVal:  # inverted axes pass the range reversed
            minVal, maxVal = maxVal, minVal
        if n == 0 or size <= 0 or maxVal <= minVal:
            return []
        px_per_token = size / (maxVal - minVal)
        step = max(1, math.ceil(self._min_spacing / max(px_per_token, 1e-9)))
        lo = max(0, math.floor(minVal))
        hi = min(n - 1, math.ceil(maxVal))
        first = (lo + step - 1) // step * step
        return [(float(step), [i + 0.5 for i in range(first, hi + 1, step)])]

    def tickStrings(self, values, scale, spacing):
        """The token strings at tick positions ``values``."""
        out = []
        for v in values:
            i = math.floor(v)
            out.append(self._labels[i] if 0 <= i < len(self._labels) else "")
        return out


class ElidedLabel(QLabel):
    """A one-line label: text too long for its width ends in "…"; the full text is the tooltip.

    Its height never depends on the text, so widgets below it do not move when the text changes
    (a word-wrapped caption grew from 2 to 4 lines and shifted every token by ~28 px).
    """

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._full = ""
        self.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Fixed)
        self.setText(text)

    def setText(self, text: str) -> None:
        """Show ``text`` (elided to the width; full text as the tooltip)."""
        self._full = str(text)
        self.setToolTip(self._full)
        self._elide()

    def text(self) -> str:
        """The full text (before eliding)."""
        return self._full

    def shown_text(self) -> str:
        """The text as displayed (elided)."""
        return super().text()

    def _elide(self) -> None:
        width = max(10, self.width())
        super().setText(self.fontMetrics().elidedText(self._full, Qt.ElideRight, width))

    def resizeEvent(self, event) -> None:
        """Re-elide to the new width."""
        super().resizeEvent(event)
        self._elide()


_render_queue: list = []  # views waiting to render, oldest first
_pump_scheduled = False


def _schedule_pump() -> None:
    global _pump_scheduled
    if not _pump_scheduled and _render_queue:
        _pump_scheduled = True
        QTimer.singleShot(0, _pump)


def _pump() -> None:
    """Render ONE queued view, then give the event loop a turn before the next."""
    global _pump_scheduled
    _pump_scheduled = False
    while _render_queue:
        view = _render_queue.pop(0)
        try:
            rendered = view._render_if_visible()
        except RuntimeError:  # the C++ widget is gone
            continue
        if rendered:
            break
    _schedule_pump()


class DeferredRender:
    """Mixin for views: ``request_render()`` renders later, one view per event-loop turn, only when visible.

    All views share one queue: each event-loop turn renders at most one view,
    so the GUI stays responsive (a 10 ms timer keeps ticking) while a new
    512-token analysis is drawn. Hidden (tabbed-away) views render when shown.
    Subclasses implement ``redraw()`` and call ``_deferred_show()`` from ``showEvent``.
    """

    def _init_deferred(self) -> None:
        self._dirty = False

    def request_render(self) -> None:
        """Mark the view out of date and queue a render."""
        self._dirty = True
        if self not in _render_queue:
            _render_queue.append(self)
        _schedule_pump()

    def flush(self) -> None:
        """Render now if out of date (used by tests, exports and benchmarks)."""
        if self._dirty:
            self._dirty = False
            self.redraw()

    def _render_if_visible(self) -> bool:
        if self._dirty and self.isVisible():  # type: ignore[attr-defined]
            self._dirty = False
            self.redraw()
            return True
        return False

    def _deferred_show(self) -> None:
        if self._dirty:
            self.request_render()

    def redraw(self) -> None:  # pragma: no cover - overridden
        """Draw the current state (override)."""
        raise NotImplementedError
