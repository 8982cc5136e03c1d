"""The "Model B attention" dock (issue 44's two models, a step further): model B's own attention on the text on display.

With a model B open (Model > Compare with a second model...), **Model > Model B's attention** (or View > Model B
attention) shows B's heatmap and token links for the text model A shows, with B's own layers and heads (a 6 x 12
MiniLM beside our 2 x 4 encoder), B's own layer/head/Show selectors and token clicks, and value norms and ALTI of B
computed by their own :class:`~desktop_app.workers.attention_flow.FlowController`. The dock has its own
:class:`~desktop_app.state.ExplorerState` (B's :class:`~model.records.info.ModelInfo` and B's prediction), so the
same view classes draw it; nothing of model A's state is touched (A's head mask, selection and pins stay A's).

B analyses the text on its own "model-b-attention" :class:`~desktop_app.workers.jobs.Jobs` runner, only while the dock
is shown (the latest text wins; model B is the one shared :class:`model.Predictor`); the window's
``shutdown_workers`` stops its workers with the others. A long text read in windows:
B shows its window that starts at or before where A's window on display starts (the tokenizers differ, so the
windows do not line up exactly); the caption says which window of how many.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QLabel, QTabWidget, QVBoxLayout, QWidget

from ..state import ExplorerState
from ..views.heatmap import AttentionHeatmap
from ..views.links_view import AttentionLinksView
from ..workers.attention_flow import FlowController
from ..workers.handle import EXPLANATION_NICE
from ..workers.jobs import Jobs
from ..workers.second_model import attention_second_job

TITLE = "Model B attention"
IDLE_NOTE = "Open a second model (Model > Compare with a second model\u2026) to see its attention here."


class ModelBAttention(QObject):
    """The dock of model B's attention (module docstring).

    Args:
        window: the :class:`~desktop_app.window.main_window.MainWindow`; second: its
            :class:`~desktop_app.window.second_model.SecondModel` (model B).

    Attributes:
        state: B's :class:`~desktop_app.state.ExplorerState`; heatmap, links: the views drawing it; dock: the dock.
        caption: the line above the views (B's name, verdict and window, or why nothing is shown).
    """

    def __init__(self, window, second) -> None:
        super().__init__(window)
        self.window = window
        self.state = ExplorerState()
        self.flows = FlowController(self.state, self)  # B's value norms / ALTI, on their own worker
        self.handle = Jobs("model-b-attention", EXPLANATION_NICE, parent=self)
        self._predictor = None
        self._asked: tuple | None = None  # (predictor id, text, pair, A's window start) of the shown or asked analysis
        self._model_of: int | None = None  # id of the predictor whose ModelInfo B's state holds
        self.caption = QLabel(IDLE_NOTE)
        self.caption.setWordWrap(True)
        self.heatmap = AttentionHeatmap(self.state)
        self.links = AttentionLinksView(self.state)
        tabs = QTabWidget()
        tabs.addTab(self.heatmap, "Heatmap")
        tabs.addTab(self.links, "Links")
        body = QWidget()
        lay = QVBoxLayout(body)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(self.caption)
        lay.addWidget(tabs, 1)
        self.dock = window.docks.add_panel(body, TITLE, Qt.RightDockWidgetArea, tab="B attention")  # in Compare
        second.changed.connect(self.set_predictor)
        second.show_attention = self.show
        window.state.events.prediction.connect(lambda *_: self.request())
        self.dock.visibilityChanged.connect(lambda shown: shown and self.request())
        self.set_predictor(second.predictor)

    def show(self) -> None:
        """Show and raise the dock (Model > Model B's attention), in the Compare workspace."""
        self.window.docks.raise_view(TITLE)
        self.request()

    def set_predictor(self, predictor) -> None:
        """Model B is now ``predictor`` (None: no model B): B's state forgets the old model's analysis."""
        self._predictor, self._asked = predictor, None
        self.handle.cancel()
        self.flows.set_predictor(predictor)
        self.state.set_prediction(None)
        self.caption.setText(IDLE_NOTE if predictor is None else "Model B analyses the text on display\u2026")
        self.request()

    def request(self) -> None:
        """Analyse model A's text on display with model B (on the worker), when the dock is shown and the text, its
        window or model B changed since the last analysis."""
        pred, b = self.window.state.prediction, self._predictor
        if b is None or self.dock.isHidden():
            return
        if pred is None:
            self._asked = None
            self.state.set_prediction(None)
            self.caption.setText("Analyse a text: model B's attention for it shows here.")
            return
        doc = pred.document
        start = int(doc.windows.chars[self.window.state.windows.current][0]) if doc.windows.count > 1 else 0
        key = (id(b), doc.text, pred.text_pair, start)
        if key == self._asked:
            return
        self._asked = key
        self.handle.run(attention_second_job, b, doc.text, pred.text_pair, start,
                        on_result=lambda got: self._on_result(key, got),
                        on_error=lambda exc: self._on_failed(key, exc))

    def _on_result(self, key: tuple, got) -> None:
        info, pred, window = got
        if key != self._asked:
            return
        if self._model_of != key[0]:  # B's first analysis: its layers, heads and labels for the selectors
            self._model_of = key[0]
            self.state.set_model(info)
        self.state.set_prediction(pred)
        windows = pred.document.windows.count
        where = f", its window {window + 1} of {windows}" if windows > 1 else ""
        name = Path(info.model_dir).name if info.model_dir else "the bundled model"
        self.caption.setText(f"Model B ({name}, {info.n_layers} layers \u00d7 {info.n_heads} heads): {pred.label}"
                             f"{where}. Click a token, pick a layer and head: these views are B's own.")

    def _on_failed(self, key: tuple, exc: Exception) -> None:
        if key == self._asked:
            self.state.set_prediction(None)
            self.caption.setText(f"Model B could not analyse this text: {exc}")


__all__ = ["IDLE_NOTE", "TITLE", "ModelBAttention"]
