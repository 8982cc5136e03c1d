"""The model view: a layers x heads grid of attention-matrix thumbnails.

Each thumbnail is the query x key matrix of one (layer, head), scaled by its
own maximum onto the heatmap colour map and block-averaged down to at most
``THUMB_PX`` pixels. Clicking one selects that layer and head in every view.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QImage, QPixmap
from PySide6.QtWidgets import QGridLayout, QLabel, QScrollArea, QSizePolicy, QVBoxLayout, QWidget

from .colours import HEATMAP_CMAP, lookup_table
from .render import DeferredRender

THUMB_PX = 112  # thumbnail side in pixels


def downsample(matrix: np.ndarray, size: int) -> np.ndarray:
    """Block-average a [T, T] matrix to at most [size, size] (zero-padded to a multiple of the block k).

    Returns:
        float32 [ceil(T / k), ceil(T / k)] with k = ceil(T / size); the input itself when T <= size.
    """
    T = matrix.shape[0]
    k = int(np.ceil(T / size)) if T > size else 1
    if k == 1:
        return matrix
    n = int(np.ceil(T / k)) * k
    padded = np.zeros((n, n), dtype=np.float32)
    padded[:T, :T] = matrix
    # two contiguous reductions are ~3x faster than mean(axis=(1, 3))
    return padded.reshape(n // k, k, n).sum(axis=1).reshape(n // k, n // k, k).sum(axis=2) / (k * k)


def matrix_to_qimage(matrix: np.ndarray, cmap: str = HEATMAP_CMAP) -> QImage:
    """float [R, C] -> RGBA QImage, scaled by the matrix maximum (0 -> the colour map's low end)."""
    hi = float(matrix.max()) if matrix.size else 0.0
    x = matrix / hi if hi > 0 else np.zeros_like(matrix)
    lut = lookup_table(cmap)
    rgba = np.ascontiguousarray(lut[np.clip((x * (len(lut) - 1)).astype(np.int64), 0, len(lut) - 1)])
    h, w = rgba.shape[:2]
    return QImage(rgba.data, w, h, 4 * w, QImage.Format_RGBA8888).copy()


class Thumbnail(QLabel):
    """One clickable (layer, head) thumbnail.

    Signals:
        clicked(int, int): (layer, head), 0-based.
    """

    clicked = Signal(int, int)

    def __init__(self, layer: int, head: int) -> None:
        super().__init__()
        self.layer, self.head = layer, head
        self.setFixedSize(THUMB_PX + 6, THUMB_PX + 6)
        self.setAlignment(Qt.AlignCenter)
        self.setToolTip(f"layer {layer + 1}, head {head + 1}: click to open in the heatmap and links views")
        self.setCursor(Qt.PointingHandCursor)
        self.set_current(False)

    def set_current(self, on: bool) -> None:
        """Frame the thumbnail of the selected layer/head."""
        self.setStyleSheet("border: 3px solid #ff2d55;" if on else "border: 3px solid transparent;")

    def mousePressEvent(self, event) -> None:
        """Emit ``clicked(layer, head)``."""
        if event.button() == Qt.LeftButton:
            self.clicked.emit(self.layer, self.head)
            event.accept()
            return
        super().mousePressEvent(event)


class ModelView(DeferredRender, QWidget):
    """Grid of L x H thumbnails (see module docstring).

    Signals:
        head_selected(int, int): (layer, head) clicked by the user.
    """

    head_selected = Signal(int, int)

    def __init__(self, state, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._init_deferred()
        self.state = state
        self.thumbs: dict[tuple[int, int], Thumbnail] = {}
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self._new_grid_host()
        self.caption = QLabel("Rows: layers, columns: heads. Each thumbnail is scaled by its own maximum.")
        self.caption.setWordWrap(True)
        self.caption.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Minimum)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(self.caption)
        lay.addWidget(self.scroll, 1)
        state.model_changed.connect(lambda info: self._make_grid(info.n_layers, info.n_heads))
        state.prediction_changed.connect(lambda *_: self.request_render())
        state.layer_head_changed.connect(lambda *_: self._mark_current())

    def _new_grid_host(self) -> None:
        """An empty grid in the scroll area; the old one goes with all its labels and thumbnails."""
        old = self.scroll.takeWidget()
        if old is not None:
            old.deleteLater()
        self.grid_host = QWidget()
        self.grid = QGridLayout(self.grid_host)
        self.grid.setSpacing(2)
        self.scroll.setWidget(self.grid_host)

    def _make_grid(self, n_layers: int, n_heads: int) -> None:
        """Lay out ``n_layers`` x ``n_heads`` thumbnails with their "layer"/"head" labels (kept if the shape is the
        same). A new shape gets a new grid: a QGridLayout keeps the row and column count and stretch of the
        largest shape it ever held, so reusing it left a 6 x 12 model's labels and width beside a 2 x 4 grid."""
        if len(self.thumbs) == n_layers * n_heads and all(
            (l, h) in self.thumbs for l in range(n_layers) for h in range(n_heads)
        ):
            return
        self._new_grid_host()
        self.thumbs = {}
        for h in range(n_heads):
            lab = QLabel(f"head {h + 1}")
            lab.setAlignment(Qt.AlignCenter)
            self.grid.addWidget(lab, 0, h + 1)
        for layer in range(n_layers):
            lab = QLabel(f"layer {layer + 1}")
            self.grid.addWidget(lab, layer + 1, 0)
            for h in range(n_heads):
                t = Thumbnail(layer, h)
                t.clicked.connect(self._on_clicked)
                self.grid.addWidget(t, layer + 1, h + 1)
                self.thumbs[(layer, h)] = t
        self.grid.setRowStretch(n_layers + 1, 1)
        self.grid.setColumnStretch(n_heads + 1, 1)
        self._mark_current()

    def _on_clicked(self, layer: int, head: int) -> None:
        self.state.set_layer_head(layer, head)
        self.head_selected.emit(layer, head)

    def _mark_current(self) -> None:
        for (layer, h), t in self.thumbs.items():
            t.set_current(layer == self.state.layer and h == self.state.head)

    def redraw(self) -> None:
        """Recompute every thumbnail from the current prediction."""
        pred = self.state.prediction
        if pred is None:
            for t in self.thumbs.values():
                t.clear()
            return
        L, H = pred.attention.shape[:2]
        self._make_grid(L, H)
        for (layer, h), t in self.thumbs.items():
            img = matrix_to_qimage(downsample(pred.attention[layer, h], THUMB_PX))
            t.setPixmap(QPixmap.fromImage(img).scaled(THUMB_PX, THUMB_PX, Qt.IgnoreAspectRatio, Qt.FastTransformation))

    def showEvent(self, event) -> None:
        """Render if the state changed while hidden."""
        super().showEvent(event)
        self._deferred_show()
