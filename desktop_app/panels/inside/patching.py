"""The "Patching" dock (issue 53 section 3): activation patching between the pinned text (clean) and the current one
(corrupted), in the Inside workspace.

The clean text is a pin of the explorer state (``state.pins``, the model on display's; the newest by default, a
picker when there are several); the corrupted text is the text on display. A What if edit is the ideal pair: clicking
one pins the original and makes the edit the current text (:func:`desktop_app.panels.whatif_panel.open_edit`); when
no text is pinned, the dock says what to do in one line and offers "Pin the original" (the What if source, when the
text on display is one of its edits) or "Pin this text".

The settings: the site (the residual stream by layer and position, the heads, the FFNs), the direction (denoise: the
clean activation into the corrupted run; noise: the reverse), the method (activation patching, or attribution
patching, labelled a fast preview: a gradient approximation) and the class (the explorer's one class choice,
``state.task``). :meth:`model.Predictor.activation_patching` runs on this dock's own
:class:`~desktop_app.workers.jobs.Jobs` (:func:`desktop_app.workers.inside.patching.patching_job`) with a progress bar
and Cancel, only while the dock is shown (the latest request wins: a new text, pin, model, class or setting makes the
running one stale). The result goes to ``state.inside.patching`` (:mod:`desktop_app.inside_results`) with its note,
which :class:`desktop_app.views.inside.patching.PatchingView` draws.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from model.records.patching import DIRECTIONS, PATCHING_METHODS, SITES

from ...records import Pin
from ...views.class_picker import ClassPicker
from ...views.inside.patching import PatchingView
from ...views.widgets import display_token
from ...workers.handle import EXPLANATION_NICE
from ...workers.inside.patching import patching_job, predict_job
from ...workers.jobs import Jobs

TITLE = "Patching"
PATCHING_NICE = EXPLANATION_NICE
"""The niceness of the dock's worker thread (:func:`desktop_app.workers.handle.lower_thread_priority`)."""
SITE_TITLES = {"resid": "Residual stream", "head": "Heads", "ffn": "FFNs"}
DIRECTION_TITLES = {"denoise": "Denoise (clean \u2192 corrupted)", "noise": "Noise (corrupted \u2192 clean)"}
METHOD_TITLES = {"exact": "Activation patching", "attribution": "Attribution patching (fast preview, approximate)"}
NO_PIN_NOTE = "Pin a text (the clean one), then edit the text on display; or click a What if edit: it does both."
CANCELLED_NOTE = "Patching cancelled. Press Run to compute it again."
COMPUTING_NOTE = "Computing\u2026"


def _combo(titles: dict[str, str], keys: tuple[str, ...], tip: str) -> QComboBox:
    box = QComboBox()
    for key in keys:
        box.addItem(titles[key], key)
    box.setToolTip(tip)
    return box


class PatchingPanel(QObject):
    """The Patching dock's controller (module docstring).

    Args:
        window: the :class:`~desktop_app.window.main_window.MainWindow` (its state, predictor and docks).
        whatif_source: a callable giving the What if panel's source ``(text, text_pair)`` or None: the original of
            the edits it made (offered as "Pin the original").

    Attributes:
        view: the :class:`~desktop_app.views.inside.patching.PatchingView`; dock: the dock.
        pin_combo, site_combo, direction_combo, method_combo, class_picker: the settings; run_button,
        cancel_button, progress: the run's controls; pin_button: "Pin the original" / "Pin this text".
        handle: the dock's :class:`~desktop_app.workers.jobs.Jobs`.
    """

    def __init__(self, window, whatif_source=None) -> None:
        super().__init__(window)
        self.window, self.state = window, window.state
        self._whatif_source = whatif_source or (lambda: None)
        self._asked: tuple | None = None  # the key of the running or shown computation
        self._picked: str | None = None  # the pinned text the user picked as the clean one (None: the newest)
        self.running = False
        self.handle = Jobs("patching-worker", PATCHING_NICE, parent=self)
        self.view = PatchingView(self.state)
        self.pin_combo = QComboBox()
        self.pin_combo.setToolTip("The clean text: a pinned text (pin one in the Prediction box or Compare)")
        self.pin_combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.pin_combo.setMinimumContentsLength(24)
        self.pin_button = QPushButton("Pin this text")
        self.site_combo = _combo(SITE_TITLES, SITES, "What is patched: the residual stream entering each layer at "
                                 "each position, each head's output, or each FFN's output")
        self.direction_combo = _combo(DIRECTION_TITLES, DIRECTIONS, "Denoise: does this site restore the clean "
                                      "verdict? Noise: does it break it?")
        self.method_combo = _combo(METHOD_TITLES, PATCHING_METHODS, "Activation patching runs one patched pass per "
                                   "cell; attribution patching (Nanda 2023) estimates all cells from one forward and "
                                   "one backward pass: a first-order approximation")
        self.class_picker = ClassPicker(self.state)
        self.run_button = QPushButton("Run")
        self.cancel_button = QPushButton("Cancel")
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(140)
        self.dock = window.docks.add_panel(self._layout(), TITLE, Qt.RightDockWidgetArea)
        self._connect()
        self._update_controls()

    def _layout(self) -> QWidget:
        body = QWidget()
        lay = QVBoxLayout(body)
        lay.setContentsMargins(2, 2, 2, 2)
        rows = (
            (QLabel("Clean (pinned):"), self.pin_combo, self.pin_button),
            (self.site_combo, self.direction_combo, self.method_combo),
            (QLabel("Class:"), self.class_picker, self.run_button, self.cancel_button, self.progress),
        )
        for widgets in rows:
            row = QHBoxLayout()
            for w in widgets:
                row.addWidget(w, 1 if w is self.pin_combo else 0)
            if widgets[1] is not self.pin_combo:
                row.addStretch(1)
            lay.addLayout(row)
        lay.addWidget(self.view, 1)
        return body

    def _connect(self) -> None:
        state = self.state
        state.events.prediction.connect(lambda *_: self.request())
        state.events.pins.connect(lambda *_: self._on_pins())
        state.task.target_changed.connect(lambda *_: self.request())
        self.window.predictor_loaded.connect(lambda *_: self.request())
        self.dock.visibilityChanged.connect(lambda shown: shown and self.request())
        self.pin_combo.activated.connect(self._on_picked)
        for box in (self.site_combo, self.direction_combo, self.method_combo):
            box.activated.connect(lambda *_: self.request())
        self.run_button.clicked.connect(lambda: self.request(force=True))
        self.cancel_button.clicked.connect(self.cancel)
        self.pin_button.clicked.connect(self.pin_original)
        self._on_pins()

    # ----------------------------------------------------------------- the pair
    def pins(self) -> list[Pin]:
        """The pins of the model on display, newest first (the clean texts on offer)."""
        return [p for p in reversed(self.state.pins) if not p.of_model_b]

    def clean_pin(self) -> Pin | None:
        """The chosen pin (the newest by default), or None."""
        pins = self.pins()
        i = self.pin_combo.currentIndex()
        return pins[i] if 0 <= i < len(pins) else (pins[0] if pins else None)

    def _on_picked(self, index: int) -> None:
        """The user picked pin ``index`` of the picker: it stays the clean text while it is pinned."""
        self._picked = self.pin_combo.itemData(index) if index > 0 else None  # the newest: follow the newest
        self.request()

    def _on_pins(self) -> None:
        """Refill the picker (the user's pick while it stays pinned, else the newest) and compute again."""
        chosen = self._picked
        self.pin_combo.blockSignals(True)
        self.pin_combo.clear()
        for i, pin in enumerate(self.pins()):
            words = " ".join(pin.text.split())
            self.pin_combo.addItem(("newest: " if i == 0 else "") + display_token(words, 60), pin.text)
        index = self.pin_combo.findData(chosen) if chosen is not None else -1
        if index < 0:
            self._picked = None
        self.pin_combo.setCurrentIndex(max(index, 0) if self.pin_combo.count() else -1)
        self.pin_combo.blockSignals(False)
        self.request()

    def _original(self) -> tuple[str, str | None] | None:
        """The What if source when the text on display is another text (one of its edits), else None."""
        source, pred = self._whatif_source(), self.state.prediction
        if source is None or pred is None or source == (pred.document.text, pred.text_pair):
            return None
        return source

    def pin_original(self) -> None:
        """Pin the What if original (analysed on this dock's worker) when the text on display is one of its edits,
        else pin the text on display."""
        source, predictor = self._original(), self.window.predictor
        if source is None or predictor is None:
            self.state.pin_current()
            return
        text, pair = source
        mask = self.state.head_mask
        self.handle.run(predict_job, predictor, text, pair, mask, latest=False,
                        on_result=lambda pred: self.state.set_pins((*self.state.pins, Pin(text, pred, mask, pair))),
                        on_error=lambda exc: self._note(f"Could not pin the original: {exc}"))

    # ----------------------------------------------------------------- computing
    def settings(self) -> dict:
        """The dock's settings, JSON-able: ``{"site", "direction", "method", "clean_pin"}``; ``clean_pin``: the pin the
        user picked as the clean text, its index in :meth:`pins` (0: the newest), or None (the newest, followed)."""
        pins = [p.text for p in self.pins()]
        return {"site": self.site_combo.currentData(), "direction": self.direction_combo.currentData(),
                "method": self.method_combo.currentData(),
                "clean_pin": pins.index(self._picked) if self._picked in pins else None}

    def apply_settings(self, settings: dict) -> None:
        """Adopt ``settings`` (as :meth:`settings` gives; unknown keys ignored) and compute again.

        Raises:
            ValueError: a value that is not one of :data:`~model.records.patching.SITES`, ``DIRECTIONS`` or
                ``PATCHING_METHODS``, or a ``clean_pin`` that is not a pin's index, naming its key.
        """
        boxes = {"site": self.site_combo, "direction": self.direction_combo, "method": self.method_combo}
        picks = {}
        for key, box in boxes.items():
            if key in settings:
                index = box.findData(settings[key])
                if index < 0:
                    allowed = ", ".join(box.itemData(i) for i in range(box.count()))
                    raise ValueError(f"Patching setting {key!r} must be one of {allowed}, got {settings[key]!r}")
                picks[box] = index
        picked, pins = self._picked, self.pins()
        if "clean_pin" in settings:
            i = settings["clean_pin"]
            if i is not None and (isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < len(pins)):
                raise ValueError(f"Patching setting 'clean_pin' must be None or a pin's index 0..{len(pins) - 1}, "
                                 f"got {i!r}")
            picked = pins[i].text if i else None  # None or 0: follow the newest
        for box, index in picks.items():
            box.setCurrentIndex(index)
        self._picked = picked
        self._on_pins()  # the picker shows the pick and computes again

    def _why_not(self, predictor, pred, pin) -> str:
        """Why nothing can be computed now ("" when it can)."""
        if predictor is None:
            return "No model loaded."
        if not predictor.has_head:
            return "Activation patching needs a classification head: this model has none (attention only)."
        if pred is None:
            return "Analyse a text first."
        if pred.text_pair is not None or (pin is not None and pin.text_pair is not None):
            return "Activation patching compares two single texts; sentence pairs are not supported."
        if pin is None:
            return NO_PIN_NOTE
        if pin.text == pred.document.text:
            return ("The pinned text is the text on display: edit it (or click a What if edit) to patch between "
                    "two texts.")
        return ""

    def request(self, force: bool = False) -> None:
        """Compute the patching of the chosen pin and the current text on the worker, when the dock is shown and
        the pair, the model, the class or a setting changed since (``force``: again anyway). While the dock is
        hidden nothing starts; a change then stops the running request and drops the result (a request already
        running when the dock was tabbed away or its workspace left runs on while nothing changes)."""
        if self.dock.isHidden():
            self._forget()
            return
        predictor, pred, pin = self.window.predictor, self.state.prediction, self.clean_pin()
        self._update_controls()
        why = self._why_not(predictor, pred, pin)
        if why:
            self._stop_running()
            self._asked = None
            self._note(why)
            return
        target = self.state.task.target
        s = self.settings()
        key = (id(predictor), pin.text, pred.document.text, s["site"], s["direction"], s["method"], target)
        inside = self.state.inside
        if key == self._asked and not force and (self.running or inside.patching is not None
                                                 or inside.patching_note == CANCELLED_NOTE):
            return  # computed, running, or cancelled by the user (Run computes it again)
        self._asked, self.running = key, True
        self.progress.setRange(0, 0)
        self._note(COMPUTING_NOTE)
        self._update_controls()
        self.handle.run(patching_job, predictor, pin.text, pred.document.text, s["site"], s["direction"],
                        s["method"], target if target >= 0 else None, on_progress=self._on_progress,
                        on_result=lambda result: self._on_result(key, result), on_stop=self._on_stopped,
                        on_error=self._on_failed)

    def cancel(self) -> None:
        """Stop the running computation (inside its current patched pass, at its next module call:
        :func:`model.explain.patching.stop_checks`); the view then says "cancelled"."""
        if self.running:
            self.handle.request_stop()

    def _forget(self) -> None:
        """Something changed while the dock is hidden: stop the running request (its pair may be gone) and drop the
        result; it is computed again once the dock is shown."""
        if self.running or self._asked is not None:
            self._stop_running()
            self._asked = None
            self._note("")

    def _stop_running(self) -> None:
        if self.running:
            self.handle.cancel()  # stale: its callbacks never run
            self.running = False

    def _note(self, note: str) -> None:
        self.state.inside.set("patching", None, note)

    def _on_progress(self, value: tuple[int, int]) -> None:
        done, total = value
        self.progress.setRange(0, max(1, total))
        self.progress.setValue(done)

    def _on_result(self, key: tuple, result) -> None:
        self.running = False
        self._update_controls()
        if key == self._asked:
            self.state.inside.set("patching", result)

    def _on_stopped(self) -> None:
        self.running = False
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self._update_controls()
        self._note(CANCELLED_NOTE)

    def _on_failed(self, exc: Exception) -> None:
        self.running, self._asked = False, None
        self._update_controls()
        self._note(f"Patching failed: {exc}")

    def _update_controls(self) -> None:
        self.cancel_button.setEnabled(self.running)
        self.run_button.setEnabled(not self.running)
        self.progress.setVisible(self.running or self.progress.value() > 0)
        none_pinned = not self.pins()
        self.pin_button.setVisible(none_pinned)
        self.pin_button.setText("Pin the original" if self._original() is not None else "Pin this text")
        self.pin_combo.setEnabled(not none_pinned)


__all__ = ["PatchingPanel", "TITLE"]
