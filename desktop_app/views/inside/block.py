"""The Block view (issue 53, section 4): one token followed through one encoder layer, drawn as a Sankey-like
diagram for students, and after the last layer the read-out.

Left to right, one box per step of :class:`model.records.block.BlockTrace` in the order the model computes it. The
residual stream runs along the middle row; the attention branch (Q, K, V, the heads, W_O) splits off above it and
the feed-forward branch (W1, the activation, W2) below it, and each is added back at a residual add (⊕). A box's
height and the bands into it are proportional to the norm of the step's output vector (one scale per row, said in
the legend), so a student sees where the vector grows, where a LayerNorm shrinks it and how much each branch adds.
Under each box: a strip of the vector's first dimensions in the app's diverging palette (blue negative, red
positive), the step's short name and its norm. Hover a box for its name, formula and norm; click it for its details
under the diagram (the LayerNorm's mean, variance, gamma and beta; the attention per head; the top FFN neurons; the
read-out's numbers). The read-out row (the last layer only) follows: pooling, the pooler, the classifier and
softmax / sigmoid / the value.

The view draws ``state.inside.block_trace`` (NumPy only, no torch) and its note; the controller that computes it is
:mod:`desktop_app.panels.inside.block`. The geometry and the texts are :mod:`.block_layout`'s, pure functions of the
trace and the width, so the tests read exactly what is drawn.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFont, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import QLabel, QToolTip, QVBoxLayout, QWidget

from model.records.block import BlockTrace

from ..colours import colours_for
from .block_layout import (BRANCH_COLOURS, LABEL_ZONE, STRIP_DIMS, Layout, Node, layout, min_width, norm_text,
                           outputs_text, short_name, step_details)

class BlockDiagram(QWidget):
    """The diagram of one :class:`BlockTrace` (module docstring); ``set_trace(None, note)`` shows the note instead.

    Signals:
        step_clicked(str): a box was clicked (its step key).

    Attributes:
        trace: the trace drawn, or None. note: what is shown without one. geometry: the :class:`Layout` last drawn.
        selected: the key of the step whose details are shown.
    """

    step_clicked = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.trace: BlockTrace | None = None
        self.note = ""
        self.selected = "input"
        self.geometry = Layout()
        self.setMouseTracking(True)
        self.setMinimumHeight(120)

    def set_trace(self, trace: BlockTrace | None, note: str = "") -> None:
        """Draw ``trace`` (None: the ``note``)."""
        self.trace, self.note = trace, note
        if trace is not None and self.selected not in [s.key for s in trace.all_steps]:
            self.selected = "input"
        self.relayout()

    def relayout(self) -> None:
        """Recompute the geometry for the current width (and the height the diagram needs)."""
        if self.trace is None:
            self.geometry = Layout()
            self.setMinimumSize(0, 120)
        else:
            self.setMinimumWidth(min_width(self.trace))
            self.geometry = layout(self.trace, max(self.width(), self.minimumWidth()))
            self.setMinimumHeight(int(self.geometry.height))
        self.update()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        if self.trace is not None:
            self.geometry = layout(self.trace, self.width())
        self.update()

    def node_at(self, pos: QPointF) -> Node | None:
        """The box under ``pos`` (its label block counts too), or None."""
        for n in self.geometry.nodes:  # the boxes first (Q, K and V share a column)
            if n.rect.adjusted(-4, -3, 4, 3).contains(pos):
                return n
        for n in self.geometry.nodes:
            if QRectF(n.rect.center().x() - 26, n.label_y, 52, LABEL_ZONE).contains(pos):
                return n
        return None

    def mouseMoveEvent(self, event) -> None:  # noqa: N802 - Qt's name
        n = self.node_at(event.position())
        if n is None:
            QToolTip.hideText()
            return
        s = n.step
        QToolTip.showText(event.globalPosition().toPoint(),
                          f"<b>{s.title}</b><br><code>{s.formula}</code><br>norm {s.norm:.4g}, {s.output.size} numbers"
                          "<br><i>click for details</i>", self)

    def mousePressEvent(self, event) -> None:  # noqa: N802 - Qt's name
        n = self.node_at(event.position())
        if n is not None:
            self.selected = n.key
            self.update()
            self.step_clicked.emit(n.key)

    def paintEvent(self, _event) -> None:  # noqa: N802 - Qt's name
        p = QPainter(self)
        p.setRenderHint(QPainter.Antialiasing)
        p.fillRect(self.rect(), QColor("white"))
        if self.trace is None:
            p.setPen(QColor("#555555"))
            p.drawText(self.rect().adjusted(12, 12, -12, -12), Qt.AlignLeft | Qt.TextWordWrap, self.note)
            return
        self._paint_headings(p)
        nodes = {n.key: n for n in self.geometry.nodes}
        for a, b in self.geometry.edges:
            _band(p, nodes[a], nodes[b])
        for n in self.geometry.nodes:
            self._paint_node(p, n)

    def _paint_headings(self, p: QPainter) -> None:
        t = self.trace
        p.setPen(QColor("#222222"))
        p.setFont(_font(9, bold=True))
        p.drawText(QPointF(8, 16), f"Layer {t.layer + 1} of {t.n_layers}, token {t.position} "
                                   f"'{t.token}' ({'post' if t.post_ln else 'pre'}-LN)")
        p.setFont(_font(8))
        p.setPen(QColor("#555555"))
        legend = "heights \u221d \u2016vector\u2016 (the number under each box)  \u00b7  top: attention  \u00b7  " \
                 "middle: residual stream  \u00b7  bottom: FFN"
        p.drawText(QPointF(8, 31), legend)
        if t.readout:
            p.setFont(_font(9, bold=True))
            p.setPen(QColor("#222222"))
            reads = "[CLS]" if t.pooling == "cls" else "every token"
            p.drawText(QPointF(8, self.geometry.readout_top + 14),
                       f"Read-out after the last layer (reads {reads}; its own height scale)")

    def _paint_node(self, p: QPainter, n: Node) -> None:
        colour = QColor(BRANCH_COLOURS[n.step.branch])
        p.setPen(QPen(QColor("#222222"), 2.0) if n.key == self.selected else Qt.NoPen)
        p.setBrush(colour)
        p.drawRoundedRect(n.rect, 3, 3)
        cx, y = n.rect.center().x(), n.label_y
        if n.key in ("k", "v"):
            return  # Q, K and V share one label block (under V's column: the heads read all three)
        vec = n.step.output[:STRIP_DIMS]
        rgba, _ = colours_for(vec, signed=True)
        w = 44.0 / max(1, len(vec))
        for j, c in enumerate(rgba):
            p.fillRect(QRectF(cx - 22 + j * w, y, w + 0.5, 6), QColor(int(c[0]), int(c[1]), int(c[2])))
        p.setPen(QColor("#222222"))
        p.setFont(_font(9, bold=True))
        name = "Q K V" if n.key == "q" else short_name(n.step)
        half = 80 if n.step.branch == "readout" else 40
        cx = min(max(cx, half + 2), self.width() - half - 2)  # the read-out's last numbers stay inside the view
        p.drawText(QRectF(cx - half, y + 7, 2 * half, 16), Qt.AlignHCenter, name)
        p.setFont(_font(8))
        p.setPen(QColor("#444444"))
        value = norm_text(n.step.norm) if n.key != "probabilities" else outputs_text(self.trace, n.step)
        p.drawText(QRectF(cx - half, y + 22, 2 * half, 14), Qt.AlignHCenter, value)


def _font(points: float, bold: bool = False) -> QFont:
    f = QFont()
    f.setPointSizeF(points)
    f.setBold(bold)
    return f


def _band(p: QPainter, a: Node, b: Node) -> None:
    """A band from box ``a``'s right edge to box ``b``'s left edge, tapering from a's height to b's (a Sankey link)."""
    ra, rb = a.rect, b.rect
    x0, x1 = ra.right(), rb.left()
    if x1 <= x0:
        return
    mid = (x0 + x1) / 2
    path = QPainterPath(QPointF(x0, ra.top()))
    path.cubicTo(QPointF(mid, ra.top()), QPointF(mid, rb.top()), QPointF(x1, rb.top()))
    path.lineTo(QPointF(x1, rb.bottom()))
    path.cubicTo(QPointF(mid, rb.bottom()), QPointF(mid, ra.bottom()), QPointF(x0, ra.bottom()))
    path.closeSubpath()
    colour = QColor(BRANCH_COLOURS[b.step.branch if b.step.branch != "stream" else a.step.branch])
    colour.setAlpha(80)
    p.setPen(Qt.NoPen)
    p.setBrush(colour)
    p.drawPath(path)


class VectorBars(QWidget):
    """The clicked step's whole vector as bars, one per dimension (blue negative, red positive, the diverging
    palette; bars of a long vector share pixels), the largest |value| printed."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.values = np.zeros(0, np.float32)
        self.setMinimumHeight(64)

    def set_values(self, values: np.ndarray) -> None:
        """Draw ``values`` (float [n]); an empty array draws nothing."""
        self.values = np.asarray(values, dtype=np.float32)
        self.update()

    def paintEvent(self, _event) -> None:  # noqa: N802 - Qt's name
        p = QPainter(self)
        v = self.values
        if not v.size:
            return
        top = float(np.abs(v).max()) or 1.0
        mid, half = (self.height() + 14) / 2, (self.height() - 14) / 2 - 4  # below the caption
        w = (self.width() - 16) / v.size
        rgba, _ = colours_for(v, signed=True)
        for j, (x, c) in enumerate(zip(v, rgba)):
            h = float(x) / top * half
            p.fillRect(QRectF(8 + j * w, mid - max(h, 0), max(w, 1.0), abs(h)), QColor(int(c[0]), int(c[1]), int(c[2])))
        p.setPen(QColor("#888888"))
        p.drawLine(QPointF(8, mid), QPointF(self.width() - 8, mid))
        p.setPen(QColor("#444444"))
        p.setFont(_font(8))
        p.drawText(QPointF(10, 11), f"each of the {v.size} numbers; largest |value| {top:.3g}")


class BlockView(QWidget):
    """The Block view: the diagram of ``state.inside.block_trace`` (or its note) and the clicked step's details.

    Args:
        state: the :class:`~desktop_app.state.ExplorerState` (read: ``inside.block_trace`` and its note).

    Attributes:
        diagram: the :class:`BlockDiagram`. details: the clicked step's details (:func:`step_details`).
    """

    def __init__(self, state, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.diagram = BlockDiagram()
        self.details = QLabel()
        self.details.setWordWrap(True)
        self.details.setTextFormat(Qt.RichText)
        self.details.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.details.setAlignment(Qt.AlignTop | Qt.AlignLeft)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.diagram)
        lay.addWidget(self.details)
        self.bars = VectorBars()
        lay.addWidget(self.bars, 1)
        self.diagram.step_clicked.connect(lambda _key: self._show_details())
        state.inside.events.block_trace.connect(lambda *_: self.refresh())
        self.refresh()

    def refresh(self) -> None:
        """Draw the state's trace (or its note) and the selected step's details."""
        inside = self.state.inside
        self.diagram.set_trace(inside.block_trace, inside.note("block_trace"))
        self._show_details()

    def _show_details(self) -> None:
        trace = self.diagram.trace
        if trace is None:
            self.details.setText("")
            self.bars.set_values(np.zeros(0, np.float32))
            return
        step = trace.step(self.diagram.selected)
        self.details.setText(step_details(trace, step))
        self.bars.set_values(step.output)
