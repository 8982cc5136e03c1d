"""The Components view's two plots (issue 53, section 1): :class:`ComponentGrid`, the layers x (heads, attention bias,
FFN, LayerNorm beta) grid of a :class:`model.records.components.ComponentAttribution` with the embeddings below the
first layer and the read-out's biases above the last (the residual stream read bottom-up), and :class:`TokenBars`,
one number per token as bars over the tokens, the selected tokens framed.

Both colour by the app's diverging palette centred on 0 (:func:`desktop_app.views.colours.colours_for`: blue toward
negative, red toward positive, white at 0). NumPy and Qt only (no torch).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPen
from PySide6.QtWidgets import QGraphicsRectItem

from model.records.components import ComponentAttribution, head_part

from ..colours import colours_for
from ..widgets import TokenAxis, style_plot

EMPTY_CELL = (245, 245, 245, 255)  # a grid place the model has no part for
FRAME_COLOUR = "#222222"  # the frame of the selected part and of selected tokens


def grid_layout(ca: ComponentAttribution) -> tuple[dict[str, tuple[int, int]], list[str], list[str]]:
    """Where each part of ``ca`` sits: ``({name: (column, row)}, column labels, row labels)``.

    Rows bottom-up: ``emb`` (the embeddings), the layers ``L1``..``LL``, ``out`` (the read-out's biases
    ``head_bias`` and, pre-LN, ``final_ln_beta``). Columns: the heads ``H1``.., ``bias`` (the attention bias), ``FFN``
    and, post-LN, ``LN β`` (the layer's LayerNorms' beta)."""
    L, H = ca.n_layers, ca.n_heads
    post_ln = any(n.endswith(".ln_beta") for n in ca.names)
    cols = [f"H{h + 1}" for h in range(H)] + ["bias", "FFN"] + (["LN \u03b2"] if post_ln else [])
    rows = ["emb"] + [f"L{layer}" for layer in range(1, L + 1)] + ["out"]
    at = {"embeddings": (0, 0), "head_bias": (0, L + 1), "final_ln_beta": (1, L + 1)}
    for layer in range(1, L + 1):
        at.update({head_part(layer, h): (h, layer) for h in range(H)})
        at.update({f"L{layer}.{part}": (H + k, layer) for k, part in enumerate(("attn_bias", "ffn", "ln_beta"))})
    return {n: at[n] for n in ca.names if n in at}, cols, rows


def part_title(name: str) -> str:
    """A part's name in words: "head 3 of layer 2" for ``L2.H3`` (the Layer and Head boxes' layer 2, head 3),
    "layer 1's FFN", "the embeddings", ..."""
    if name.startswith("L") and "." in name:
        layer, what = name[1:].split(".", 1)
        words = {"ffn": "FFN", "attn_bias": "attention bias", "ln_beta": "LayerNorms' \u03b2"}
        if what.startswith("H"):
            return f"head {what[1:]} of layer {layer}"
        return f"layer {layer}'s {words.get(what, what)}"
    return {"embeddings": "the embeddings", "head_bias": "the read-out's biases",
            "final_ln_beta": "the final LayerNorm's \u03b2"}.get(name, name)


def decimals(scale: float) -> int:
    """Decimals that show numbers up to ``scale`` (their largest |value|) with about two significant digits: 2 for
    a logit of order 1, 4 for parts of order 0.01 (a random head's), at most 5."""
    if not np.isfinite(scale) or scale <= 0:
        return 2
    return int(min(5, max(2, 1 - np.floor(np.log10(scale)))))


def number(v: float, places: int = 2) -> str:
    """``v`` with its sign and a real minus: "+1.24", "\u22120.80"."""
    return f"{v:+.{places}f}".replace("-", "\u2212")


def _fixed(plot: pg.PlotItem) -> None:
    """No pan, zoom, menu or auto-range buttons on ``plot``."""
    plot.setMouseEnabled(False, False)
    plot.setMenuEnabled(False)
    plot.hideButtons()
    style_plot(plot)


class CellLabels(pg.GraphicsObject):
    """The grid's numbers, one per cell, painted in one item at a fixed font size (hundreds of ``pg.TextItem``s cost
    ~1 ms each to add); left out while the cells are narrower than their text.

    Attributes:
        labels: ``[(x, y, text, colour)]``, the cell centres in view coordinates.
    """

    def __init__(self) -> None:
        super().__init__()
        self.labels: list[tuple[float, float, str, QColor]] = []
        self._rect = QRectF()
        self.font = QFont()
        self.font.setPointSize(7)

    def set_labels(self, labels, rect: QRectF) -> None:
        """Paint ``labels`` (see the class docstring) inside ``rect``."""
        self.prepareGeometryChange()
        self.labels, self._rect = list(labels), QRectF(rect)
        self.update()

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt's name
        return self._rect

    def paint(self, painter, *_args) -> None:
        """Each label centred on its cell, in device pixels (the view's scale does not stretch the text)."""
        if not self.labels:
            return
        tr = painter.transform()
        cell = tr.map(QPointF(1, 0)) - tr.map(QPointF(0, 0))
        widest = max(QFontMetrics(self.font).horizontalAdvance(t) for _, _, t, _ in self.labels)
        if abs(cell.x()) < widest + 2:
            return
        painter.save()
        painter.resetTransform()
        painter.setFont(self.font)
        for x, y, text, colour in self.labels:
            c = tr.map(QPointF(x, y))
            painter.setPen(colour)
            painter.drawText(QRectF(c.x() - 60, c.y() - 10, 120, 20), Qt.AlignmentFlag.AlignCenter, text)
        painter.restore()


class ComponentGrid(pg.PlotWidget):
    """The parts of one :class:`ComponentAttribution` as coloured cells (module docstring).

    Signals:
        part_clicked(str): a cell was clicked (the part's name, e.g. ``"L2.H3"``).
        part_hovered(str): the mouse is over a cell ("" when over none).

    Attributes:
        record: the record drawn, or None. cells: ``{name: (column, row)}`` of it. selected: the framed part ("").
        texts: ``{name: the number written in its cell}``; numbers: the item painting them.
    """

    part_clicked = Signal(str)
    part_hovered = Signal(str)

    def __init__(self, parent=None) -> None:
        super().__init__(parent, background="w")
        self.record: ComponentAttribution | None = None
        self.cells: dict[str, tuple[int, int]] = {}
        self._at: dict[tuple[int, int], str] = {}
        self.selected = ""
        self.texts: dict[str, str] = {}
        self.numbers = CellLabels()
        self.image = pg.ImageItem(axisOrder="row-major")
        self.addItem(self.image)
        self.frame = QGraphicsRectItem()
        pen = QPen(QColor(FRAME_COLOUR))
        pen.setWidthF(2.5)
        pen.setCosmetic(True)
        self.frame.setPen(pen)
        self.frame.setVisible(False)
        self.addItem(self.numbers)
        self.addItem(self.frame)
        _fixed(self.getPlotItem())
        self.getPlotItem().invertY(False)
        self.scene().sigMouseMoved.connect(self._on_move)
        self.scene().sigMouseClicked.connect(self._on_click)

    def set_record(self, ca: ComponentAttribution | None) -> None:
        """Draw ``ca`` (None: clear): each part's cell coloured by its value against the largest |value| shown."""
        self.texts, self.record = {}, ca
        if ca is None:
            self.cells, self._at = {}, {}
            self.image.clear()
            self.numbers.set_labels([], QRectF())
            self.frame.setVisible(False)
            return
        self.cells, cols, rows = grid_layout(ca)
        self._at = {xy: n for n, xy in self.cells.items()}
        values = np.array([ca.values[ca.names.index(n)] for n in self.cells], np.float64)
        rgba, scale = colours_for(values, signed=True)
        places = decimals(scale)
        img = np.empty((len(rows), len(cols), 4), np.uint8)
        img[:] = EMPTY_CELL
        for (x, y), colour in zip(self.cells.values(), rgba):
            img[y, x] = colour
        self.image.setImage(img, autoLevels=False)
        self.image.setRect(QRectF(0, 0, len(cols), len(rows)))
        plot = self.getPlotItem()
        plot.getAxis("bottom").setTicks([[(i + 0.5, c) for i, c in enumerate(cols)]])
        plot.getAxis("left").setTicks([[(i + 0.5, r) for i, r in enumerate(rows)]])
        plot.setXRange(0, len(cols), padding=0.01)
        plot.setYRange(0, len(rows), padding=0.01)
        labels = []
        for (name, (x, y)), v, c in zip(self.cells.items(), values, rgba):
            dark = 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2] < 128  # white numbers on a dark cell
            self.texts[name] = number(v, places)
            labels.append((x + 0.5, y + 0.5, self.texts[name], QColor("#ffffff" if dark else "#111111")))
        self.numbers.set_labels(labels, QRectF(0, 0, len(cols), len(rows)))
        self.select(self.selected)

    def select(self, name: str) -> None:
        """Frame the cell of part ``name`` ("" or a part not drawn: no frame)."""
        self.selected = name
        xy = self.cells.get(name)
        self.frame.setVisible(xy is not None)
        if xy is not None:
            self.frame.setRect(QRectF(xy[0] + 0.04, xy[1] + 0.04, 0.92, 0.92))

    def part_at(self, x: float, y: float) -> str:
        """The part whose cell holds the view point (``x``, ``y``), or ""."""
        return self._at.get((int(np.floor(x)), int(np.floor(y))), "") if x >= 0 and y >= 0 else ""

    def scene_point(self, name: str) -> QPointF:
        """The scene position of the centre of part ``name``'s cell (for clicks in tests and tours)."""
        x, y = self.cells[name]
        return self.getPlotItem().vb.mapViewToScene(QPointF(x + 0.5, y + 0.5))

    def _part_at_scene(self, pos) -> str:
        p = self.getPlotItem().vb.mapSceneToView(pos)
        return self.part_at(p.x(), p.y())

    def _on_move(self, pos) -> None:
        name = self._part_at_scene(pos)
        self.part_hovered.emit(name)

    def _on_click(self, ev) -> None:
        if ev.button() != Qt.MouseButton.LeftButton:
            return
        name = self._part_at_scene(ev.scenePos())
        if name:
            self.part_clicked.emit(name)


class TokenBars(pg.PlotWidget):
    """One number per token as bars over the tokens (module docstring); x pans and zooms for long texts.

    Attributes:
        values: float32 [T] drawn (NaN: no value), or None. selection: the framed token indices.
    """

    def __init__(self, parent=None, height: int = 110) -> None:
        self.axis = TokenAxis("bottom", max_chars=10)
        super().__init__(parent, background="w", axisItems={"bottom": self.axis})
        self.values: np.ndarray | None = None
        self.selection: tuple[int, ...] = ()
        self.bars: pg.BarGraphItem | None = None
        plot = self.getPlotItem()
        _fixed(plot)
        plot.setMouseEnabled(True, False)
        plot.showGrid(y=True, alpha=0.2)
        plot.addLine(y=0, pen=pg.mkPen("#888888"))
        self.setMinimumHeight(height)

    def set_bars(self, tokens, values, selection=(), signed: bool = True, title: str = "") -> None:
        """Draw ``values`` (float [T], NaN: none) over ``tokens`` (T strings), diverging colours when ``signed`` (else
        sequential), the tokens in ``selection`` framed; ``title`` above (None values: clear)."""
        plot = self.getPlotItem()
        if self.bars is not None:
            plot.removeItem(self.bars)
            self.bars = None
        plot.setTitle(title, size="9pt", color="#222222")
        if values is None or len(tokens) == 0:
            self.values, self.selection = None, ()
            self.axis.set_tokens([])
            return
        v = np.asarray(values, np.float32)
        self.values, self.selection = v, tuple(int(i) for i in selection if 0 <= int(i) < len(v))
        rgba, _ = colours_for(v, signed=signed)
        pens = [pg.mkPen("#999999", width=0.5)] * len(v)
        for i in self.selection:
            pens[i] = pg.mkPen(FRAME_COLOUR, width=2.5)
        self.bars = pg.BarGraphItem(x=np.arange(len(v)) + 0.5, height=np.nan_to_num(v), width=0.8,
                                    brushes=[pg.mkBrush(*c) for c in rgba], pens=pens)
        plot.addItem(self.bars)
        self.axis.set_tokens(list(tokens))
        plot.setXRange(0, len(v), padding=0.01)
        finite = v[np.isfinite(v)]
        lo, hi = (min(0.0, float(finite.min())), max(0.0, float(finite.max()))) if finite.size else (0.0, 1.0)
        plot.setYRange(lo, hi if hi > lo else lo + 1.0, padding=0.08)


__all__ = ["CellLabels", "ComponentGrid", "TokenBars", "decimals", "grid_layout", "number", "part_title"]
