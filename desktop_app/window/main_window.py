"""The Attention Explorer main window: review editor, prediction, token view and the attention views.

Layout (all docks can be moved, tabbed, floated or hidden; QSettings remembers it per workspace):
    left    "Review" (the editor + Analyze) and "Prediction"
    centre  the token view
    right   the docked views of :mod:`desktop_app.views.registry` (tabbed, short tab names)
    bottom  "Batch scoring" and "Corpus" side by side (added by :func:`desktop_app.app.attach_panels`)
Which docks show is the workspace's (:mod:`desktop_app.window.workspaces`); a window without panels keeps them all.

Analysis runs live on a background thread (:mod:`desktop_app.workers.inference`), 250 ms after the last keystroke,
or at once with Ctrl+Enter. What is shown lives in one :class:`~desktop_app.state.ExplorerState` (``window.state``).

The window is composed of parts that each own one concern and that it holds as attributes:
    ``loading``        the model's loading and switching (:class:`~desktop_app.window.loading.ModelLoading`)
    ``docks``          the docks by title, adding and raising them (:class:`~desktop_app.window.docks.WindowDocks`)
    ``file_actions``   opening, saving and exporting (:class:`~desktop_app.window.file_actions.FileActions`)
    ``menus``          the menu bar and the toolbars (:class:`~desktop_app.window.menus.WindowMenus`)
    ``window_layout``  the geometry and layouts saved between runs (:class:`~desktop_app.window.layout.WindowLayout`)
    ``workspaces``     which docks show (:class:`~desktop_app.window.workspaces.Workspaces`)
    ``drop_banner``    what a drop on the window will do (:class:`~desktop_app.window.drop_banner.DropBanner`)
"""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressBar,
)

from ..panels.editor import PathDrops, display_text
from ..panels.review_box import ReviewBox
from ..state import ExplorerState
from ..task_choice import verdict_text
from ..views.prediction_panel import PredictionPanel
from ..views.registry import DOCKED_VIEWS
from ..views.token_view import TokenView
from ..views.widgets import scrollable
from ..workers.handle import WorkerHandle
from ..workers.compare import CompareController
from desktop_app.workers.attention_flow import FlowController
from ..workers.inference import InferenceController
from ..workers.internals import InternalsController
from .about import about_dialog, about_html
from .docks import WindowDocks, raise_dock
from .drop_banner import DropBanner
from .file_actions import FileActions
from .head_importance import load_head_importance_dialog
from .layout import WindowLayout
from .loading import ModelLoading
from .menus import WindowMenus
from .model_menu import ModelMenu
from .settings import APP_NAME, app_settings, precision_setting
from .workspaces import Workspaces, pin_view

DEBOUNCE_MS = 250  # milliseconds after the last keystroke before live analysis
GUI_SWITCH_INTERVAL_S = 0.001  # seconds; see MainWindow.__init__


class MainWindow(QMainWindow):
    """The Attention Explorer window (see module docstring).

    Args:
        model_dir: model folder (``config.json``, ``model.safetensors``,
            ``tokenizer.json``); None for the bundled ``resources/model``.
        device: "cpu", "cuda", ...; None for CUDA when available, else CPU.

    Attributes:
        state: the :class:`~desktop_app.state.ExplorerState`: the model summary, the prediction (its
            ``events.prediction`` announces each new one), its results, the selection and the token colours.

    Signals:
        predictor_loaded(object): the ``model.Predictor``, once loaded (off the GUI thread).
        paths_dropped(list): local paths (list[str]) dropped on the window or chosen
            with File > Open files... / Open folder....
        model_switch_started(str): another model folder is being loaded ("" for the bundled model).
        model_load_failed(str): why the model could not be loaded.
        analysis_failed(str): why the last analysis failed.
    """

    predictor_loaded = Signal(object)
    paths_dropped = Signal(list)
    model_switch_started = Signal(str)
    model_load_failed = Signal(str)
    analysis_failed = Signal(str)

    def __init__(self, model_dir: str | Path | None = None, device: str | None = None) -> None:
        super().__init__()
        # Worker threads (inference, explanations, batch scoring) run Python too. PySide6 releases the GIL
        # around Qt calls, so each paint may wait for it to come back, up to the switch interval each time;
        # 1 ms instead of CPython's 5 ms keeps those waits short (measured: benchmarks.batch_gui).
        sys.setswitchinterval(min(sys.getswitchinterval(), GUI_SWITCH_INTERVAL_S))
        self.setWindowTitle(f"{APP_NAME} \u2014 loading model\u2026")
        self.setObjectName("MainWindow")
        self.setDockOptions(QMainWindow.AllowTabbedDocks | QMainWindow.AnimatedDocks | QMainWindow.AllowNestedDocks)
        self.model_dir = model_dir
        self.device = device
        self.settings = app_settings()
        # False for automated runs (--self-test, --quit-after-show): their never-shown or half-built window
        # must not overwrite the user's layout (a self-test once saved every added panel as hidden).
        self.persist_settings = True
        self._shown = False
        self.state = ExplorerState()
        self.controller = InferenceController(self)
        self.controller.precision = precision_setting()
        self.internals = InternalsController(self.state, self)  # Q, K, V of the selected layer, on a worker
        self.flows = FlowController(self.state, self)  # value norms / ALTI of the current text, on a worker
        self.predictor_loaded.connect(self.internals.set_predictor)
        self.predictor_loaded.connect(self.flows.set_predictor)
        self.compare = CompareController(self.state, self)  # a pinned analysis vs the current one, on a worker
        self.predictor_loaded.connect(self.compare.set_predictor)
        self._font_pt = float(QApplication.font().pointSizeF() if QApplication.font().pointSizeF() > 0 else 10.0)
        self._zoom_pt = self._font_pt + 1
        self.loading = ModelLoading(self)  # the first load, switching models, the controller's answers
        self.file_actions = FileActions(self, self.state, self.settings)  # File menu: open, save, export views
        self.drop_banner = DropBanner(self)  # files dragged over the window: what a drop will do
        PathDrops(self, self.file_actions.open_paths)  # files and folders dropped on the window: paths_dropped
        self._build_widgets()
        self.compare.connect_view(self.compare_view)
        self.compare_view.pinned.connect(lambda: self.docks.raise_view(pin_view(self.workspaces.current)))
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)
        self.busy.setMaximumWidth(120)
        self.busy.setVisible(False)
        self.model_label = QLabel("loading model\u2026")
        self.statusBar().addPermanentWidget(self.busy)
        self.statusBar().addPermanentWidget(self.model_label)
        self._connect()
        self.window_layout = WindowLayout(self, self.settings, self.workspaces, self.state)  # saved between runs
        self.window_layout.restore()
        self.set_zoom(self.window_layout.saved_zoom(self._zoom_pt))
        self.prediction_panel.set_loading("Loading model\u2026")
        self.statusBar().showMessage("Loading model\u2026")
        self.loading.schedule(model_dir, device)  # on the inference thread once the window has painted (issue 34)

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """The first paint starts the model load (see ``__init__``)."""
        super().paintEvent(event)
        self.loading.first_paint()

    def _build_widgets(self) -> None:
        """The editor, the prediction panel, the token view, the docked views, the menus and the toolbar."""
        review = self.review_box = ReviewBox()  # the editor, the second text of a sentence pair, Analyze
        self.editor, self.analyze_button = review.editor, review.analyze_button
        self.prediction_panel = PredictionPanel(self.state)
        self.token_view = TokenView(self.state)
        for spec in DOCKED_VIEWS:
            setattr(self, spec.attr, spec.factory(self.state))
        self.setCentralWidget(self.token_view)
        self.workspaces = Workspaces(self)  # Read, Learn, Inside, Compare, Corpus: started by attach_panels
        self.docks = WindowDocks(self, self.workspaces)  # every dock by title; View > Panels
        self.menus = WindowMenus(self, self.file_actions, self.docks.panels_menu)
        prediction = scrollable(self.prediction_panel, keep_min_height=True)  # model B's section will scroll in it
        self.model_menu = ModelMenu(self)  # File > Open model folder..., the Model menu, recent folders
        self.review_dock = self.docks.add(review, "Review", Qt.LeftDockWidgetArea)
        self.prediction_dock = self.docks.add(prediction, "Prediction", Qt.LeftDockWidgetArea)
        docks = [self.docks.add(scrollable(getattr(self, v.attr)) if v.scroll else getattr(self, v.attr), v.title,
                                Qt.RightDockWidgetArea, v.tab) for v in DOCKED_VIEWS]
        for spec, dock in zip(DOCKED_VIEWS, docks):
            setattr(self, spec.dock_attr, dock)
        for d in docks[1:]:
            self.tabifyDockWidget(docks[0], d)
        self.heatmap_dock.raise_()
        self.resizeDocks([self.review_dock, self.heatmap_dock], [360, 620], Qt.Horizontal)
        self.resizeDocks([self.review_dock, self.prediction_dock], [420, 200], Qt.Vertical)
        self.menus.build_toolbar()

    def _connect(self) -> None:
        """Live analysis (debounced typing, the button) and the inference controller's answers."""
        self.debounce = QTimer(self)
        self.debounce.setSingleShot(True)
        self.debounce.setInterval(DEBOUNCE_MS)
        self.debounce.timeout.connect(self.analyze_now)
        self.editor.textChanged.connect(self.debounce.start)
        self.review_box.pair_changed.connect(self.debounce.start)
        self.editor.paths_dropped.connect(self.paths_dropped)
        self.analyze_button.clicked.connect(self.analyze_now)
        self.controller.loaded.connect(self.loading.on_loaded)
        self.controller.load_failed.connect(self.loading.on_load_failed)
        self.controller.prediction.connect(self._on_prediction)
        self.state.windows.requested.connect(self.show_window)
        self.controller.layer_probabilities.connect(self.state.set_layer_probabilities)
        self.controller.error.connect(self._on_error)
        self.controller.busy_changed.connect(self.busy.setVisible)
        self.controller.progress.connect(lambda stage: self.statusBar().showMessage(stage))
        self.model_view.head_selected.connect(lambda *_: raise_dock(self.heatmap_dock))
        self.model_view.load_importance_requested.connect(lambda: load_head_importance_dialog(self))
        self.state.events.head_mask.connect(self._on_head_mask)

    # ------------------------------------------------------------------ public API
    @property
    def predictor(self):
        """The loaded ``model.Predictor``, or None until ``predictor_loaded``."""
        return self.loading.predictor

    @property
    def current_prediction(self):
        """The ``model.Prediction`` on display, or None."""
        return self.state.prediction

    @property
    def model_info(self):
        """The :class:`model.records.info.ModelInfo` of the model in use (the state's), or None before it loaded."""
        return self.state.info

    @property
    def has_saved_layout(self) -> bool:
        """True when the workspace the window opens in has a dock layout saved by an earlier run."""
        return self.workspaces.has_saved_layout

    def open_review(self, text: str, text_pair: str | None = None) -> None:
        """Put ``text`` in the editor (``<br />`` shown as line breaks) and analyze it now (``text_pair``: as in
        :meth:`analyze_text`)."""
        self.analyze_text(display_text(str(text)), None if text_pair is None else display_text(str(text_pair)))

    def analyze_text(self, text: str, text_pair: str | None = None) -> None:
        """Put ``text`` in the editor exactly as given and analyze it now; a ``text_pair`` goes in the second text
        box, switched on (for a model that reads pairs; one that reads single texts analyses ``text`` alone)."""
        self.editor.setPlainText(text)
        if text_pair is not None:
            self.review_box.set_text_pair(text_pair)
        self.analyze_now()

    def analyze_now(self) -> None:
        """Analyze the editor's text now (cancels the pending debounce)."""
        self.debounce.stop()
        text = self.editor.toPlainText()
        if not text.strip():
            self.state.set_prediction(None)
            self.prediction_panel.set_idle(
                "Type or paste a review" if self.predictor is not None else "Loading model\u2026"
            )
            return
        pair = self.review_box.text_pair()  # None: a single text
        self.state.task.set_text_pair(pair)
        self.controller.analyze(text, self.state.head_mask, text_pair=pair)

    def show_window(self, window: int) -> None:
        """Show window ``window`` (0-based) of the long review on display in the attention views (analysed on the
        inference thread; the whole review's prediction is kept)."""
        pred = self.state.prediction
        if pred is not None and pred.num_windows > 1:
            self.controller.analyze(pred.document.text, self.state.head_mask, window, pred.document)

    def switch_model(self, folder: str | Path | None) -> None:
        """Load the model in ``folder`` (None: the bundled model) on the inference thread.

        Analysis still queued for the current model is dropped, the results on display are cleared
        (``model_switch_started`` lets panels stop work of the old model), and a busy indicator shows. The
        answer is ``predictor_loaded`` (then the editor's review is analysed again) or ``model_load_failed``
        (one message; the current model stays loaded). See :class:`~desktop_app.window.loading.ModelLoading`.
        """
        self.loading.switch(folder)

    def set_layer_head(self, layer: int, head: int) -> None:
        """Select a layer (0-based) and head choice (0-based, or ``MEAN_HEADS``/``MAX_HEADS``) in every view."""
        self.state.set_layer_head(layer, head)

    @property
    def zoom(self) -> float:
        """The font size (points) of the editor and the token view (:meth:`set_zoom`)."""
        return self._zoom_pt

    def reset_zoom(self) -> None:
        """The editor and the token view back to the application's font size + 1 point."""
        self.set_zoom(self._font_pt + 1)

    def set_zoom(self, point_size: float) -> None:
        """Font size (points) of the editor and the token view."""
        self._zoom_pt = max(6.0, min(40.0, float(point_size)))
        f = self.editor.font()
        f.setPointSizeF(self._zoom_pt)
        self.editor.setFont(f)
        self.token_view.set_font_point_size(self._zoom_pt)

    def show_error(self, message: str) -> None:
        """Show ``message`` in the status bar and in a message box."""
        self.statusBar().showMessage(message, 10000)
        QMessageBox.warning(self, APP_NAME, message)

    def about_html(self) -> tuple[str, str]:
        """(model card markdown, metrics as HTML) for the About dialog."""
        return about_html(self.state.info)

    def show_about(self) -> QDialog:
        """Show the About dialog: model card and metrics (non-modal; returned for tests)."""
        return about_dialog(self, self.state.info)

    def shutdown_workers(self) -> None:
        """Stop every background job of this window, its own and its panels' (the one shutdown path; each job's
        :class:`~desktop_app.workers.handle.WorkerHandle` also stops on application quit)."""
        self.debounce.stop()
        for handle in self.findChildren(WorkerHandle):
            handle.shutdown()

    # ------------------------------------------------------------------ worker results
    def _on_prediction(self, pred) -> None:
        pred = self.state.task.adopt(pred)  # read with the user's multi-label threshold (no forward pass)
        doc = pred.document  # the whole review (pred is one window of it when it is long)
        where = f", window {pred.window + 1} of {doc.num_windows}" if doc.num_windows > 1 else ""
        self.statusBar().showMessage(f"{verdict_text(pred)}, {doc.num_tokens} tokens{where}, "
                                     f"{pred.elapsed_s * 1000:.0f} ms", 4000)
        self.state.set_prediction(pred)  # the views, the prediction panel and the explanation panel follow

    def _on_head_mask(self, mask) -> None:
        """Heads were switched off or on: analyse the review again at once (no debounce)."""
        if self.predictor is not None and self.editor.toPlainText().strip():
            self.analyze_now()
        n_off = 0 if mask is None else int((mask == 0).sum())
        self.statusBar().showMessage(f"{n_off} head{'s' if n_off != 1 else ''} switched off" if n_off else
                                     "Every head on", 4000)

    def _on_error(self, message: str) -> None:
        self.prediction_panel.set_error(message)
        self.statusBar().showMessage(f"Analysis failed: {message}", 10000)
        self.analysis_failed.emit(message)

    # ------------------------------------------------------------------ close
    def closeEvent(self, event) -> None:
        """Save settings (see :attr:`persist_settings`) and stop the worker threads (ours, and added panels')."""
        if self.persist_settings and self._shown:
            self.window_layout.save()
        self.shutdown_workers()
        super().closeEvent(event)

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Remember that the window was shown (only then is its layout worth saving); open the workspace."""
        self.workspaces.show_started()  # the first show opens the workspace (when the panels are attached)
        super().showEvent(event)
        self._shown = True

    def event(self, ev) -> bool:
        """Also stop the workers when the window is destroyed without being closed (tests)."""
        if ev.type() == QEvent.DeferredDelete:
            self.shutdown_workers()
        return super().event(ev)
