"""Widgets shared by the views: token-labelled plot axes, a numeric axis whose labels never overlap, an eliding
label, plot and table styling.

Views receive immutable NumPy results (``model.Prediction``, :class:`model.records.info.ModelInfo`) and never import
torch; their colours are in :mod:`desktop_app.views.colours`, their render scheduling in
:mod:`desktop_app.views.render`.
"""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QFont, QFontMetricsF
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QSizePolicy, QToolButton, QWidget


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


class KeptHeightScroll(QScrollArea):
    """A scroll area whose minimum height is its widget's, less the widgets in :attr:`scrolled_only` (those that are
    shown), as the dock area reads it on its own layout passes: the dock keeps room for the widget, and what is added
    later (model B's section, a multi-label threshold row) scrolls instead of making the window taller.

    Attributes:
        scrolled_only: widgets inside the scrolled widget (e.g. the prediction panel's model B section).
    """

    def __init__(self) -> None:
        super().__init__()
        self.scrolled_only: list[QWidget] = []

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """QSize: the base class's width; the widget's minimum height (pixels) less the shown ``scrolled_only``."""
        inner = self.widget()
        if inner is None:
            return super().minimumSizeHint()
        spacing = max(0, inner.layout().spacing()) if inner.layout() is not None else 0
        extra = sum(w.minimumSizeHint().height() + spacing for w in self.scrolled_only if not w.isHidden())
        return QSize(super().minimumSizeHint().width(), inner.minimumSizeHint().height() - extra)


def fitting_width(widget: QWidget, text: str) -> int:
    """Pixels ``widget`` needs to show ``text`` on one line in its font: the text, its frame and margins."""
    return widget.fontMetrics().horizontalAdvance(text) + 24


def scrollable(widget: QWidget, keep_min_height: bool = False) -> QScrollArea:
    """``widget`` in a frameless, resizable scroll area: its minimum size no longer sets the minimum size of the dock
    (or dock area) that holds it; it scrolls when the dock is smaller. ``keep_min_height``: a
    :class:`KeptHeightScroll`, which keeps the widget's minimum height but for what is added to its ``scrolled_only``
    (the prediction panel's model B section)."""
    area = KeptHeightScroll() if keep_min_height else QScrollArea()
    area.setObjectName(f"{widget.objectName() or type(widget).__name__}Scroll")
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setWidgetResizable(True)
    area.setWidget(widget)
    return area


def display_token(token: str, max_chars: int = 12) -> str:
    """A token as an axis label: at most ``max_chars`` characters, an ellipsis when cut."""
    return token if len(token) <= max_chars else token[: max_chars - 1] + "\u2026"


def short_slice_name(name: str, index: int) -> str:
    """A token-bin name short enough for a narrow axis: "1-128" stays, "129-256" becomes "≤256"."""
    lo, sep, hi = name.partition("-")
    return name if index == 0 or not sep or not hi else f"≤{hi}"


def short_count(n: int) -> str:
    """A count short enough to sit over a narrow bar: "377", "1.4k", "25k" (thousands, one decimal below 10,000)."""
    if n < 1000:
        return str(n)
    return f"{n / 1000:.1f}k" if n < 10_000 else f"{round(n / 1000):,}k"


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

    def set_min_spacing(self, pixels: float) -> None:
        """Label ticks at least ``pixels`` apart (short labels such as head names fit closer than tokens)."""
        self._min_spacing = float(pixels)
        self.picture = None
        self.update()

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


class FittedValueAxis(pg.AxisItem):
    """A numeric axis whose tick labels never overlap: one level of round ticks (1, 2 or 5 x 10^k apart), the
    densest whose labels, measured with the tick font's ``QFontMetricsF``, keep at least ``min_gap_px`` pixels
    between neighbours; only labels that fit inside the axis count (pyqtgraph does not draw the others), and at
    least one is shown when any spacing allows it.

    pyqtgraph always draws its major tick level, even when its labels overlap: the neuron view's narrow softmax
    axis showed "0.005" over "0.010" at 512 tokens. Log mode and scaled axes keep pyqtgraph's ticks.
    """

    def __init__(self, orientation: str, min_gap_px: float = 6.0, **kwargs) -> None:
        super().__init__(orientation, **kwargs)
        self.min_gap_px = float(min_gap_px)

    def tick_font(self) -> QFont:
        """The font the tick labels are drawn in."""
        return self.style.get("tickFont") or self.font()

    def tickValues(self, minVal: float, maxVal: float, size: float):
        """One level ``[(spacing, values)]``: the smallest round spacing whose labels fit (see the class docstring)."""
        lo, hi = sorted((float(minVal), float(maxVal)))
        if self.logMode or self.scale != 1 or size <= 0 or not hi > lo or not math.isfinite(hi - lo):
            return super().tickValues(minVal, maxVal, size)
        metrics = QFontMetricsF(self.tick_font())
        fallback = None  # the densest spacing whose labels do not overlap, though none of them fits inside the axis
        vertical = self.orientation in ("left", "right")
        narrowest = (metrics.height() if vertical else metrics.horizontalAdvance("0")) + self.min_gap_px  # pixels
        step = 10.0 ** math.floor(math.log10((hi - lo) * narrowest / size))  # no label is narrower: start there
        for _ in range(40):
            for mantissa in (1, 2, 5):
                spacing = mantissa * step
                first, last = math.ceil(lo / spacing - 1e-9), math.floor(hi / spacing + 1e-9)
                values = [k * spacing for k in range(first, last + 1)]
                if not values:  # wider than the range: no denser choice is left
                    return fallback or []
                spans = self.label_spans(values, spacing, lo, size / (hi - lo), size, metrics)
                if all(b[0] - a[1] >= self.min_gap_px for a, b in zip(spans, spans[1:])):
                    if spans:
                        return [(spacing, values)]
                    fallback = fallback or [(spacing, values)]
            step *= 10.0
        return fallback or []

    def label_spans(self, values, spacing: float, lo: float, px_per_unit: float, size: float,
                    metrics: QFontMetricsF) -> list[tuple[float, float]]:
        """(start, end) pixels along the axis of the labels of ``values`` that fit inside its ``size`` pixels."""
        strings = self.tickStrings(values, self.autoSIPrefixScale * self.scale, spacing)
        vertical = self.orientation in ("left", "right")
        spans = []
        for v, text in zip(values, strings):
            centre = (v - lo) * px_per_unit
            half = (metrics.height() if vertical else metrics.horizontalAdvance(text)) / 2
            if centre - half >= 0 and centre + half <= size:
                spans.append((centre - half, centre + half))
        return spans


def elide_words(text: str, metrics, width: int) -> str:
    """``text`` if it fits ``width`` pixels in ``metrics`` (a ``QFontMetrics``), else its longest run of whole words
    that fits with "…" after it; a first word too long on its own is cut within it (Qt's own eliding)."""
    if metrics.horizontalAdvance(text) <= width:
        return text
    cut = metrics.elidedText(text, Qt.ElideRight, width)  # the most characters that fit, "…" included
    head = cut[:-1] if cut.endswith("…") else cut
    if head and len(head) < len(text) and not text[len(head)].isspace():
        words = head.rsplit(None, 1)
        if len(words) > 1:
            head = words[0]
    head = head.rstrip(" ,;:·—-(")
    return head + "…" if head else cut


def wrap_words(text: str, metrics, width: int) -> list[str]:
    """``text`` broken at spaces into lines of at most ``width`` pixels in ``metrics`` (a ``QFontMetrics``) where
    the words allow it (a word longer than ``width`` keeps a line of its own); [] for no text."""
    lines: list[str] = []
    line = ""
    for word in text.split():
        trial = f"{line} {word}" if line else word
        if line and metrics.horizontalAdvance(trial) > width:
            lines.append(line)
            line = word
        else:
            line = trial
    return [*lines, line] if line else lines


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
        super().setText(elide_words(self._full, self.fontMetrics(), max(10, self.width())))

    def resizeEvent(self, event) -> None:
        """Re-elide to the new width."""
        super().resizeEvent(event)
        self._elide()


class ElidedToolButton(QToolButton):
    """A tool button whose text, too long for its width, ends in "…" (the full text is its tooltip): it asks for its
    whole text's width but takes what its row has left, down to :data:`ELIDED_BUTTON_MIN_PX`.

    A plain button's minimum width is its whole text's: a long text (the batch panel's "× gold negative → predicted
    positive") widened its dock, and with it the window's layout, and the dock never shrank back (issue 56).

    Args:
        tip: what the button does, under the text in its tooltip.
    """

    def __init__(self, tip: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._full, self.tip = "", tip
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.setToolTip(tip)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt's name
        """Show ``text`` (elided to the width; the full text, then :attr:`tip`, as the tooltip)."""
        self._full = str(text)
        self.setToolTip("\n".join(t for t in (self._full, self.tip) if t))
        self._elide()
        self.updateGeometry()

    def text(self) -> str:
        """The full text (before eliding)."""
        return self._full

    def shown_text(self) -> str:
        """The text as displayed (elided)."""
        return super().text()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """QSize: the whole text's width (pixels), the button's height."""
        return QSize(fitting_width(self, self._full), super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """QSize: :data:`ELIDED_BUTTON_MIN_PX` wide (a few characters and "…"), the button's height."""
        return QSize(min(ELIDED_BUTTON_MIN_PX, self.sizeHint().width()), super().minimumSizeHint().height())

    def _elide(self) -> None:
        room = max(10, self.width() - (fitting_width(self, "") - 8))
        super().setText(elide_words(self._full, self.fontMetrics(), room))

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Re-elide to the new width."""
        super().resizeEvent(event)
        self._elide()


ELIDED_BUTTON_MIN_PX = 48
"""The least width of an :class:`ElidedToolButton`: its first characters and "…"."""
