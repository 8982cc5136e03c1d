"""Plain-string SVG plots for the corpus report (no plotting library; issue 23, section 5).

Every function returns one ``<svg>`` element for inline use in HTML5 (no ``xmlns``: the HTML parser puts it in
the SVG namespace, and the report then holds no URL at all; ``viewBox`` sized, so it scales) built from numbers
and labels; every piece of text is escaped (:func:`esc`), so a token such as ``<script>`` shows as text. Colours
are the app's (:mod:`model.palette`): each class its palette colour (negative blue, positive vermillion), what
belongs to no class grey.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

import numpy as np

from ..palette import NEUTRAL, TOWARD_NEGATIVE, TOWARD_POSITIVE

POS = TOWARD_POSITIVE  # positive / "toward positive"
NEG = TOWARD_NEGATIVE  # negative / "toward negative"
GREY = "#8a8f98"
INK = "#222"
FONT = "font-family=\"system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif\""


def esc(text: object) -> str:
    """``text`` escaped for HTML/SVG text and attribute values (quotes included)."""
    return escape(str(text), quote=True)


def _svg(width: int, height: int, body: list[str], title: str) -> str:
    return (f'<svg viewBox="0 0 {width} {height}" width="{width}" '
            f'height="{height}" role="img" aria-label="{esc(title)}" {FONT} font-size="12">'
            f"<title>{esc(title)}</title>{''.join(body)}</svg>")


def _text(x: float, y: float, s: object, anchor: str = "start", size: int = 12, fill: str = INK, extra: str = "") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}" fill="{fill}"{extra}>'
            f"{esc(s)}</text>")


def _rect(x: float, y: float, w: float, h: float, fill: str, extra: str = "") -> str:
    return f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(0.0, w):.1f}" height="{max(0.0, h):.1f}" fill="{fill}"{extra}/>'


def _line(x1: float, y1: float, x2: float, y2: float, stroke: str = GREY, extra: str = "") -> str:
    return f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{stroke}"{extra}/>'


def nice_max(x: float) -> float:
    """The smallest 1/2/2.5/5 x 10^k at or above ``x`` (1 for x <= 0): a round axis maximum."""
    if not x > 0:
        return 1.0
    k = 10 ** math.floor(math.log10(x))
    return next(m * k for m in (1, 2, 2.5, 5, 10) if m * k >= x)


def count_ticks(top: float) -> int:
    """How many steps divide a count axis 0..``top`` (a :func:`nice_max`) into whole numbers: 4, else 5, 2 or 1
    (10 -> 5 steps of 2, where 4 would label 2.5 and 7.5 as counts)."""
    return next((n for n in (4, 5, 2) if float(top / n).is_integer()), 1)


def _y_axis(x0: float, y0: float, h: float, width: float, top: float, ticks: int = 4, fmt: str = "{:g}") -> list[str]:
    """Y tick labels and light grid lines from ``x0`` over ``width``, for values 0..``top`` over ``h`` pixels."""
    out = []
    for i in range(ticks + 1):
        y = y0 - h * i / ticks
        out += [_line(x0, y, x0 + width, y, "#e5e7eb"), _text(x0 - 7, y + 4, fmt.format(top * i / ticks), "end", 11, GREY)]
    return out


def confusion_svg(matrix: np.ndarray, labels: Sequence[str]) -> str:
    """Confusion matrix: rows gold, columns predicted; cells shaded by row share, with count and row percent.
    Readable up to 28 classes: from 7 classes the column names are turned, from 9 the percentages left out.

    Args:
        matrix: int [C, C] counts, rows gold, columns predicted.
        labels: C class names.
    """
    C = len(labels)
    cell = 110 if C <= 3 else max(40, 330 // C)
    longest = max((len(str(n)) for n in labels), default=1)
    turned = C > 6
    left, top = max(110, 7 * longest + 24), (36 + int(6.2 * longest)) if turned else 50
    w, h = left + C * cell + 20, top + C * cell + 40
    body = [_text(left + C * cell / 2, 16, "predicted", "middle", 12, GREY),
            _text(18, top + C * cell / 2, "gold", "middle", 12, GREY,
                  f' transform="rotate(-90 18 {top + C * cell / 2:.1f})"')]
    rows = np.asarray(matrix, dtype=np.int64)
    for j, name in enumerate(labels):
        x = left + (j + 0.5) * cell
        body.append(_text(x, top - 10, name, "start" if turned else "middle", 12,
                          extra=f' transform="rotate(-60 {x:.1f} {top - 10})"' if turned else ""))
        body.append(_text(left - 8, top + (j + 0.5) * cell + 4, name, "end", 12))
    for i in range(C):
        total = max(1, int(rows[i].sum()))
        for j in range(C):
            share = rows[i, j] / total
            colour = NEUTRAL  # a cell's share of its gold row, in no class's colour (as in the app)
            x, y = left + j * cell, top + i * cell
            body.append(_rect(x, y, cell - 2, cell - 2, colour, f' fill-opacity="{0.08 + 0.82 * share:.3f}"'))
            ink = "#fff" if share > 0.55 else INK
            small = C > 8
            body.append(_text(x + cell / 2, y + cell / 2 + (4 if small else 0), f"{rows[i, j]:,}", "middle",
                              16 if C <= 3 else 11, ink, ' font-weight="600"'))
            if not small:
                body.append(_text(x + cell / 2, y + cell / 2 + 18, f"{100 * share:.1f}%", "middle", 11, ink))
    return _svg(w, h, body, "Confusion matrix (rows gold, columns predicted)")


def scatter_svg(x: np.ndarray, y: np.ndarray, xlabel: str, ylabel: str, max_points: int = 5000) -> str:
    """Predicted-vs-gold scatter (regression) with the y = x line; at most ``max_points`` points (evenly spaced).

    Args:
        x, y: float [N] (gold on x, predicted on y), same units.
    """
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    if len(x) > max_points:
        keep = np.linspace(0, len(x) - 1, max_points).astype(int)
        x, y = x[keep], y[keep]
    lo = float(min(x.min(), y.min())) if x.size else 0.0
    hi = float(max(x.max(), y.max())) if x.size else 1.0
    hi = hi if hi > lo else lo + 1.0
    left, top, side = 60, 20, 320

    def px(v: np.ndarray) -> np.ndarray:
        return left + (v - lo) / (hi - lo) * side

    def py(v: np.ndarray) -> np.ndarray:
        return top + side - (v - lo) / (hi - lo) * side

    body = [_rect(left, top, side, side, "#fff", f' stroke="{GREY}"'),
            _line(left, top + side, left + side, top, GREY, ' stroke-dasharray="4 3"')]
    body += [f'<circle cx="{a:.1f}" cy="{b:.1f}" r="2" fill="{NEUTRAL}" fill-opacity="0.45"/>'
             for a, b in zip(px(x), py(y))]
    for v in np.linspace(lo, hi, 5):
        body.append(_text(float(px(np.array(v))), top + side + 16, f"{v:.3g}", "middle", 11, GREY))
        body.append(_text(left - 6, float(py(np.array(v))) + 4, f"{v:.3g}", "end", 11, GREY))
    body.append(_text(left + side / 2, top + side + 34, xlabel, "middle", 12, GREY))
    body.append(_text(14, top + side / 2, ylabel, "middle", 12, GREY, f' transform="rotate(-90 14 {top + side / 2})"'))
    return _svg(left + side + 20, top + side + 44, body, f"{ylabel} against {xlabel}")


def histogram_svg(edges: np.ndarray, groups: Sequence[tuple[str, np.ndarray, str]], xlabel: str) -> str:
    """Overlaid histograms sharing ``edges`` (float [B + 1]); ``groups``: ``(name, counts int [B], colour)``."""
    W, H, left, right, top, bottom = 520, 260, 50, 16, 30, 44
    pw, ph = W - left - right, H - top - bottom
    ymax = nice_max(max((float(np.max(c)) for _, c, _ in groups if len(c)), default=1.0))
    lo, hi = float(edges[0]), float(edges[-1])
    body = _y_axis(left, top + ph, ph, pw, ymax, ticks=count_ticks(ymax), fmt="{:,.0f}")  # whole counts only
    for name, counts, colour in groups:
        for b, n in enumerate(counts):
            x0 = left + pw * (edges[b] - lo) / (hi - lo)
            x1 = left + pw * (edges[b + 1] - lo) / (hi - lo)
            hgt = ph * n / ymax
            body.append(_rect(x0 + 0.5, top + ph - hgt, x1 - x0 - 1, hgt, colour, ' fill-opacity="0.55"'))
    body.append(_line(left, top + ph, left + pw, top + ph, INK))
    for t in np.linspace(lo, hi, 6):
        x = left + pw * (t - lo) / (hi - lo)
        body += [_line(x, top + ph, x, top + ph + 4, INK), _text(x, top + ph + 17, f"{t:g}", "middle", 11, GREY)]
    body.append(_text(left + pw / 2, H - 8, xlabel, "middle", 12, GREY))
    for k, (name, _, colour) in enumerate(groups):
        x = left + 10 + 150 * k
        body += [_rect(x, 8, 12, 12, colour, ' fill-opacity="0.7"'), _text(x + 17, 18, name, "start", 12)]
    return _svg(W, H, body, f"Histogram of {xlabel}")


def reliability_svg(edges: np.ndarray, confidence: np.ndarray, accuracy: np.ndarray, counts: np.ndarray,
                    ece: float) -> str:
    """Reliability diagram (Guo et al. 2017, fig. 1): accuracy per confidence bin against the diagonal.

    Args:
        edges: float [M + 1] bin edges on [0, 1]; confidence, accuracy: float [M] (NaN for empty bins);
        counts: int [M]; ece: the expected calibration error, printed in the corner.
    """
    S, left, top, bottom = 260, 50, 20, 44
    W, H = left + S + 20, top + S + bottom
    body = []
    for t in np.linspace(0, 1, 6):
        x, y = left + S * t, top + S * (1 - t)
        body += [_line(left, y, left + S, y, "#e5e7eb"), _text(left - 7, y + 4, f"{t:.1f}", "end", 11, GREY),
                 _text(x, top + S + 17, f"{t:.1f}", "middle", 11, GREY)]
    for m in range(len(counts)):
        if counts[m] == 0 or math.isnan(float(accuracy[m])):
            continue
        x0, x1 = left + S * edges[m], left + S * edges[m + 1]
        acc, conf = float(accuracy[m]), float(confidence[m])
        body.append(_rect(x0 + 1, top + S * (1 - acc), x1 - x0 - 2, S * acc, NEUTRAL, ' fill-opacity="0.75"'))
        gap_top, gap_bottom = sorted((acc, conf))
        body.append(_rect(x0 + 1, top + S * (1 - gap_bottom), x1 - x0 - 2, S * (gap_bottom - gap_top), NEUTRAL,
                          ' fill-opacity="0.3"'))
    body.append(_line(left, top + S, left + S, top, INK, ' stroke-dasharray="4 3"'))
    body.append(f'<rect x="{left}" y="{top}" width="{S}" height="{S}" fill="none" stroke="{INK}"/>')
    body.append(_text(left + 8, top + 18, f"ECE = {ece:.4f}", "start", 13, INK, ' font-weight="600"'))
    body.append(_text(left + S / 2, H - 8, "confidence (probability of the predicted class)", "middle", 12, GREY))
    body.append(_text(14, top + S / 2, "accuracy", "middle", 12, GREY, f' transform="rotate(-90 14 {top + S / 2})"'))
    return _svg(W, H, body, f"Reliability diagram, ECE {ece:.4f}")


def accuracy_bars_svg(groups: Sequence[tuple[str, Sequence[str], np.ndarray, np.ndarray]], title: str) -> str:
    """Vertical bars of accuracy (0-100 %) per slice, in captioned groups side by side; NaN bars are left empty.

    Args:
        groups: ``(caption, names [S], accuracy float [S] in [0, 1], counts int [S])`` per group; each bar shows
            its accuracy above and ``n = count`` below.
        title: the accessible title.
    """
    bw, gap, left, top, bottom = 74, 26, 46, 34, 52
    n_bars = sum(len(g[1]) for g in groups)
    W, H = left + n_bars * bw + gap * (len(groups) - 1) + 12, 260
    ph = H - top - bottom
    body = _y_axis(left, top + ph, ph, W - left - 12, 100, 4, "{:.0f}%")
    x = left
    for caption, names, accuracy, counts in groups:
        x0 = x
        for name, acc, n in zip(names, accuracy, counts):
            cx = x + bw / 2
            if not math.isnan(float(acc)):
                hgt = ph * float(acc)
                body.append(_rect(x + 8, top + ph - hgt, bw - 16, hgt, NEUTRAL, ' fill-opacity="0.8"'))
                body.append(_text(cx, top + ph - hgt - 5, f"{100 * acc:.1f}%", "middle", 11))
            body += [_text(cx, top + ph + 16, name, "middle", 11), _text(cx, top + ph + 31, f"n = {int(n):,}",
                                                                         "middle", 10, GREY)]
            x += bw
        body += [_line(x0 + 4, top + ph, x - 4, top + ph, INK), _text((x0 + x) / 2, 14, caption, "middle", 12, GREY)]
        x += gap
    return _svg(W, H, body, title)


def token_bars_svg(positive: Sequence[tuple[str, float, int]], negative: Sequence[tuple[str, float, int]]) -> str:
    """Diverging horizontal bars: the top tokens toward negative (left, orange-red) and positive (right, blue).

    Args:
        positive, negative: ``(token, score > 0, count)`` lists, strongest first (:meth:`CorpusTokens.top`).
    """
    rows = max(len(positive), len(negative), 1)
    rh, top, half, label_w = 20, 34, 200, 150
    W, H = 2 * (half + label_w) + 20, top + rows * rh + 14
    mid = W / 2
    smax = max([s for _, s, _ in [*positive, *negative]] or [1.0])
    body = [_text(mid - 10, 18, "\u2190 toward negative", "end", 12, NEG, ' font-weight="600"'),
            _text(mid + 10, 18, "toward positive \u2192", "start", 12, POS, ' font-weight="600"'),
            _line(mid, top - 6, mid, top + rows * rh, INK)]
    for i, (tok, s, n) in enumerate(negative):
        y, w = top + i * rh, half * s / smax
        body += [_rect(mid - w, y + 2, w, rh - 5, NEG, ' fill-opacity="0.8"'),
                 _text(mid - w - 6, y + rh - 7, f"{tok}  ({n:,})", "end", 11)]
    for i, (tok, s, n) in enumerate(positive):
        y, w = top + i * rh, half * s / smax
        body += [_rect(mid, y + 2, w, rh - 5, POS, ' fill-opacity="0.8"'),
                 _text(mid + w + 6, y + rh - 7, f"{tok}  ({n:,})", "start", 11)]
    return _svg(int(W), H, body, "Top tokens toward each class (mean attribution; review count in brackets)")


__all__ = ["accuracy_bars_svg", "confusion_svg", "esc", "histogram_svg", "nice_max", "reliability_svg",
           "token_bars_svg"]


def heatmap_svg(grid: np.ndarray, rows: Sequence[str], cols: Sequence[str], title: str, fmt: str = "{:.2f}") -> str:
    """A grid of non-negative numbers (e.g. mean |value| of each layer's heads and FFN): cells shaded by the value's
    share of the largest, each with its number; NaN cells (no such part) left empty.

    Args:
        grid: float [R, C]. rows: R row names. cols: C column names. title: the accessible title.
        fmt: how a cell's number is written.
    """
    values = np.asarray(grid, dtype=np.float64)
    R, C = values.shape
    cell_w, cell_h = max(48, min(80, 720 // max(1, C))), 30
    left, top = 60, 30
    w, h = left + C * cell_w + 10, top + R * cell_h + 10
    finite = values[np.isfinite(values)]
    peak = float(np.abs(finite).max()) if finite.size else 0.0
    body = [_text(left + (j + 0.5) * cell_w, top - 10, name, "middle", 11) for j, name in enumerate(cols)]
    for i, name in enumerate(rows):
        y = top + i * cell_h
        body.append(_text(left - 8, y + cell_h / 2 + 4, name, "end", 11))
        for j in range(C):
            v = values[i, j]
            if not math.isfinite(v):
                continue
            share = abs(v) / peak if peak > 0 else 0.0
            x = left + j * cell_w
            body.append(_rect(x, y, cell_w - 2, cell_h - 2, NEUTRAL, f' fill-opacity="{0.06 + 0.84 * share:.3f}"'))
            body.append(_text(x + cell_w / 2, y + cell_h / 2 + 4, fmt.format(v), "middle", 11,
                              "#fff" if share > 0.55 else INK))
    return _svg(w, h, body, title)
