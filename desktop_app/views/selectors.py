"""The one layer/head selector: two combo boxes bound to the explorer state (toolbar and heatmap both use it).

The layer combo lists ``layer 1..L`` (data: 0-based layer); the head combo lists every head, then
the mean and the element-wise max of the heads (data: 0-based head, :data:`MEAN_HEADS`,
:data:`MAX_HEADS`). Choosing an entry calls :meth:`ExplorerState.set_layer_head`; the combos follow
the state's ``layer_head_changed`` and are refilled on ``model_changed``.
"""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QComboBox

from ..state import MAX_HEADS, MEAN_HEADS
from .heads import head_name


class LayerHeadSelector(QObject):
    """``layer_combo`` and ``head_combo`` (place them in any layout), kept in sync with ``state``."""

    def __init__(self, state, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.layer_combo = QComboBox()
        self.head_combo = QComboBox()
        self.layer_combo.activated.connect(self._on_combo)
        self.head_combo.activated.connect(self._on_combo)
        state.model_changed.connect(lambda info: self.fill(info.n_layers, info.n_heads))
        state.layer_head_changed.connect(self.sync)

    def fill(self, n_layers: int, n_heads: int) -> None:
        """List ``n_layers`` layers and ``n_heads`` heads (+ mean, max), then select the state's choice."""
        for combo in (self.layer_combo, self.head_combo):
            combo.blockSignals(True)
            combo.clear()
        for layer in range(n_layers):
            self.layer_combo.addItem(f"layer {layer + 1}", layer)
        for h in [*range(n_heads), MEAN_HEADS, MAX_HEADS]:
            self.head_combo.addItem(head_name(h), h)
        for combo in (self.layer_combo, self.head_combo):
            combo.blockSignals(False)
        self.sync(self.state.layer, self.state.head)

    def sync(self, layer: int, head: int) -> None:
        """Show ``layer`` and ``head`` without emitting ``activated``."""
        for combo, value in ((self.layer_combo, layer), (self.head_combo, head)):
            i = combo.findData(value)
            if i >= 0 and i != combo.currentIndex():
                combo.blockSignals(True)
                combo.setCurrentIndex(i)
                combo.blockSignals(False)

    def _on_combo(self, *_) -> None:
        layer, head = self.layer_combo.currentData(), self.head_combo.currentData()
        if layer is not None and head is not None:
            self.state.set_layer_head(int(layer), int(head))
