"""The corpus map's plot (issue 42): every scored text as a point (pyqtgraph ``ScatterPlotItem``), coloured as the
Map view says, with a legend under the data, a tooltip (the text's excerpt) on hover, pan and zoom, box or lasso
selection, a click that opens a text, the explored text marked (a star) and its nearest neighbours ringed.

Clicks: the points take them first (the one under the pointer opens); a ring, drawn under the points, is its
neighbour's click target too (a click inside it opens that neighbour), and the star lets clicks through to the
points under it (issue 56: the rings, drawn over the points, took the clicks and opened nothing).

The legend is a row of the plot item's own layout, under the data, its entries in as many columns as its width takes:
it never covers a point (issue 56: drawn inside the data, it hid the explored star and its rings), and PNG/SVG export
draws it with the plot.

It draws what it is given (coordinates, colours, tooltips, a faded mask): the Map view (panel) decides them from
the batch rows, so this module imports neither the panels nor the workers, nor torch. Selection: with the "box" or
"lasso" mode a left drag draws the shape (pan is the right drag, or the mode "pan"); :attr:`CorpusMapPlot.selected`
sends the indices of the points inside. Point-in-polygon is NumPy's (even-odd rule, all points at once).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QPainterPath
from PySide6.QtWidgets import QGraphicsPathItem, QSizePolicy

from desktop_app.map_settings import SELECT_MODES
from desktop_app.views.widgets import style_plot

FADED_ALPHA = 40  # a point the table's filters hide
POINT_ALPHA = 190
POINT_SIZE = 5
LEGEND_ROW = 4  # the plot item's layout: 0 title, 1 top axis, 2 data, 3 bottom axis; the legend under them
LEGEND_POINTS = 9.0  # the legend's text size
LEGEND_ENTRY_PX = 20 + 5 + 3 + 16  # an entry's pixels besides its text: the sample, spacings, the gap to the next
LEGEND_ROW_PX = 22  # a row of the legend


def points_in_polygon(xy: np.ndarray, polygon: np.ndarray) -> np.ndarray:
    """bool [N]: which of the float [N, 2] points lie inside the float [M, 2] polygon (even-odd rule; M >= 3)."""
    x, y = xy[:, 0], xy[:, 1]
    inside = np.zeros(len(xy), dtype=bool)
    px, py = polygon[:, 0], polygon[:, 1]
    for i in range(len(polygon)):
        x1, y1, x2, y2 = px[i - 1], py[i - 1], px[i], py[i]
        crosses = (y1 > y) != (y2 > y)
        with np.errstate(divide="ignore", invalid="ignore"):
            at = x1 + (y - y1) * (x2 - x1) / (y2 - y1)
        inside ^= crosses & (x < at)
    return inside


class _SelectBox(pg.ViewBox):
    """A ViewBox whose left drag draws the selection shape (modes "box", "lasso"); pan otherwise."""

    def __init__(self, on_shape: Callable[[np.ndarray], None]) -> None:
        super().__init__()
        self.mode = "box"
        self.on_shape = on_shape
        self._path: list[QPointF] = []
        self._outline = QGraphicsPathItem()
        self._outline.setPen(pg.mkPen("#222222", width=1, style=Qt.PenStyle.DashLine))
        self._outline.setZValue(20)
        self.addItem(self._outline, ignoreBounds=True)

    def mouseDragEvent(self, ev, axis=None) -> None:
        if self.mode == "pan" or ev.button() != Qt.MouseButton.LeftButton:
            super().mouseDragEvent(ev, axis)
            return
        ev.accept()
        p = self.mapSceneToView(ev.scenePos())
        if ev.isStart():
            self._path = [self.mapSceneToView(ev.buttonDownScenePos())]
        self._path.append(p)
        shape = self.shape_points()
        path = QPainterPath()
        if len(shape):
            path.moveTo(*shape[0])
            for q in shape[1:]:
                path.lineTo(*q)
            path.closeSubpath()
        self._outline.setPath(path)
        if ev.isFinish():
            self._outline.setPath(QPainterPath())
            if len(shape) >= 3:
                self.on_shape(shape)

    def shape_points(self) -> np.ndarray:
        """float [M, 2] of the shape being drawn: the box's four corners, or the lasso's path."""
        if not self._path:
            return np.zeros((0, 2))
        pts = np.array([[q.x(), q.y()] for q in self._path])
        if self.mode == "box":
            (x0, y0), (x1, y1) = pts[0], pts[-1]
            return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])
        return pts


class _PassThrough(pg.ScatterPlotItem):
    """A scatter drawn over the points for show (the explored star): it never takes a click, so the point under it
    gets it (pyqtgraph offers a click to the items under the pointer, topmost first, until one accepts it)."""

    def mouseClickEvent(self, ev) -> None:  # noqa: N802 - pyqtgraph's name
        """Let the click go to the items below."""
        ev.ignore()


class CorpusMapPlot(pg.PlotWidget):
    """The corpus map (module docstring).

    Signals:
        selected(object): int64 [K] indices of the points inside a drawn box or lasso.
        point_clicked(int): the index of a clicked point.
    """

    selected = Signal(object)
    point_clicked = Signal(int)

    def __init__(self, title: str = "Corpus: map") -> None:
        self.box = _SelectBox(self._on_shape)
        super().__init__(background="w", viewBox=self.box)
        self.title = title
        item = self.getPlotItem()
        style_plot(item)
        item.setMenuEnabled(False)
        item.hideAxis("left")
        item.hideAxis("bottom")
        self.scatter = pg.ScatterPlotItem(size=POINT_SIZE, pen=None, hoverable=True, tip=self._tip,
                                          hoverPen=pg.mkPen("#000000", width=1.5), hoverSize=POINT_SIZE + 4)
        self.scatter.sigClicked.connect(self._on_clicked)
        self.marks = pg.ScatterPlotItem(size=14, pen=pg.mkPen("#000000", width=2), brush=None, symbol="o")
        self.marks.sigClicked.connect(self._on_clicked)  # a ring opens its neighbour (its data: the point's index)
        self.star = _PassThrough(size=20, pen=pg.mkPen("#000000", width=1.5), brush=pg.mkBrush("#FFD400"),
                                 symbol="star")
        for z, it in enumerate((self.marks, self.scatter, self.star)):  # the rings under the points (module docstring)
            it.setZValue(z)
            item.addItem(it)
        self.legend = pg.LegendItem(offset=None)  # placed by set_legend
        self._legend_entries: list[tuple[str, str]] = []
        self._legend_shape = (0, 0)  # (columns, entries) of the legend drawn
        self._legend_font = QFont()
        self._legend_font.setPointSizeF(LEGEND_POINTS)
        self.xy = np.zeros((0, 2))
        self.tips: Sequence[str] = ()
        self._brushes: dict[tuple[str, int], QBrush] = {}

    def export_item(self):
        """What PNG/SVG export renders: the plot and its legend."""
        return self.getPlotItem()

    def set_mode(self, mode: str) -> None:
        """The left drag: "box", "lasso" (select) or "pan". Raises ValueError: another mode."""
        if mode not in SELECT_MODES:
            raise ValueError(f"mode must be one of {', '.join(SELECT_MODES)}, got {mode!r}")
        self.box.mode = mode

    def _brush(self, colour: str, a: int) -> QBrush:
        key = (colour, a)
        if key not in self._brushes:  # one QBrush per colour and alpha, shared by the points (fast redraws)
            c = QColor(colour)
            c.setAlpha(a)
            self._brushes[key] = QBrush(c)
        return self._brushes[key]

    def set_points(self, xy: np.ndarray, colours: Sequence[str], tips: Sequence[str], faded: np.ndarray | None = None,
                   keep_range: bool = False) -> None:
        """Draw float [N, 2] points with ``"#RRGGBB"`` colours and hover tips (one each); ``faded``: bool [N], points
        the table's filters hide (drawn faint); ``keep_range``: keep the current zoom."""
        self.xy, self.tips = np.asarray(xy, np.float64).reshape(-1, 2), list(tips)
        faded = np.zeros(len(self.xy), bool) if faded is None else np.asarray(faded, bool)
        brushes = [self._brush(c, FADED_ALPHA if f else POINT_ALPHA) for c, f in zip(colours, faded, strict=True)]
        self.scatter.setData(x=self.xy[:, 0], y=self.xy[:, 1], brush=brushes, data=np.arange(len(self.xy)))
        if not keep_range:
            self.getPlotItem().autoRange()

    def set_legend(self, entries: Sequence[tuple[str, str]]) -> None:
        """The legend: ``(name, "#RRGGBB")`` per entry (at most 28)."""
        self._legend_entries = list(entries[:28])
        self._fit_legend(force=True)

    def _fit_legend(self, force: bool = False) -> None:
        """Lay the legend's entries out in as many columns as the plot's width takes (its widest entry's pixels) and
        in at most half its height: entries beyond that are one "+N more" entry, all of them in the legend's tooltip.
        A new legend item when the layout changes (pyqtgraph's ``setColumnCount`` leaves old columns' widths behind)."""
        entries = self._legend_entries
        metrics = QFontMetrics(self._legend_font)
        rows = max(1, int(self.height() / 2 // LEGEND_ROW_PX))
        for _ in range(2):  # again once the "+N more" entry is in: it may be the widest
            widest = max((metrics.horizontalAdvance(name) for name, _ in entries), default=0) + LEGEND_ENTRY_PX
            columns = max(1, min(len(entries), int(self.width() // widest)))
            room = columns * rows
            if len(self._legend_entries) > room:
                entries = [*self._legend_entries[:room - 1],
                           (f"+{len(self._legend_entries) - room + 1} more\u2026", "#ffffff")]
        if not force and (columns, len(entries)) == self._legend_shape:
            return
        self._legend_shape = (columns, len(entries))
        item = self.getPlotItem()
        if self.legend.parentItem() is item:
            item.layout.removeItem(self.legend)
            self.scene().removeItem(self.legend)
        self.legend = pg.LegendItem(offset=None, labelTextColor="#222222", frame=False, colCount=columns,
                                    labelTextSize=f"{LEGEND_POINTS}pt")
        for name, colour in entries:
            self.legend.addItem(pg.ScatterPlotItem(size=8, pen=None, brush=self._brush(colour, 255)), name)
        self.legend.setToolTip("\n".join(name for name, _ in self._legend_entries))
        self.legend.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)  # its rows, no more
        item.layout.addItem(self.legend, LEGEND_ROW, 1)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """The legend's columns follow the width (first: the plot item is never made wider than the new width)."""
        if "_legend_entries" in self.__dict__:  # pyqtgraph's constructor resizes before ours has run
            self._fit_legend()
        super().resizeEvent(event)

    def set_marks(self, explored: np.ndarray | None, neighbours: Sequence[int] = ()) -> None:
        """Mark the explored text at float [2] ``explored`` (None: no mark) and ring the ``neighbours`` (indices)."""
        self.star.setData(pos=np.zeros((0, 2)) if explored is None else np.asarray(explored, np.float64)[None])
        idx = [i for i in neighbours if 0 <= i < len(self.xy)]
        self.marks.setData(pos=self.xy[idx] if idx else np.zeros((0, 2)), data=np.array(idx, dtype=np.int64))

    def _tip(self, x: float, y: float, data) -> str:
        i = int(data)
        return self.tips[i] if 0 <= i < len(self.tips) else ""

    def _on_clicked(self, _item, points, _ev) -> None:
        if len(points):
            self.point_clicked.emit(int(points[0].data()))

    def _on_shape(self, polygon: np.ndarray) -> None:
        if len(self.xy):
            self.selected.emit(np.flatnonzero(points_in_polygon(self.xy, polygon)).astype(np.int64))

    def select_shape(self, polygon: np.ndarray) -> None:
        """Select the points inside float [M, 2] ``polygon`` (view coordinates), as a drawn lasso does."""
        self._on_shape(np.asarray(polygon, np.float64))


__all__ = ["SELECT_MODES", "CorpusMapPlot", "points_in_polygon"]
