"""The base of the Corpus dock's plots (:mod:`.plots`, :mod:`.task_plots`) and of the Compare workspace's word plot
(:mod:`desktop_app.views.word_plot`): :class:`CorpusPlot`, a small static ``pg.PlotWidget`` with a wrapped title, a
centred "nothing to show" message and ``export_item()`` (File > Export view writes it as PNG or SVG like the other
views), and the text colour, title size and readable size they share.

Like every view it draws through the render scheduler (:mod:`desktop_app.views.render`): a new record is drawn one
plot per event-loop turn, and only when the plot is visible, so an update of the corpus dock never stalls the GUI for
the sum of its plots.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtGui import QColor, QFont, QFontMetrics

from desktop_app.views.render import DeferredRender
from desktop_app.views.widgets import style_plot, wrap_words

TEXT_COLOUR = "#222222"
TITLE_POINTS = 9.0
"""The corpus plots' title size in points."""
TEXT_MARGIN_PX = 24
"""Pixels of a plot's width left free beside its title and its message."""
READABLE_SIZE = (250, 150)
"""Pixels (width, height) below which a corpus plot's text would overlap (title, two axes, a 2 x 2 confusion matrix
with two lines per cell, the histogram's key above its bars): the corpus dock scrolls rather than squash a plot."""


def alpha(colour: str, a: int) -> QColor:
    """``colour`` with alpha ``a`` (0..255)."""
    c = QColor(colour)
    c.setAlpha(a)
    return c


class CorpusPlot(DeferredRender, pg.PlotWidget):
    """A small static plot with a title and a centred message for "nothing to show" (base of the corpus plots).

    Subclasses' setters store what to draw with :meth:`defer`; it is drawn on a later event-loop turn, when visible
    (:meth:`flush` draws it now).

    Args:
        title: the plot's title (also its name in the export menu).
        axes: extra ``axisItems`` for ``pg.PlotWidget``.
    """

    def __init__(self, title: str, axes: dict | None = None) -> None:
        super().__init__(background="w", axisItems=axes or {})
        self.title = title
        self.setMinimumSize(100, 80)
        item = self.getPlotItem()
        style_plot(item)
        self._title_text = title
        self._message_text = ""
        item.setMouseEnabled(False, False)
        item.setMenuEnabled(False)
        item.hideButtons()
        self._message = pg.TextItem("", color="#777777", anchor=(0.5, 0.5))
        self._message.setZValue(10)
        item.addItem(self._message, ignoreBounds=True)
        self._init_deferred()
        self._pending = None
        item.layout.removeItem(item.titleLabel)  # the title spans the axes' columns too: the plot's whole width
        item.layout.addItem(item.titleLabel, 0, 0, 1, 3)
        self.set_title(title)

    def defer(self, draw, *args) -> None:
        """Draw ``draw(*args)`` on a later event-loop turn (when visible); a newer call replaces an undrawn one."""
        self._pending = (draw, args)
        self.request_render()

    def redraw(self) -> None:
        """Draw what :meth:`defer` stored."""
        if self._pending is not None:
            draw, args = self._pending
            draw(*args)

    def showEvent(self, event) -> None:
        """Draw what changed while hidden."""
        super().showEvent(event)
        self._deferred_show()

    def export_item(self):
        """What PNG/SVG export renders: the plot with its axes and title."""
        return self.getPlotItem()

    def set_title(self, text: str) -> None:
        """Replace the title shown above the plot (the export name stays :attr:`title`); plain text is broken at
        spaces into lines that fit the plot's width (it ran off the edge in the default window), HTML is kept."""
        self._title_text = text
        if "<" not in text:
            font = QFont()
            font.setPointSizeF(TITLE_POINTS)
            text = "<br>".join(wrap_words(text, QFontMetrics(font), self.text_width())) or text
        self.getPlotItem().setTitle(text, color=TEXT_COLOUR, size=f"{TITLE_POINTS:g}pt")

    def show_message(self, text: str, x: float = 0.5, y: float = 0.5) -> None:
        """Show ``text`` at view position (x, y) ("" hides it), broken into lines that fit the plot's width."""
        self._message_text = text
        self._message.setText("\n".join(wrap_words(text, self.fontMetrics(), self.text_width())))
        self._message.setPos(x, y)

    def text_width(self) -> int:
        """Pixels the title and the message may take: the plot's width less a margin."""
        return max(40, self.width() - TEXT_MARGIN_PX)

    def resizeEvent(self, event) -> None:
        """Break the title and the message again for the new width."""
        super().resizeEvent(event)
        if "_title_text" in self.__dict__ and self.getPlotItem() is not None:  # not in pg.PlotWidget's __init__/close
            self._refit_text()

    def _refit_text(self) -> None:
        self.set_title(self._title_text)
        if self._message_text:
            pos = self._message.pos()
            self.show_message(self._message_text, pos.x(), pos.y())

    def show_empty(self, message: str) -> None:
        """Nothing to draw: an empty frame under the title with ``message`` (the hint) centred, and no axes (on an
        empty range their tick labels piled up on each other)."""
        self.clear_items()
        item = self.getPlotItem()
        for name in ("left", "bottom"):
            item.hideAxis(name)
        item.setRange(xRange=(0, 1), yRange=(0, 1), padding=0)
        self.show_message(message)

    def show_data(self) -> None:
        """Something to draw: the axes back, the hint hidden (after :meth:`clear_items`)."""
        item = self.getPlotItem()
        for name in ("left", "bottom"):
            item.showAxis(name)
        self.show_message("")

    def clear_items(self) -> None:
        """Remove everything drawn except the message."""
        item = self.getPlotItem()
        for it in list(item.items):
            if it is not self._message:
                item.removeItem(it)
