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
:mod:`desktop_app.panels.inside.block`. The geometry (:func:`layout`) is a pure function of the trace and the size,
so the tests read exactly what is drawn.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFont, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import QLabel, QToolTip, QVBoxLayout, QWidget

from model.palette import OKABE_ITO
from model.records.block import BlockStep, BlockTrace

from ..colours import colours_for

BRANCH_COLOURS = {"stream": "#6b7f99", "attention": OKABE_ITO[3], "ffn": OKABE_ITO[2], "readout": OKABE_ITO[4]}
"""Box and band colours: the residual stream slate blue, the attention branch orange, the FFN bluish green, the
read-out reddish purple (Okabe-Ito: apart for the common colour-vision deficiencies)."""

LANES = {"attention": 0, "stream": 1, "ffn": 2}
MAX_BAND = 40.0  # px: the largest norm of a row
MIN_BAND = 3.0  # px: a box never thinner than this (its norm is still shown)
STRIP_DIMS = 24  # the first dimensions of each vector shown under its box
LABEL_ZONE = 40.0  # px under a lane's boxes: the strip, the name, the norm
MIN_COLUMN = 54.0  # px: narrower than this and the view scrolls
SHORT = {"input": "x", "ln1": "LN 1", "q": "Q", "k": "K", "v": "V", "attention": "Attention", "w_o": "W_O",
         "add1": "\u2295", "w1": "W1", "w2": "W2", "add2": "\u2295", "ln2": "LN 2", "output": "x\u2032",
         "final_ln": "Final LN", "probabilities": ""}


def short_name(step: BlockStep) -> str:
    """The name under a box: short on the layer's rows ("LN 1", "⊕"), the full title on the read-out's."""
    if step.key == "act":
        return step.title.split(": ", 1)[-1]
    if step.branch == "readout" and step.key != "final_ln":
        return step.title
    return SHORT.get(step.key, step.title)


def norm_text(value: float) -> str:
    """A norm as the view prints it (three significant digits)."""
    return f"\u2016\u00b7\u2016 {value:.3g}"


@dataclass
class Node:
    """One box as drawn: its step, its rectangle, its row's band scale (px per unit of norm) and its column."""

    step: BlockStep
    rect: QRectF
    scale: float
    column: int
    label_y: float  # the top of its strip / name / norm block

    @property
    def key(self) -> str:
        """The step's key."""
        return self.step.key


@dataclass
class Layout:
    """The geometry of one trace at one size: boxes, bands ((from key, to key)), the rows' tops and the height."""

    nodes: list[Node] = field(default_factory=list)
    edges: list[tuple[str, str]] = field(default_factory=list)
    readout_top: float = 0.0
    height: float = 0.0

    def node(self, key: str) -> Node:
        """The node of step ``key``. Raises KeyError."""
        for n in self.nodes:
            if n.key == key:
                return n
        raise KeyError(key)


def edges_of(steps) -> list[tuple[str, str]]:
    """The bands between the layer's steps: each step reads the one before it (Q, K and V the same one; the heads
    all three); a stream step after a branch also receives the residual stream that skipped the branch."""
    edges: list[tuple[str, str]] = []
    last = last_stream = q_from = None
    for s in steps:
        if s.key in ("k", "v"):
            src = [q_from]
        elif s.key == "attention":
            src = ["q", "k", "v"]
        else:
            src = [last] if last else []
        q_from = last if s.key == "q" else q_from
        if s.branch == "stream" and last_stream is not None and last not in (None, last_stream):
            src.append(last_stream)  # the residual connection joins here
        edges += [(f, s.key) for f in src if f is not None]
        last_stream = s.key if s.branch == "stream" else last_stream
        last = s.key
    return edges


def _scale(steps) -> float:
    top = max((s.norm for s in steps), default=0.0)
    return MAX_BAND / top if top > 0 else 0.0


def layout(trace: BlockTrace, width: float, top: float = 40.0) -> Layout:
    """Where every box of ``trace`` goes in a view ``width`` px wide, from ``top`` down: the layer's three lanes
    (attention above the stream, the FFN below), then the read-out row. Box heights: norm x the row's scale, at least
    :data:`MIN_BAND`."""
    out = Layout(edges=edges_of(trace.steps))
    cols, col = [], -1
    for s in trace.steps:
        col += 0 if s.key in ("k", "v") else 1
        cols.append(col)
    n_cols = col + 1
    col_w = max(MIN_COLUMN, (width - 16) / max(1, n_cols))
    scale = _scale(trace.steps)
    qkv_h = sum(max(MIN_BAND, trace.step(k).norm * scale) for k in ("q", "k", "v")) + 12
    lane_h = [max(MAX_BAND, qkv_h) + LABEL_ZONE, MAX_BAND + LABEL_ZONE, MAX_BAND + LABEL_ZONE]
    lane_top = [top, top + lane_h[0] + 8, top + lane_h[0] + lane_h[1] + 16]
    box_w = min(22.0, col_w * 0.4)
    stacked = 0.0
    for s, c in zip(trace.steps, cols):
        lane = LANES[s.branch]
        h = max(MIN_BAND, s.norm * scale)
        x = 8 + c * col_w + (col_w - box_w) / 2
        zone = lane_h[lane] - LABEL_ZONE
        if s.key in ("q", "k", "v"):
            y = lane_top[lane] + (zone - qkv_h) / 2 + 6 + stacked
            stacked += h + 6
        else:
            y = lane_top[lane] + (zone - h) / 2
        out.nodes.append(Node(s, QRectF(x, y, box_w, h), scale, c, lane_top[lane] + zone + 2))
    out.readout_top = lane_top[2] + lane_h[2] + 10
    out.height = out.readout_top
    if trace.readout:
        r_scale = _scale(trace.readout)
        r_col = max(MIN_COLUMN * 1.6, (width - 16) / len(trace.readout))
        r_top = out.readout_top + 22
        for c, s in enumerate(trace.readout):
            h = max(MIN_BAND, s.norm * r_scale)
            x = 8 + c * r_col + (r_col - box_w) / 2
            out.nodes.append(Node(s, QRectF(x, r_top + (MAX_BAND - h) / 2, box_w, h), r_scale, n_cols + c,
                                  r_top + MAX_BAND + 2))
        keys = [s.key for s in trace.readout]
        out.edges += list(zip(keys, keys[1:]))
        out.height = r_top + MAX_BAND + LABEL_ZONE + 24
    return out


def step_details(trace: BlockTrace, step: BlockStep) -> str:
    """The rich text under the diagram for ``step``: name, formula, norm and size, and what the step has of its own
    (LayerNorm statistics, the attention per head, the top neurons, the read-out's numbers)."""
    rows = [f"<b>{step.title}</b> &nbsp; <code>{step.formula}</code>",
            f"output: {step.output.size} numbers, norm \u2016\u00b7\u2016 = {step.norm:.4g}"]
    ln = step.layer_norm
    if ln is not None:
        rows.append(f"mean \u03bc = {ln.mean:.4g}, variance \u03c3\u00b2 = {ln.variance:.4g}, \u03b5 = {ln.eps:.0e}; "
                    f"\u03b3: mean {float(ln.gamma.mean()):.3g}, \u03b2: mean {float(ln.beta.mean()):.3g} "
                    f"({ln.gamma.size} values each)")
    if step.weights is not None:
        for h, row in enumerate(step.weights):
            best = np.argsort(-row, kind="stable")[:3]
            shown = ", ".join(f"{_tok(trace.tokens[j])} {row[j]:.2f}" for j in best)
            rows.append(f"head {h}: attends to {shown}")
    if step.neurons is not None:
        nz = step.neurons
        rows.append("top FFN units (|g_k| \u00b7 \u2016W2[k]\u2016): " + ", ".join(
            f"#{int(k)} g={a:.3g} ({s:.3g})" for k, a, s in zip(nz.index, nz.activation, nz.score)))
    if step.key == "probabilities" and trace.labels:
        rows.append(", ".join(f"{lab} {v:.3f}" for lab, v in zip(trace.labels, step.output)))
    return "<br>".join(rows)


def _tok(token: str) -> str:
    return "'" + token.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") + "'"


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
            n_cols = len(self.trace.steps) - 2
            self.setMinimumWidth(int(16 + MIN_COLUMN * n_cols))
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
        legend = "box and band heights \u221d \u2016vector\u2016  \u00b7  above: attention  \u00b7  middle: " \
                 "the residual stream  \u00b7  below: the feed-forward network (FFN)"
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
        p.drawText(QRectF(cx - half, y + 7, 2 * half, 16), Qt.AlignHCenter, name)
        p.setFont(_font(8))
        p.setPen(QColor("#444444"))
        value = norm_text(n.step.norm) if n.key != "probabilities" else _outputs_text(self.trace, n.step)
        p.drawText(QRectF(cx - half, y + 22, 2 * half, 14), Qt.AlignHCenter, value)


def _outputs_text(trace: BlockTrace, step: BlockStep) -> str:
    pairs = list(zip(trace.labels, step.output))
    if len(pairs) > 3:
        pairs = sorted(pairs, key=lambda t: -float(t[1]))[:2]
    return "  ".join(f"{lab} {float(v):.2f}" for lab, v in pairs)


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
        lay.addWidget(self.details, 1)
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
            return
        self.details.setText(step_details(trace, trace.step(self.diagram.selected)))
