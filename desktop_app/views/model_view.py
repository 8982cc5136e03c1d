"""The model view: a layers x heads grid of thumbnails, and the heads switched off.

Each thumbnail is the query x key matrix of one (layer, head) under the state's "Show" choice
(:func:`desktop_app.views.shown.shown_matrix`: attention weights, value-weighted norms, or ALTI contributions, one
matrix per layer shown in the first column), scaled by its own maximum onto the heatmap colour map and
block-averaged down to at most ``THUMB_PX`` pixels. Clicking one selects that layer and head in every view;
Ctrl+click, or "Switch head off" in its context menu, switches the head off (or on again): a switched-off head's
thumbnail is greyed and crossed out, with an "off" badge. The :class:`~desktop_app.views.head_grid.HeadGrid` above
the thumbnails holds the same switches as toggles, "Reset heads (n off)" and the head-importance overlay.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFont, QImage, QPainter, QPen, QPixmap
from PySide6.QtWidgets import QGridLayout, QLabel, QMenu, QScrollArea, QSizePolicy, QVBoxLayout, QWidget

from ..state import SHOW_ATTENTION, SHOW_TITLES
from .colours import HEATMAP_CMAP, lookup_table
from .head_grid import HeadGrid
from .render import DeferredRender
from .shown import shown_matrix

THUMB_PX = 112  # thumbnail side in pixels
DEFAULT_CAPTION = ("Attention weights. Rows: layers, columns: heads. Each thumbnail is scaled by its own maximum. "
                   "Ctrl+click or right-click a thumbnail to switch its head off.")


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


def off_pixmap(base: QImage | None, size: int = THUMB_PX) -> QPixmap:
    """A switched-off head's thumbnail: ``base`` in grey (a plain grey square without one), paled, crossed out in
    red, with a red "off" badge in the top-left corner; ``size`` x ``size`` pixels."""
    if base is not None:
        grey = base.convertToFormat(QImage.Format_Grayscale8)
        pm = QPixmap.fromImage(grey).scaled(size, size, Qt.IgnoreAspectRatio, Qt.FastTransformation)
    else:
        pm = QPixmap(size, size)
        pm.fill(QColor("#bdbdbd"))
    p = QPainter(pm)
    p.fillRect(0, 0, size, size, QColor(255, 255, 255, 110))
    p.setPen(QPen(QColor("#d32f2f"), 3))
    p.drawLine(4, 4, size - 5, size - 5)
    p.drawLine(4, size - 5, size - 5, 4)
    badge = QRectF(2, 2, 30, 16)
    p.fillRect(badge, QColor("#d32f2f"))
    font = QFont(p.font())
    font.setBold(True)
    font.setPixelSize(12)
    p.setFont(font)
    p.setPen(QColor("white"))
    p.drawText(badge, Qt.AlignCenter, "off")
    p.end()
    return pm


class Thumbnail(QLabel):
    """One clickable (layer, head) thumbnail.

    Attributes:
        layer, head: 0-based.
        base: the QImage of the matrix shown (block-averaged, colour-mapped), or None (nothing to show here).
        is_on: False while the head is switched off (the thumbnail is greyed and crossed out).

    Signals:
        clicked(int, int): (layer, head), 0-based: a plain left click (select this head).
        toggle_requested(int, int): (layer, head): Ctrl+click, or "Switch head off/on" in the context menu.
    """

    clicked = Signal(int, int)
    toggle_requested = Signal(int, int)

    def __init__(self, layer: int, head: int) -> None:
        super().__init__()
        self.layer, self.head = layer, head
        self.base: QImage | None = None
        self.is_on = True
        self.setFixedSize(THUMB_PX + 6, THUMB_PX + 6)
        self.setAlignment(Qt.AlignCenter)
        self.setCursor(Qt.PointingHandCursor)
        self.setContextMenuPolicy(Qt.DefaultContextMenu)
        self.set_current(False)
        self.describe("")

    def set_current(self, on: bool) -> None:
        """Frame the thumbnail of the selected layer/head."""
        self.setStyleSheet("border: 3px solid #ff2d55;" if on else "border: 3px solid transparent;")

    def describe(self, caption: str, importance: str = "") -> None:
        """Tooltip: what is shown (``caption``), on/off, what clicks do, and the head's ``importance`` line."""
        state = "on" if self.is_on else "switched OFF (its output is removed)"
        lines = [caption or f"Layer {self.layer + 1}, head {self.head + 1}", f"Head {state}.",
                 "Click: open in the heatmap and links views. Ctrl+click or right-click: switch the head "
                 f"{'off' if self.is_on else 'on again'}."]
        self.setToolTip("\n".join([*lines, importance] if importance else lines))

    def set_image(self, image: QImage | None) -> None:
        """Show ``image`` (None: nothing), greyed and crossed out while the head is off."""
        self.base = image
        self._compose()

    def set_on(self, on: bool) -> None:
        """Mark the head on or switched off (redraws only on a change)."""
        if bool(on) != self.is_on:
            self.is_on = bool(on)
            self._compose()

    def _compose(self) -> None:
        if not self.is_on:
            self.setPixmap(off_pixmap(self.base))
        elif self.base is None:
            self.clear()
        else:
            self.setPixmap(QPixmap.fromImage(self.base).scaled(THUMB_PX, THUMB_PX, Qt.IgnoreAspectRatio,
                                                               Qt.FastTransformation))

    def context_menu(self) -> QMenu:
        """The context menu: "Switch head off" (or "Switch head on again") and "Open in the heatmap and links
        views"; its actions emit ``toggle_requested`` / ``clicked``."""
        menu = QMenu(self)
        act = menu.addAction("Switch head off" if self.is_on else "Switch head on again")
        act.triggered.connect(lambda: self.toggle_requested.emit(self.layer, self.head))
        menu.addAction("Open in the heatmap and links views").triggered.connect(
            lambda: self.clicked.emit(self.layer, self.head))
        return menu

    def contextMenuEvent(self, event) -> None:
        """Pop :meth:`context_menu` up at the pointer (non-blocking; the menu deletes itself when closed)."""
        menu = self.context_menu()
        menu.setAttribute(Qt.WA_DeleteOnClose)
        menu.popup(event.globalPos())
        event.accept()

    def mousePressEvent(self, event) -> None:
        """Left click: emit ``clicked(layer, head)``; Ctrl+left click: ``toggle_requested(layer, head)``."""
        if event.button() == Qt.LeftButton:
            if event.modifiers() & Qt.ControlModifier:
                self.toggle_requested.emit(self.layer, self.head)
            else:
                self.clicked.emit(self.layer, self.head)
            event.accept()
            return
        super().mousePressEvent(event)


class ModelView(DeferredRender, QWidget):
    """The head switches (:class:`~desktop_app.views.head_grid.HeadGrid`) above a grid of L x H thumbnails (see the
    module docstring). Follows the state's prediction, "Show" choice, flow, head mask and head importance.

    Attributes:
        heads: the :class:`~desktop_app.views.head_grid.HeadGrid`.
        thumbs: ``{(layer, head): Thumbnail}`` of the current model.
        caption: what the thumbnails show, or why they show nothing (e.g. "Computing ALTI contributions\u2026").

    Signals:
        head_selected(int, int): (layer, head) clicked by the user.
        load_importance_requested(): "Load head importance\u2026" was pressed (the window opens the file dialog).
    """

    head_selected = Signal(int, int)
    load_importance_requested = Signal()

    def __init__(self, state, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._init_deferred()
        self.state = state
        self.thumbs: dict[tuple[int, int], Thumbnail] = {}
        self._captions: dict[tuple[int, int], str] = {}
        self._head_labels: list[QLabel] = []  # the "head 1".. column headers
        self.heads = HeadGrid(state)
        self.heads.load_importance_requested.connect(self.load_importance_requested)
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self._new_grid_host()
        self.caption = QLabel(DEFAULT_CAPTION)
        self.caption.setWordWrap(True)
        self.caption.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Minimum)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(self.heads)
        lay.addWidget(self.caption)
        lay.addWidget(self.scroll, 1)
        state.events.info.connect(lambda info: self._make_grid(info.n_layers, info.n_heads))
        state.events.prediction.connect(lambda *_: self.request_render())
        state.events.layer_head.connect(lambda *_: self._mark_current())
        state.events.show.connect(lambda *_: self.request_render())
        state.events.flow.connect(lambda *_: self.request_render())
        state.events.head_mask.connect(lambda *_: self._mark_heads())
        state.events.head_mask.connect(lambda *_: self.request_render())
        state.events.head_importance.connect(lambda *_: self._mark_heads())

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
        self.thumbs, self._captions, self._head_labels = {}, {}, []
        for h in range(n_heads):
            lab = QLabel(f"head {h + 1}")
            lab.setAlignment(Qt.AlignCenter)
            self.grid.addWidget(lab, 0, h + 1)
            self._head_labels.append(lab)
        for layer in range(n_layers):
            lab = QLabel(f"layer {layer + 1}")
            self.grid.addWidget(lab, layer + 1, 0)
            for h in range(n_heads):
                t = Thumbnail(layer, h)
                t.clicked.connect(self._on_clicked)
                t.toggle_requested.connect(self.state.toggle_head)
                self.grid.addWidget(t, layer + 1, h + 1)
                self.thumbs[(layer, h)] = t
        self.grid.setRowStretch(n_layers + 1, 1)
        self.grid.setColumnStretch(n_heads + 1, 1)
        self._mark_current()
        self._mark_heads()

    def _on_clicked(self, layer: int, head: int) -> None:
        self.state.set_layer_head(layer, head)
        self.head_selected.emit(layer, head)

    def _mark_current(self) -> None:
        for (layer, h), t in self.thumbs.items():
            t.set_current(layer == self.state.layer and h == self.state.head)

    def _mark_heads(self) -> None:
        """Grey out and cross the switched-off heads; tooltips with on/off and the loaded head importance."""
        st = self.state
        imp = st.head_importance
        fits = imp is not None and all(0 <= l < imp.shape[0] and 0 <= h < imp.shape[1] for l, h in self.thumbs)
        m = st.head_mask
        for (layer, h), t in self.thumbs.items():
            t.set_on(m is None or m.shape != (st.n_layers, st.n_heads) or st.head_on(layer, h))
            line = f"{st.head_importance_name or 'importance'}: {float(imp[layer, h]):.4f}" if fits else ""
            t.describe(self._captions.get((layer, h), ""), line)

    def redraw(self) -> None:
        """Recompute every thumbnail from the current prediction under the state's "Show" choice (ALTI: one matrix
        per layer, in the first column); the caption says what is shown, or why nothing is (the flow's note)."""
        pred = self.state.prediction
        if pred is None:
            for t in self.thumbs.values():
                t.set_image(None)
            self._captions = {}
            self.caption.setText(DEFAULT_CAPTION)
            self._mark_heads()
            return
        L, H = pred.attention.shape[:2]
        self._make_grid(L, H)
        per_layer = self.state.show == "alti"
        if self._head_labels:  # ALTI's one matrix per layer sits in the first column
            self._head_labels[0].setText("all heads (ALTI)" if per_layer else "head 1")
        note = ""
        for (layer, h), t in self.thumbs.items():
            if per_layer and h > 0:
                t.set_image(None)
                self._captions[(layer, h)] = (f"Layer {layer + 1}, head {h + 1} (ALTI: one matrix per layer, "
                                              "in head 1's column)")
                continue
            shown = shown_matrix(self.state, layer, h)
            self._captions[(layer, h)] = shown.caption
            if shown.matrix is None:
                note = note or shown.note
                t.set_image(None)
            else:
                t.set_image(matrix_to_qimage(downsample(np.asarray(shown.matrix, np.float32), THUMB_PX)))
        self.caption.setText(self._caption_text(note))
        self._mark_heads()

    def _caption_text(self, note: str) -> str:
        """The caption over the thumbnails for the state's "Show" choice, with ``note`` when nothing could be shown."""
        show = self.state.show
        if note:
            return f"{note} Rows: layers, columns: heads."
        if show == SHOW_ATTENTION:
            return DEFAULT_CAPTION
        if show == "alti":
            return (f"{SHOW_TITLES[show][0].upper()}{SHOW_TITLES[show][1:]} (Ferrando et al. 2022): one matrix per "
                    "layer (all heads with residual and LayerNorm), shown in the first column; rows: layers. "
                    "Each thumbnail is scaled by its own maximum.")
        return ("Value-weighted norms \u2016\u03b1f(x)\u2016 per head (Kobayashi et al. 2020). "
                "Rows: layers, columns: heads. Each thumbnail is scaled by its own maximum.")

    def showEvent(self, event) -> None:
        """Render if the state changed while hidden."""
        super().showEvent(event)
        self._deferred_show()
