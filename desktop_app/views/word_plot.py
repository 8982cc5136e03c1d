"""The corpus dock's word plot: the words that push the model toward each class, as diverging horizontal bars.

Draws the ranked lists of :meth:`model.corpus.metrics.CorpusTokens.top` (``(token, score, count)`` tuples; this
module never imports it, nor torch): the words toward positive on top (red, to the right), the words toward
negative below (blue, to the left), each labelled on the left axis; clicking a bar emits ``word_clicked``.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal

from .colours import NEGATIVE_COLOUR, POSITIVE_COLOUR
from desktop_app.views.corpus.corpus_plot import TEXT_COLOUR, CorpusPlot, alpha
from .widgets import TokenAxis


class WordScoresPlot(CorpusPlot):
    """Mean attribution of the top words toward positive (right) and toward negative (left), in log-odds.

    Signals:
        word_clicked(str): the word (or bigram) of a clicked bar.
    """

    word_clicked = Signal(str)

    def __init__(self) -> None:
        self.words_axis = TokenAxis("left", max_chars=16, min_spacing_px=11)
        super().__init__("What drives the corpus", {"left": self.words_axis})
        item = self.getPlotItem()
        item.invertY(True)
        item.setLabel("bottom", "log-odds: \u2190 negative \u00b7 positive \u2192", color=TEXT_COLOUR)
        item.showGrid(x=True, y=False, alpha=0.2)
        self.words: list[str] = []
        self.scene().sigMouseClicked.connect(self._on_click)
        self.setToolTip("Click a bar to show the reviews that contain the word")
        self.reset()

    def set_sides(self, toward: str, against: str) -> None:
        """Name the two directions of the axis: right ``toward`` (the chosen class), left ``against``."""
        self.getPlotItem().setLabel("bottom", f"attribution: \u2190 {against} \u00b7 {toward} \u2192",
                                    color=TEXT_COLOUR)

    def reset(self) -> None:
        """Show no words, and the hint of how to get some."""
        self.words = []
        self.words_axis.set_tokens([])
        self.show_empty("\u201cFind the words\u201d scores the words of the reviews shown")

    def set_words(self, positive: list[tuple[str, float, int]], negative: list[tuple[str, float, int]]) -> None:
        """Draw ``positive`` (scores > 0 toward positive, strongest first) above ``negative`` (scores > 0 toward
        negative, strongest first; drawn to the left)."""
        self.clear_items()
        self.words = [w for w, _, _ in positive] + [w for w, _, _ in negative]
        if not self.words:
            self.words_axis.set_tokens([])
            self.show_empty("no word reaches the minimum count")
            return
        self.show_data()
        n_pos = len(positive)
        values = np.array([s for _, s, _ in positive] + [-s for _, s, _ in negative], dtype=float)
        y = np.arange(len(values), dtype=float)
        brushes = [alpha(POSITIVE_COLOUR, 180)] * n_pos + [alpha(NEGATIVE_COLOUR, 180)] * len(negative)
        self.addItem(pg.BarGraphItem(x0=np.minimum(values, 0), width=np.abs(values), y0=y + 0.1, height=0.8,
                                     brushes=brushes, pen=pg.mkPen(None)))
        self.plot([0, 0], [0, len(values)], pen=pg.mkPen("#555555", width=1))
        counts = [c for _, _, c in positive] + [c for _, _, c in negative]
        self.words_axis.set_tokens([f"{w} ({c:,})" for w, c in zip(self.words, counts)])
        span = float(np.abs(values).max()) or 1.0
        self.getPlotItem().setRange(xRange=(-span, span), yRange=(0, len(values)), padding=0.03)

    def bar_center(self, index: int):
        """Scene position of the middle of row ``index`` (for tests)."""
        return self.getPlotItem().getViewBox().mapViewToScene(pg.Point(0.0, index + 0.5))

    def _on_click(self, event) -> None:
        if not self.words or event.button() != Qt.MouseButton.LeftButton:
            return
        vb = self.getPlotItem().getViewBox()
        if not vb.sceneBoundingRect().contains(event.scenePos()):
            return
        i = int(np.floor(vb.mapSceneToView(event.scenePos()).y()))
        if 0 <= i < len(self.words):
            self.word_clicked.emit(self.words[i])
