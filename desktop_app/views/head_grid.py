"""Switch attention heads off: a layers x heads grid of toggles, with the head-importance overlay (NumPy only).

Each toggle is one head of the loaded model: checked (on) or not (switched off). Clicking one calls
:meth:`desktop_app.state.ExplorerState.toggle_head`; the window then analyses the review again with the head's
context vector multiplied by 0 before the output projection (Michel, Levy & Neubig 2019, "Are Sixteen Heads Really
Better than One?", section 2), so the prediction and every view are for the model without it. The grid follows the
state's ``events.head_mask`` (a restored session or another view changing the mask updates it).

A loaded head importance (:attr:`~desktop_app.state.ExplorerState.head_importance`, e.g. Michel et al. 2019 eq. 2
normalised per layer, written by ``python -m model.evaluation.head_importance``) is written on each toggle, which is
tinted by it (the most important head of the table the strongest), and "Switch off the k least important" prunes
from the GUI, least important first across all layers (ties: the earlier layer, then head), as that command does.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from model.attention.pruning import pruning_mask

OFF_COLOUR = "#9e9e9e"  # the background of a switched-off head's toggle
IMPORTANCE_COLOUR = QColor("#e67e22")  # the tint of the most important head (orange; white for the least)


def importance_tint(value: float, top: float) -> QColor:
    """Background of a toggle for importance ``value`` on a table whose largest score is ``top`` (> 0): white at 0,
    :data:`IMPORTANCE_COLOUR` at ``top`` (linear in between; negative values clamp to white)."""
    a = min(1.0, max(0.0, float(value) / top)) if top > 0 else 0.0
    c = IMPORTANCE_COLOUR
    return QColor(round(255 + (c.red() - 255) * a), round(255 + (c.green() - 255) * a), round(255 + (c.blue() - 255) * a))


class HeadToggle(QToolButton):
    """The toggle of one (layer, head): checked = on. Its text is "on"/"off", with the head's importance below when
    one is loaded.

    Attributes:
        layer, head: 0-based.
        importance: the overlaid score (float), or None.
    """

    def __init__(self, layer: int, head: int) -> None:
        super().__init__()
        self.layer, self.head = layer, head
        self.importance: float | None = None
        self.setCheckable(True)
        self.setChecked(True)
        self.setAutoRaise(False)
        self.setMinimumWidth(44)
        self.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Fixed)

    @property
    def is_on(self) -> bool:
        """True while the head is on (the button is checked)."""
        return self.isChecked()

    def show_state(self, on: bool, importance: float | None, top: float, name: str) -> None:
        """Show the head on or off, with ``importance`` (None: none loaded) tinted against the table's largest
        score ``top``; ``name`` says what the scores are (tooltip)."""
        self.setChecked(on)
        self.importance = importance
        words = "on" if on else "off"
        self.setText(words if importance is None else f"{words}\n{importance:.2f}")
        if not on:
            sheet = f"QToolButton {{ background: {OFF_COLOUR}; color: white; text-decoration: line-through; }}"
        elif importance is not None:
            sheet = f"QToolButton {{ background: {importance_tint(importance, top).name()}; color: black; }}"
        else:
            sheet = ""
        if self.styleSheet() != sheet:
            self.setStyleSheet(sheet)
        tip = (f"Layer {self.layer + 1}, head {self.head + 1}: {words}. Click to switch it "
               f"{'off (its output is removed; the review is analysed again)' if on else 'on again'}.")
        if importance is not None:
            tip += f"\n{name or 'importance'}: {importance:.4f}"
        self.setToolTip(tip)


class HeadGrid(QWidget):
    """The layers x heads toggles, "Reset heads (n off)", the head-importance buttons and the pruning spin box.

    Args:
        state: the shared :class:`desktop_app.state.ExplorerState` (read: info, head_mask, head_importance; written
            through ``toggle_head``, ``reset_heads``, ``set_head_mask``, ``set_head_importance``).

    Attributes:
        toggles: ``{(layer, head): HeadToggle}`` of the current model.
        caption: how many heads are off (e.g. "2 of 8 heads switched off: ...").
        reset_button: "Reset heads (n off)"; disabled when every head is on.
        load_button, clear_button: load / clear the head-importance overlay.
        prune_spin, prune_button: "Switch off the k least important" (needs an importance table).

    Signals:
        load_importance_requested(): the user asked to load a head-importance JSON (the window opens the dialog).
    """

    load_importance_requested = Signal()

    def __init__(self, state, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.toggles: dict[tuple[int, int], HeadToggle] = {}
        self.caption = QLabel("")
        self.caption.setWordWrap(True)
        self.reset_button = QPushButton("Reset heads")
        self.reset_button.setToolTip("Switch every head on again")
        self.reset_button.clicked.connect(state.reset_heads)
        self.load_button = QPushButton("Load head importance\u2026")
        self.load_button.setToolTip("Overlay a JSON written by python -m model.evaluation.head_importance "
                                    "(Michel et al. 2019, eq. 2)")
        self.load_button.clicked.connect(self.load_importance_requested)
        self.clear_button = QPushButton("Clear")
        self.clear_button.setToolTip("Remove the head-importance overlay")
        self.clear_button.clicked.connect(lambda: state.set_head_importance(None))
        self.prune_spin = QSpinBox()
        self.prune_spin.setToolTip("How many heads to switch off, least important first")
        self.prune_button = QPushButton("Switch off the k least important")
        self.prune_button.clicked.connect(self.prune)
        self._build_layout()
        state.events.info.connect(lambda info: self._make_toggles(info.n_layers, info.n_heads))
        state.events.head_mask.connect(lambda *_: self.sync())
        state.events.head_importance.connect(lambda *_: self.sync())
        if state.info is not None:
            self._make_toggles(state.n_layers, state.n_heads)
        self.sync()

    def _build_layout(self) -> None:
        buttons = QHBoxLayout()
        for w in (self.reset_button, self.load_button, self.clear_button, self.prune_spin, self.prune_button):
            buttons.addWidget(w)
        buttons.addStretch(1)
        self.grid_host = QWidget()
        self.grid = QGridLayout(self.grid_host)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.grid.setSpacing(2)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(buttons)
        lay.addWidget(self.grid_host)
        lay.addWidget(self.caption)

    def _make_toggles(self, n_layers: int, n_heads: int) -> None:
        """One toggle per head of an ``n_layers`` x ``n_heads`` model (kept when the shape is the same)."""
        if set(self.toggles) == {(l, h) for l in range(n_layers) for h in range(n_heads)}:
            return
        old = self.grid_host
        self.grid_host = QWidget()
        self.grid = QGridLayout(self.grid_host)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.grid.setSpacing(2)
        self.layout().replaceWidget(old, self.grid_host)
        old.deleteLater()
        self.toggles = {}
        for h in range(n_heads):
            self.grid.addWidget(QLabel(f"H{h + 1}", alignment=Qt.AlignCenter), 0, h + 1)
        for layer in range(n_layers):
            self.grid.addWidget(QLabel(f"L{layer + 1}"), layer + 1, 0)
            for h in range(n_heads):
                t = HeadToggle(layer, h)
                t.clicked.connect(lambda _checked=False, l=layer, hh=h: self.state.toggle_head(l, hh))
                self.grid.addWidget(t, layer + 1, h + 1)
                self.toggles[(layer, h)] = t
        self.grid.setColumnStretch(n_heads + 1, 1)
        self.prune_spin.setRange(0, n_layers * n_heads)
        self.sync()

    def n_off(self) -> int:
        """How many heads the state's mask switches off (0 when every head is on)."""
        m = self.state.head_mask
        return 0 if m is None else int((m == 0).sum())

    def sync(self) -> None:
        """Show the state's head mask and head importance on the toggles, the caption and the buttons."""
        imp = self.state.head_importance
        if imp is not None and imp.shape != (self.state.n_layers, self.state.n_heads):
            imp = None
        top = float(imp.max()) if imp is not None and imp.size else 0.0
        name = self.state.head_importance_name
        for (layer, h), t in self.toggles.items():
            t.show_state(self.state.head_on(layer, h), None if imp is None else float(imp[layer, h]), top, name)
        n_off, total = self.n_off(), len(self.toggles)
        self.reset_button.setText(f"Reset heads ({n_off} off)")
        self.reset_button.setEnabled(n_off > 0)
        self.clear_button.setEnabled(imp is not None)
        self.prune_spin.setEnabled(imp is not None)
        self.prune_button.setEnabled(imp is not None)
        if not total:
            text = ""
        elif n_off:
            text = (f"<b>{n_off} of {total} heads switched off</b>: the prediction and every view are for the model "
                    "without them (their attention weights are still computed; their output is removed).")
        else:
            text = f"All {total} heads on. Click a toggle (or Ctrl+click / right-click a thumbnail) to switch one off."
        if imp is not None:
            text += f" Numbers and tint: {name or 'head importance'} (higher = more important)."
        self.caption.setText(text)

    def prune(self) -> None:
        """Switch off the ``prune_spin`` least important heads of the loaded importance (the others on); nothing
        without an importance table."""
        imp = self.state.head_importance
        if imp is None:
            return
        self.state.set_head_mask(pruning_mask(imp, self.prune_spin.value()))
