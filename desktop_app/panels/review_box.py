"""The "Review" dock: the review editor, the second text of a sentence pair, and the Analyze button.

The second text box ("Second text (sentence pair)") is switched on by :attr:`ReviewBox.pair_action` (checkable),
which is enabled only for a model whose tokenizer reads pairs (:attr:`model.records.info.ModelInfo.reads_pairs`; NLI,
paraphrase and STS models). While it is on, every analysis sends both texts (``Predictor.predict(text,
text_pair=...)``); the window remembers the switch per model folder (:mod:`desktop_app.window.task_menu`).
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QToolButton, QVBoxLayout, QWidget

from .editor import ReviewEditor

PAIR_TITLE = "Second text (sentence pair)"


class ReviewBox(QWidget):
    """The editor, the pair's second text and Analyze (see the module docstring).

    Attributes:
        editor: the :class:`~desktop_app.panels.editor.ReviewEditor` (the first text).
        pair_editor: the second text (hidden unless :attr:`pair_action` is checked).
        pair_action: "Second text (sentence pair)", checkable; enabled when the model reads pairs.
        analyze_button: "Analyze (Ctrl+Enter)".

    Signals:
        pair_changed(): the second text was edited, or the box switched on or off (analyse again).
    """

    pair_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.editor = ReviewEditor()
        self.editor.setObjectName("reviewEditor")
        self.editor.setPlaceholderText(
            "Type or paste a movie review (analysis runs as you type; Ctrl+Enter analyzes now)")
        self.pair_action = QAction(PAIR_TITLE, self)
        self.pair_action.setCheckable(True)
        self.pair_action.setEnabled(False)
        self.pair_action.setToolTip("Give the model a second text (NLI, paraphrase, similarity models read a pair); "
                                    "only for a model whose tokenizer reads pairs")
        self.pair_action.toggled.connect(self._on_toggled)
        self.pair_button = QToolButton()
        self.pair_button.setDefaultAction(self.pair_action)
        self.pair_button.setVisible(False)  # until a model that reads pairs is loaded
        self.pair_label = QLabel(f"<b>{PAIR_TITLE}</b>")
        self.pair_editor = QPlainTextEdit()
        self.pair_editor.setObjectName("pairEditor")
        self.pair_editor.setPlaceholderText("The second text: the hypothesis, the paraphrase, the other sentence")
        self.pair_editor.textChanged.connect(self.pair_changed)
        self.analyze_button = QPushButton("Analyze (Ctrl+Enter)")
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.pair_button)
        row.addStretch(1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(self.editor, 3)
        lay.addLayout(row)
        lay.addWidget(self.pair_label)
        lay.addWidget(self.pair_editor, 2)
        lay.addWidget(self.analyze_button)
        self._on_toggled(False)

    @property
    def pair_on(self) -> bool:
        """True when the second text box is switched on (and the model reads pairs)."""
        return self.pair_action.isChecked() and self.pair_action.isEnabled()

    def text_pair(self) -> str | None:
        """The second text to send with the first (the box's text, even empty: the model says why it is refused), or
        None when the box is off (a single text)."""
        return self.pair_editor.toPlainText() if self.pair_on else None

    def set_reads_pairs(self, reads: bool) -> None:
        """Enable and show the switch for a model that reads pairs; another model hides it and the box (its text is
        kept; the Model menu's entry stays, disabled)."""
        self.pair_action.setEnabled(bool(reads))
        self.pair_button.setVisible(bool(reads))  # a single-text model's window looks as it always did
        self._on_toggled(self.pair_action.isChecked())

    def set_pair_on(self, on: bool) -> None:
        """Switch the second text box on or off (as the user's click does)."""
        self.pair_action.setChecked(bool(on))

    def set_text_pair(self, text: str | None) -> None:
        """Put ``text`` in the second text box and switch it on (None: switch it off, the text kept)."""
        if text is not None:
            self.pair_editor.setPlainText(text)
        self.set_pair_on(text is not None)

    def _on_toggled(self, _checked: bool) -> None:
        shown = self.pair_on
        if shown != self.pair_editor.isVisibleTo(self) or shown != self.pair_label.isVisibleTo(self):
            self.pair_label.setVisible(shown)
            self.pair_editor.setVisible(shown)
            self.pair_changed.emit()
