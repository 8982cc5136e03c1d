"""Two explanation methods side by side over the same tokens (the explanation panel's comparison).

Gets NumPy scores only (float [T] per method, aligned with a prediction's tokens); never imports
torch or the model.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QScrollArea, QVBoxLayout, QWidget

from .colours import colours_for
from .render import DeferredRender
from .text_canvas import TokenCanvas
from .token_layout import token_pieces


class ComparisonView(DeferredRender, QWidget):
    """Two explanation methods over the same tokens, one strip each, coloured like the main token view.

    Each strip is a :class:`desktop_app.views.text_canvas.TokenCanvas` (one custom-painted widget, no rich
    text), coloured with :func:`desktop_app.views.colours.colours_for`: signed scores on the diverging map
    (red: for the explained class, blue: against), unsigned ones on the sequential map, each strip scaled to
    its own largest magnitude. Hovering a token shows its score. Rendering is deferred and skipped while the
    view is hidden (:class:`DeferredRender`), so new results never stall the GUI thread.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._init_deferred()
        self._prediction = None
        self._pieces: list[tuple[str, str]] = []  # token_pieces(self._prediction)
        self._entries: list[tuple[str, str, np.ndarray | None, bool]] = []
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.titles: list[QLabel] = []
        self.canvases: list[TokenCanvas] = []
        for _ in range(2):
            title = QLabel("")
            title.setWordWrap(True)
            canvas = TokenCanvas()
            scroll = QScrollArea()
            scroll.setWidget(canvas)
            scroll.setWidgetResizable(True)
            scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
            scroll.setMinimumHeight(60)
            lay.addWidget(title)
            lay.addWidget(scroll, 1)
            self.titles.append(title)
            self.canvases.append(canvas)

    def set_entries(self, prediction, entries: list[tuple[str, str, np.ndarray | None, bool]]) -> None:
        """Show two strips for ``prediction`` (the explained text: a :class:`model.records.document.Document`, the whole
        review, or a :class:`model.Prediction`; None to clear).

        Args:
            prediction: gives the tokens and their text (T tokens).
            entries: two ``(method title, detail line, scores, signed)``; scores is float [T], or None while
                the method is not computed yet.
        """
        if prediction is not self._prediction:  # the token layout only changes with the prediction
            self._pieces = token_pieces(prediction) if prediction is not None else []
        self._prediction = prediction
        self._entries = list(entries)
        self.request_render()

    def redraw(self) -> None:
        """Lay out the tokens and colour each strip (called by :class:`DeferredRender`)."""
        pred, pieces = self._prediction, self._pieces
        for i, (title_label, canvas) in enumerate(zip(self.titles, self.canvases)):
            name, detail, scores, signed = self._entries[i] if i < len(self._entries) else ("", "", None, False)
            if pred is None or scores is None:
                canvas.set_tokens([])
                canvas.set_colours(np.zeros((0, 4), np.uint8), np.zeros(0, np.float32), "")
                title_label.setText(f"<b>{name}</b>: <i>not computed yet</i>" if name and pred is not None else "")
                continue
            values = np.asarray(scores, dtype=np.float32)
            colours, _scale = colours_for(values, signed)
            if canvas.pieces is not pieces:  # same prediction: keep the layout
                canvas.set_tokens(pieces)
            canvas.set_colours(colours, values, name)
            title_label.setText(f"<b>{name}</b> \u2014 {detail}")

    def showEvent(self, event) -> None:
        """Render if results arrived while hidden."""
        super().showEvent(event)
        self._deferred_show()
