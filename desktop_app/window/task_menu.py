"""Model > Task and Model > Second text: how the model's outputs are read, and the sentence-pair switch, per folder.

Many shared ``config.json`` files leave ``problem_type`` out, so the task decided from the config
(:func:`model.tasks.task.task_from_config`, as ``transformers``' pipeline decides) may be wrong for a model: Model > Task
lets the user read it as single-label (softmax), multi-label (sigmoid per label) or regression (the raw value); the
config's choice is marked "(config)". The choice goes to ``Predictor.set_task`` on the inference thread
(:meth:`desktop_app.workers.inference.InferenceController.set_task`), the model summary is replaced
(``state.set_model``) and the review analysed again. The multi-label threshold (the prediction panel's spin box,
``state.task.threshold_changed``) is the model's too: the shown prediction is re-labelled at once
(:class:`desktop_app.task_choice.TaskChoice`), and the threshold goes to ``Predictor.set_task(threshold=...)`` the same
way, so batch scoring (a job takes the task at its start) labels its rows with it; no analysis runs again.
The task, the threshold and the second-text switch (:class:`desktop_app.panels.review_box.ReviewBox`) are remembered
per model folder in the one QSettings (:data:`TASKS_KEY`, :data:`THRESHOLDS_KEY`, :data:`PAIRS_KEY`: JSON objects
folder -> choice) and re-applied when the folder is opened again.
"""

from __future__ import annotations

import json

from PySide6.QtCore import QObject
from PySide6.QtGui import QActionGroup

from model.tasks.task import TASK_TITLES, TASKS, check_threshold
from model.tasks.types import TASK_TYPES

TASKS_KEY = "models/tasks"  # JSON {folder key: task kind} (the user's override)
THRESHOLDS_KEY = "models/thresholds"  # JSON {folder key: threshold} (the multi-label threshold, if not the model's)
PAIRS_KEY = "models/pairs"  # JSON {folder key: true} (the second text box switched on)
TASK_MENU_TITLES = {kind: t.menu_title for kind, t in TASK_TYPES.items()}
"""Model > Task's entries by task id (:attr:`model.tasks.types.TaskType.menu_title`)."""


class TaskMenu(QObject):
    """The task override and the second-text switch of a window (see the module docstring).

    Args:
        window: the :class:`~desktop_app.window.main_window.MainWindow`.
        key: a callable giving the current model folder's key (``ModelMenu.current``, "" for the bundled model).

    Attributes:
        config_task: the task the model's config decides (marked in the menu), or "" before a model loaded.
        config_threshold: the model's own multi-label threshold when it loaded (0.5).
    """

    def __init__(self, window, key) -> None:
        super().__init__(window)
        self.window = window
        self.key = key
        self.config_task = ""
        self.config_threshold = 0.5
        self.review = window.review_box
        self.review.pair_action.toggled.connect(self._pair_toggled)
        window.predictor_loaded.connect(self._on_loaded)
        window.controller.task_set.connect(self._on_task_set)
        window.state.task.threshold_changed.connect(self._threshold_changed)
        window.controller.task_failed.connect(self._on_task_failed)

    # ---------------------------------------------------------------- settings
    def _read(self, name: str) -> dict:
        try:
            value = json.loads(str(self.window.settings.value(name, "{}")))
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    def _write(self, name: str, folder: str, value) -> None:
        d = self._read(name)
        if value is None:
            d.pop(folder, None)
        else:
            d[folder] = value
        self.window.settings.setValue(name, json.dumps(d))

    def saved_task(self, folder: str) -> str | None:
        """The task remembered for ``folder`` (a folder key), or None: the config's."""
        kind = self._read(TASKS_KEY).get(folder)
        return kind if kind in TASKS else None

    def saved_threshold(self, folder: str) -> float | None:
        """The multi-label threshold remembered for ``folder`` (a folder key), or None: the model's."""
        try:
            return check_threshold(self._read(THRESHOLDS_KEY)[folder])
        except (KeyError, ValueError):
            return None

    def saved_pair(self, folder: str) -> bool:
        """True when the second text box was on for ``folder``."""
        return bool(self._read(PAIRS_KEY).get(folder, False))

    # ---------------------------------------------------------------- the menu
    def add_to(self, menu) -> None:
        """Append Model > Task (the config's choice marked, the current one checked) and the second-text switch."""
        sub = menu.addMenu("&Task")
        sub.setToolTipsVisible(True)
        info = self.window.state.info
        group = QActionGroup(sub)
        for kind in TASKS:
            mark = "  (config)" if kind == self.config_task else ""
            act = sub.addAction(TASK_MENU_TITLES[kind] + mark)
            why = self._why_not(kind, info)
            act.setToolTip(TASK_TITLES[kind] + (f": not for this model ({why})" if why else ""))
            act.setCheckable(True)
            act.setChecked(info is not None and info.task == kind)
            act.setEnabled(info is not None and info.has_head and not why)
            act.setData(kind)
            act.triggered.connect(lambda _=False, k=kind: self.set_task(k))
            group.addAction(act)
        menu.addAction(self.review.pair_action)

    @staticmethod
    def _why_not(kind: str, info) -> str:
        """Why the model's head cannot be read as ``kind`` (e.g. "regression reads one output, and this model has
        2"), or "" when it can (or no model is known): such an entry is greyed out, its tooltip saying why."""
        if info is None or not info.has_head:
            return ""
        try:
            TASK_TYPES[kind].check_outputs(len(info.labels))
        except ValueError as exc:
            return str(exc)
        return ""

    def set_task(self, kind: str) -> None:
        """Read the model as ``kind`` from now on (remembered for this folder; the config's choice forgets it)."""
        self._write(TASKS_KEY, self.key(), None if kind == self.config_task else kind)
        self.window.controller.set_task(kind)

    # ---------------------------------------------------------------- answers
    def _on_loaded(self, _predictor) -> None:
        info = self.window.state.info
        if info is None:
            return
        self.config_task, self.config_threshold = info.task, info.threshold
        folder = self.key()  # ModelMenu has adopted the folder (its slot runs first)
        self.review.pair_action.blockSignals(True)
        self.review.set_pair_on(info.reads_pairs and self.saved_pair(folder))
        self.review.pair_action.blockSignals(False)
        self.review.set_reads_pairs(info.reads_pairs)  # shows or hides the box for the restored switch
        kind, threshold = self.saved_task(folder), self.saved_threshold(folder)
        kind = None if kind == info.task else kind
        threshold = None if threshold == info.threshold else threshold
        if kind is not None or threshold is not None:
            self.window.controller.set_task(kind, threshold)  # queued before the first analysis of the folder

    def _threshold_changed(self, threshold: float) -> None:
        """The user (or a session) moved the multi-label threshold: remember it for this folder and make it the
        predictor's (``Predictor.set_task(threshold=...)``, on the inference thread)."""
        info = self.window.state.info
        if info is None or not info.has_head:
            return
        self._write(THRESHOLDS_KEY, self.key(), None if threshold == self.config_threshold else threshold)
        if threshold != info.threshold:
            self.window.controller.set_task(None, threshold)

    def _on_task_failed(self, message: str) -> None:
        """A task that does not fit the model (e.g. regression of a model with several outputs): say why, and
        remember the task the model is still read as, not the refused one (else every opening of the folder tries it
        again)."""
        self.window.statusBar().showMessage(f"Task not changed: {message}", 10000)
        info = self.window.state.info
        if info is not None:
            self._write(TASKS_KEY, self.key(), None if info.task == self.config_task else info.task)

    def _on_task_set(self, info) -> None:
        old = self.window.state.info
        if old is not None and (old.task, old.model_dir) == (info.task, info.model_dir):  # only the threshold
            self.window.state.task.follow_model(info)  # the prediction on display re-labelled, no forward pass
            self.window.statusBar().showMessage(f"Threshold {info.threshold:.2f}: the prediction and batch scoring "
                                                "label with it", 5000)
            return
        self.window.state.set_model(info)
        self.window.statusBar().showMessage(f"Task: {TASK_TITLES[info.task]}", 5000)
        if self.window.editor.toPlainText().strip():
            self.window.analyze_now()

    def _pair_toggled(self, on: bool) -> None:
        if self.window.state.info is not None and self.review.pair_action.isEnabled():
            self._write(PAIRS_KEY, self.key(), True if on else None)
