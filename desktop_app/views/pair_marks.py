"""Where a sentence pair's second text starts, in the token views (issue 30), and the links' A/B filter.

A pair is read as one sequence, ``[CLS] A [SEP] B [SEP]`` (BERT) or ``<s> A </s></s> B </s>`` (RoBERTa);
:attr:`model.records.prediction.Prediction.segment_ids` says which text each token belongs to (0: the first text and the
special tokens before and around it; 1: the second text and the special tokens after it) and
:attr:`~model.records.prediction.Prediction.pair_start` where the second begins. The token view starts the second text on a
new line under a dashed separator and tints its tokens (:data:`PAIR_TINT`); the links view draws a separator at
``pair_start`` on both columns and can show only the links from A to B, from B to A, or all, as bertviz's
``sentence_b_start`` does (:class:`PairLinkFilter`). NumPy and Qt only.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QComboBox

PAIR_TINT = "#0072B2"  # the second text's band and separator (Okabe-Ito blue)
ALL_LINKS, A_TO_B, B_TO_A = "all", "a_to_b", "b_to_a"
LINK_CHOICES = ((ALL_LINKS, "All links"), (A_TO_B, "A \u2192 B (first text's queries, second text's keys)"),
                (B_TO_A, "B \u2192 A (second text's queries, first text's keys)"))


def segments(pred) -> np.ndarray | None:
    """int8 [T] segment ids of a pair's prediction (0: first text, 1: second), or None for a single text."""
    if pred is None or getattr(pred, "text_pair", None) is None or pred.segment_ids is None:
        return None
    return np.asarray(pred.segment_ids)


def pair_tint() -> QColor:
    """The second text's tint, translucent (a band under its tokens)."""
    c = QColor(PAIR_TINT)
    c.setAlpha(190)
    return c


def pair_lines(plot, old: list, pred, angles=(0, 90)) -> list:
    """Replace the separator lines ``old`` on ``plot`` (a pyqtgraph PlotItem with token indices on its axes) by
    dashed lines at a pair's ``pair_start`` (``angles``: 0 horizontal, i.e. the query rows; 90 vertical, the key
    columns); returns the new lines (none for a single text)."""
    for line in old:
        plot.removeItem(line)
    if segments(pred) is None or pred.pair_start <= 0:
        return []
    new = [pg.InfiniteLine(float(pred.pair_start), angle=a, pen=pg.mkPen(PAIR_TINT, width=2, style=Qt.DashLine))
           for a in angles]
    for line in new:
        line.setZValue(4)
        plot.addItem(line)
    return new


class PairLinkFilter(QComboBox):
    """All links, A → B or B → A: shown only for a sentence pair.

    Signals:
        changed(): the choice changed (redraw).
    """

    changed = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("pairLinkFilter")
        for key, title in LINK_CHOICES:
            self.addItem(title, key)
        self.setToolTip("For a sentence pair: the links from the first text's tokens to the second's (A \u2192 B), "
                        "the other way (B \u2192 A), or all (as bertviz shows a pair)")
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.setVisible(False)
        self.lines: list[pg.InfiniteLine] = []
        self.pair = False  # the prediction shown is a pair's
        self.currentIndexChanged.connect(lambda _i: self.changed.emit())

    @property
    def choice(self) -> str:
        """:data:`ALL_LINKS`, :data:`A_TO_B` or :data:`B_TO_A` (always all for a single text)."""
        return self.currentData() if self.pair else ALL_LINKS

    def caption(self) -> str:
        """What the links view's caption adds: ", first text -> second", ", second text -> first" or ""."""
        return {A_TO_B: ", first text \u2192 second", B_TO_A: ", second text \u2192 first"}.get(self.choice, "")

    def set_choice(self, key: str) -> None:
        """Choose :data:`ALL_LINKS`, :data:`A_TO_B` or :data:`B_TO_A`."""
        self.setCurrentIndex(max(0, self.findData(key)))

    def set_prediction(self, pred, plot) -> None:
        """Show the selector for a pair only, and mark ``pair_start`` on ``plot`` (a pyqtgraph PlotItem whose
        y is the token index, rows centred at i + 0.5) with a dashed line."""
        seg = segments(pred)
        self.pair = seg is not None
        self.setVisible(self.pair)
        self.lines = pair_lines(plot, self.lines, pred, (0,))

    def apply(self, pred, per_head: dict, rows: np.ndarray, cols: np.ndarray, cap):
        """Keep the links of the chosen direction: (per_head {row: values [N']}, rows [N'], cols [N'], cap)."""
        seg = segments(pred)
        key = self.choice
        if seg is None or key == ALL_LINKS or len(seg) <= max(int(rows.max(initial=0)), int(cols.max(initial=0))):
            return per_head, rows, cols, cap
        q, k = (0, 1) if key == A_TO_B else (1, 0)
        keep = (seg[rows] == q) & (seg[cols] == k)
        return {h: v[keep] for h, v in per_head.items()}, rows[keep], cols[keep], cap


def paint_pair_marks(p, rects: np.ndarray, pair_start: int, width: float) -> None:
    """The token view's marks of a pair's second text: a dashed separator above its first line and a tinted band
    under each of its tokens. ``p``: the canvas's QPainter; ``rects``: float [T, 4] token boxes (pixels);
    ``pair_start``: the second text's first token (-1: a single text, nothing drawn)."""
    from PySide6.QtCore import QPointF, QRectF
    from PySide6.QtGui import QPen

    if not 0 < pair_start < len(rects):
        return
    y = float(rects[pair_start, 1]) - 2.0
    p.setPen(QPen(QColor(PAIR_TINT), 1.5, Qt.DashLine))
    p.drawLine(QPointF(2.0, y), QPointF(width - 2.0, y))
    tint = pair_tint()
    for x0, _y0, x1, y1 in rects[pair_start:].tolist():
        p.fillRect(QRectF(x0, y1 - 3.0, x1 - x0, 3.0), tint)
