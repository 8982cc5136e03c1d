"""The one layer/head/"show" selector: combo boxes bound to the explorer state (toolbar and heatmap both use it).

The layer combo lists ``layer 1..L`` (data: 0-based layer); the head combo lists every head, then
the mean and the element-wise max of the heads (data: 0-based head, :data:`MEAN_HEADS`,
:data:`MAX_HEADS`); the show combo lists what the attention views draw (:data:`SHOW_CHOICES`: attention weights,
value-weighted norms ||alpha f(x)||, ALTI contributions; data: the choice). Choosing an entry calls
:meth:`~desktop_app.state.ExplorerState.set_layer_head` or :meth:`~desktop_app.state.ExplorerState.set_show`; the
combos follow the state's ``events.layer_head`` and ``events.show`` and are refilled on ``events.info``. ALTI gives
one matrix per layer (all heads, the residual connection and the LayerNorm together), so under it the head combo is
disabled and its tooltip says so. The window combo picks which window of a long review (:mod:`desktop_app.document`)
the attention views show (``state.windows.request``); it lists "whole text", disabled, for a review that fits in one
window.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QComboBox

from ..state import MAX_HEADS, MEAN_HEADS, SHOW_CHOICES, SHOW_TITLES
from .heads import head_name

ALTI_HEAD_TIP = ("ALTI contributions cover the whole layer (all heads, the residual connection and the LayerNorm): "
                 "one matrix per layer, so there is no head to choose")
"""The head combo's tooltip while the views show ALTI."""

SHOW_TIPS = {
    "attention": "The attention weights \u03b1\u1d62\u2c7c (each query row sums to 1)",
    "value_norm": "\u2016\u03b1\u1d62\u2c7c f(x\u2c7c)\u2016: the weight times the norm of the transformed value "
                  "vector "
                  "(Kobayashi et al. 2020) \u2014 a large weight on a small vector moves little",
    "alti": "ALTI: each token's contribution to each layer output, with the residual connection and LayerNorm "
            "(Ferrando et al. 2022; rows sum to 1, one matrix per layer)",
}
"""Tooltips of the show combo's entries."""


class LayerHeadSelector(QObject):
    """``layer_combo``, ``head_combo`` and ``show_combo`` (place them in any layout), kept in sync with ``state``.

    Attributes:
        head_tooltip: the head combo's tooltip when a head can be chosen (set it instead of calling ``setToolTip``:
            under ALTI the selector replaces the tooltip with :data:`ALTI_HEAD_TIP`).
    """

    def __init__(self, state, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.layer_combo = QComboBox()
        self.head_combo = QComboBox()
        self.show_combo = QComboBox()
        self.window_combo = QComboBox()
        self.window_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.window_combo.setToolTip("The window of a long review the attention views show (the review is read in "
                                     "side-by-side windows of the model's maximum length)")
        self.window_combo.activated.connect(lambda *_: state.windows.request(int(self.window_combo.currentData())))
        state.events.prediction.connect(self.fill_windows)
        self.fill_windows(None)
        self.head_tooltip = "One head, the mean of heads, or the element-wise max of heads"
        for i, show in enumerate(SHOW_CHOICES):
            self.show_combo.addItem(SHOW_TITLES[show], show)
            self.show_combo.setItemData(i, SHOW_TIPS.get(show, ""), Qt.ItemDataRole.ToolTipRole)
        self.show_combo.setToolTip("What every attention view shows: " + ", ".join(SHOW_TITLES.values()))
        self.layer_combo.activated.connect(self._on_combo)
        self.head_combo.activated.connect(self._on_combo)
        self.show_combo.activated.connect(self._on_show_combo)
        state.events.info.connect(lambda info: self.fill(info.n_layers, info.n_heads))
        state.events.layer_head.connect(lambda layer_head: self.sync(*layer_head))
        state.events.show.connect(self.sync_show)
        self.sync_show(state.show)

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

    def fill_windows(self, pred) -> None:
        """List the windows of ``pred``'s whole review ("window k: tokens s-e") and select the one shown."""
        self.window_combo.blockSignals(True)
        self.window_combo.clear()
        doc = pred.document if pred is not None else None
        if doc is None or doc.num_windows < 2:
            self.window_combo.addItem("whole text", 0)
        else:
            for w, (s, e) in enumerate(doc.windows.ranges):
                self.window_combo.addItem(f"{w + 1} of {doc.num_windows}: tokens {s}\u2013{e - 1}", w)
            self.window_combo.setCurrentIndex(pred.window)
        self.window_combo.setEnabled(self.window_combo.count() > 1)
        self.window_combo.blockSignals(False)

    def sync(self, layer: int, head: int) -> None:
        """Show ``layer`` and ``head`` without emitting ``activated``."""
        for combo, value in ((self.layer_combo, layer), (self.head_combo, head)):
            _select(combo, value)

    def sync_show(self, show: str) -> None:
        """Show the choice ``show`` (one of :data:`SHOW_CHOICES`) without emitting ``activated``; the head combo is
        disabled under ALTI (one matrix per layer), with :data:`ALTI_HEAD_TIP` as its tooltip."""
        _select(self.show_combo, show)
        whole_layer = show == "alti"
        self.head_combo.setEnabled(not whole_layer)
        self.head_combo.setToolTip(ALTI_HEAD_TIP if whole_layer else self.head_tooltip)

    def set_head_tooltip(self, text: str) -> None:
        """Use ``text`` as the head combo's tooltip whenever a head can be chosen."""
        self.head_tooltip = text
        self.sync_show(self.state.show)

    def _on_combo(self, *_) -> None:
        layer, head = self.layer_combo.currentData(), self.head_combo.currentData()
        if layer is not None and head is not None:
            self.state.set_layer_head(int(layer), int(head))

    def _on_show_combo(self, *_) -> None:
        show = self.show_combo.currentData()
        if show is not None:
            self.state.set_show(str(show))


def _select(combo: QComboBox, value) -> None:
    """Select the entry of ``combo`` whose data is ``value`` without emitting ``activated`` (none: unchanged)."""
    i = combo.findData(value)
    if i >= 0 and i != combo.currentIndex():
        combo.blockSignals(True)
        combo.setCurrentIndex(i)
        combo.blockSignals(False)
