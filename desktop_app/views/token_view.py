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

Tokens are drawn by one custom-painted widget (no widget per token, :mod:`desktop_app.views.text_canvas`), so 512
tokens lay out and paint in a few milliseconds. The pieces of one word are drawn together, as the word reads
(:mod:`desktop_app.views.token_layout`); each stays clickable, its tooltip names it with the ``##`` marker and the
whole word, and a faint tick marks the border between two pieces only where their colours do not.
A long review is shown whole (:mod:`desktop_app.document`): orange bars where windows start, the window the
attention views show underlined (its tokens get the attention colours). A sentence pair's second text starts on a
new line under a dashed blue separator, its tokens underlined in blue (:mod:`desktop_app.views.pair_marks`).
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QScrollArea, QVBoxLayout, QWidget

from ..document import document_selection, document_values, shown_range
from ..words import tokens_in_words
from .pair_marks import segments
from .colours import DIVERGING_CMAP, SEQUENTIAL_CMAP, colours_for, gradient_pixmap
from .render import DeferredRender
from .shown import token_values
from .text_canvas import TokenCanvas
from .token_layout import token_pieces
from .widgets import ElidedLabel

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
