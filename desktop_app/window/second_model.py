"""Model > Compare with a second model... (issue 44): model B beside the model in use (model A).

:class:`SecondModel` (made by :class:`~desktop_app.window.model_menu.ModelMenu`) adds the Model menu's entries,
loads model B on its own background thread (:func:`desktop_app.workers.second_model.load_second_job`: ours or any
Hugging Face folder the app opens, read as model A's task when the user chose one), and refuses a model that cannot
be compared row by row with A (another task type, other labels): one message naming both folders and what differs
(:func:`model.corpus.comparison.comparison_problem`). Once B is there:

* the prediction panel shows a compact "Model B" section (:class:`~desktop_app.views.model_b_box.ModelBBox`): B's
  verdict on the text on display (scored on the same thread, :func:`~desktop_app.workers.second_model.score_second_job`)
  and whether A and B agree;
* batch scoring scores every row with both (:meth:`~desktop_app.panels.batch.panel.BatchPanel.set_second_predictor`,
  connected by :meth:`SecondModel.attach_batch`), the table gains B's columns and "Agree?"; Analysis > Batch:
  disagreements first sorts by it; the Corpus dock's "A vs B" tab compares the two;
* a new model A that B cannot be compared with drops B (one message); Stop comparing drops it too.

Model B is one :class:`model.Predictor`, shared by this controller's thread and the batch thread (never copied).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QFileDialog, QMessageBox

from model.corpus.comparison import comparison_problem
from model.tasks.task import task_of

from desktop_app.panels.batch.compare import agree_column
from ..records import MODEL_B, Pin
from desktop_app.panels.batch.table_model import COLUMNS
from ..views.model_b_box import ModelBBox
from ..views.widgets import KeptHeightScroll
from ..workers.handle import EXPLANATION_NICE
from ..workers.jobs import Jobs
from ..workers.second_model import load_second_job, score_second_job
from .settings import APP_NAME


class SecondModel(QObject):
    """Model B of a :class:`~desktop_app.window.main_window.MainWindow` (module docstring).

    Attributes:
        predictor: model B (a ``model.Predictor``), or None.
        folder: model B's folder, or None.
        loading: the folder of the model B being loaded, or None.
        box: the prediction panel's "Model B" section.
        error_box: the last message box (non-modal), or None.
        show_attention: shows model B's attention dock (:mod:`desktop_app.window.model_b_attention`, which sets it),
            or None: Model > Model B's attention calls it.

    Signals:
        changed(object): model B is now this predictor (None: no model B).
    """

    changed = Signal(object)

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.predictor = None
        self.folder: str | None = None
        self.loading: str | None = None
        self.error_box: QMessageBox | None = None
        self.show_attention: Callable[[], None] | None = None
        self._scored: tuple | None = None  # ((text, pair), Score) of the text on display
        self.handle = Jobs("model-b", EXPLANATION_NICE, parent=self)
        self.box = ModelBBox()
        layout = window.prediction_panel.layout()
        layout.insertWidget(1, self.box)  # right under A's verdict, where the user looks (issue 56)
        area = window.prediction_panel.parentWidget().parentWidget()  # the dock's KeptHeightScroll (viewport, area)
        if isinstance(area, KeptHeightScroll):
            area.scrolled_only.append(self.box)  # B's section scrolls: the window never grows for it
        window.state.events.prediction.connect(self._on_prediction)
        window.predictor_loaded.connect(self._on_a_loaded)
        self.changed.connect(window.compare.set_second)  # pins of model B in Compare read the text with B

    # ---------------------------------------------------------------- menu
    def add_to(self, menu) -> None:
        """Add "Compare with a second model..." and "Stop comparing" to ``menu`` (the Model menu, rebuilt often)."""
        menu.addSeparator()
        act = menu.addAction("Compare with a &second model\u2026", self.open_folder)
        act.setStatusTip("Open a second model (same task and labels): both score every text and every batch row")
        act.setEnabled(self.window.predictor is not None)
        name = f" ({Path(self.folder).name})" if self.folder else ""
        both = menu.addAction("Compare A and B on this &text (importances side by side)", self.pin_text)
        both.setStatusTip("Pin model B's reading of the current text: the Compare view shows B's word importances "
                          "beside A's")
        both.setEnabled(self.predictor is not None)
        if self.show_attention is not None:
            att = menu.addAction("Model B's &attention (heatmap, links)", self.show_attention)
            att.setStatusTip("Model B's own heatmap and token links for the text on display, its layers and heads")
            att.setEnabled(self.predictor is not None)
        menu.addAction(f"S&top comparing{name}", self.stop).setEnabled(self.predictor is not None)

    def pin_text(self) -> None:
        """Pin model B's reading of the current text (:meth:`desktop_app.state.ExplorerState.set_pins` with a
        :class:`~desktop_app.records.Pin` of :data:`~desktop_app.records.MODEL_B`) and show Compare: B's word
        importances beside A's, by the Compare view's method, with both verdicts."""
        pred = self.window.state.prediction
        if self.predictor is None or pred is None:
            self.window.statusBar().showMessage("Open a second model and analyse a text first", 8000)
            return
        pin = Pin(pred.document.text, None, None, pred.text_pair, MODEL_B)
        state = self.window.state
        state.set_pins((*(p for p in state.pins if not (p.of_model_b and p.text == pin.text)), pin))
        self.window.docks.raise_view("Compare")

    def open_folder(self) -> str | None:
        """Ask for model B's folder and load it; returns the folder or None when cancelled."""
        start = self.folder or str(Path.home())
        folder = QFileDialog.getExistingDirectory(self.window, "Compare with a second model", start)
        if folder:
            self.load(folder)
        return folder or None

    # ---------------------------------------------------------------- loading
    def load(self, folder: str | Path, on_done: Callable[[str | None], None] | None = None) -> None:
        """Load model B from ``folder`` on the "model-b" thread; the answer is :attr:`changed` or one message.

        ``on_done`` (optional; a session's restore, :mod:`desktop_app.window.session.model_b`) is called once, on the
        GUI thread, when this load has ended however it ended: with None when model B is now the model of
        ``folder``, else with why not (model A still loading, a folder that fails to load, a model that cannot be
        compared with A, a load stopped by Stop comparing or another load), which it then says instead of a
        message box."""
        def end(message: str | None) -> None:
            if on_done is not None:
                on_done(message)
            elif message is not None:
                self._warn(message)

        a = self.window.predictor
        if a is None:
            end("Model A is still loading: open the second model once it is ready.")
            return
        folder = str(folder)
        outcome: list[str | None] = []  # how the load ended: None (loaded) or why not

        def settle(b=None, error: Exception | None = None) -> None:  # the load's answer (the latest request)
            self.loading = None
            message = self._on_loaded(folder, b) if error is None else f"Could not load model B from {folder}: {error}"
            outcome.append(message)
            if message is not None and self.predictor is not None:  # the old model B stays: its verdict again
                self._on_prediction(self.window.state.prediction)

        def ended() -> None:
            if outcome:
                end(outcome[0])
            elif on_done is not None:  # stale: Stop comparing or another load came first
                on_done(f"Loading model B from {folder} was stopped before it ended.")

        task = task_of(a) if task_of(a).source == "user" else None  # the user's reading of A: B reads the same
        self.window.statusBar().showMessage(f"Loading model B from {folder}\u2026")
        self.loading = folder
        self.handle.run(load_second_job, folder, self.window.device, self.window.controller.precision, task,
                        on_progress=lambda stage: self.window.statusBar().showMessage(stage),
                        on_result=settle, on_error=lambda exc: settle(error=exc),
                        on_end=ended)

    def _on_loaded(self, folder: str, b) -> str | None:
        """Adopt ``b`` as model B; returns None, or why it was refused (it cannot be compared with A)."""
        problem = comparison_problem(self.window.predictor, b)
        if problem is not None:
            return f"Model B was not opened: {problem}."
        self.predictor, self.folder, self._scored = b, folder, None
        self.box.set_model(Path(folder).name)
        self.window.statusBar().showMessage(f"Comparing with model B ({folder}): score a folder to compare them "
                                            "row by row", 8000)
        self.changed.emit(b)
        self._on_prediction(self.window.state.prediction)
        return None

    def stop(self) -> None:
        """No model B any more (its rows already in the table keep their B columns); a load under way is stopped."""
        self.handle.cancel()
        self.loading = None
        self.predictor, self.folder, self._scored = None, None, None
        self.box.set_model(None)
        self.changed.emit(None)

    def _on_a_loaded(self, a) -> None:
        if self.predictor is None:
            return
        problem = comparison_problem(a, self.predictor)
        if problem is not None:
            self.stop()
            self._warn(f"Stopped comparing with model B: {problem}.")

    def _warn(self, message: str) -> None:
        self.window.statusBar().showMessage(message, 10000)
        self.error_box = QMessageBox(QMessageBox.Warning, APP_NAME, message, QMessageBox.Ok, self.window)
        self.error_box.open()

    # ---------------------------------------------------------------- the text on display
    def _on_prediction(self, pred) -> None:
        """A new prediction of A: B's verdict on the same text (scored once per text; not while a model B loads: that
        request would make the load stale, and the loaded model scores the text on display)."""
        if self.predictor is None or self.loading is not None:
            return
        if pred is None:
            self.box.clear()
            return
        problem = comparison_problem(self.window.predictor, self.predictor)  # Model > Task may have changed A
        if problem is not None:
            self.box.clear(f"Not compared: {problem}")
            return
        key = (self.window.editor.toPlainText(), self.window.review_box.text_pair())
        if self._scored is not None and self._scored[0] == key:
            self.box.show_scores(pred, self._scored[1])
            return
        self.box.clear("B is scoring this text\u2026")
        self.handle.run(score_second_job, self.predictor, *key, on_result=lambda s: self._on_score(key, s),
                        on_error=lambda exc: self.box.clear(f"B could not score this text: {exc}"))

    def _on_score(self, key: tuple, score) -> None:
        self._scored = (key, score)
        if self.window.state.prediction is not None:
            self.box.show_scores(self.window.state.prediction, score)

    # ---------------------------------------------------------------- batch
    def attach_batch(self, batch) -> None:
        """Batch scoring follows model B (:meth:`~desktop_app.panels.batch.panel.BatchPanel.set_second_predictor`);
        adds Analysis > Batch: disagreements first."""
        self.changed.connect(batch.set_second_predictor)
        batch.set_second_predictor(self.predictor)

        def disagreements_first() -> None:
            column = agree_column(batch.table_model.extra_columns(), len(COLUMNS))
            if column < 0:
                self.window.statusBar().showMessage("No rows scored by two models yet (Model > Compare with a "
                                                    "second model\u2026, then score a folder)", 8000)
                return
            batch.ui.view.sortByColumn(column, Qt.SortOrder.AscendingOrder)

        menus = self.window.menus
        menus.add_action(menus.analysis_menu, "Batch: &disagreements first (A vs B)", disagreements_first)

    def shutdown(self) -> None:
        """Stop the "model-b" thread (the window's workers are shut down on close)."""
        self.handle.shutdown()


__all__ = ["SecondModel"]
