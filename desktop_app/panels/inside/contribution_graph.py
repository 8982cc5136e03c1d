"""The "Contribution graph" dock (issue 53, section 2): owns the :class:`ContributionGraphView`, computes the graph
of the text on display on its own "contribution-graph" :class:`~desktop_app.workers.jobs.Jobs` thread, only while the
dock is on screen (shown, and not behind another tab of its dock area), and sets it on ``state.inside`` (field
``graph``).

What is computed: ``Predictor.contribution_graph`` of the prediction's text (a long text read in windows: the text of
the window shown, which fits; the caption says which window), its text pair and the explorer's head mask, once per
text at the slider's least threshold (:data:`desktop_app.views.inside.contribution_graph.THRESHOLDS`\\ [0]); the
slider then prunes that one graph on the GUI thread (:meth:`model.records.graph.ContributionGraph.pruned`, equal to
the API's graph at the higher threshold), so moving it never waits for the model. A new text, model or head mask
recomputes (the latest request wins); the class to explain does not (ALTI's contributions do not depend on a class).
A model without a classification head, or one ALTI does not cover, shows the reason instead of a graph.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from ...views.inside.contribution_graph import THRESHOLDS, ContributionGraphView
from ...workers.attention_flow import mask_key
from ...workers.handle import INTERNALS_NICE, one_line
from ...workers.inside.contribution_graph import graph_job
from ...workers.jobs import Jobs

TITLE = "Contribution graph"
FIELD = "graph"
NO_HEAD_NOTE = ("The contribution graph needs a classification head: it starts from the read-out's state, and this "
                "model has none (attention-only mode).")


class ContributionGraphPanel(QObject):
    """The Contribution graph dock's controller (module docstring).

    Args:
        window: the :class:`~desktop_app.window.main_window.MainWindow` (its ``state``, ``predictor``,
            ``predictor_loaded``, ``add_panel``).

    Attributes:
        view: the :class:`ContributionGraphView`. caption: the line above it (which text and window). dock: the dock.
        handle: the dock's :class:`Jobs` (stopped by the window's ``shutdown_workers``). computed: how many graphs
            were asked of the worker (tests: a hidden dock asks none).
    """

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.state = window.state
        self.handle = Jobs("contribution-graph", INTERNALS_NICE, parent=self)
        self.computed = 0
        self._predictor = window.predictor
        self._asked: tuple | None = None  # the key of the graph on display or asked for
        self.view = ContributionGraphView(self.state)
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        body = QWidget()
        lay = QVBoxLayout(body)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(self.caption)
        lay.addWidget(self.view, 1)
        self.dock = window.docks.add_panel(body, TITLE, Qt.RightDockWidgetArea)
        window.predictor_loaded.connect(self.set_predictor)
        self.state.events.prediction.connect(lambda *_: self.request())
        self.state.events.head_mask.connect(lambda *_: self.request())
        self._tab_shown = False  # the dock's last visibilityChanged: False behind another tab of its dock area
        self.dock.visibilityChanged.connect(self._on_visibility)

    def _on_visibility(self, shown: bool) -> None:
        self._tab_shown = bool(shown)
        if shown:
            self.request()

    def on_screen(self) -> bool:
        """True when the dock is shown and not behind another tab (only then does it compute)."""
        return not self.dock.isHidden() and (self._tab_shown or not self.dock.visibleRegion().isEmpty())

    def set_predictor(self, predictor) -> None:
        """A model was loaded: its graphs replace the old model's."""
        self._predictor, self._asked = predictor, None
        self.handle.cancel()
        self.request()

    def key(self) -> tuple | None:
        """(model, text, pair, head-mask key) of the graph the dock needs now, or None (no model or text)."""
        pred = self.state.prediction
        if self._predictor is None or pred is None:
            return None
        return id(self._predictor), pred.text, pred.text_pair, mask_key(self.state.head_mask)

    def request(self) -> None:
        """Compute the graph of the text on display on the worker, when the dock is on screen (:meth:`on_screen`) and
        the text, model or head mask changed since the graph shown (or asked for); else show why there is none."""
        if not self.on_screen():
            return
        key = self.key()
        if key is None:
            self._asked = None
            self.caption.setText("Analyse a text: the states its read-out is built from show here.")
            return
        if key == self._asked and (self.state.inside.graph is not None or self.state.inside.note(FIELD)):
            return  # shown, being computed, or its reason shown (a new prediction drops the graph and its note)
        self._asked = key
        info = self.state.info
        if info is not None and not info.has_head:
            self.caption.setText("")
            self.state.inside.set(FIELD, None, NO_HEAD_NOTE)
            return
        pred = self.state.prediction
        where = (f"window {pred.window + 1} of {pred.num_windows} of this long text (its tokens only; the nodes read "
                 "out this window alone)" if pred.num_windows > 1 else "the text on display")
        self.caption.setText(f"Computing the contribution graph of {where}\u2026")
        self.state.inside.set(FIELD, None, "Computing\u2026")
        self.computed += 1
        self.handle.run(graph_job, self._predictor, pred.text, THRESHOLDS[0], self.state.head_mask, pred.text_pair,
                        on_result=lambda g: self._on_result(key, g, where),
                        on_error=lambda exc: self._on_failed(key, exc))

    def _on_result(self, key: tuple, graph, where: str) -> None:
        if key != self._asked or key != self.key():
            return
        self.state.inside.set(FIELD, graph)
        heads = " (heads switched off: their edges weigh 0)" if graph.head_mask is not None else ""
        self.caption.setText(f"The states the read-out of {where} is built from{heads}; computed in "
                             f"{graph.elapsed_s * 1000:.0f} ms. Green: head paths, grey: residual/FFN, purple: the "
                             "selected head.")

    def _on_failed(self, key: tuple, exc: Exception) -> None:
        if key == self._asked:
            self.caption.setText("")
            self.state.inside.set(FIELD, None, f"The contribution graph cannot be shown: {one_line(exc)}")

    # ------------------------------------------------------------------ session settings
    def settings(self) -> dict:
        """The view's settings, JSON-able: ``{"threshold": float}`` (the slider's)."""
        return {"threshold": self.view.threshold}

    def apply_settings(self, d: dict) -> None:
        """Adopt settings from :meth:`settings` (unknown keys ignored). Raises ValueError naming a bad key."""
        if "threshold" in d:
            t = d["threshold"]
            if isinstance(t, bool) or not isinstance(t, (int, float)) or not THRESHOLDS[0] <= t <= THRESHOLDS[-1]:
                raise ValueError(f"contribution graph settings: 'threshold' must be a number in "
                                 f"[{THRESHOLDS[0]}, {THRESHOLDS[-1]}], got {t!r}")
            self.view.set_threshold(float(t))


__all__ = ["NO_HEAD_NOTE", "TITLE", "ContributionGraphPanel"]
