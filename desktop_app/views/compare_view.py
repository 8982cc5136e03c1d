"""The Compare view: a pinned analysis beside the current one, word by word.

Draws a :class:`desktop_app.compare_records.CompareResult` (NumPy only; computed by
:mod:`desktop_app.workers.compare`, which this module never imports, nor torch):

* the pin to compare with (a combo over ``state.pins``, newest first), Unpin and Clear pins;
* the explanation method (a combo; the controller fills it, :meth:`CompareView.set_methods`);
* the status line, with Cancel while a comparison runs and Compare again once one was cancelled
  (:meth:`CompareView.set_activity`);
* both predictions (label, P per class) and their difference in percentage points;
* a bar plot of the per-word difference of importance (current minus pinned), and a table of the aligned words
  (equal / replaced / inserted / deleted, coloured) with each text's importance by the method and by ALTI, and the
  differences.

The window connects the controller to the view (:meth:`desktop_app.workers.compare.CompareController.connect_view`).
The view follows ``state.pins`` itself (so pins set from outside, e.g. a restored session, show at once) and raises
its dock when a pin is added.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDockWidget,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..compare_records import DELETE, INSERT, OP_TITLES, REPLACE
from .colours import NEGATIVE_COLOUR, POSITIVE_COLOUR
from .render import DeferredRender
from .widgets import TokenAxis, style_plot

OP_BACKGROUNDS = {REPLACE: "#fff1c2", INSERT: "#d9f2de", DELETE: "#f8d8d8"}
"""Row colours of the word table by kind (equal rows keep the table's background)."""

WORD_COLUMNS = ("pinned word", "current word", "change", "pinned", "current", "\u0394", "ALTI pinned",
                "ALTI current", "\u0394 ALTI")
"""The word table's columns: the aligned words, the kind of row, the method's importance in each text and its
difference (current minus pinned, an absent word counting 0), the same for ALTI."""

PLOT_HEIGHT = 150  # pixels of the per-word difference plot


def short_text(text: str, n: int = 60) -> str:
    """``text`` on one line, at most ``n`` characters (an ellipsis when cut)."""
    one = " ".join(str(text).split())
    return one if len(one) <= n else one[: n - 1] + "\u2026"


def row_label(op: str, pinned: str, current: str) -> str:
    """The plot's label of one aligned row: the word; "old\u2192new" when replaced; "+new" inserted; "\u2212old"
    deleted."""
    if op == REPLACE:
        return f"{pinned}\u2192{current}"
    if op == INSERT:
        return f"+{current}"
    if op == DELETE:
        return f"\u2212{pinned}"
    return current


def number(value: float, signed: bool = False) -> str:
    """A table cell's text: 3 decimals ("+" on positive differences when ``signed``), "" for NaN."""
    if value is None or not np.isfinite(value):
        return ""
    return f"{value:+.3f}" if signed else f"{value:.3f}"


class CompareView(DeferredRender, QWidget):
    """The chosen pin beside the current analysis (see the module docstring).

    Args:
        state: the shared :class:`desktop_app.state.ExplorerState` (read: ``pins``; written by Unpin and Clear pins).

    Attributes:
        result: the :class:`~desktop_app.compare_records.CompareResult` on display, or None.

    Signals:
        method_chosen(str): the user chose an explanation method (a ``model.explain`` id).
        pin_chosen(int): the user chose a pin (an index into ``state.pins``).
        cancel_requested(): the user pressed Cancel (shown only while a comparison runs).
        retry_requested(): the user pressed Compare again (shown only after a cancelled comparison).
        pinned(): a text was pinned (the pins grew): the window shows the view that reads the new pin
            (:func:`desktop_app.window.workspaces.pin_view`; a view never raises its own dock past the workspaces).
    """

    method_chosen = Signal(str)
    pin_chosen = Signal(int)
    cancel_requested = Signal()
    retry_requested = Signal()
    pinned = Signal()

    def __init__(self, state, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._init_deferred()
        self.state = state
        self.result = None
        self._message = ""
        self._n_pins = len(state.pins)
        self.pin_combo = QComboBox()
        self.pin_combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.pin_combo.setMinimumContentsLength(12)
        self.pin_combo.setToolTip("The pinned analysis the current one is compared with (Ctrl+Shift+P pins one)")
        self.unpin_button = QPushButton("Unpin")
        self.clear_button = QPushButton("Clear pins")
        self.method_combo = QComboBox()
        self.method_combo.setToolTip("The explanation whose token scores are compared (summed over each word)")
        self.status_label = QLabel("")
        self.status_label.setWordWrap(True)
        self.status_label.setStyleSheet("color: palette(mid);")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop this comparison (the analysis itself is never delayed by it)")
        self.retry_button = QPushButton("Compare again")
        self.retry_button.setToolTip("Run the cancelled comparison again")
        for button in (self.cancel_button, self.retry_button):
            button.setVisible(False)
        self.summary_table = self._table(["", "text", "label"])
        self.caption = QLabel("")
        self.caption.setWordWrap(True)
        self.words_axis = TokenAxis("bottom", max_chars=14)
        self.delta_plot = pg.PlotWidget(background="w", axisItems={"bottom": self.words_axis})
        self.delta_plot.setFixedHeight(PLOT_HEIGHT)
        item = self.delta_plot.getPlotItem()
        style_plot(item)
        item.setMouseEnabled(False, False)
        item.setMenuEnabled(False)
        item.hideButtons()
        self.words_table = self._table(list(WORD_COLUMNS))
        self.words_table.setMinimumHeight(90)
        self._build_layout()
        self.pin_combo.activated.connect(self._on_pin_activated)
        self.method_combo.activated.connect(self._on_method_activated)
        self.unpin_button.clicked.connect(self._unpin)
        self.clear_button.clicked.connect(state.clear_pins)
        self.cancel_button.clicked.connect(self.cancel_requested)
        self.retry_button.clicked.connect(self.retry_requested)
        state.events.pins.connect(self._on_pins)
        self._fill_pins(state.pins)
        self._fill_summary(None)

    @staticmethod
    def _table(headers: list[str]) -> QTableWidget:
        table = QTableWidget(0, len(headers))
        table.setHorizontalHeaderLabels(headers)
        table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        table.setSelectionBehavior(QAbstractItemView.SelectRows)
        table.verticalHeader().setVisible(False)
        table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 6)
        return table

    def _build_layout(self) -> None:
        pins = QHBoxLayout()
        pins.addWidget(QLabel("Pinned:"))
        pins.addWidget(self.pin_combo, 1)
        pins.addWidget(self.unpin_button)
        pins.addWidget(self.clear_button)
        method = QHBoxLayout()
        method.addWidget(QLabel("Importance:"))
        method.addWidget(self.method_combo, 1)
        self.summary_table.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)
        self.summary_table.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(pins)
        lay.addLayout(method)
        status = QHBoxLayout()
        status.addWidget(self.status_label, 1)
        status.addWidget(self.cancel_button)
        status.addWidget(self.retry_button)
        lay.addLayout(status)
        lay.addWidget(self.summary_table)
        lay.addWidget(self.caption)
        lay.addWidget(self.delta_plot)
        lay.addWidget(self.words_table, 1)

    # ------------------------------------------------------------------ inputs
    def set_methods(self, choices, current: str) -> None:
        """Offer ``choices`` (``(id, title)`` pairs) in the method combo and select ``current`` (no signal)."""
        self.method_combo.blockSignals(True)
        self.method_combo.clear()
        for method, title in choices:
            self.method_combo.addItem(title, method)
        i = self.method_combo.findData(current)
        self.method_combo.setCurrentIndex(max(0, i))
        self.method_combo.blockSignals(False)

    def set_status(self, message: str) -> None:
        """Show ``message`` (what is being computed, why nothing is compared, a failure); "" shows the result's
        notes instead."""
        self._message = str(message)
        self._show_status()

    def set_activity(self, activity: str) -> None:
        """What the controller is doing: "running" shows Cancel, "cancelled" shows Compare again, anything else
        ("") neither (the values of :mod:`desktop_app.workers.compare`'s ``RUNNING``, ``CANCELLED``, ``IDLE``)."""
        self.cancel_button.setVisible(activity == "running")
        self.retry_button.setVisible(activity == "cancelled")

    def set_result(self, result) -> None:
        """Show ``result`` (a :class:`~desktop_app.compare_records.CompareResult`), or clear the comparison (None).
        Drawn on a later event-loop turn when visible (:meth:`flush` draws now)."""
        self.result = result
        self._show_status()
        self.request_render()

    def _show_status(self) -> None:
        message = self._message
        notes = "; ".join(self.result.notes) if self.result is not None else ""
        self.status_label.setText(message or notes)
        self.status_label.setVisible(bool(message or notes))

    # ------------------------------------------------------------------ pins
    def _fill_pins(self, pins) -> None:
        """List ``pins`` newest first (item data: the index into ``state.pins``); select the newest."""
        self.pin_combo.blockSignals(True)
        self.pin_combo.clear()
        for i in range(len(pins) - 1, -1, -1):
            pin = pins[i]
            pred = pin.prediction
            verdict = f" ({pred.label} {float(np.max(pred.probabilities)) * 100:.0f} %)" \
                if len(getattr(pred, "probabilities", ())) else ""
            heads = ", heads off" if pin.head_mask is not None else ""
            model = "model B: " if pin.of_model_b else ""
            self.pin_combo.addItem(f"{i + 1}. {model}{short_text(pin.text, 50)}{verdict}{heads}", i)
            self.pin_combo.setItemData(self.pin_combo.count() - 1, pin.text, Qt.ToolTipRole)
        self.pin_combo.blockSignals(False)
        has = bool(pins)
        for w in (self.pin_combo, self.unpin_button, self.clear_button):
            w.setEnabled(has)

    def _on_pins(self, pins) -> None:
        grew = len(pins) > self._n_pins
        self._n_pins = len(pins)
        self._fill_pins(pins)
        if grew:
            self.pinned.emit()

    def chosen_pin_index(self) -> int:
        """The index into ``state.pins`` of the pin chosen in the combo (-1: none)."""
        data = self.pin_combo.currentData()
        return int(data) if data is not None else -1

    def _on_pin_activated(self, _row: int) -> None:
        i = self.chosen_pin_index()
        if i >= 0:
            self.pin_chosen.emit(i)

    def _on_method_activated(self, _row: int) -> None:
        method = self.method_combo.currentData()
        if method:
            self.method_chosen.emit(str(method))

    def _unpin(self) -> None:
        i = self.chosen_pin_index()
        if i >= 0:
            self.state.unpin(i)

    # ------------------------------------------------------------------ drawing
    def redraw(self) -> None:
        """Fill the summary, the plot and the word table from :attr:`result` (called by :class:`DeferredRender`)."""
        r = self.result
        self._fill_summary(r)
        self._fill_words(r)
        self._draw_plot(r)
        if r is None:
            self.caption.setText("")
            return
        kind = f"evidence for {r.target_label}" if r.signed else "share of the read-out"
        self.caption.setText(f"<b>{r.method_title}</b> ({kind}), summed over each word's tokens; "
                             f"\u0394 = {r.names[1]} \u2212 {r.names[0]}")

    def _fill_summary(self, r) -> None:
        t = self.summary_table
        labels = r.labels if r is not None else ()
        t.setColumnCount(3 + len(labels))
        t.setHorizontalHeaderLabels(["", "text", "label", *(f"P({name})" for name in labels)])
        t.setRowCount(0 if r is None else 3)
        if r is not None:
            for row, (name, side) in enumerate(zip(r.names, (r.pinned, r.current), strict=True)):
                if side.head_mask is not None:
                    name += f" ({int((side.head_mask == 0).sum())} heads off)"
                cells = [name, short_text(side.text), side.label, *(f"{p * 100:.1f} %" for p in side.probabilities)]
                for col, text in enumerate(cells):
                    t.setItem(row, col, QTableWidgetItem(text))
                t.item(row, 1).setToolTip(side.text)
            same = "same" if r.pinned.label == r.current.label else f"{r.pinned.label} \u2192 {r.current.label}"
            cells = ["\u0394", "", same, *(f"{d * 100:+.1f} pts" for d in r.delta_probabilities)]
            for col, text in enumerate(cells):
                t.setItem(2, col, QTableWidgetItem(text))
        t.resizeRowsToContents()
        rows = sum(t.rowHeight(i) for i in range(t.rowCount()))
        # room for the horizontal scroll bar too: in a narrow dock it appears, and it covered the delta row
        bar = t.horizontalScrollBar().sizeHint().height()
        t.setFixedHeight(t.horizontalHeader().sizeHint().height() + rows + bar + 2 * t.frameWidth())

    def _fill_words(self, r) -> None:
        t = self.words_table
        if r is None:
            t.setRowCount(0)
            return
        a, b = r.names
        t.setHorizontalHeaderLabels([f"{a} word", f"{b} word", "change", a, b, "\u0394", f"ALTI {a}", f"ALTI {b}",
                                     "\u0394 ALTI"])  # WORD_COLUMNS, named for the two sides
        words = r.row_words()
        imp = r.importance_rows()
        flow = r.flow_rows()
        t.setRowCount(len(words))
        for row, (op, pinned, current) in enumerate(words):
            values = [number(imp[row, 0]), number(imp[row, 1]), number(imp[row, 2], True)]
            values += ["", "", ""] if flow is None else \
                [number(flow[row, 0]), number(flow[row, 1]), number(flow[row, 2], True)]
            background = OP_BACKGROUNDS.get(op)
            for col, text in enumerate([pinned, current, OP_TITLES[op], *values]):
                cell = QTableWidgetItem(text)
                if col >= 3:
                    cell.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
                if background is not None:
                    cell.setBackground(QBrush(QColor(background)))
                t.setItem(row, col, cell)

    def _draw_plot(self, r) -> None:
        item = self.delta_plot.getPlotItem()
        item.clear()
        if r is None or not len(r.alignment):
            self.words_axis.set_tokens([])
            item.setTitle("")
            return
        words = r.row_words()
        delta = r.importance_rows()[:, 2]
        x = np.arange(len(delta), dtype=np.float64) + 0.5
        brushes = [QColor(POSITIVE_COLOUR if d >= 0 else NEGATIVE_COLOUR) for d in delta]
        item.addItem(pg.BarGraphItem(x=x, height=delta, width=0.8, brushes=brushes, pen=pg.mkPen(None)))
        item.addItem(pg.InfiniteLine(0.0, angle=0, pen=pg.mkPen("#555555", width=1)))
        self.words_axis.set_tokens([row_label(op, a, b) for op, a, b in words])
        span = float(np.abs(delta).max()) or 1.0
        item.setRange(xRange=(0, len(delta)), yRange=(-span, span), padding=0.05)
        item.setTitle(f"\u0394 {r.method_title} per word ({r.names[1]} \u2212 {r.names[0]})", color="#222222",
                      size="8pt")

    def plot_deltas(self) -> np.ndarray:
        """float64 [R]: the bar heights drawn (per aligned row; empty when nothing is drawn)."""
        for it in self.delta_plot.getPlotItem().items:
            if isinstance(it, pg.BarGraphItem):
                return np.asarray(it.opts["height"], dtype=np.float64)
        return np.zeros(0)

    def showEvent(self, event) -> None:
        """Draw what changed while hidden."""
        super().showEvent(event)
        self._deferred_show()

