"""The corpus report's charts, drawn by matplotlib's SVG backend (issue 54, section 3; hand-written SVG before).

Every chart function returns one ``<svg>`` element for inline use in HTML5: matplotlib's SVG with its XML prologue,
its metadata and its namespace declarations taken out (the HTML parser puts an inline ``<svg>`` in the SVG namespace,
so the report holds no URL at all), ``role="img"``, an ``aria-label`` and a ``<title>``; ``viewBox`` sized, so it
scales. Text stays text (``svg.fonttype: none``: searchable, copyable, small) and is escaped by matplotlib's SVG
writer, so a token such as ``<script>`` shows as text; ``$`` is not read as mathtext. The output is the same for
the same numbers (a fixed ``svg.hashsalt``, no date).

Why matplotlib rather than pyqtgraph's SVG exporter: the report is read outside the app (printed, attached to a
paper or a ticket), where readers expect the axes, ticks and legends of the charts they know from scientific
papers; matplotlib is the reference for those, runs without a display or a ``QApplication`` (the scorer's command
line and the Ray engine write reports on servers), and ``model/`` never imports Qt (pyproject's import contracts).

Colours are the app's (:mod:`model.palette`): each class its palette colour, what belongs to no class grey.
matplotlib is imported on first use only (the app's start-up does not pay for it).
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Sequence
from html import escape

import numpy as np

from model.palette import NEUTRAL, TOWARD_NEGATIVE, TOWARD_POSITIVE

POS = TOWARD_POSITIVE  # positive / "toward positive"
NEG = TOWARD_NEGATIVE  # negative / "toward negative"
GREY = "#8a8f98"
INK = "#222"
GRID = "#e5e7eb"
STYLE = {
    "svg.fonttype": "none", "svg.hashsalt": "attention-explorer", "text.parse_math": False,
    "font.family": "sans-serif", "font.sans-serif": ["DejaVu Sans", "Arial", "Helvetica"], "font.size": 9, "axes.edgecolor": GREY, "axes.labelcolor": INK, "xtick.color": GREY, "ytick.color": GREY,
    "xtick.labelcolor": INK, "ytick.labelcolor": INK, "axes.spines.top": False, "axes.spines.right": False,
    "axes.grid": False, "grid.color": GRID, "legend.frameon": False,
}
"""matplotlib settings of every chart (rcParams, applied in a context: the caller's settings are left alone)."""
NO_METADATA = {"Creator": None, "Date": None, "Format": None, "Type": None}
_PROLOGUE = re.compile(r"^.*?(<svg\b)", re.S)
_NAMESPACES = re.compile(r'\s+xmlns(:\w+)?="[^"]*"')


def esc(text: object) -> str:
    """``text`` escaped for HTML/SVG text and attribute values (quotes included)."""
    return escape(str(text), quote=True)


def _figure(width_in: float, height_in: float):
    """A matplotlib Figure of ``width_in`` x ``height_in`` inches with the SVG canvas (no pyplot, no global state)."""
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_in, height_in), layout="constrained")
    FigureCanvasSVG(fig)
    return fig


def _draw(width_in: float, height_in: float, title: str, draw) -> str:
    """Call ``draw(fig)`` on a new figure under :data:`STYLE`; return its inline ``<svg>`` (module docstring)."""
    import matplotlib

    with matplotlib.rc_context(STYLE):
        fig = _figure(width_in, height_in)
        draw(fig)
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata=NO_METADATA)
    svg = _NAMESPACES.sub("", _PROLOGUE.sub(r"\1", buf.getvalue(), count=1), count=2)
    head, rest = svg.split(">", 1)
    return f'{head} role="img" aria-label="{esc(title)}"><title>{esc(title)}</title>{rest}'


def _gridded(ax, axis: str = "y") -> None:
    ax.grid(True, axis=axis)
    ax.set_axisbelow(True)


def confusion_svg(matrix: np.ndarray, labels: Sequence[str]) -> str:
    """Confusion matrix: rows gold, columns predicted; cells shaded by row share, with count and row percent.
    Readable up to 28 classes: from 7 classes the column names are turned, from 9 the percentages left out.

    Args:
        matrix: int [C, C] counts, rows gold, columns predicted.
        labels: C class names.
    """
    rows = np.asarray(matrix, dtype=np.int64)
    C = len(labels)
    share = rows / np.maximum(1, rows.sum(axis=1, keepdims=True))
    side = 3.2 if C <= 3 else min(7.5, 1.6 + 0.28 * C)
    longest = max((len(str(n)) for n in labels), default=1)

    def draw(fig) -> None:
        from matplotlib.colors import LinearSegmentedColormap

        ax = fig.add_subplot()
        cmap = LinearSegmentedColormap.from_list("share", ["#ffffff", NEUTRAL])  # no class's colour (as in the app)
        edges = np.arange(C + 1) - 0.5  # one vector cell per count (pcolormesh: paths, not a raster image)
        ax.pcolormesh(edges, edges, share, cmap=cmap, vmin=0, vmax=1.1, edgecolors="white", linewidth=1.5)
        ax.set(xlim=(-0.5, C - 0.5), ylim=(C - 0.5, -0.5), aspect="equal")
        small = C > 8
        for i in range(C):
            for j in range(C):
                ink = "#fff" if share[i, j] > 0.55 else INK
                text = f"{rows[i, j]:,}" if small else f"{rows[i, j]:,}\n{100 * share[i, j]:.1f}%"
                ax.text(j, i, text, ha="center", va="center", color=ink, fontsize=11 if C <= 3 else 7,
                        fontweight="bold")
        ax.set_xticks(range(C), [str(n) for n in labels], rotation=60 if C > 6 else 0, ha="left" if C > 6 else "center")
        ax.set_yticks(range(C), [str(n) for n in labels])
        ax.xaxis.tick_top()
        ax.xaxis.set_label_position("top")
        ax.set_xlabel("predicted", color=GREY)
        ax.set_ylabel("gold", color=GREY)
        ax.tick_params(length=0)
        for spine in ax.spines.values():
            spine.set_visible(False)

    extra = 0.07 * longest
    return _draw(side + extra, side + extra, "Confusion matrix (rows gold, columns predicted)", draw)


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

    def draw(fig) -> None:
        ax = fig.add_subplot()
        ax.plot([lo, hi], [lo, hi], color=GREY, linestyle="--", linewidth=1)
        ax.scatter(x, y, s=6, color=NEUTRAL, alpha=0.45, linewidths=0)
        ax.set(xlim=(lo, hi), ylim=(lo, hi), xlabel=xlabel, ylabel=ylabel, aspect="equal")

    return _draw(4.4, 4.2, f"{ylabel} against {xlabel}", draw)


def histogram_svg(edges: np.ndarray, groups: Sequence[tuple[str, np.ndarray, str]], xlabel: str) -> str:
    """Overlaid histograms sharing ``edges`` (float [B + 1]); ``groups``: ``(name, counts int [B], colour)``.
    The count axis labels whole numbers only (issue 46)."""
    edges = np.asarray(edges, np.float64)

    def draw(fig) -> None:
        from matplotlib.ticker import MaxNLocator

        ax = fig.add_subplot()
        for name, counts, colour in groups:
            ax.stairs(np.asarray(counts, np.float64), edges, fill=True, color=colour, alpha=0.55, label=name)
        ax.set_xlim(edges[0], edges[-1])
        tallest = max(1.0, max((float(np.max(c)) for _, c, _ in groups if len(c)), default=1.0))
        ticks = MaxNLocator(nbins=5, integer=True, steps=[1, 2, 2.5, 5, 10]).tick_values(0, tallest)
        top = float(ticks[ticks >= tallest][0])  # the axis ends on a whole count at or above the tallest bar
        ax.set_ylim(0, top)
        ax.set_yticks(ticks[(ticks >= 0) & (ticks <= top)])
        ax.set(xlabel=xlabel, ylabel="texts")
        _gridded(ax)
        ax.legend(loc="upper center", ncols=min(4, max(1, len(groups))), bbox_to_anchor=(0.5, 1.16))

    return _draw(5.6, 3.0, f"Histogram of {xlabel}", draw)


def reliability_svg(edges: np.ndarray, confidence: np.ndarray, accuracy: np.ndarray, counts: np.ndarray,
                    ece: float) -> str:
    """Reliability diagram (Guo et al. 2017, fig. 1): accuracy per confidence bin against the diagonal.

    Args:
        edges: float [M + 1] bin edges on [0, 1]; confidence, accuracy: float [M] (NaN for empty bins);
        counts: int [M]; ece: the expected calibration error, printed in the corner.
    """
    edges = np.asarray(edges, np.float64)
    full = [m for m in range(len(counts)) if counts[m] and not math.isnan(float(accuracy[m]))]

    def draw(fig) -> None:
        ax = fig.add_subplot()
        left, width = edges[full], np.diff(edges)[full]
        acc, conf = np.asarray(accuracy, np.float64)[full], np.asarray(confidence, np.float64)[full]
        ax.bar(left, acc, width=width, align="edge", color=NEUTRAL, alpha=0.75, edgecolor="white", label="accuracy")
        low, high = np.minimum(acc, conf), np.maximum(acc, conf)
        ax.bar(left, high - low, bottom=low, width=width, align="edge", color=NEUTRAL, alpha=0.3, edgecolor="white",
               label="gap to confidence")
        ax.plot([0, 1], [0, 1], color=INK, linestyle="--", linewidth=1)
        ax.text(0.03, 0.95, f"ECE = {ece:.4f}", transform=ax.transAxes, va="top", fontsize=10, fontweight="bold",
                color=INK)
        ax.set(xlim=(0, 1), ylim=(0, 1), aspect="equal", ylabel="accuracy",
               xlabel="confidence (probability of the predicted class)")
        _gridded(ax, "both")
        ax.legend(loc="upper left", bbox_to_anchor=(0.0, 0.9))

    return _draw(3.8, 3.9, f"Reliability diagram, ECE {ece:.4f}", draw)


def accuracy_bars_svg(groups: Sequence[tuple[str, Sequence[str], np.ndarray, np.ndarray]], title: str) -> str:
    """Vertical bars of accuracy (0-100 %) per slice, in captioned groups side by side; NaN bars are left empty.

    Args:
        groups: ``(caption, names [S], accuracy float [S] in [0, 1], counts int [S])`` per group; each bar shows
            its accuracy above and ``n = count`` below.
        title: the accessible title.
    """
    n_bars = sum(len(g[1]) for g in groups)

    def draw(fig) -> None:
        from matplotlib.ticker import PercentFormatter

        ax = fig.add_subplot()
        x, ticks, names = 0.0, [], []
        for caption, slice_names, accuracy, counts in groups:
            start = x
            for name, acc, n in zip(slice_names, accuracy, counts):
                if not math.isnan(float(acc)):
                    ax.bar(x, 100 * float(acc), width=0.7, color=NEUTRAL, alpha=0.8)
                    ax.text(x, 100 * float(acc) + 1.5, f"{100 * acc:.1f}%", ha="center", va="bottom", fontsize=8)
                ticks.append(x)
                names.append(f"{name}\nn = {int(n):,}")
                x += 1
            ax.text((start + x - 1) / 2, 112, caption, ha="center", color=GREY)
            x += 0.6
        ax.set_xticks(ticks, names, fontsize=8)
        ax.set_ylim(0, 118)
        ax.set_yticks(range(0, 101, 25))
        ax.yaxis.set_major_formatter(PercentFormatter(decimals=0))
        ax.set_ylabel("accuracy")
        _gridded(ax)

    return _draw(max(4.0, 0.8 * n_bars + 1.0), 3.0, title, draw)


def token_bars_svg(positive: Sequence[tuple[str, float, int]], negative: Sequence[tuple[str, float, int]]) -> str:
    """Diverging horizontal bars: the top tokens toward negative (left) and toward positive (right), each labelled
    with its review count.

    Args:
        positive, negative: ``(token, score > 0, count)`` lists, strongest first
            (:meth:`~model.records.corpus.CorpusTokens.top`).
    """
    rows = max(len(positive), len(negative), 1)
    smax = max([s for _, s, _ in [*positive, *negative]] or [1.0])

    def draw(fig) -> None:
        from matplotlib.ticker import FuncFormatter

        ax = fig.add_subplot()
        for side, items, colour, ha in ((-1, negative, NEG, "right"), (1, positive, POS, "left")):
            ys = np.arange(len(items))
            scores = np.array([side * s for _, s, _ in items], np.float64)
            ax.barh(ys, scores, height=0.75, color=colour, alpha=0.8)
            for y, (tok, s, n) in zip(ys, items):
                ax.text(side * (s + 0.02 * smax), y, f"{tok}  ({n:,})", ha=ha, va="center", fontsize=8)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{abs(v):g}"))  # a strength on both sides
        ax.axvline(0, color=INK, linewidth=1)
        ax.set_xlim(-2.1 * smax, 2.1 * smax)
        ax.set_ylim(rows - 0.4, -0.8)
        ax.set_yticks([])
        ax.set_xlabel("mean attribution")
        ax.spines["left"].set_visible(False)
        ax.text(0.47, 1.0, "\u2190 toward negative", transform=ax.transAxes, ha="right", va="bottom", color=NEG,
                fontweight="bold")
        ax.text(0.53, 1.0, "toward positive \u2192", transform=ax.transAxes, ha="left", va="bottom", color=POS,
                fontweight="bold")

    return _draw(7.6, 0.9 + 0.24 * rows, "Top tokens toward each class (mean attribution; review count in brackets)",
                 draw)


def heatmap_svg(grid: np.ndarray, rows: Sequence[str], cols: Sequence[str], title: str, fmt: str = "{:.2f}") -> str:
    """A grid of non-negative numbers (e.g. mean |value| of each layer's heads and FFN): cells shaded by the value's
    share of the largest, each with its number; NaN cells (no such part) left empty.

    Args:
        grid: float [R, C]. rows: R row names. cols: C column names. title: the accessible title.
        fmt: how a cell's number is written.
    """
    values = np.asarray(grid, dtype=np.float64).reshape(len(rows), len(cols))
    R, C = values.shape
    finite = values[np.isfinite(values)]
    peak = float(np.abs(finite).max()) if finite.size else 0.0
    share = np.where(np.isfinite(values), np.abs(values) / peak if peak > 0 else 0.0, np.nan)

    def draw(fig) -> None:
        from matplotlib.colors import LinearSegmentedColormap

        ax = fig.add_subplot()
        cmap = LinearSegmentedColormap.from_list("share", ["#ffffff", NEUTRAL])  # as the confusion matrix
        ax.pcolormesh(np.arange(C + 1) - 0.5, np.arange(R + 1) - 0.5, np.ma.masked_invalid(share), cmap=cmap,
                      vmin=0, vmax=1.1, edgecolors="white", linewidth=1.5)
        ax.set(xlim=(-0.5, C - 0.5), ylim=(R - 0.5, -0.5))
        for i in range(R):
            for j in range(C):
                if math.isfinite(values[i, j]):
                    ax.text(j, i, fmt.format(values[i, j]), ha="center", va="center", fontsize=7,
                            color="#fff" if share[i, j] > 0.55 else INK)
        ax.set_xticks(range(C), [str(n) for n in cols], rotation=60 if C > 8 else 0, ha="left" if C > 8 else "center")
        ax.set_yticks(range(R), [str(n) for n in rows])
        ax.xaxis.tick_top()
        ax.tick_params(length=0)
        for spine in ax.spines.values():
            spine.set_visible(False)

    return _draw(min(11.0, 1.2 + 0.62 * C), 0.8 + 0.34 * R, title, draw)


def points_svg(xy: np.ndarray, fills: Sequence[str], legend: Sequence[tuple[str, str]], title: str) -> str:
    """A 2-D point map (the corpus map): float [N, 2] ``xy``, one colour per point, ``(name, colour)`` legend entries
    (at most 14 shown); the axes carry no units (a projection's), so they show no ticks."""
    xy = np.asarray(xy, np.float64).reshape(-1, 2)

    def draw(fig) -> None:
        from matplotlib.lines import Line2D

        ax = fig.add_subplot()
        if len(xy):
            ax.scatter(xy[:, 0], xy[:, 1], s=4, c=list(fills), alpha=0.6, linewidths=0)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.spines[["top", "right"]].set_visible(True)
        handles = [Line2D([], [], marker="s", linestyle="", color=c, label=str(n)) for n, c in legend[:14]]
        if handles:
            ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)

    return _draw(7.4, 5.2, title, draw)


__all__ = ["GREY", "GRID", "INK", "NEG", "POS", "accuracy_bars_svg", "confusion_svg", "esc", "heatmap_svg", "histogram_svg",
           "points_svg",
           "reliability_svg", "scatter_svg", "token_bars_svg"]
