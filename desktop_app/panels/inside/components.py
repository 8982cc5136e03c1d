"""The "Components" dock (issue 53, section 1), in the Inside workspace: which heads and FFNs wrote the verdict.

:class:`ComponentsPanel` owns the :class:`~desktop_app.views.inside.components.ComponentsView`, the "Explain class"
picker (the state's one class choice, :mod:`desktop_app.task_choice`: multi-label one label at a time; regression
shows the value) and its own :class:`~desktop_app.workers.jobs.Jobs` runner ("components"). While the dock is shown
it splits the current text's target logit into its parts (``Predictor.component_attribution``, the whole text, a long
one read in windows, under the head mask) and sets the record on ``state.inside.components`` (:mod:`desktop_app.
inside_results`); the latest request wins, and a new text, model, head mask or class to explain asks again. A hidden
dock computes nothing and catches up when shown.

A click on a head selects that (layer, head) in the explorer state (``state.set_layer_head``: the heatmap and the Model
view follow) and shows its attention and value flow in the dock; a click on an FFN asks ``Predictor.ffn_neurons`` for
its top neurons on the same runner. A model whose logits cannot be split (``ComponentsNotSupported``) or without a
classification head gets a note and no numbers. The window's ``shutdown_workers`` stops the runner with the others.
"""

from __future__ import annotations

from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QSpinBox, QVBoxLayout, QWidget

from model.records.components import ComponentsNotSupported, head_of
from model.records.prediction import NoClassificationHead

from ...views.class_picker import ClassPicker
from ...views.inside.components import FFN_PART, ComponentsView
from ...workers.attention_flow import mask_key
from ...workers.handle import EXPLANATION_NICE
from ...workers.inside.components import components_job, ffn_neurons_job
from ...workers.jobs import Jobs

TITLE = "Components"
COMPUTING = "Splitting the verdict into its parts\u2026"
NO_HEAD = ("Component attribution splits the verdict's logit into the parts that wrote it, and this model has no "
           "classification head (attention only): it needs one. Open a model with a classification head.")
DEFAULT_TOP = 10
SETTINGS_KEYS = ("top_neurons", "part")


class ComponentsPanel(QWidget):
    """The Components dock's body and controller (module docstring).

    Args:
        window: the :class:`~desktop_app.window.main_window.MainWindow` (read: ``state``, ``predictor``,
            ``predictor_loaded``).

    Attributes:
        state: the window's explorer state. view: the :class:`ComponentsView`. class_picker: "Explain class".
        top_spin: how many of an FFN's neurons to list. handle: the "components" runner.
        asked: the key (predictor, text, pair, head mask, target) of the attribution shown or under way, or None.
        computed: how many attributions this panel has asked for (tests: a hidden dock asks for none).
    """

    def __init__(self, window) -> None:
        super().__init__()
        self.window = window
        self.state = window.state
        self.handle = Jobs("components", EXPLANATION_NICE, parent=self)
        self.asked: tuple | None = None
        self.computed = 0
        self._done: tuple | None = None  # (key, record) of the latest attribution received
        self._neurons_key: tuple | None = None
        self.view = ComponentsView(self.state)
        self.class_picker = ClassPicker(self.state)
        self.top_spin = QSpinBox()
        self.top_spin.setRange(1, 100)
        self.top_spin.setValue(DEFAULT_TOP)
        self.top_spin.setToolTip("How many of a clicked FFN's neurons to list (largest |contribution| first)")
        self.top_spin.valueChanged.connect(lambda _v: self._refresh_neurons())
        row = QHBoxLayout()
        form = QFormLayout()
        form.addRow("Explain class:", self.class_picker)
        row.addLayout(form)
        row.addStretch(1)
        form2 = QFormLayout()
        form2.addRow("FFN neurons:", self.top_spin)
        row.addLayout(form2)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addLayout(row)
        lay.addWidget(self.view, 1)
        self.view.grid.part_clicked.connect(self.click_part)
        self.state.events.prediction.connect(lambda *_: self.request())
        self.state.task.target_changed.connect(lambda *_: self.request())
        self.state.events.head_mask.connect(lambda *_: self.request())
        window.predictor_loaded.connect(lambda *_: self.request())

    # ---------------------------------------------------------------- computing
    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        self.request()

    def key(self) -> tuple | None:
        """What the attribution of the current text depends on: (predictor id, text, pair, head mask, target)."""
        pred, predictor = self.state.prediction, self.window.predictor
        if pred is None or predictor is None:
            return None
        return (id(predictor), pred.document.text, pred.text_pair, mask_key(self.state.head_mask),
                int(self.state.task.target))

    def request(self) -> None:
        """Split the current text's verdict (on the worker) when the dock is shown and it is not split already."""
        if not self.isVisible():
            return
        pred, key = self.state.prediction, self.key()
        if pred is None or key is None:
            self.asked = None
            return
        if pred.attention_only or key[4] < 0:
            self.asked = None
            self.state.inside.set("components", None, NO_HEAD)
            return
        if key == self.asked:
            done = self._done
            if done is not None and done[0] == key and self.state.inside.components is not done[1]:
                self.state.inside.set("components", done[1])  # a window of the same text: the same record
            return
        self.asked, self.computed = key, self.computed + 1
        self.state.inside.set("components", None, COMPUTING)
        self.view.show_neurons(None)
        self.handle.run(components_job, self.window.predictor, key[1], key[2], key[4], self.state.head_mask,
                        on_result=lambda ca: self._on_result(key, ca), on_error=lambda exc: self._on_failed(key, exc))

    def _on_result(self, key: tuple, ca) -> None:
        if key != self.asked:
            return
        self._done = (key, ca)
        self.state.inside.set("components", ca)
        self._refresh_neurons()

    def _on_failed(self, key: tuple, exc: Exception) -> None:
        if key != self.asked:
            return
        if isinstance(exc, NoClassificationHead):
            note = NO_HEAD
        elif isinstance(exc, ComponentsNotSupported):
            note = f"No numbers for this model: {exc}"
        else:
            note = f"The parts could not be computed: {type(exc).__name__}: {exc}"
        self.state.inside.set("components", None, note)

    # ---------------------------------------------------------------- clicks
    def click_part(self, name: str) -> None:
        """The user clicked part ``name``: a head is selected in the explorer state and its attention and value flow
        shown; an FFN's top neurons are computed; any part's bars show where it wrote."""
        self.view.select_part(name)
        head = head_of(name)
        if head:
            self.state.set_layer_head(head[0] - 1, head[1])
        self._neurons_key = None
        self._refresh_neurons()

    def _refresh_neurons(self) -> None:
        """Ask for the selected FFN's neurons when they are not those shown (a new text, class or top count)."""
        ffn, key = FFN_PART.match(self.view.part), self.asked
        ca = self.state.inside.components
        if not ffn or key is None or ca is None or not self.isVisible():
            return
        want = (key, int(ffn.group(1)), self.top_spin.value())
        if want == self._neurons_key:
            return
        self._neurons_key = want
        self.view.show_neurons(None, "computing its neurons\u2026")
        self.handle.run(ffn_neurons_job, self.window.predictor, key[1], key[2], key[4], self.state.head_mask, want[1],
                        want[2], on_result=lambda fn: self._on_neurons(want, fn),
                        on_error=lambda exc: self._on_neurons(want, None, f"{type(exc).__name__}: {exc}"))

    def _on_neurons(self, want: tuple, fn, note: str = "") -> None:
        if want == self._neurons_key:
            self.view.show_neurons(fn, note)

    # ---------------------------------------------------------------- settings
    def settings(self) -> dict:
        """The dock's settings, JSON-able: ``{"top_neurons": int, "part": str}`` (the part clicked, "" for none)."""
        return {"top_neurons": self.top_spin.value(), "part": self.view.part}

    def apply_settings(self, d: dict) -> None:
        """Adopt :meth:`settings`' dict ``d``; unknown keys are ignored.

        Raises:
            ValueError: a bad value (the message names its key).
        """
        top = d.get("top_neurons", self.top_spin.value())
        if isinstance(top, bool) or not isinstance(top, int) or not 1 <= top <= 100:
            raise ValueError(f"top_neurons: {top!r} is not a whole number from 1 to 100")
        part = d.get("part", self.view.part)
        if not isinstance(part, str):
            raise ValueError(f"part: {part!r} is not a part name")
        self.top_spin.setValue(top)
        if part != self.view.part:
            self.click_part(part) if part else self.view.select_part("")


__all__ = ["ComponentsPanel", "NO_HEAD", "TITLE"]
