"""The "What if" dock (issue 43): counterfactual edits of the current text, and its smallest flip.

Pick generators (:class:`~desktop_app.panels.whatif_widgets.GeneratorPicker`) and press "Edit this text" (or
"Smallest flip"): the job (:mod:`desktop_app.workers.counterfactuals`) runs on this panel's
:class:`~desktop_app.workers.jobs.Jobs`, with progress and Cancel; the edits fill a sortable table (generator, what
changed, the edited text with the edit marked, the new label, the change of the source's class's probability or
value, the Jensen-Shannon divergence, flipped or not). Clicking an edit emits :attr:`WhatIfPanel.open_requested`:
the window pins the source (when it is the analysis on display) and makes the edit the current text, so the Compare
dock shows both, words aligned (:func:`open_edit`). The table keeps the source's edits until the next run.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout, QWidget

from model.counterfactuals.search import DEFAULT_BUDGET

from ..state import ExplorerState
from ..workers.counterfactuals import edits_job, smallest_flip_job
from .whatif_widgets import WhatIfBase, edit_at, edits_table, fill_edits, marked


class WhatIfPanel(WhatIfBase):
    """See the module docstring.

    Args:
        state: the window's explorer state (the current prediction, the head mask, the pins).

    Signals:
        open_requested(str, object): the edited text and its second text (or None) to make the current text.
    """

    open_requested = Signal(str, object)

    def __init__(self, state: ExplorerState | None = None, parent: QWidget | None = None) -> None:
        super().__init__("whatif-worker", parent)
        self.state = state if state is not None else ExplorerState()
        self.source: tuple[str, str | None] | None = None
        self.run_button = QPushButton("Edit this text")
        self.search_button = QPushButton("Smallest flip")
        self.search_button.setToolTip(f"HotFlip (1 token), AblationFlip, HotFlip (2 tokens) under a budget of "
                                      f"{DEFAULT_BUDGET} model evaluations; keeps the flip with the fewest words")
        self.cancel_button = QPushButton("Cancel")
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(160)
        self.status.setText("Analyse a text, pick generators and press \u201cEdit this text\u201d.")
        self.table = edits_table()
        self.detail = QLabel("")
        self.detail.setWordWrap(True)
        self.detail.setTextFormat(Qt.RichText)
        buttons = QHBoxLayout()
        for w in (self.run_button, self.search_button, self.cancel_button, self.progress):
            buttons.addWidget(w)
        buttons.addStretch(1)
        lay = QVBoxLayout(self)
        for w in (self.picker, buttons, self.status, self.table, self.detail):
            (lay.addLayout if isinstance(w, QHBoxLayout) else lay.addWidget)(w)
        lay.setStretchFactor(self.table, 1)
        self.run_button.clicked.connect(self.run_generators)
        self.search_button.clicked.connect(self.run_search)
        self.cancel_button.clicked.connect(self.cancel)
        self.table.cellClicked.connect(self._on_clicked)
        self.table.currentCellChanged.connect(lambda row, *_: self._show_detail(row))
        self.state.events.prediction.connect(lambda *_: self._update_enabled())
        self.state.events.info.connect(self.follow_task)  # Model > Task: the task the predictor reads now
        self._update_enabled()

    def _update_enabled(self) -> None:
        ready = self._predictor is not None and self._predictor.has_head and self.state.prediction is not None
        self.run_button.setEnabled(ready and not self.running)
        self.search_button.setEnabled(ready and not self.running)
        self.cancel_button.setEnabled(self.running)
        self.progress.setVisible(self.running)

    def _current_input(self) -> tuple[str, str | None] | None:
        pred = self.state.prediction
        return None if pred is None else (pred.document.text, pred.text_pair)  # a long review: the whole text

    def _start(self, what: str) -> tuple[str, str | None] | None:
        source = self._current_input()
        if source is None or self._predictor is None:
            return None
        self.source, self.running = source, True
        self.status.setText(what)
        self.progress.setRange(0, 0)
        self._update_enabled()
        return source

    def run_generators(self) -> None:
        """Run the ticked generators on the current text (on the worker)."""
        names = self.picker.names()
        if not names:
            self.status.setText("Tick at least one generator.")
            return
        if (source := self._start(f"Editing with {', '.join(names)}\u2026")) is None:
            return
        self.handle.run(edits_job, self._predictor, [source], names, self.picker.settings(source[1] is not None),
                        self.state.head_mask, on_result=self.show_edits, on_progress=self._on_progress,
                        on_error=self._on_failed, on_stop=self._on_stopped)

    def run_search(self) -> None:
        """Search the current text's smallest flip (on the worker)."""
        if (source := self._start("Searching the smallest flip\u2026")) is None:
            return
        self.handle.run(smallest_flip_job, self._predictor, source[0], source[1],
                        self.picker.settings(source[1] is not None), DEFAULT_BUDGET, self.state.head_mask,
                        on_result=self._on_searched, on_progress=self._on_progress, on_error=self._on_failed,
                        on_stop=self._on_stopped)

    def show_edits(self, edits: list) -> None:
        """Show ``edits`` (scored :class:`model.records.counterfactual.Edit` s) in the table."""
        self.running = False
        self.edits = list(edits)
        fill_edits(self.table, self.edits)
        flips = sum(bool(e.flipped) for e in self.edits)
        self.status.setText(f"{len(self.edits)} edits, {flips} flipped the verdict. Click one to make it the current "
                            "text (the original is pinned: see Compare)." if self.edits else
                            "No edit could be made (no rule word, negation site or substitutable word).")
        self.detail.setText("")
        self._update_enabled()

    def _on_searched(self, result) -> None:
        self.show_edits([e for e in [result.best] if e is not None])
        best = result.best
        if best is not None:
            found = "found" if best.flipped else "no flip found; closest"
            self.status.setText(f"Smallest flip {found}: {best.size} word(s), {result.spent} model evaluations"
                                + ("" if result.complete else " (budget spent before every step ran)") + ".")

    def _on_progress(self, value: tuple[int, int]) -> None:
        done, total = value
        self.progress.setRange(0, max(1, total))
        self.progress.setValue(done)

    def _show_detail(self, row: int) -> None:
        edit = edit_at(self.table, self.edits, row)
        self.detail.setText("" if edit is None else f"<p><b>{edit.generator}</b>: {marked(edit, True)}</p>")

    def _on_clicked(self, row: int, _column: int) -> None:
        edit = edit_at(self.table, self.edits, row)
        if edit is not None:
            self.open_requested.emit(edit.edited_text, edit.edited_pair)


def open_edit(window, source: tuple[str, str | None] | None, text: str, text_pair: str | None) -> None:
    """Make an edit the window's current text: pin the analysis on display first when it is the edit's ``source``
    (clicking a second edit keeps the first pin), analyse the edit, raise Compare."""
    pred = window.state.prediction
    if pred is not None and source is not None and (pred.document.text, pred.text_pair) == source:
        window.state.pin_current()
    window.analyze_text(text, text_pair)
    window.docks.raise_view("Compare")


__all__ = ["WhatIfPanel", "open_edit"]
