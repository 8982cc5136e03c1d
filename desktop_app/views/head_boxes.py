"""A check box per attention head, in the head's colour, wrapped :data:`HEAD_COLUMNS` to a row.

The token links view (:mod:`desktop_app.views.links_view`) shows or hides each head's links with them. Wrapping keeps
a 12-head model (MiniLM, BERT-base) as narrow as a 6-head one: one row of 12 boxes made the links dock 848 pixels
wide at least, and 1,105 with ALTI's "all heads" label beside them (issue 46's window size rules: a dock never widens
the 1400 x 860 window).
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QGridLayout, QWidget

from .colours import head_colour

HEAD_COLUMNS = 6
"""Head check boxes a row (12 heads: two rows)."""


class HeadBoxes(QWidget):
    """Check boxes "1".."H" for the heads of one model (:meth:`set_count`), all checked at first.

    Attributes:
        boxes: the H :class:`QCheckBox` es, head 0 first.

    Signals:
        toggled(int, bool): the user checked (True) or unchecked head ``h`` (0-based).
    """

    toggled = Signal(int, bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.boxes: list[QCheckBox] = []
        self.grid = QGridLayout(self)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.grid.setHorizontalSpacing(6)
        self.grid.setVerticalSpacing(0)

    def set_count(self, n_heads: int) -> None:
        """One checked box per head of a model with ``n_heads`` heads (the old boxes go)."""
        for box in self.boxes:
            self.grid.removeWidget(box)
            box.deleteLater()
        self.boxes = []
        for h in range(n_heads):
            box = QCheckBox(f"{h + 1}")
            box.setChecked(True)
            box.setStyleSheet(f"QCheckBox {{ color: {head_colour(h).name()}; font-weight: bold; }}")
            box.toggled.connect(lambda on, h=h: self.toggled.emit(h, on))
            self.grid.addWidget(box, h // HEAD_COLUMNS, h % HEAD_COLUMNS)
            self.boxes.append(box)

    def set_checked(self, head: int, on: bool) -> None:
        """Check or uncheck head ``head``'s box without emitting :attr:`toggled` (no box: nothing happens)."""
        if 0 <= head < len(self.boxes) and self.boxes[head].isChecked() != on:
            self.boxes[head].blockSignals(True)
            self.boxes[head].setChecked(on)
            self.boxes[head].blockSignals(False)


__all__ = ["HEAD_COLUMNS", "HeadBoxes"]
