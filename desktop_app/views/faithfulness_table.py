"""The explanation panel's table: one row per explanation method, its ERASER faithfulness and its time.

Columns: method title, comprehensiveness AOPC (higher is more faithful), sufficiency AOPC (lower is
more faithful), and the method's wall time in milliseconds. Both AOPCs are drops in what the model's task reads
for the explained class (:func:`model.explain.erasure.faithfulness`): a probability for a classifier (softmax
p(class), or a multi-label's sigmoid of the label), the output value itself for a regression head, in its units;
the header and tooltip say which (:data:`MEASURED`). Gets :class:`model.explain.ExplanationResult` records (NumPy /
plain values only); never imports torch.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from model.tasks.types import SINGLE_LABEL, TASK_TYPES, task_type

COLUMNS = ("Method", "Compr. \u2191", "Suff. \u2193", "Time (ms)")
REGRESSION_COLUMNS = ("Method", "Compr. \u2191 (\u0394 value)", "Suff. \u2193 (\u0394 value)", "Time (ms)")
MEASURED = {kind: t.measured for kind, t in TASK_TYPES.items()}
"""What the AOPC columns measure the drop of, per task id (:attr:`model.tasks.types.TaskType.measured`)."""


class FaithfulnessTable(QTableWidget):
    """Rows in the order of ``methods`` (ids), titled by ``titles[id]``; single-row selection.

    ``state``: an :class:`~desktop_app.state.ExplorerState` whose model's task (``events.info``) names what the
    AOPC columns measure (:meth:`set_task`); None: a classifier's p(class).
    """

    def __init__(self, methods: tuple[str, ...], titles: dict[str, str], state=None) -> None:
        super().__init__(len(methods), len(COLUMNS))
        self.methods = tuple(methods)
        self.task = ""
        self.set_task(SINGLE_LABEL)
        if state is not None:
            state.events.info.connect(lambda info: self.set_task(info.task))
        self.verticalHeader().setVisible(False)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in range(1, len(COLUMNS)):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        for row, m in enumerate(self.methods):
            item = QTableWidgetItem(titles[m])
            item.setData(Qt.ItemDataRole.UserRole, m)
            self.setItem(row, 0, item)

    def set_task(self, task: str) -> None:
        """Name what the AOPC columns measure for ``task`` (:data:`MEASURED`): a regression head's drops are in its
        output value ("\u0394 value" in the header), a classifier's in a probability. Raises ValueError for an
        unknown task id (:func:`model.tasks.types.task_type`)."""
        if task == self.task:
            return
        self.task = task
        kind = task_type(task)
        self.setHorizontalHeaderLabels(list(COLUMNS if kind.reads_probabilities else REGRESSION_COLUMNS))
        what = kind.measured
        self.setToolTip(
            f"Comprehensiveness: drop in {what} when the top-k% tokens are deleted (higher = more faithful).\n"
            f"Sufficiency: drop in {what} when only the top-k% tokens are kept (lower = more faithful).\n"
            "Time: the method's wall time for this review."
        )

    def clear_results(self) -> None:
        """Empty every result cell (the method titles stay)."""
        for row in range(len(self.methods)):
            for col in range(1, len(COLUMNS)):
                self.setItem(row, col, QTableWidgetItem(""))

    def set_cell(self, method: str, col: int, text: str, tooltip: str = "") -> None:
        """Write ``text`` in ``method``'s row, column ``col`` (numbers right-aligned)."""
        if method not in self.methods:  # a method this table does not list (e.g. from a newer app's session)
            return
        item = QTableWidgetItem(text)
        if tooltip:
            item.setToolTip(tooltip)
        if col > 0:
            item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.setItem(self.methods.index(method), col, item)

    def show_result(self, res) -> None:
        """Fill a method's row from an :class:`model.explain.ExplanationResult`."""
        f, e = res.faithfulness, res.explanation
        self.set_cell(res.method, 1, f"{f.comprehensiveness_aopc:.3f}")
        self.set_cell(res.method, 2, f"{f.sufficiency_aopc:.3f}")
        tip = f"convergence delta {e.convergence_delta:+.3g} (log-odds)" if e.convergence_delta is not None else ""
        self.set_cell(res.method, 3, f"{1000 * e.elapsed_s:.1f}", tip)

    def selected_method(self) -> str | None:
        """The method id of the selected row, or None."""
        rows = self.selectionModel().selectedRows()
        return self.methods[rows[0].row()] if rows else None
