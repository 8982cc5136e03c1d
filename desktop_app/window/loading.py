"""The main window's model: its first load, a switch to another model folder, and the inference controller's answers.

The model (and torch) load on the inference thread (:mod:`desktop_app.workers.inference`) once the window has painted,
so the two do not share the interpreter before the first paint (issue 34); a window never shown starts after
:data:`LOAD_FALLBACK_MS`. A loaded model sets the window's title, status bar and the explorer state's model, and is
announced by the window's ``predictor_loaded``; a model that cannot load gives one message (``model_load_failed``),
and after a switch the current model stays loaded.
"""

from __future__ import annotations

import gc
import logging
from pathlib import Path

from PySide6.QtCore import QObject, QTimer

from .settings import APP_NAME

LOAD_FALLBACK_MS = 300  # a window not painted by then (offscreen, tests) loads its model anyway

log = logging.getLogger(__name__)


class ModelLoading(QObject):
    """The model of a :class:`~desktop_app.window.main_window.MainWindow`: loading, switching, the answers.

    Args:
        window: the main window (its ``controller``, ``state``, status bar, prediction panel and signals).

    Attributes:
        predictor: the loaded ``model.Predictor``, or None until the first load.
        loading_dir: the folder being switched to (``""``: the bundled model), None when not switching.
    """

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.predictor = None
        self.loading_dir: str | None = None
        self._load_args: tuple | None = None

    def schedule(self, model_dir, device: str | None) -> None:
        """Load ``model_dir`` on ``device`` (None: the bundled model, the default device) at the first paint
        (:meth:`first_paint`), or after :data:`LOAD_FALLBACK_MS` when the window is not painted by then."""
        self._load_args = (model_dir, device)
        QTimer.singleShot(LOAD_FALLBACK_MS, self._start)

    def first_paint(self) -> None:
        """The window painted: start the scheduled load, if it has not started."""
        if self._load_args is not None:
            QTimer.singleShot(0, self._start)

    def _start(self) -> None:
        if self._load_args is not None:
            args, self._load_args = self._load_args, None
            self.window.controller.load(*args)

    def switch(self, folder: str | Path | None) -> None:
        """Load the model in ``folder`` (None: the bundled model); see
        :meth:`~desktop_app.window.main_window.MainWindow.switch_model`."""
        w = self.window
        self.loading_dir = str(folder) if folder else ""
        name = Path(self.loading_dir).name if self.loading_dir else "the bundled model"
        w.debounce.stop()
        w.controller.switch_model(self.loading_dir or None, w.device)
        w.state.clear_results()  # nothing is current until the new model's first result; explanations abandoned
        w.model_switch_started.emit(self.loading_dir)
        w.prediction_panel.set_loading(f"Loading {name}\u2026")
        w.model_label.setText(f"loading {name}\u2026")
        w.busy.setVisible(True)
        w.statusBar().showMessage(f"Loading model {self.loading_dir or name}\u2026")

    def on_loaded(self, predictor, info) -> None:
        """The inference controller loaded ``predictor`` (its :class:`model.records.info.ModelInfo` ``info``)."""
        w = self.window
        switched, self.predictor = self.loading_dir is not None, predictor
        # What is alive now (modules, Qt wrappers, the model) lives as long as the app: keep it out of the
        # cyclic collector's full scans, which otherwise stalled the event loop ~100 ms mid-batch.
        gc.collect()
        gc.freeze()
        w.setWindowTitle(f"{APP_NAME} \u2014 {Path(info.model_dir).name or 'model'} on {info.device_name}")
        self._show_model_label(info)
        w.state.set_model(info)  # the prediction panel's bars, the selectors, the views
        saved = w.settings.value("view/layer"), w.settings.value("view/head")
        if saved[0] is not None and saved[1] is not None:
            try:
                w.state.set_layer_head(int(saved[0]), int(saved[1]))
            except (TypeError, ValueError):
                pass
        w.menus.fill_samples_menu()
        note = f"; {info.load_note}" if info.load_note else ""
        w.statusBar().showMessage(f"Model loaded in {info.load_s:.1f} s{note}", 10000 if note else 5000)
        if w.state.prediction is None and not w.controller.busy:
            w.prediction_panel.set_idle()
        if switched:
            w.model_dir, self.loading_dir = self.loading_dir or None, None
            w.busy.setVisible(False)
        w.predictor_loaded.emit(predictor)
        if switched and w.editor.toPlainText().strip():
            w.prediction_panel.set_loading("First analysis\u2026")
            w.statusBar().showMessage(f"Model loaded in {info.load_s:.1f} s{note}; first analysis\u2026")
            w.analyze_now()

    def _show_model_label(self, info) -> None:
        """The status bar's model summary, with what loading allowed but noticed (e.g. extra weights not used)."""
        note = info.load_note.split(" (")[0]
        self.window.model_label.setText(info.summary() + (f"; {note}" if note else ""))
        self.window.model_label.setToolTip(info.load_note)

    def on_load_failed(self, message: str) -> None:
        """The model could not be loaded (``message`` says why): the current one stays, or the window has none."""
        w = self.window
        if self.predictor is not None:  # switching failed: the current model stays loaded
            self.loading_dir = None
            w.busy.setVisible(False)
            if w.state.info is not None:
                self._show_model_label(w.state.info)
            w.statusBar().showMessage(message, 10000)
            log.warning("%s", message)
            w.model_menu.switch_failed(message)
            if w.editor.toPlainText().strip():
                w.analyze_now()
            else:
                w.prediction_panel.set_idle()
            w.model_load_failed.emit(message)
            return
        w.setWindowTitle(f"{APP_NAME} \u2014 no model")
        w.prediction_panel.set_error(message)
        w.model_label.setText("no model")
        w.statusBar().showMessage(message)
        w.model_load_failed.emit(message)


__all__ = ["LOAD_FALLBACK_MS", "ModelLoading"]
