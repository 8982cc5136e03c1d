"""The "Explanations" panel: several token-importance methods, their faithfulness, and a side-by-side view.

Attention is not by itself an explanation (Jain & Wallace 2019; Wiegreffe &
Pinter 2019), so the panel computes several methods for the current
prediction (:mod:`model.explain`) and measures each one's ERASER
comprehensiveness and sufficiency (DeYoung et al. 2020,
:mod:`model.explain.erasure`).

Threading: the jobs of :mod:`desktop_app.workers.explanations` run on the panel's own thread
(:class:`~desktop_app.workers.jobs.Jobs`); only they call the model. The panel follows the explorer state (:class:`~desktop_app.state.ExplorerState`): each new
prediction is explained, the selected layer is the ``attention`` method's layer; it keeps the immutable
NumPy results (:class:`model.explain.ExplanationResult`) in the state and shows what the state holds (so a
result restored from a session shows like a computed one), and the method chosen under "Colour tokens by"
becomes the state's token importance. Every new prediction starts a new *generation*: the worker checks
the generation between methods and between integrated-gradients batches, so the latest request wins, and
results of an older generation are dropped.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QFormLayout, QGroupBox, QLabel, QVBoxLayout, QWidget

from model.explain import CHEAP_METHODS, EXPLANATION_METHODS, METHOD_TITLES, ExplanationResult

from ..state import ExplorerState
from ..task_choice import same_input
from ..views.class_picker import ClassPicker
from ..views.faithfulness_table import FaithfulnessTable
from ..views.widgets import fit_table_height
from ..workers.explanations import MethodFailed, explain_job, on_demand_job
from ..workers.handle import EXPLANATION_NICE
from ..workers.jobs import Jobs
from .method_compare import MethodComparison
from .on_demand import ON_DEMAND, OnDemandRow

NONE_ITEM = "(none: plain tokens)"


class ExplanationPanel(QWidget):
    """Explanation methods for the current prediction, their faithfulness, and a two-method comparison.

    Public API:
        ``set_predictor(predictor)``: the model to explain (an opaque
        :class:`model.Predictor`; only the worker calls it).
        ``set_prediction(prediction)``: a :class:`model.Prediction`; starts the
        cheap methods (:data:`model.explain.CHEAP_METHODS`) on the worker.
        ``set_layer(layer)``: the attention layer of the ``attention`` method.
        ``run_method(method, n_steps=None)`` (an :data:`~desktop_app.panels.on_demand.ON_DEMAND` method),
        ``run_integrated_gradients(n_steps=None)``
        / ``cancel_integrated_gradients()`` (cancels the running on-demand method).
        ``select_method(name or None)``: colour the main view by that method (the state's importance).
        ``shutdown()``: stop the worker thread (also done on application quit).

    Args:
        state: the explorer state to follow and fill; None: a state of its own (the panel alone, in tests).

    Signals:
        importance_selected(object scores, bool signed, str method): float32
            [T] scores aligned with the prediction's tokens, or ``None`` (with
            ``False, ""``) to reset the main view's colouring.
        method_computed(str method): a method's row was filled for the current text.
        integrated_gradients_finished(bool completed): the on-demand method (IG or DecompX) finished (True) or
            was cancelled/failed (False).
    """

    importance_selected = Signal(object, bool, str)
    method_computed = Signal(str)
    integrated_gradients_finished = Signal(bool)

    def __init__(self, parent: QWidget | None = None, state: ExplorerState | None = None) -> None:
        super().__init__(parent)
        self._predictor = None
        self._prediction = None
        self._layer = -1
        self._pending = False
        self.state = state if state is not None else ExplorerState()  # holds the results
        self._build_ui()
        self.handle = Jobs("explanation-worker", EXPLANATION_NICE, parent=self, wait_ms=None)
        self.state.events.prediction.connect(self.set_prediction)
        self.state.events.layer_head.connect(lambda layer_head: self._on_layer_head(*layer_head))
        self.state.task.target_changed.connect(self._on_target)
        self.state.events.explanation_added.connect(self._show_result)
        self._update_enabled()

    # ----------------------------------------------------------------- UI

    def _build_ui(self) -> None:
        layout = QVBoxLayout(self)

        pick = QFormLayout()
        self.colour_combo = QComboBox()
        self.colour_combo.addItem(NONE_ITEM, None)
        for m in EXPLANATION_METHODS:
            self.colour_combo.addItem(METHOD_TITLES[m], m)
        self.colour_combo.setToolTip("Colour the main token view by this method's importance scores")
        self.colour_combo.currentIndexChanged.connect(self._emit_selected)
        pick.addRow("Colour tokens by:", self.colour_combo)
        self.class_picker = ClassPicker(self.state)  # the state's one "Explain class" choice
        pick.addRow("Explain class:", self.class_picker)
        layout.addLayout(pick)

        box = QGroupBox("Faithfulness (ERASER AOPC over k = 1, 5, 10, 20, 50% of tokens deleted)")
        box_layout = QVBoxLayout(box)
        self.table = FaithfulnessTable(EXPLANATION_METHODS, METHOD_TITLES, self.state)  # names what AOPC measures
        self.table.itemSelectionChanged.connect(self._on_table_selection)
        fit_table_height(self.table)
        box_layout.addWidget(self.table)

        self.on_demand = row = OnDemandRow()  # integrated gradients, DecompX: Run, Cancel, progress
        self.slow_combo, self.ig_steps, self.ig_progress = row.method_combo, row.steps, row.progress
        self.ig_button, self.ig_cancel_button = row.run_button, row.cancel_button
        self.slow_combo.currentIndexChanged.connect(lambda _i: self._update_enabled())
        self.ig_button.clicked.connect(lambda: self.run_method(self.slow_combo.currentData()))
        self.ig_cancel_button.clicked.connect(self.cancel_integrated_gradients)
        box_layout.addWidget(row)
        layout.addWidget(box)

        self.compare = MethodComparison(self.state)
        self.compare_left, self.compare_right, self.compare_view = self.compare.left, self.compare.right, self.compare.view
        layout.addWidget(self.compare, 1)

        self.status = QLabel("No review analysed yet.")
        self.status.setWordWrap(True)
        layout.addWidget(self.status)

    # ----------------------------------------------------------------- public API

    @property
    def results(self) -> dict[str, ExplanationResult]:
        """The finished methods for the current text: ``{method: ExplanationResult}`` (a copy of the state's)."""
        return dict(self.state.explanations)

    @property
    def prediction(self):
        """The :class:`model.Prediction` being explained, or None."""
        return self._prediction

    def is_busy(self) -> bool:
        """True while cheap methods or integrated gradients are still running for the current text."""
        return self.on_demand.running or (
            self._prediction is not None and any(m not in self.state.explanations for m in CHEAP_METHODS) and self._pending
        )

    def set_predictor(self, predictor) -> None:
        """Use ``predictor`` (a :class:`model.Predictor`) from now on; clears the results."""
        self._predictor = predictor
        self._prediction = None
        self._new_generation()
        self.status.setText("Model loaded. Analyse a review to compare explanation methods.")
        self._update_enabled()

    def set_layer(self, layer: int) -> None:
        """The layer used by the ``attention`` method (negative: from the last); recomputes it."""
        self._layer = int(layer)
        if self._prediction is not None and self._predictor is not None:
            self.state.discard_explanation("attention")
            self._pending = True
            self._explain(("attention",))

    def set_prediction(self, prediction) -> None:
        """Explain ``prediction`` (a :class:`model.Prediction`): the cheap methods start on the worker.

        Earlier requests still running are abandoned (latest wins). Emits
        ``importance_selected(None, False, "")`` first, since the old scores
        do not fit the new tokens; the chosen method's scores follow when ready. Explanations cover the whole review
        (``prediction.document``): another window of the same review keeps them (their colours are shown again).
        """
        if prediction is not None and same_input(prediction, self._prediction):
            self._prediction = prediction  # e.g. re-labelled with another threshold: the same explanations
            self._emit_selected()
            return
        self._prediction = prediction
        self._new_generation()
        if prediction is None:
            self.status.setText("No review analysed yet.")
            return
        if self._predictor is None:
            self.status.setText("No model loaded: explanations are unavailable.")
            return
        if not self._predictor.has_head:
            self.status.setText("This model has no classification head (attention-only mode): there is no "
                                "decision to explain. Attention, links, model and positional views still work.")
            return
        self._pending = True
        self.status.setText(f"Computing explanations for {prediction.num_tokens} tokens\u2026")
        self._explain(CHEAP_METHODS)
        self._update_enabled()

    def _explain(self, methods) -> None:
        """Compute ``methods`` (cheap ones) of the current prediction on the worker, in the current generation."""
        self.handle.run(explain_job, self._predictor, self._prediction, tuple(methods), self._layer,
                        self.state.head_mask, self.state.task.target, generation=self.handle.generation,
                        on_progress=self._on_explained, on_result=self._on_batch_finished)

    def select_method(self, method: str | None) -> None:
        """Colour the main view by ``method`` (None: reset); same as choosing it in the combo box.

        Raises:
            ValueError: for an unknown method name.
        """
        if method is not None and method not in EXPLANATION_METHODS:
            raise ValueError(f"unknown explanation method {method!r}")
        index = self.colour_combo.findData(method) if method is not None else 0
        if index == self.colour_combo.currentIndex():
            self._emit_selected()
        else:
            self.colour_combo.setCurrentIndex(index)

    def run_integrated_gradients(self, n_steps: int | None = None) -> None:
        """Start integrated gradients for the current prediction (progress bar, cancellable)."""
        self.run_method("integrated_gradients", n_steps)

    def run_method(self, method: str, n_steps: int | None = None) -> None:
        """Start ``method`` (one of :data:`ON_DEMAND`; ``n_steps``: integrated gradients' steps, default the spin
        box's) for the current prediction: a progress bar (per internal batch; DecompX: per layer) and Cancel."""
        if self._prediction is None or self._predictor is None:
            self.status.setText("Analyse a review first.")
            return
        if self.on_demand.running or method not in ON_DEMAND:
            return
        steps = int(n_steps or self.ig_steps.value())
        self.on_demand.started(method)
        self.handle.reset_stop()
        what = f" ({steps} steps)" if method == "integrated_gradients" else ""
        self.status.setText(f"{METHOD_TITLES[method]}{what} running\u2026")
        self.table.set_cell(method, 1, "running\u2026")
        self.handle.run(on_demand_job, self._predictor, self._prediction, steps, self.state.head_mask, method,
                        self.state.task.target, generation=self.handle.generation,
                        on_progress=lambda steps: self.on_demand.report(*steps),
                        on_result=self.state.add_explanation, on_stop=self._on_ig_cancelled,
                        on_error=lambda exc: self._on_failed(MethodFailed(method, str(exc) or type(exc).__name__)))
        self._update_enabled()

    def cancel_integrated_gradients(self) -> None:
        """Ask the worker to stop the running on-demand method after its current internal batch (DecompX: layer)."""
        if self.on_demand.running:
            self.handle.request_stop()
            self.status.setText(f"Cancelling {METHOD_TITLES[self.on_demand.method]}\u2026")

    def shutdown(self) -> None:
        """Abandon running work and stop the worker thread (waits for the current batch)."""
        self.handle.shutdown()

    def comparison(self) -> list[tuple[str, np.ndarray | None]]:
        """The two compared methods as ``(title, scores float32 [T] or None)``; None: not computed yet."""
        return self.compare.comparison()

    # ----------------------------------------------------------------- internals

    def _new_generation(self) -> None:
        self.handle.next_generation()
        self.state.clear_explanations()
        self._pending = False
        if self.on_demand.running:
            self.on_demand.running = False
            self.integrated_gradients_finished.emit(False)
        self.on_demand.ended(False)
        self.table.clear_results()
        self.compare.set_prediction(self._prediction)
        if self.colour_combo.currentData() is not None:
            self._select_importance(None, False, "")
        self._update_enabled()

    def _on_layer_head(self, layer: int, _head: int) -> None:
        self.set_layer(layer)

    def _on_target(self, _target: int) -> None:
        """Another class to explain for the same text (the user's pick): explain it again."""
        current = self.state.prediction
        if self._prediction is not None and current is not None and current is self._prediction:
            self._prediction = None
            self.set_prediction(current)

    def _update_enabled(self) -> None:
        self.on_demand.set_ready(self._prediction is not None and self._predictor is not None)

    def _on_explained(self, outcome: ExplanationResult | MethodFailed) -> None:
        """One cheap method's outcome (of the current text: stale ones never arrive)."""
        if isinstance(outcome, MethodFailed):
            self._on_failed(outcome)
        else:
            self.state.add_explanation(outcome)  # shown by _show_result

    def _show_result(self, res: ExplanationResult) -> None:
        """A result reached the state (computed here or restored): its row, IG's controls, colours, comparison."""
        self.table.show_result(res)
        ms = 1000 * res.explanation.elapsed_s
        if res.method in ON_DEMAND:
            self.on_demand.ended(True)
            delta = res.explanation.convergence_delta
            self.status.setText(f"{METHOD_TITLES[res.method]} done in {ms:.0f} ms" + (
                f"; convergence delta {delta:+.3g} (log-odds)." if delta is not None else "."))
            self._update_enabled()
            self.integrated_gradients_finished.emit(True)
        if self.colour_combo.currentData() == res.method:
            self._emit_selected()
        if res.method in self.compare.methods():
            self.compare.render()
        self.method_computed.emit(res.method)

    def _on_failed(self, failure: MethodFailed) -> None:
        method, message = failure.method, failure.message
        self.table.set_cell(method, 1, "error")
        self.status.setText(f"{METHOD_TITLES.get(method, method)} failed: {message}")
        if method in ON_DEMAND:
            self.on_demand.ended(False)
            self._update_enabled()
            self.integrated_gradients_finished.emit(False)

    def _on_batch_finished(self, _result=None) -> None:
        self._pending = False
        if not self.on_demand.running and self._prediction is not None:
            self.status.setText(
                f"{len(self.state.explanations)} methods computed for {self._prediction.document.num_tokens} tokens. "
                "Integrated gradients and DecompX run on demand (Run)."
            )

    def _on_ig_cancelled(self) -> None:
        self.on_demand.ended(False)
        self.table.set_cell(self.on_demand.method, 1, "cancelled")
        self.status.setText(f"{METHOD_TITLES[self.on_demand.method]} cancelled.")
        self._update_enabled()
        self.integrated_gradients_finished.emit(False)

    def _on_table_selection(self) -> None:
        method = self.table.selected_method()
        if method is not None:
            self.select_method(method)

    def _emit_selected(self, *_args) -> None:
        method = self.colour_combo.currentData()
        if method is None:
            self._select_importance(None, False, "")
            return
        res = self.state.explanations.get(method)
        if res is None:
            if method in ON_DEMAND and self._prediction is not None and not self.on_demand.running:
                self.status.setText(f"{METHOD_TITLES[method]} is not computed yet: choose it beside \u201cRun\u201d "
                                    "and press Run.")
            return  # emitted when the result arrives
        e = res.explanation
        self._select_importance(np.array(e.scores, dtype=np.float32, copy=True), bool(e.signed), method)

    def _select_importance(self, scores: np.ndarray | None, signed: bool, method: str) -> None:
        """Colour the tokens through the state, and announce it (``importance_selected``)."""
        self.state.set_importance(scores, signed, method)
        self.importance_selected.emit(scores, signed, method)
