"""The Explanations panel's row for the slow methods run on demand (integrated gradients, DecompX): the method, the
integrated-gradients steps, Run, Cancel and the progress bar, and whether one of them is running.

The panel (:mod:`desktop_app.panels.explain_panel`) starts and cancels the job on its worker; this row only shows it:
:meth:`OnDemandRow.started`, :meth:`~OnDemandRow.report` (one internal batch, DecompX: one layer) and
:meth:`~OnDemandRow.ended`.
"""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QHBoxLayout, QProgressBar, QPushButton, QSpinBox, QWidget

from model.explain import CHEAP_METHODS, DEFAULT_IG_STEPS, EXPLANATION_METHODS, METHOD_TITLES

ON_DEMAND = tuple(m for m in EXPLANATION_METHODS if m not in CHEAP_METHODS)
"""The methods run only when asked (integrated gradients, DecompX): seconds on long texts, so with progress and
Cancel (:data:`model.explain.cost.SLOW_S`)."""


class OnDemandRow(QWidget):
    """Method choice (one of :data:`ON_DEMAND`), integrated-gradients steps, Run, Cancel and progress.

    Attributes:
        method_combo, steps, run_button, cancel_button, progress: its widgets (the panel's ``slow_combo``,
            ``ig_steps``, ``ig_button``, ``ig_cancel_button`` and ``ig_progress``).
        running: True while an on-demand method runs.
        method: the method running, or the last one run (``"integrated_gradients"`` before any).
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.running = False
        self.method = "integrated_gradients"
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        self.method_combo = QComboBox()
        for m in ON_DEMAND:
            self.method_combo.addItem(METHOD_TITLES[m], m)
        self.method_combo.setToolTip("A slower method, run on demand with progress and Cancel")
        self.steps = QSpinBox()
        self.steps.setRange(4, 1024)
        self.steps.setValue(DEFAULT_IG_STEPS)
        self.steps.setSuffix(" steps")
        self.steps.setToolTip("Integrated-gradients quadrature points (more: closer to completeness, slower)")
        self.run_button = QPushButton("Run")
        self.cancel_button = QPushButton("Cancel")
        self.progress = QProgressBar()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        row.addWidget(self.method_combo)
        row.addWidget(self.steps)
        row.addWidget(self.run_button)
        row.addWidget(self.cancel_button)
        row.addWidget(self.progress, 1)

    def started(self, method: str) -> None:
        """``method`` runs: the bar is busy until its first batch reports."""
        self.running, self.method = True, method
        self.progress.setRange(0, 0)

    def report(self, done: int, total: int) -> None:
        """``done`` of ``total`` internal batches (DecompX: layers) of the running method are finished."""
        if self.running:
            self.progress.setRange(0, total)
            self.progress.setValue(done)

    def ended(self, completed: bool) -> None:
        """The running method finished (``completed``: a full bar) or was cancelled, failed or abandoned (empty)."""
        self.running = False
        self.progress.setRange(0, 1)
        self.progress.setValue(1 if completed else 0)

    def set_ready(self, ready: bool) -> None:
        """Enable the controls: Run when ``ready`` (a prediction and a model) and nothing runs; Cancel while one runs;
        the steps for integrated gradients only."""
        self.run_button.setEnabled(ready and not self.running)
        self.method_combo.setEnabled(not self.running)
        self.steps.setEnabled(not self.running and self.method_combo.currentData() == "integrated_gradients")
        self.cancel_button.setEnabled(self.running)


__all__ = ["ON_DEMAND", "OnDemandRow"]
