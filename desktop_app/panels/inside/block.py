"""The "Block" dock of the Learn workspace (issue 53, section 4): one token followed through one encoder layer, step
by step, and after the last layer the read-out (the view: :mod:`desktop_app.views.inside.block`).

The token is the one selected in the text (``state.selection``; none selected: the first token, [CLS], which the
read-out reads); the layer is the dock's own picker (1-based; default the last, whose read-out shows the verdict).
The trace is computed on the dock's own "block-trace" :class:`~desktop_app.workers.jobs.Jobs` runner with the one
shared Predictor, only while the dock is shown (the latest request wins), whenever the text, the model, the head
mask, the token or the layer changes; it goes to ``state.inside.set("block_trace", ...)``. A family whose layer does
not fit the steps (``BlockNotSupported``) shows why instead of numbers. The window's ``shutdown_workers`` stops the
runner with the others.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSpinBox, QVBoxLayout, QWidget

from ...views.inside.block import BlockView
from ...views.widgets import scrollable
from ...workers.attention_flow import mask_key
from ...workers.handle import INTERNALS_NICE
from ...workers.inside.block import block_trace_job
from ...workers.jobs import Jobs

TITLE = "Block"
FIELD = "block_trace"
NO_TEXT = "Analyse a text: the Block view follows one of its tokens through one encoder layer."


class BlockPanel(QObject):
    """The Block dock's controller (module docstring).

    Args:
        window: the :class:`~desktop_app.window.main_window.MainWindow` (its state, predictor and docks).

    Attributes:
        view: the :class:`~desktop_app.views.inside.block.BlockView`. layer: the layer picker (1-based).
        caption: what is followed, or why nothing is. dock: the dock. handle: the dock's job runner.
    """

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window, self.state = window, window.state
        self.predictor = window.predictor
        self.handle = Jobs("block-trace", INTERNALS_NICE, parent=self)
        self._asked: tuple | None = None  # the key of the trace shown or asked for
        self.layer = QSpinBox()
        self.layer.setPrefix("Layer ")
        self.layer.setToolTip("The encoder layer to follow the token through (1 = the first); the read-out after "
                              "the last layer shows how the verdict is read")
        self.caption = QLabel(NO_TEXT)
        self.caption.setWordWrap(True)
        self.view = BlockView(self.state)
        body = QWidget()
        lay = QVBoxLayout(body)
        lay.setContentsMargins(4, 4, 4, 4)
        row = QHBoxLayout()
        row.addWidget(self.layer)
        row.addWidget(self.caption, 1)
        lay.addLayout(row)
        lay.addWidget(self.view, 1)
        self.dock = window.docks.add_panel(scrollable(body), TITLE, Qt.RightDockWidgetArea)
        self._fit_layers()
        window.predictor_loaded.connect(self.set_predictor)
        events = self.state.events
        events.info.connect(lambda *_: self._fit_layers())
        for signal in (events.prediction, events.selection, events.head_mask):
            signal.connect(lambda *_: self.request())
        self.layer.valueChanged.connect(lambda _v: self.request())
        self.dock.visibilityChanged.connect(lambda shown: shown and QTimer.singleShot(0, self.request))

    def set_predictor(self, predictor) -> None:
        """Use ``predictor`` (a newly loaded model): what was asked of the old one is forgotten."""
        self.predictor, self._asked = predictor, None
        self.handle.cancel()
        self.request()

    def _fit_layers(self) -> None:
        L = self.state.n_layers
        self.layer.blockSignals(True)
        self.layer.setRange(1, max(1, L))
        self.layer.setValue(max(1, L))  # the last layer: the read-out shows the verdict
        self.layer.blockSignals(False)
        self.layer.setEnabled(L > 0)

    def shown(self) -> bool:
        """Whether the dock is on screen: in the current workspace and, when tabbed, its tab raised (a tab behind
        another is "visible" to Qt, with nothing of it on screen)."""
        return self.dock.isVisible() and not self.dock.visibleRegion().isEmpty()

    def position(self) -> int:
        """The token followed: the first selected one, else 0 (the first token, [CLS])."""
        return self.state.selection[0] if self.state.selection else 0

    def request(self) -> None:
        """Trace the current text's token through the chosen layer on the worker, when the dock is shown and
        something it depends on changed since the last request."""
        pred = self.state.prediction
        if self.predictor is None or not self.shown():
            return
        if pred is None:
            self._asked = None
            self.caption.setText(NO_TEXT)
            if self.state.inside.block_trace is not None or self.state.inside.note(FIELD) != NO_TEXT:
                self.state.inside.set(FIELD, None, NO_TEXT)
            return
        layer, position = self.layer.value() - 1, self.position()
        key = (id(self.predictor), id(pred), layer, position, mask_key(self.state.head_mask))
        if key == self._asked:
            return
        self._asked = key
        if self.state.inside.block_trace is None:
            self.state.inside.set(FIELD, None, "Computing\u2026")
        self.handle.run(block_trace_job, self.predictor, pred.text, layer, position, pred.text_pair,
                        self.state.head_mask, on_result=lambda got: self._on_result(key, got),
                        on_error=lambda exc: self._on_failed(key, exc))

    def _on_result(self, key: tuple, trace) -> None:
        if key != self._asked:
            return
        self.state.inside.set(FIELD, trace)
        head = "" if trace.readout or trace.layer + 1 < trace.n_layers else \
            " This model has no classification head: no read-out."
        pred = self.state.prediction
        if trace.readout and pred is not None and pred.num_windows > 1:
            head = f" The read-out is this window's; the verdict joins the {pred.num_windows} windows'."
        self.caption.setText(f"Token {trace.position} '{trace.token}' through layer {trace.layer + 1} of "
                             f"{trace.n_layers} ({trace.family}). Click a token in the text to follow it; click a "
                             f"box for its numbers.{head}")

    def _on_failed(self, key: tuple, exc: Exception) -> None:
        if key != self._asked:
            return
        self.state.inside.set(FIELD, None, f"The Block view cannot show this: {exc}")
        self.caption.setText("")

    def settings(self) -> dict:
        """The dock's settings for a session: ``{"layer": the 1-based layer}``."""
        return {"layer": int(self.layer.value())}

    def apply_settings(self, settings: dict) -> None:
        """Adopt ``settings`` (of :meth:`settings`; unknown keys ignored).

        Raises:
            ValueError: ``layer`` is not an integer in 1..L (the message names the key).
        """
        if "layer" in settings:
            value = settings["layer"]
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= self.layer.maximum():
                raise ValueError(f"block settings: 'layer' must be an integer in 1..{self.layer.maximum()}, "
                                 f"got {value!r}")
            self.layer.setValue(value)


__all__ = ["TITLE", "BlockPanel"]
