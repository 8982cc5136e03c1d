"""What the two "What if" panels share (issue 43): the generator picker with its settings (the word rules, visible
and editable; the edited side of a pair; the regression threshold), the sortable table of edits, the edit marked in
its text, and the JSON Lines export."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from model.counterfactuals import GENERATORS, Settings
from model.counterfactuals.lexical import BUILTIN_RULES_TEXT, parse_rules
from model.records.counterfactual import SIDES, Edit

DEFAULT_GENERATORS = ("word_replacer", "negation", "ablation_flip", "hotflip")
"""The generators ticked at first (the scrambler is a control, off until asked)."""
COLUMNS = ("Generator", "Edit", "Edited text", "New label", "\u0394", "JSD", "Flipped")
MARK = "background:#ffe08a"


def marked(edit: Edit, as_html: bool, context: int | None = None) -> str:
    """The edited side's new text with each change marked: HTML (``<s>old</s> <b>new</b>`` on a yellow ground,
    escaped) or plain (``[old -> new]``, ``[-old]``, ``[+new]``); ``context``: only that many characters either side of
    the first change (plain text only)."""
    src, out, at = edit.source, [], 0
    for c in edit.changes:
        old, new = src[c.start:c.end].strip(), c.new.strip()
        if as_html:
            mark = (f"<s>{html.escape(old)}</s>" if old else "") + (" " if old and new else "") + \
                (f"<b>{html.escape(new)}</b>" if new else "")
            out += [html.escape(src[at:c.start]), f'<span style="{MARK}">{mark}</span>']
        else:
            mark = f"[{old} -> {new}]" if old and new else (f"[-{old}]" if old else f"[+{new}]")
            out += [src[at:c.start], " " * (c.start > at and not src[c.start - 1].isspace()) + mark + " " * bool(
                c.new[-1:].isspace())]
        at = c.end
    out.append(html.escape(src[at:]) if as_html else src[at:])
    text = "".join(out)
    if as_html or context is None or not edit.changes:
        return text.replace("\n", "<br>") if as_html else text
    first = edit.changes[0].start
    start = max(0, first - context)
    return ("\u2026" if start else "") + text[start:first + 3 * context].replace("\n", " ")


class RulesDialog(QDialog):
    """``word_replacer``'s rules, one ``word -> replacement`` per line or comma-separated, starting from the built-in
    list (:data:`model.counterfactuals.lexical.BUILTIN_RULES_TEXT`); OK refuses rules that do not parse."""

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Word replacer rules")
        self.edit = QPlainTextEdit(text)
        self.error = QLabel("")
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel | QDialogButtonBox.Reset)
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        buttons.button(QDialogButtonBox.Reset).clicked.connect(lambda: self.edit.setPlainText(BUILTIN_RULES_TEXT))
        lay = QVBoxLayout(self)
        lay.addWidget(QLabel("Whole words, any case (the case of each occurrence is kept): word -> replacement"))
        lay.addWidget(self.edit)
        lay.addWidget(self.error)
        lay.addWidget(buttons)
        self.resize(560, 360)

    def _accept(self) -> None:
        try:
            parse_rules(self.edit.toPlainText())
        except ValueError as exc:
            self.error.setText(str(exc))
            return
        self.accept()


class GeneratorPicker(QWidget):
    """A tick box per generator, the rules button, the side of a pair and the regression threshold.

    Signals:
        changed(): a choice changed.
    """

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rules_text = BUILTIN_RULES_TEXT
        self.boxes = {}
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        for name, gen in GENERATORS.items():
            box = self.boxes[name] = QCheckBox(gen.title)
            box.setChecked(name in DEFAULT_GENERATORS)
            box.setToolTip((gen.__doc__ or "").strip().split("\n\n")[0])
            box.toggled.connect(self.changed)
            row.addWidget(box)
        self.rules_button = QPushButton("Rules\u2026")
        self.rules_button.setToolTip("See and edit the word replacer's rules")
        self.rules_button.clicked.connect(self.edit_rules)
        self.side = QComboBox()
        self.side.addItems([f"edit the {s} text" for s in SIDES])
        self.threshold = QDoubleSpinBox()
        self.threshold.setRange(-1e6, 1e6)
        self.threshold.setDecimals(3)
        self.threshold.setPrefix("flip at ")
        self.threshold.setToolTip("Regression: a flip is the value crossing this threshold")
        for w in (self.rules_button, self.side, self.threshold):
            row.addWidget(w)
        row.addStretch(1)
        self.set_task(pairs=False, value=False)

    def set_task(self, pairs: bool, value: bool) -> None:
        """Show the side choice for a model that reads pairs and the threshold for a regression."""
        self.side.setVisible(pairs)
        self.threshold.setVisible(value)

    def names(self) -> tuple[str, ...]:
        """The ticked generators, in the registry's order."""
        return tuple(n for n, box in self.boxes.items() if box.isChecked())

    def settings(self, pair: bool) -> Settings:
        """The run's :class:`model.counterfactuals.Settings` (the second side only when the input is a pair)."""
        side = SIDES[self.side.currentIndex()] if pair and self.side.isVisible() else "first"
        return Settings(side=side, threshold=self.threshold.value(), rules=parse_rules(self.rules_text))

    def edit_rules(self) -> None:
        """Open the rules dialog; OK keeps the rules."""
        dialog = RulesDialog(self.rules_text, self)
        if dialog.exec() == QDialog.Accepted:
            self.rules_text = dialog.edit.toPlainText()
            self.changed.emit()


class WhatIfBase(QWidget):
    """What both "What if" panels share: the shared Predictor, the picker, the worker (``name``) and the job's end.

    Attributes:
        edits: the scored edits shown. running: a job runs. picker: the :class:`GeneratorPicker`. status: the status
        line. handle: the panel's :class:`~desktop_app.workers.jobs.Jobs`.
    """

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        from ..workers.handle import EXPLANATION_NICE
        from ..workers.jobs import Jobs

        super().__init__(parent)
        self._predictor = None
        self.edits: list = []
        self.running = False
        self.handle = Jobs(name, EXPLANATION_NICE, parent=self, wait_ms=None)
        self.picker = GeneratorPicker()
        self.status = QLabel("")
        self.status.setWordWrap(True)

    def set_predictor(self, predictor) -> None:
        """The shared Predictor; shows the side choice and the threshold the model needs."""
        self._predictor = predictor
        self.follow_task()
        self._update_enabled()

    def follow_task(self, *_args) -> None:
        """Show the side choice and the threshold that the Predictor's task needs now: called when a model loads and
        after Model > Task reads the same model another way (e.g. as a regression: the threshold appears)."""
        if self._predictor is not None:
            self.picker.set_task(pairs=self._predictor.reads_pairs,
                                 value=not self._predictor.task.type.reads_probabilities)

    def _update_enabled(self) -> None:
        """Enable the buttons that fit (subclasses)."""

    def cancel(self) -> None:
        """Stop the running job at its next step."""
        self.handle.request_stop()

    def shutdown(self) -> None:
        """Stop the worker (the window calls it on close)."""
        self.handle.shutdown()

    def _on_failed(self, exc: Exception) -> None:
        self.running = False
        self.status.setText(f"Could not make the edits: {exc}")
        self._update_enabled()

    def _on_stopped(self) -> None:
        self.running = False
        self.status.setText("Cancelled.")
        self._update_enabled()


def _item(text: str) -> QTableWidgetItem:
    """A read-only text cell."""
    item = QTableWidgetItem(text)
    item.setFlags(Qt.ItemIsSelectable | Qt.ItemIsEnabled)
    return item


class NumericItem(QTableWidgetItem):
    """A cell that sorts by its number (``Qt.UserRole + 1``), showing formatted text."""

    def __lt__(self, other) -> bool:
        a, b = self.data(Qt.UserRole + 1), other.data(Qt.UserRole + 1)
        if a is None or b is None:
            return (a is None) > (b is None)
        return a < b


def _number(value: float | None, fmt: str) -> QTableWidgetItem:
    item = NumericItem("\u2013" if value is None else format(value, fmt))
    item.setData(Qt.UserRole + 1, value)
    item.setFlags(Qt.ItemIsSelectable | Qt.ItemIsEnabled)
    return item


def edits_table() -> QTableWidget:
    """An empty sortable table of edits (:data:`COLUMNS`)."""
    table = QTableWidget(0, len(COLUMNS))
    table.setHorizontalHeaderLabels(COLUMNS)
    table.setSelectionBehavior(QTableWidget.SelectRows)
    table.setSelectionMode(QTableWidget.SingleSelection)
    table.setSortingEnabled(True)
    table.verticalHeader().setVisible(False)
    table.horizontalHeader().setStretchLastSection(False)
    table.setColumnWidth(2, 320)
    return table


def fill_edits(table: QTableWidget, edits: list[Edit]) -> None:
    """Show ``edits`` in ``table`` (row data: the edit's index in ``edits``, ``Qt.UserRole`` of column 0)."""
    table.setSortingEnabled(False)
    table.setRowCount(len(edits))
    for r, e in enumerate(edits):
        first = _item(e.generator)
        first.setData(Qt.UserRole, r)
        new = e.edited_label if e.edited_value is None else f"{e.edited_value:.3g}"
        cells = [first, _item(e.note), _item(marked(e, False, 30)), _item(e.error or new or "(none)"),
                 _number(e.delta, "+.3f"), _number(e.jsd, ".3f"), _item("yes" if e.flipped else "no")]
        cells[2].setToolTip(f"<p>{marked(e, True)}</p>")
        for c, cell in enumerate(cells):
            table.setItem(r, c, cell)
    table.setSortingEnabled(True)
    table.resizeColumnToContents(0)


def edit_at(table: QTableWidget, edits: list[Edit], row: int) -> Edit | None:
    """The edit shown in ``row`` of ``table`` (sorted or not), or None."""
    item = table.item(row, 0)
    index = item.data(Qt.UserRole) if item is not None else None
    return edits[index] if index is not None and 0 <= index < len(edits) else None


__all__ = ["COLUMNS", "DEFAULT_GENERATORS", "GeneratorPicker", "RulesDialog", "WhatIfBase", "edit_at", "edits_table",
           "fill_edits", "marked"]
