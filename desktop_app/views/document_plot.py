"""The windows of a long review on screen: the class probability along the document (:class:`DocumentPlot`, in the
prediction panel) and the window marks of the token view (:func:`paint_window_marks`).

A review longer than the model's maximum length is read in side-by-side windows (:mod:`model.text.document_windows`); each window
has its own class probabilities (``Document.window_probabilities``), so the plot shows where a review turns, e.g.
from praise to complaint. One point per window at the window's middle token; a click on a point shows that window
in the attention views (``state.windows.request``). Custom-painted: a few dozen points need no plotting library.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from .colours import NEUTRAL, class_colour

MARGIN = (20.0, 8.0, 6.0, 18.0)  # left, top, right, bottom pixels around the plot area


def paint_window_marks(p: QPainter, rects: np.ndarray, starts, shown: tuple[int, int]) -> None:
    """Draw window boundaries over laid-out tokens: an orange bar, numbered, before each window's first token
    (``starts``: token indices of windows 2..W), and a blue underline below the shown window's tokens [s, e).

    Args:
        rects: float [T, 4] token boxes (x0, y0, x1, y1) in pixels.
    """
    p.setPen(QPen(QColor("#e67e22"), 2.0))
    for k, i in enumerate(starts):
        if 0 <= i < len(rects):
            x0, y0, _, y1 = rects[i]
            p.drawLine(QPointF(x0 - 1, y0 - 2), QPointF(x0 - 1, y1 + 2))
            p.drawText(QRectF(x0, y0 - 4, 30, 12), Qt.AlignLeft, str(k + 2))
    s, e = shown
    underline = QColor("#1f3a93")
    for x0, _, x1, y1 in rects[s:e].tolist() if e > s else ():
        p.fillRect(QRectF(x0, y1, x1 - x0, 2), underline)


class DocumentPlot(QWidget):
    """P(class) of each window along the review; a click picks a window.

    Signals:
        window_clicked(int): the window (0-based) whose point was clicked.
    """

    window_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Preferred)  # gives way to the docks below it
        self.setToolTip("The class probability along the review, one point per window; click a point to show that "
                        "window in the attention views")
        self.x = np.zeros(0)  # [W] middle token of each window
        self.y = np.zeros(0)  # [W] P(class) of each window
        self.predicted = np.zeros(0, np.int64)  # [W] each window's predicted class (its point's class colour)
        self.total = 1  # tokens of the review
        self.current = 0
        self.class_name = ""
        self.document_p = 0.5

    def set_document(self, pred, current: int) -> None:
        """Show the windows of ``pred``'s document (``pred`` a ``model.Prediction`` of a text read in windows) with
        window ``current`` marked; the class plotted is the second label for two classes (e.g. positive), else the
        predicted one (of the document's verdict, which ``pred`` carries)."""
        doc = pred.document
        c = 1 if len(pred.labels) == 2 else pred.label_index
        self.x = doc.windows.ranges.mean(axis=1)
        self.y = doc.window_probabilities[:, c].astype(np.float64)
        self.predicted = np.asarray(doc.window_probabilities).argmax(axis=1)
        self.total = max(1, doc.num_tokens)
        self.current = int(current)
        self.class_name = pred.labels[c]
        self.document_p = float(pred.probabilities[c])
        self.update()

    def sizeHint(self) -> QSize:
        """110 pixels high."""
        return QSize(240, 110)

    def minimumSizeHint(self) -> QSize:
        """At least 50 pixels high (the points stay apart)."""
        return QSize(120, 50)

    def points(self) -> list[QPointF]:
        """Each window's point in widget pixels (for painting, hit tests and tests)."""
        left, top, right, bottom = MARGIN
        w, h = self.width() - left - right, self.height() - top - bottom
        return [QPointF(left + w * float(x) / self.total, top + h * (1.0 - float(y))) for x, y in zip(self.x, self.y)]

    def paintEvent(self, event) -> None:
        """Axes, the 0.5 line, the document's probability (dashed), the curve and the points (current one ringed)."""
        p = QPainter(self)
        p.setRenderHint(QPainter.Antialiasing)
        left, top, right, bottom = MARGIN
        area = QRectF(left, top, self.width() - left - right, self.height() - top - bottom)
        p.fillRect(self.rect(), self.palette().base())
        p.setPen(QPen(QColor("#8a8a8a")))
        p.drawRect(area)
        p.drawText(QRectF(0, top - 6, left - 4, 12), Qt.AlignRight, "1")
        p.drawText(QRectF(0, area.bottom() - 6, left - 4, 12), Qt.AlignRight, "0")
        p.drawText(QRectF(left, area.bottom() + 2, area.width(), 14), Qt.AlignCenter,
                   f"P({self.class_name}) by window" if self.class_name else "")
        mid = area.top() + area.height() / 2
        p.setPen(QPen(QColor("#bbbbbb"), 1.0, Qt.DotLine))
        p.drawLine(QPointF(area.left(), mid), QPointF(area.right(), mid))
        y_doc = area.top() + area.height() * (1.0 - self.document_p)
        p.setPen(QPen(QColor("#7f8c8d"), 1.0, Qt.DashLine))
        p.drawLine(QPointF(area.left(), y_doc), QPointF(area.right(), y_doc))
        pts = self.points()
        if not pts:
            return
        path = QPainterPath(pts[0])
        for q in pts[1:]:
            path.lineTo(q)
        p.setPen(QPen(QColor(NEUTRAL), 2.0))
        p.drawPath(path)
        for k, q in enumerate(pts):
            p.setBrush(QColor(class_colour(int(self.predicted[k]))))  # the one class palette (model.palette)
            p.setPen(QPen(QColor("#000000"), 2.0) if k == self.current else Qt.NoPen)
            r = 6.0 if k == self.current else 4.0
            p.drawEllipse(q, r, r)

    def window_at(self, pos) -> int:
        """The window whose point is nearest ``pos`` horizontally (-1 with none)."""
        pts = self.points()
        if not pts:
            return -1
        return int(np.argmin([abs(q.x() - pos.x()) for q in pts]))

    def mousePressEvent(self, event) -> None:
        """A click picks the nearest window."""
        k = self.window_at(event.position())
        if event.button() == Qt.LeftButton and k >= 0:
            self.window_clicked.emit(k)
            event.accept()
            return
        super().mousePressEvent(event)
