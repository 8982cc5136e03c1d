"""The Patching view (issue 53 section 3): the restored share of activation patching between the pinned (clean) text
and the current (corrupted) one, as a heatmap (NumPy and Qt only, no torch).

It draws ``state.inside.patching`` (a :class:`model.records.patching.PatchingResult`; :mod:`desktop_app.inside_results`)
in the app's diverging palette (:data:`desktop_app.views.colours.DIVERGING_CMAP`: 0 white, 1 red, negative blue):

* site ``resid``: layers x positions (``effects`` [L, T]); row l is the residual stream entering layer l + 1 (row 0:
  the embeddings), the columns the receiving text's tokens. Positions with no partner in the other text (Compare's
  word alignment) are not patched: hatched grey, and named under the heatmap;
* site ``head``: layers x heads (``effects`` [L, H]); clicking a cell selects that layer and head in the explorer
  (``state.set_layer_head``), so the attention views show it;
* site ``ffn``: layers x one column, the layer's feed-forward output (``effects`` [L]).

Each cell is ``(patched - corrupted) / (clean - corrupted)`` of the target's logit (regression: the value); hovering
gives the number, the patched run's score and the component. The caption gives both texts' scores. When the two
scores are (nearly) equal there is nothing to restore, and the view says so instead of dividing by about zero.
Without a result it shows the result's note (``state.inside.patching_note``: computing, cancelled, why not, or what to do).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsObject, QGraphicsPathItem, QLabel, QVBoxLayout, QWidget

from model.records.components import head_part
from model.tasks.types import task_type

from ..colours import DIVERGING_CMAP, colormap
from ..render import DeferredRender
from ..widgets import TokenAxis, display_token, style_plot

FOCUS_MIN_COLUMNS = 40
"""A residual grid wider than this many positions opens zoomed to the positions that matter (:func:`focus_columns`)."""

LABELLED_CELLS = 400
"""Head and FFN grids of at most this many cells write each cell's number in it."""

SAME_SCORE_RTOL = 1e-4
"""The two texts' scores count as equal (nothing to restore) when they differ by at most this x max(1, |score|)."""

UNALIGNED_BRUSH = QBrush(QColor(110, 110, 110, 200), Qt.BDiagPattern)
"""The hatching over the positions that are not patched (no partner in the other text)."""


def nothing_to_restore(result) -> bool:
    """True when ``result``'s clean and corrupted scores are equal within :data:`SAME_SCORE_RTOL` (the restored
    share would divide by about zero)."""
    clean, corrupted = float(result.clean_score), float(result.corrupted_score)
    return abs(clean - corrupted) <= SAME_SCORE_RTOL * max(1.0, abs(clean), abs(corrupted))


def grid_of(result) -> np.ndarray:
    """The result's ``effects`` as the heatmap's float32 [rows = layers, columns] grid ([L] -> [L, 1]), NaN kept."""
    e = np.asarray(result.effects, dtype=np.float32)
    return e[:, None] if e.ndim == 1 else e


def row_labels(result) -> list[str]:
    """The rows' labels: "L1".. (1-based layers); for ``resid`` the residual stream entering that layer, "emb"
    (the embeddings, entering L1) first."""
    L = grid_of(result).shape[0]
    if result.site == "resid":
        return ["emb\u2192L1", *(f"\u2192L{l + 1}" for l in range(1, L))]
    return [f"L{l + 1}" for l in range(L)]


def column_labels(result) -> list[str]:
    """The columns' labels: the receiving text's tokens (``resid``), "H1".. (heads counted from 1, as the app's Head
    box counts them) or "FFN"."""
    if result.site == "resid":
        return list(result.tokens)
    if result.site == "head":
        return [f"H{h + 1}" for h in range(grid_of(result).shape[1])]
    return ["FFN"]


def component_name(result, row: int, column: int) -> str:
    """What cell (row, column) patches, as the app names components ("L2.H3", "L2.ffn") or positions."""
    if result.site == "head":
        return head_part(row + 1, column)
    if result.site == "ffn":
        return f"L{row + 1}.ffn"
    where = "the embeddings (into L1)" if row == 0 else f"the residual stream into L{row + 1}"
    return f"{where} at {column} \u201c{display_token(result.tokens[column], 20)}\u201d"


def focus_columns(result, grid: np.ndarray) -> tuple[int, int]:
    """The columns [start, stop) a residual grid opens on: the positions whose restored share reaches 5 % of the
    largest and the unaligned ones, widened by 6 positions each side to at least :data:`FOCUS_MIN_COLUMNS`; the whole
    grid for the other sites, narrow grids and grids where nothing stands out."""
    cols = grid.shape[1]
    if result.site != "resid" or cols <= FOCUS_MIN_COLUMNS:
        return 0, cols
    size = np.nan_to_num(np.abs(grid)).max(axis=0)
    marked = np.flatnonzero((size >= 0.05 * size.max()) & (size > 0) | (np.asarray(result.alignment) < 0))
    if marked.size == 0:
        return 0, cols
    lo, hi = max(0, int(marked[0]) - 6), min(cols, int(marked[-1]) + 7)
    grow = max(0, FOCUS_MIN_COLUMNS - (hi - lo))
    lo = max(0, lo - (grow + 1) // 2)
    hi = min(cols, max(hi + grow // 2, lo + FOCUS_MIN_COLUMNS))
    return lo, hi


class CellNumbers(QGraphicsObject):
    """Each cell's number written at its centre, in one item that paints them all (a ``pg.TextItem`` per cell costs
    about 0.5 ms to create: 37 ms for MiniLM's 6 x 12 heads). The text keeps its size whatever the zoom: it is drawn
    in device coordinates at the cells' mapped centres. White on the strong colours (|value| > 0.55 of the colour
    bar's bound), dark elsewhere.

    Attributes:
        texts: the (row, column, text) written, for tests.
    """

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[tuple[int, int, str]] = []
        self._dark: list[bool] = []
        self._rect = QRectF()
        self.setZValue(6)

    def set_grid(self, grid: np.ndarray | None) -> None:
        """Write the finite cells of ``grid`` (float [rows, columns]) as "0.42"; None: nothing."""
        self.prepareGeometryChange()
        self.texts, self._dark = [], []
        if grid is not None:
            finite = np.isfinite(grid)
            bound = max(1.0, float(np.abs(grid[finite]).max())) if finite.any() else 1.0
            for (row, col), value in np.ndenumerate(grid):
                if finite[row, col]:
                    self.texts.append((row, col, f"{value:.2f}"))
                    self._dark.append(abs(float(value)) > 0.55 * bound)
            self._rect = QRectF(0, 0, grid.shape[1], grid.shape[0])
        else:
            self._rect = QRectF()
        self.update()

    def boundingRect(self) -> QRectF:
        """The grid's cells (data coordinates)."""
        return self._rect

    def paint(self, painter, _option, _widget=None) -> None:
        """Draw every number centred on its cell, unscaled."""
        if not self.texts:
            return
        to_device = painter.transform()
        painter.save()
        painter.resetTransform()
        light, dark = QColor("#ffffff"), QColor("#222222")
        for (row, col, text), strong in zip(self.texts, self._dark):
            centre = to_device.map(QPointF(col + 0.5, row + 0.5))
            painter.setPen(light if strong else dark)
            painter.drawText(QRectF(centre.x() - 30, centre.y() - 9, 60, 18), Qt.AlignCenter, text)
        painter.restore()


class PatchingView(DeferredRender, QWidget):
    """The heatmap of ``state.inside.patching`` (module docstring).

    Attributes:
        matrix: float32 [rows, columns] on display (:func:`grid_of` of the result: its ``effects``, NaN for the
            unaligned positions), or None when nothing is drawn. image_item: the ``pg.ImageItem``; colorbar: its
            ``pg.ColorBarItem``. caption: the scores and the method; hover_label: the cell under the mouse;
            unaligned_label: the positions not patched; hatch_item: their hatching.
    """

    def __init__(self, state, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._init_deferred()
        self.state = state
        self.result = None
        self.matrix: np.ndarray | None = None
        self.caption = QLabel("")
        self.caption.setWordWrap(True)
        self.caption.setAlignment(Qt.AlignTop | Qt.AlignLeft)  # alone (no heatmap) it stays at the top
        self.glw = pg.GraphicsLayoutWidget()
        self.glw.setBackground("w")
        self.x_axis = TokenAxis("bottom", max_chars=10)
        self.y_axis = TokenAxis("left", max_chars=7)
        self.plot = self.glw.addPlot(row=0, col=0, axisItems={"bottom": self.x_axis, "left": self.y_axis})
        self.plot.invertY(True)
        style_plot(self.plot)
        self.plot.hideButtons()
        self.plot.setMenuEnabled(False)
        self.plot.getViewBox().setMouseMode(pg.ViewBox.PanMode)
        self.image_item = pg.ImageItem(axisOrder="row-major")
        self.plot.addItem(self.image_item)
        self.colorbar = pg.ColorBarItem(values=(-1.0, 1.0), colorMap=colormap(DIVERGING_CMAP), width=15,
                                        label="restored share (0 corrupted, 1 clean)")
        self.colorbar.setImageItem(self.image_item, insert_in=self.plot)
        for axis in (self.x_axis, self.y_axis, self.colorbar.axis):
            axis.enableAutoSIPrefix(False)
        self.hatch_item = QGraphicsPathItem()
        self.hatch_item.setPen(QPen(Qt.NoPen))
        self.hatch_item.setBrush(UNALIGNED_BRUSH)
        self.hatch_item.setZValue(5)
        self.plot.addItem(self.hatch_item)
        self.cell_numbers = CellNumbers()  # the numbers written in a small grid's cells
        self.plot.addItem(self.cell_numbers)
        self.hover_label = QLabel("")
        self.hover_label.setWordWrap(True)
        self.unaligned_label = QLabel("")
        self.unaligned_label.setWordWrap(True)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(self.caption)
        lay.addWidget(self.glw, 1)
        lay.addWidget(self.unaligned_label)
        lay.addWidget(self.hover_label)
        self.glw.scene().sigMouseClicked.connect(self._on_click)
        self.glw.scene().sigMouseMoved.connect(self._on_hover)
        state.inside.events.patching.connect(lambda *_: self.request_render())
        state.events.head_mask.connect(lambda *_: self.request_render())  # the caption's note on a head mask
        self.request_render()

    # ----------------------------------------------------------------- drawing
    def redraw(self) -> None:
        """Draw ``state.inside.patching``, or its note when there is none (or nothing to restore)."""
        result = self.state.inside.patching
        self.result, self.matrix = result, None
        self.hover_label.setText("")
        self.hatch_item.setPath(QPainterPath())
        if result is None:
            self._clear(self.state.inside.note("patching"))
            return
        scores = self.scores_text(result)
        if nothing_to_restore(result):
            self._clear(f"{scores}<br><b>Nothing to restore:</b> the two texts give the same "
                        f"{self.score_name(result)}, so no component can restore a difference. Edit the "
                        "current text (What if) or pin another one.")
            return
        grid = grid_of(result)
        self.matrix = grid
        self.glw.setVisible(True)
        rows, cols = grid.shape
        top = float(np.nanmax(np.abs(grid))) if np.isfinite(grid).any() else 1.0
        bound = max(1.0, top)
        self.image_item.setImage(np.nan_to_num(grid, nan=0.0), autoLevels=False)
        self.image_item.setRect(QRectF(0, 0, cols, rows))
        self.colorbar.setLevels((-bound, bound))
        self.x_axis.set_tokens(column_labels(result))
        self.x_axis.set_min_spacing(70.0 if result.site == "resid" else 24.0)  # every head's name when it fits
        self.y_axis.set_tokens(row_labels(result))
        vb = self.plot.getViewBox()
        vb.setLimits(xMin=-0.5, xMax=cols + 0.5, yMin=-0.5, yMax=rows + 0.5)
        start, stop = focus_columns(result, grid)
        self.plot.setRange(xRange=(start, stop), yRange=(0, rows), padding=0)
        self._write_cells(grid if result.site != "resid" else None)
        self.plot.setLabel("bottom", {"resid": "position (the receiving text's tokens)", "head": "head",
                                      "ffn": "feed-forward output"}[result.site])
        self.plot.setLabel("left", "layer")
        zoom = (f" Showing positions {start}\u2013{stop - 1} of {cols} (where the share is); drag or scroll for the "
                "rest." if (start, stop) != (0, cols) else "")
        mask = self.state.head_mask
        unmasked = (" Patching runs with every head on (the heads switched off are not switched off here)."
                    if mask is not None and not np.all(mask) else "")
        self.caption.setText(scores + zoom + unmasked)
        self._draw_unaligned(result, rows)

    def _write_cells(self, grid: np.ndarray | None) -> None:
        """Write each cell's restored share in it when the grid is small (:data:`LABELLED_CELLS`; the head and FFN
        grids; None: none)."""
        self.cell_numbers.set_grid(grid if grid is not None and grid.size <= LABELLED_CELLS else None)

    def _clear(self, text: str) -> None:
        """No heatmap (hidden, not an empty frame): ``text`` says why, or what to do."""
        self.glw.setVisible(False)
        self._write_cells(None)
        self.image_item.clear()
        self.colorbar.setLevels((-1.0, 1.0))
        self.x_axis.set_tokens([])
        self.y_axis.set_tokens([])
        self.unaligned_label.setText("")
        self.caption.setText(text)

    def score_name(self, result) -> str:
        """What is scored: "positive logit", or for a regression model "predicted value (score)"."""
        name = result.label or "output"
        info = self.state.info
        return (f"{name} logit" if info is None or task_type(info.task).reads_probabilities
                else f"predicted value ({name})")

    def scores_text(self, result) -> str:
        """The caption: the method (an approximation said so), both texts' scores, the passes and the time."""
        how = ("<b>Fast preview</b> (attribution patching: a gradient approximation, Nanda 2023)"
               if result.approximate else "<b>Activation patching</b>")
        way = ("denoise: the clean (pinned) text's activation into the corrupted (current) one"
               if result.direction == "denoise" else
               "noise: the corrupted (current) text's activation into the clean (pinned) one")
        return (f"{how}, {way}. Score: the {self.score_name(result)}; clean (pinned) {result.clean_score:.4g}, "
                f"corrupted (current) {result.corrupted_score:.4g}. {result.passes} passes, {result.elapsed_s:.2f} s.")

    def _draw_unaligned(self, result, rows: int) -> None:
        """Hatch and name the receiving positions that are not patched (``resid``); name them for the other sites."""
        other = "clean" if result.direction == "denoise" else "corrupted"
        if not result.unaligned:
            self.unaligned_label.setText("")
            return
        self.unaligned_label.setText(f"Not patched (no partner in the {other} text): "
                                     + ", ".join(result.unaligned))
        if result.site != "resid":
            return
        path = QPainterPath()
        for t in np.flatnonzero(np.asarray(result.alignment) < 0):
            path.addRect(QRectF(float(t), 0.0, 1.0, float(rows)))
        self.hatch_item.setPath(path)

    # ----------------------------------------------------------------- hover and click
    def describe_cell(self, row: int, column: int) -> str:
        """The hover text of cell (row = layer, column): the component, the restored share, the patched score."""
        result, grid = self.result, self.matrix
        name = component_name(result, row, column)
        value = float(grid[row, column])
        if not np.isfinite(value):
            other = "clean" if result.direction == "denoise" else "corrupted"
            return f"{name}: not patched (no partner in the {other} text)"
        patched = float(np.asarray(result.patched_scores).reshape(grid.shape)[row, column])
        est = "estimated " if result.approximate else ""
        return (f"{name}: restored share {value:+.3f}; {est}patched {self.score_name(result)} {patched:.4g} "
                f"(clean {result.clean_score:.4g}, corrupted {result.corrupted_score:.4g})")

    def cell_at(self, scene_pos) -> tuple[int, int] | None:
        """The (row, column) under scene position ``scene_pos``, or None outside the drawn grid."""
        vb = self.plot.getViewBox()
        if self.matrix is None or not vb.sceneBoundingRect().contains(scene_pos):
            return None
        pt = vb.mapSceneToView(scene_pos)
        row, col = int(np.floor(pt.y())), int(np.floor(pt.x()))
        rows, cols = self.matrix.shape
        return (row, col) if 0 <= row < rows and 0 <= col < cols else None

    def cell_scene_pos(self, row: int, column: int):
        """The scene position of the centre of cell (row, column) (tests)."""
        return self.plot.getViewBox().mapViewToScene(pg.Point(column + 0.5, row + 0.5))

    def _on_hover(self, scene_pos) -> None:
        cell = self.cell_at(scene_pos)
        self.hover_label.setText("" if cell is None else self.describe_cell(*cell))

    def _on_click(self, ev) -> None:
        if ev.button() == Qt.LeftButton and (cell := self.cell_at(ev.scenePos())) is not None:
            self.click_cell(*cell)

    def click_cell(self, row: int, column: int) -> None:
        """Act as if cell (row, column) was clicked: a head cell selects that layer and head in the explorer
        (``state.set_layer_head``); an FFN or residual cell selects its layer (keeping the head)."""
        if self.result is None or self.matrix is None:
            return
        head = column if self.result.site == "head" else self.state.head
        self.state.set_layer_head(row, head)

    def showEvent(self, event) -> None:
        """Render if the result changed while hidden."""
        super().showEvent(event)
        self._deferred_show()


__all__ = ["PatchingView", "component_name", "grid_of", "nothing_to_restore"]
