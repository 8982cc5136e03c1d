"""The token view: the review as the model saw it, each token coloured by an importance score.

Default colour: what reaches the classification read-out at the selected layer, under the state's "Show"
choice (:func:`desktop_app.views.shown.read_out_row`): attention from the classification position, mean of heads
(``Prediction.classification_attention(layer)``), the heads' summed value-weighted norms, or the ALTI
contributions aggregated up to the layer. With query tokens selected: the sum of their rows of the shown matrix
(selected layer and head choice). While a flow is being computed the caption says so and no colours are drawn.
The state's token importance (:attr:`desktop_app.state.ExplorerState.importance`, set by
the explanation panel) replaces it with any per-token scores (signed scores use a diverging map).
The state's highlighted words (:attr:`desktop_app.state.ExplorerState.highlighted_words`, e.g. the word the batch
table is filtered by) are framed and underlined in purple wherever they occur, whatever the colouring.

Tokens are drawn by one custom-painted widget (no widget per token), so 512
tokens lay out and paint in a few milliseconds. The pieces of one word are drawn together, as the word reads
(:mod:`desktop_app.views.token_layout`); each stays clickable, its tooltip names it with the ``##`` marker and the
whole word, and a faint tick marks the border between two pieces only where their colours do not.
A long review is shown whole (:mod:`desktop_app.document`): orange bars where windows start, the window the
attention views show underlined (its tokens get the attention colours). A sentence pair's second text starts on a
new line under a dashed blue separator, its tokens underlined in blue (:mod:`desktop_app.views.pair_marks`).
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QEvent, QPoint, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import QHBoxLayout, QLabel, QScrollArea, QSizePolicy, QToolTip, QVBoxLayout, QWidget

from ..document import document_selection, document_values, shown_range
from ..words import tokens_in_words
from .document_plot import paint_window_marks
from .pair_marks import paint_pair_marks, segments
from .colours import DIVERGING_CMAP, HIGHLIGHT_COLOUR, SEQUENTIAL_CMAP, colours_for, gradient_pixmap
from .render import DeferredRender
from .shown import token_values
from .token_layout import layout_tokens, piece_advances, token_pieces
from .widgets import ElidedLabel

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
        """Show ``pieces`` (from :func:`token_pieces`); re-lays out."""
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


class TokenView(DeferredRender, QWidget):
    """The review as tokens coloured by importance (see module docstring).

    Args:
        state: the shared :class:`desktop_app.state.ExplorerState`.
    """

    def __init__(self, state, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._init_deferred()
        self.state = state
        self.canvas = TokenCanvas()
        self.scroll = QScrollArea()
        self.scroll.setWidget(self.canvas)
        self.scroll.setWidgetResizable(True)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.caption = ElidedLabel("")
        self.legend = QLabel()
        self.legend_lo = QLabel("0")
        self.legend_hi = QLabel("")
        head = QHBoxLayout()  # the colour scale, on a row under the caption
        head.addWidget(self.legend_lo)
        head.addWidget(self.legend)
        head.addWidget(self.legend_hi)
        head.addStretch(1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.setSpacing(2)
        lay.addWidget(self.caption)  # the whole width: "Colour: ..." no longer shrinks when a neighbouring dock widens
        lay.addLayout(head)
        lay.addWidget(self.scroll, 1)
        self.values = np.zeros(0, np.float32)
        self._shown, self._lo = (None, 0), 0  # (whole review, first token) laid out; a huge one: around its window
        self.canvas.token_clicked.connect(lambda j, shift: state.windows.select_document_token(j + self._lo, shift))
        state.events.prediction.connect(self._on_prediction)
        state.events.layer_head.connect(lambda *_: self.request_render())
        state.events.selection.connect(self._on_selection)
        for sig in (state.events.importance, state.events.show, state.events.flow):
            sig.connect(lambda *_: self.request_render())
        state.events.highlighted_words.connect(lambda *_: self.request_render())

    def _on_prediction(self, pred) -> None:
        whole, (lo, hi) = (pred.document if pred is not None else None), shown_range(pred)
        many = whole is not None and whole.num_windows > 1
        ranges = whole.windows.ranges if whole is not None else None
        self.canvas.window_starts = tuple(int(s) - lo for s in ranges[1:, 0]) if many else ()
        self.canvas.shown_window = tuple(min(max(int(x) - lo, 0), hi - lo) for x in ranges[pred.window]) \
            if many else (0, 0)
        if whole is None or self._shown[0] is not whole or self._shown[1] != lo:  # a new review or part: lay out
            self.canvas.set_tokens(token_pieces(whole, lo, hi) if whole is not None else [])
        self._shown, self._lo = (whole, lo), lo
        self.canvas.pair_start = whole.pair_start - lo if segments(whole) is not None else -1
        if many and len(self.canvas.rects):  # bring the shown window's first token into view
            self.scroll.verticalScrollBar().setValue(int(self.canvas.rects[self.canvas.shown_window[0], 1]) - 30)
        self._on_selection(self.state.selection)

    def _on_selection(self, sel) -> None:
        self.canvas.set_selection(tuple(j - self._lo for j in document_selection(self.state.prediction, sel)))
        self.request_render()

    def set_importance(self, scores: np.ndarray | None, signed: bool = False, name: str = "") -> None:
        """Colour tokens by an external per-token importance, or return to the default with None.

        The colouring belongs to the state (:meth:`desktop_app.state.ExplorerState.set_importance`); this also
        says in the caption why scores that do not fit the current prediction were ignored.

        Args:
            scores: float32 [T] aligned with the current prediction's tokens, or None.
            signed: scores can be negative (diverging blue-white-red map, 0 = white).
            name: what the scores are, e.g. "integrated gradients" (shown in the caption and tooltips).
        """
        if not self.state.set_importance(scores, signed, name):
            pred = self.state.prediction
            n = pred.document.num_tokens if pred is not None else 0
            count = len(np.asarray(scores).reshape(-1))
            self.caption.setText(f"Ignored importance \u201c{name}\u201d: {count} scores for {n} tokens")

    def current_values(self) -> tuple[np.ndarray, bool, str]:
        """The per-token values being shown: (float32 [T], signed, description); empty values (no colours) while the
        flow of the "Show" choice is being computed or cannot be (the description says so)."""
        values, signed, name = token_values(self.state)
        if values is None:
            return np.zeros(0, np.float32), signed, name
        values = document_values(self.state.prediction, values)
        return values[self._lo : self._lo + len(self.canvas.pieces)], signed, name

    def highlighted_tokens(self) -> np.ndarray:
        """bool [T]: the prediction's tokens in a highlighted word (the state's ``highlighted_words``)."""
        pred = self.state.prediction.document if self.state.prediction is not None else None
        words = self.state.highlighted_words
        lo, hi = self._lo, self._lo + len(self.canvas.pieces)
        if pred is None:
            return np.zeros(0, bool)
        seg = segments(pred)  # a pair: the words of the first text only (the second's offsets index text_pair)
        offsets = pred.offsets if seg is None else np.where(seg[:, None] == 1, 0, pred.offsets)
        return tokens_in_words(pred.text, offsets[lo:hi], words)

    def redraw(self) -> None:
        """Recompute the colours (and the highlighted words) for the current state."""
        values, signed, name = self.current_values()
        colours, scale = colours_for(values, signed)
        self.values = values
        self.canvas.highlighted = marked = self.highlighted_tokens()  # framed; painted with the colours below
        self.canvas.set_colours(colours, values, name)
        parts = [f"Colour: {name}"] if name else []
        if self.state.highlighted_words:
            words = ", ".join(f"\u201c{w}\u201d" for w in sorted(self.state.highlighted_words))
            parts.append(f"underlined: {words} ({int(marked.sum())} tokens)")
        self.caption.setText(" \u00b7 ".join(parts))
        self.legend.setPixmap(gradient_pixmap(DIVERGING_CMAP if signed else SEQUENTIAL_CMAP))
        self.legend_lo.setText(f"{-scale:.3g}" if signed else "0")
        self.legend_hi.setText(f"{scale:.3g}" if len(values) else "")

    def set_font_point_size(self, size: float) -> None:
        """Zoom: set the token font size in points."""
        f = self.canvas.font()
        f.setPointSizeF(max(6.0, min(40.0, size)))
        self.canvas.setFont(f)

    def showEvent(self, event) -> None:
        """Render if the state changed while hidden."""
        super().showEvent(event)
        self._deferred_show()

    def token_center(self, index: int) -> QPoint:
        """Centre of token ``index`` in canvas coordinates (for tests and automation)."""
        return self.canvas.token_rect(index).center().toPoint()
