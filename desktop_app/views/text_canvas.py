"""The painted token strip: :class:`TokenCanvas`, one custom-painted widget (no widget per token) that lays out
token boxes in reading order with word wrap, colours them, and hit-tests clicks and hovers.

512 tokens lay out and paint in a few milliseconds. The pieces of one word are drawn together, as the word reads
(:mod:`desktop_app.views.token_layout`); each stays clickable, its tooltip names it with the ``##`` marker and the
whole word, and a faint tick marks the border between two pieces only where their colours do not. It also paints a
long review's window marks (:mod:`desktop_app.views.document_plot`) and a sentence pair's marks
(:mod:`desktop_app.views.pair_marks`). Used by the token view (:mod:`desktop_app.views.token_view`) and the
comparison view's strips (:mod:`desktop_app.views.comparison_view`).
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QEvent, QPoint, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from .colours import HIGHLIGHT_COLOUR
from .document_plot import paint_window_marks
from .pair_marks import paint_pair_marks
from .token_layout import layout_tokens, piece_advances

PIECE_TICK_COLOUR = "#9a9a9a"  # the tick between two pieces of one word


class TokenCanvas(QWidget):
    """Paints token boxes in reading order with word wrap; hit-tests clicks and hovers.

    Signals:
        token_clicked(int, bool): (token index, Shift held).
        token_hovered(int): token index under the mouse, -1 when none.
    """

    token_clicked = Signal(int, bool)
    token_hovered = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMouseTracking(True)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Preferred)
        self.pieces: list[tuple[str, str]] = []
        self.colours = np.zeros((0, 4), np.uint8)
        self.values = np.zeros(0, np.float32)
        self.value_name = ""
        self.selection: tuple[int, ...] = ()
        self.highlighted = np.zeros(0, bool)  # [T] tokens of a highlighted word (set by the view)
        self.hovered = -1
        self.rects = np.zeros((0, 4))  # [T, 4] x0, y0, x1, y1 in pixels
        self.pads = np.zeros((0, 2))  # [T, 2] left/right padding inside each box (none between a word's pieces)
        self.starts = np.zeros(0, np.int64)  # [T] first token of each token's word
        self.markers: list[QRectF] = []  # truncation markers
        self.window_starts: tuple[int, ...] = ()  # first token of each window after the first (a long review)
        self.shown_window = (0, 0)  # token range [s, e) of the window the attention views show, when several
        self.pair_start = -1  # a sentence pair's second text's first token (separator and tint), -1: a single text
        self._layout_width = -1
        self._advances: tuple[str, np.ndarray] | None = None  # (font key, [T] piece widths), kept across re-wraps
        self._height = 40

    def set_tokens(self, pieces: list[tuple[str, str]]) -> None:
        """Show ``pieces`` (from :func:`~desktop_app.views.token_layout.token_pieces`); re-lays out."""
        self.pieces, self._advances = pieces, None
        self.hovered = -1
        self._relayout(force=True)

    def set_colours(self, colours: np.ndarray, values: np.ndarray, name: str) -> None:
        """uint8 [T, 4] RGBA backgrounds, float [T] values shown on hover, and what they are."""
        self.colours = colours
        self.values = values
        self.value_name = name
        self.update()

    def set_selection(self, selection: tuple[int, ...]) -> None:
        """Outline the selected query tokens."""
        self.selection = tuple(selection)
        self.update()

    def setFont(self, font: QFont) -> None:
        """Change the font (zoom) and re-lay out."""
        super().setFont(font)
        self._relayout(force=True)

    def token_rect(self, index: int) -> QRectF:
        """The box of token ``index`` in this widget's coordinates (pixels)."""
        x0, y0, x1, y1 = self.rects[index]
        return QRectF(x0, y0, x1 - x0, y1 - y0)

    def text_rect(self, index: int) -> QRectF:
        """Where token ``index``'s text is drawn: its box without the padding (pixels)."""
        left, right = self.pads[index]
        return self.token_rect(index).adjusted(float(left), 0.0, -float(right), 0.0)

    def token_at(self, pos) -> int:
        """Index of the token under widget position ``pos`` (QPoint/QPointF), or -1."""
        if not len(self.rects):
            return -1
        x, y = pos.x(), pos.y()
        r = self.rects
        hit = np.nonzero((r[:, 0] <= x) & (x < r[:, 2]) & (r[:, 1] <= y) & (y < r[:, 3]))[0]
        return int(hit[0]) if len(hit) else -1

    def _relayout(self, force: bool = False) -> None:
        width = max(100, self.width())
        if not force and width == self._layout_width:
            return
        self._layout_width = width
        fm = QFontMetricsF(self.font())
        if self._advances is None or self._advances[0] != self.font().key():  # new tokens or font: measure
            self._advances = (self.font().key(), piece_advances(self.pieces, fm))
        lay = layout_tokens(self.pieces, fm, width, self._advances[1])
        self.rects, self.pads, self.starts, self.markers = lay.rects, lay.pads, lay.starts, lay.markers
        self._height = int(lay.height)
        self.setMinimumHeight(self._height)
        self.updateGeometry()
        self.update()

    def sizeHint(self) -> QSize:
        """Preferred size: the laid-out height."""
        return QSize(400, self._height)

    def resizeEvent(self, event) -> None:
        """Re-wrap the tokens to the new width."""
        super().resizeEvent(event)
        self._relayout()

    def paintEvent(self, event) -> None:
        """Paint only the token boxes that intersect the exposed rectangle."""
        p = QPainter(self)
        p.fillRect(self.rect(), QColor("white"))
        if not len(self.rects):
            p.setPen(QColor("gray"))
            p.drawText(self.rect(), Qt.AlignCenter, "No analysis yet")
            return
        er = event.rect()
        top, bottom = er.top() - 2, er.bottom() + 2
        visible = np.nonzero((self.rects[:, 3] >= top) & (self.rects[:, 1] <= bottom))[0]
        sel = set(self.selection)
        has_colours = len(self.colours) == len(self.rects)
        colours = self.colours[visible].tolist() if has_colours else ()  # plain lists: no NumPy scalar per token
        p.setPen(QPen(QColor("black")))
        for k, (i, (x0, y0, x1, y1), (left, right)) in enumerate(
            zip(visible.tolist(), self.rects[visible].tolist(), self.pads[visible].tolist())
        ):
            r = QRectF(x0, y0, x1 - x0, y1 - y0)
            if has_colours:
                p.fillRect(r, QColor(*colours[k]))
            p.drawText(r.adjusted(left, 0.0, -right, 0.0), Qt.AlignCenter, self.pieces[i][0])
        self._paint_piece_ticks(p, visible, has_colours)
        paint_window_marks(p, self.rects, self.window_starts, self.shown_window)
        paint_pair_marks(p, self.rects, self.pair_start, float(self.width()))
        p.setPen(QPen(QColor("#7f8c8d")))
        for m in self.markers:
            p.drawText(m, Qt.AlignCenter, "[\u2026]")
        p.setPen(QPen(QColor(HIGHLIGHT_COLOUR), 2.0))
        for x0, y0, x1, y1 in self.rects[self.highlighted] if len(self.highlighted) == len(self.rects) else ():
            p.drawRect(QRectF(x0 + 1, y0 + 1, x1 - x0 - 2, y1 - y0 - 2))
            p.fillRect(QRectF(x0, y1 - 3, x1 - x0, 3), QColor(HIGHLIGHT_COLOUR))
        for i in sel:
            if 0 <= i < len(self.rects):
                x0, y0, x1, y1 = self.rects[i]
                p.setPen(QPen(QColor("#1f3a93"), 2.0))
                p.drawRect(QRectF(x0 + 1, y0 + 1, x1 - x0 - 2, y1 - y0 - 2))
        if 0 <= self.hovered < len(self.rects):
            x0, y0, x1, y1 = self.rects[self.hovered]
            p.setPen(QPen(QColor("#333333"), 1.0, Qt.DashLine))
            p.drawRect(QRectF(x0, y0, x1 - x0 - 1, y1 - y0 - 1))

    def mouseMoveEvent(self, event) -> None:
        """Track the hovered token (dashed outline, ``token_hovered`` signal)."""
        i = self.token_at(event.position())
        if i != self.hovered:
            self.hovered = i
            self.token_hovered.emit(i)
            self.update()
        super().mouseMoveEvent(event)

    def leaveEvent(self, event) -> None:
        """No token is hovered once the mouse leaves."""
        if self.hovered != -1:
            self.hovered = -1
            self.token_hovered.emit(-1)
            self.update()
        super().leaveEvent(event)

    def mousePressEvent(self, event) -> None:
        """Click selects the token as query; Shift-click toggles it in a multi-token selection."""
        if event.button() == Qt.LeftButton:
            i = self.token_at(event.position())
            if i >= 0:
                self.token_clicked.emit(i, bool(event.modifiers() & Qt.ShiftModifier))
                event.accept()
                return
        super().mousePressEvent(event)

    def event(self, ev) -> bool:
        """Tooltips: the token, its index and its value."""
        if ev.type() == QEvent.ToolTip:
            i = self.token_at(ev.pos())
            if i >= 0 and i < len(self.values):
                QToolTip.showText(ev.globalPos(), self.tooltip_text(i), self)
            else:
                QToolTip.hideText()
                ev.ignore()
            return True
        return super().event(ev)

    def _paint_piece_ticks(self, p: QPainter, visible: np.ndarray, has_colours: bool) -> None:
        """The subword marker, only where it helps: a short tick at the foot of the border between two word pieces of
        one word (letters or digits on both sides: not beside punctuation, which is plainly a token of its own) whose
        backgrounds look alike (different colours already show where one piece ends)."""
        p.setPen(QPen(QColor(PIECE_TICK_COLOUR), 1.0))
        for i in visible:
            if i == 0 or self.starts[i] == i or self.rects[i, 1] != self.rects[i - 1, 1]:
                continue
            before, after = self.pieces[i - 1][0], self.pieces[i][0]
            if not (before[-1:].isalnum() and after[:1].isalnum()):
                continue
            if has_colours and np.abs(self.colours[i, :3].astype(int) - self.colours[i - 1, :3]).max() > 24:
                continue
            x, y1 = float(self.rects[i, 0]), float(self.rects[i, 3])
            p.drawLine(QPointF(x, y1 - 4), QPointF(x, y1 - 1))

    def tooltip_text(self, i: int) -> str:
        """The hover text of token ``i``: the token (with the subword marker ``##`` when it continues a word, and the
        whole word), its index and its value."""
        start = int(self.starts[i]) if i < len(self.starts) else i
        end = start + 1
        while end < len(self.starts) and self.starts[end] == start:
            end += 1
        shown = self.pieces[i][0]
        if end - start > 1:  # a piece of a longer word
            word = "".join(self.pieces[k][0] for k in range(start, end))
            shown = f"{'##' if i > start else ''}{shown}\u201d of \u201c{word}"
        return f"\u201c{shown}\u201d  (token {i})\n{self.value_name}: {float(self.values[i]):.4f}"


__all__ = ["PIECE_TICK_COLOUR", "TokenCanvas"]
