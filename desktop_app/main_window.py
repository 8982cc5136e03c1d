"""The Attention Explorer main window: review editor, prediction, token view and the attention views.

Layout (all docks can be moved, tabbed, floated or hidden; QSettings remembers it):
    left    "Review" (the editor + Analyze) and "Prediction"
    centre  the token view
    right   "Attention heatmap", "Token links", "Model view", "Positional encoding" (tabbed)

Analysis runs live on a background thread (:mod:`desktop_app.worker`),
250 ms after the last keystroke, or at once with Ctrl+Enter.
"""

from __future__ import annotations

import gc
import json
import logging
import sys
from pathlib import Path

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDockWidget,
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from . import session
from .about import about_dialog, about_html
from .editor import ReviewEditor, display_text
from .file_actions import FileActionsMixin
from .internals_worker import InternalsController
from .layout import LayoutMixin
from .model_menu import ModelMenu
from .settings import APP_NAME, SETTINGS_ENV, app_settings  # noqa: F401  (SETTINGS_ENV: re-exported)
from .views.prediction_panel import PredictionPanel
from .views.registry import CENTRAL_VIEW_TITLE, DOCKED_VIEWS, WHOLE_WINDOW_TITLE
from .views.selectors import LayerHeadSelector
from .views.state import ExplorerState
from .views.token_view import TokenView
from .worker import InferenceController

log = logging.getLogger(__name__)

DEBOUNCE_MS = 250  # milliseconds after the last keystroke before live analysis
GUI_SWITCH_INTERVAL_S = 0.001  # seconds; see MainWindow.__init__


class MainWindow(FileActionsMixin, LayoutMixin, QMainWindow):
    """The Attention Explorer window (see module docstring).

    Args:
        model_dir: model folder (``config.json``, ``model.safetensors``,
            ``tokenizer.json``); None for the bundled ``resources/model``.
        device: "cpu", "cuda", ...; None for CUDA when available, else CPU.

    Signals:
        predictor_loaded(object): the ``model.Predictor``, once loaded (off the GUI thread).
        prediction_changed(object): each new ``model.Prediction``.
        paths_dropped(list): local paths (list[str]) dropped on the window or chosen
            with File > Open files... / Open folder....
        model_load_failed(str): why the model could not be loaded.
        analysis_failed(str): why the last analysis failed.
    """

    predictor_loaded = Signal(object)
    prediction_changed = Signal(object)
    paths_dropped = Signal(list)
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
        self.setAcceptDrops(True)
        self.setDockOptions(QMainWindow.AllowTabbedDocks | QMainWindow.AnimatedDocks | QMainWindow.AllowNestedDocks)
        self.model_dir = model_dir
        self.device = device
        self.settings = app_settings()
        # False for automated runs (--self-test, --quit-after-show): their never-shown or half-built window
        # must not overwrite the user's layout (a self-test once saved every added panel as hidden).
        self.persist_settings = True
        self._shown = False
        self.state = ExplorerState(self)
        self.controller = InferenceController(self)
        self.internals = InternalsController(self.state, self)  # Q, K, V of the selected layer, on a worker
        self.predictor_loaded.connect(self.internals.set_predictor)
        self._font_pt = float(QApplication.font().pointSizeF() if QApplication.font().pointSizeF() > 0 else 10.0)
        self._zoom_pt = self._font_pt + 1
        self._predictor = None
        self._docks: dict[str, QDockWidget] = {}
        self._saved_state = None
        self._saved_docks: set[str] = set()  # objectNames of the docks in the saved layout
        self.samples: list[dict] = []

        # -- widgets --
        self.editor = ReviewEditor()
        self.editor.setObjectName("reviewEditor")
        self.editor.setPlaceholderText(
            "Type or paste a movie review (analysis runs as you type; Ctrl+Enter analyzes now)"
        )
        self.analyze_button = QPushButton("Analyze (Ctrl+Enter)")
        review = QWidget()
        rl = QVBoxLayout(review)
        rl.setContentsMargins(2, 2, 2, 2)
        rl.addWidget(self.editor, 1)
        rl.addWidget(self.analyze_button)
        self.prediction_panel = PredictionPanel()
        self.token_view = TokenView(self.state)
        for spec in DOCKED_VIEWS:
            setattr(self, spec.attr, spec.factory(self.state))
        self.setCentralWidget(self.token_view)

        self.view_menu_docks = None
        self._build_menus()
        self.model_menu = ModelMenu(self)  # File > Open model folder..., the Model menu, switching models
        self.review_dock = self._add_dock(review, "Review", Qt.LeftDockWidgetArea)
        self.prediction_dock = self._add_dock(self.prediction_panel, "Prediction", Qt.LeftDockWidgetArea)
        docks = [self._add_dock(getattr(self, v.attr), v.title, Qt.RightDockWidgetArea) for v in DOCKED_VIEWS]
        for spec, dock in zip(DOCKED_VIEWS, docks):
            setattr(self, spec.dock_attr, dock)
        for d in docks[1:]:
            self.tabifyDockWidget(docks[0], d)
        self.heatmap_dock.raise_()
        self.resizeDocks([self.review_dock, self.heatmap_dock], [360, 620], Qt.Horizontal)
        self.resizeDocks([self.review_dock, self.prediction_dock], [420, 200], Qt.Vertical)
        self._build_toolbar()

        self.busy = QProgressBar()
        self.busy.setRange(0, 0)
        self.busy.setMaximumWidth(120)
        self.busy.setVisible(False)
        self.model_label = QLabel("loading model\u2026")
        self.statusBar().addPermanentWidget(self.busy)
        self.statusBar().addPermanentWidget(self.model_label)

        # -- behaviour --
        self.debounce = QTimer(self)
        self.debounce.setSingleShot(True)
        self.debounce.setInterval(DEBOUNCE_MS)
        self.debounce.timeout.connect(self.analyze_now)
        self.editor.textChanged.connect(self.debounce.start)
        self.editor.paths_dropped.connect(self.paths_dropped)
        self.analyze_button.clicked.connect(self.analyze_now)
        self.controller.loaded.connect(self._on_loaded)
        self.controller.load_failed.connect(self._on_load_failed)
        self.controller.prediction.connect(self._on_prediction)
        self.controller.error.connect(self._on_error)
        self.controller.busy_changed.connect(self.busy.setVisible)
        self.model_view.head_selected.connect(lambda *_: self._raise_dock(self.heatmap_dock))

        self._restore_settings()
        self.set_zoom(self._zoom_pt)
        self.prediction_panel.set_loading("Loading model\u2026")
        self.statusBar().showMessage("Loading model\u2026")
        self.controller.load(model_dir, device)

    # ------------------------------------------------------------------ public API
    @property
    def predictor(self):
        """The loaded ``model.Predictor``, or None until ``predictor_loaded``."""
        return self._predictor

    @property
    def current_prediction(self):
        """The ``model.Prediction`` on display, or None."""
        return self.state.prediction

    def open_review(self, text: str) -> None:
        """Put ``text`` in the editor (``<br />`` shown as line breaks) and analyze it now."""
        self.editor.setPlainText(display_text(str(text)))
        self.analyze_now()

    def add_panel(self, widget: QWidget, title: str, area=Qt.RightDockWidgetArea) -> QDockWidget:
        """Add ``widget`` as a dock titled ``title`` (objectName derived from it, so layouts persist).

        The dock is tabbed with the docks already in ``area`` and gets a View-menu toggle.
        """
        dock = self._add_dock(widget, title, area)
        others = [
            d for d in self._docks.values() if d is not dock and self.dockWidgetArea(d) == area and not d.isFloating()
        ]
        if others:
            self.tabifyDockWidget(others[0], dock)
        # restoreDockWidget() hides a dock that the saved layout does not hold (and still returns True), so a
        # layout saved before this panel existed would hide it for good: restore only docks the layout knows.
        if self._saved_state is not None and dock.objectName() in self._saved_docks:
            self.restoreDockWidget(dock)
        else:
            dock.show()
        return dock

    def analyze_now(self) -> None:
        """Analyze the editor's text now (cancels the pending debounce)."""
        self.debounce.stop()
        text = self.editor.toPlainText()
        if not text.strip():
            self.state.set_prediction(None)
            self.prediction_panel.set_idle(
                "Type or paste a review" if self._predictor is not None else "Loading model\u2026"
            )
            return
        self.controller.analyze(text)

    def set_layer_head(self, layer: int, head: int) -> None:
        """Select a layer (0-based) and head choice (0-based, or ``MEAN_HEADS``/``MAX_HEADS``) in every view."""
        self.state.set_layer_head(layer, head)

    def set_zoom(self, point_size: float) -> None:
        """Font size (points) of the editor and the token view."""
        self._zoom_pt = max(6.0, min(40.0, float(point_size)))
        f = self.editor.font()
        f.setPointSizeF(self._zoom_pt)
        self.editor.setFont(f)
        self.token_view.set_font_point_size(self._zoom_pt)

    # ------------------------------------------------------------------ building
    def _add_dock(self, widget: QWidget, title: str, area) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName("dock_" + "".join(c if c.isalnum() else "_" for c in title.lower()))
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        self._docks[title] = dock
        if self.view_menu_docks is not None:
            self.view_menu_docks.addAction(dock.toggleViewAction())
        return dock

    def _raise_dock(self, dock: QDockWidget) -> None:
        dock.show()
        dock.raise_()

    def _action(self, menu, text: str, slot, shortcut=None) -> QAction:
        act = QAction(text, self)
        if shortcut is not None:
            if isinstance(shortcut, (list, tuple)):
                act.setShortcuts([QKeySequence(s) for s in shortcut])
            else:
                act.setShortcut(QKeySequence(shortcut))
        act.triggered.connect(slot)
        menu.addAction(act)
        return act

    def _build_menus(self) -> None:
        mb = self.menuBar()
        fm = mb.addMenu("&File")
        self._action(fm, "Open &files\u2026", self._open_files, QKeySequence.Open)
        self._action(fm, "Open f&older\u2026", self._open_folder, "Ctrl+Shift+O")
        self._action(fm, "&Load review from text file\u2026", self._load_review_file, "Ctrl+L")
        fm.addSeparator()
        self._action(fm, "&Save analysis as JSON\u2026", self._save_json, QKeySequence.Save)
        self._action(fm, "Save sessi&on\u2026", lambda: session.save_session_dialog(self))
        self._action(fm, "Open sess&ion\u2026", lambda: session.open_session_dialog(self))
        self._action(fm, "&Export current view (PNG/SVG)\u2026", self._export_current_view, "Ctrl+E")
        self.export_menu = fm.addMenu("Export &view")
        for name in (*(v.title for v in DOCKED_VIEWS), CENTRAL_VIEW_TITLE, WHOLE_WINDOW_TITLE):
            self._action(self.export_menu, name + "\u2026", lambda _=False, n=name: self._export_view_dialog(n))
        fm.addSeparator()
        self._action(fm, "&Quit", self.close, QKeySequence.Quit)

        am = mb.addMenu("&Analysis")
        self.analyze_action = self._action(am, "&Analyze now", self.analyze_now, ("Ctrl+Return", "Ctrl+Enter"))
        self._action(am, "Clear token &selection", self.state.clear_selection, "Esc")
        self._action(am, "Reset token colours to attention", lambda: self.token_view.set_importance(None))

        self.samples_menu = mb.addMenu("&Samples")
        placeholder = self.samples_menu.addAction("(available once the model has loaded)")
        placeholder.setEnabled(False)

        vm = mb.addMenu("&View")
        self._action(vm, "Zoom &in", lambda: self.set_zoom(self._zoom_pt + 1), QKeySequence.ZoomIn)
        self._action(vm, "Zoom &out", lambda: self.set_zoom(self._zoom_pt - 1), QKeySequence.ZoomOut)
        self._action(vm, "&Reset zoom", lambda: self.set_zoom(self._font_pt + 1), "Ctrl+0")
        vm.addSeparator()
        self.view_menu_docks = vm.addMenu("&Panels")

        hm = mb.addMenu("&Help")
        self._action(hm, "&About Attention Explorer\u2026", self.show_about)
        self._action(hm, "About &Qt\u2026", lambda: QMessageBox.aboutQt(self))

    def _build_toolbar(self) -> None:
        tb = QToolBar("Layer and head")
        tb.setObjectName("toolbar_layer_head")
        self.addToolBar(Qt.TopToolBarArea, tb)
        tb.addWidget(QLabel(" Layer: "))
        self.layer_head = LayerHeadSelector(self.state, self)
        self.layer_combo, self.head_combo = self.layer_head.layer_combo, self.layer_head.head_combo
        self.layer_combo.setMinimumContentsLength(8)
        tb.addWidget(self.layer_combo)
        tb.addWidget(QLabel("  Head: "))
        self.head_combo.setMinimumContentsLength(12)
        tb.addWidget(self.head_combo)
        tb.addSeparator()
        tb.addAction(self.analyze_action)

    def _fill_samples_menu(self) -> None:
        self.samples_menu.clear()
        self.samples = []
        try:
            from model.core.paths import samples_dir  # torch is already imported by the loader by now

            folder = samples_dir()
            index = json.loads((folder / "index.json").read_text(encoding="utf-8"))
            for entry in index.get("samples", []):
                path = folder / entry["file"]
                if path.is_file():
                    self.samples.append({**entry, "path": str(path)})
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("sample reviews unavailable: %s", exc)
        if not self.samples:
            act = self.samples_menu.addAction("(no sample reviews found)")
            act.setEnabled(False)
            return
        for s in self.samples:
            stars = f", {s['rating']}/10" if "rating" in s else ""
            text = f"{s.get('title', Path(s['path']).stem)}  ({s.get('label', '?')}{stars})"
            self._action(self.samples_menu, text, lambda _=False, p=s["path"]: self.open_review_file(p))

    # ------------------------------------------------------------------ worker results
    def _on_loaded(self, predictor, info) -> None:
        self._predictor = predictor
        # What is alive now (modules, Qt wrappers, the model) lives as long as the app: keep it out of the
        # cyclic collector's full scans, which otherwise stalled the event loop ~100 ms mid-batch.
        gc.collect()
        gc.freeze()
        self.setWindowTitle(f"{APP_NAME} \u2014 {Path(info.model_dir).name or 'model'} on {info.device_name}")
        self.prediction_panel.set_labels(info.labels, info.device_name)
        self.model_label.setText(info.summary())
        self.state.set_model(info)
        saved = self.settings.value("view/layer"), self.settings.value("view/head")
        if saved[0] is not None and saved[1] is not None:
            try:
                self.state.set_layer_head(int(saved[0]), int(saved[1]))
            except (TypeError, ValueError):
                pass
        self._fill_samples_menu()
        self.statusBar().showMessage(f"Model loaded in {info.load_s:.1f} s", 5000)
        if self.state.prediction is None and not self.controller.busy:
            self.prediction_panel.set_idle()
        self.predictor_loaded.emit(predictor)

    def _on_load_failed(self, message: str) -> None:
        if self._predictor is not None:  # switching failed: the current model stays loaded
            self.model_menu.switch_failed(message)
            self.model_load_failed.emit(message)
            return
        self.setWindowTitle(f"{APP_NAME} \u2014 no model")
        self.prediction_panel.set_error(message)
        self.model_label.setText("no model")
        self.statusBar().showMessage(message)
        self.model_load_failed.emit(message)

    def _on_prediction(self, pred) -> None:
        self.state.set_prediction(pred)
        self.prediction_panel.set_prediction(pred)
        verdict = f"{pred.label} ({pred.probabilities.max() * 100:.1f} %)" if len(pred.probabilities) else "attention only"
        self.statusBar().showMessage(f"{verdict}, {pred.num_tokens} tokens, {pred.elapsed_s * 1000:.0f} ms", 4000)
        self.prediction_changed.emit(pred)

    def _on_error(self, message: str) -> None:
        self.prediction_panel.set_error(message)
        self.statusBar().showMessage(f"Analysis failed: {message}", 10000)
        self.analysis_failed.emit(message)

    def _show_error(self, message: str) -> None:
        self.statusBar().showMessage(message, 10000)
        QMessageBox.warning(self, APP_NAME, message)

    # ------------------------------------------------------------------ about
    def about_html(self) -> tuple[str, str]:
        """(model card markdown, metrics as HTML) for the About dialog."""
        return about_html(self.controller.info)

    def show_about(self) -> QDialog:
        """Show the About dialog: model card and metrics (non-modal; returned for tests)."""
        return about_dialog(self, self.controller.info)

    # ------------------------------------------------------------------ close
    def closeEvent(self, event) -> None:
        """Save settings (see :attr:`persist_settings`) and stop the worker threads (ours, and added panels')."""
        if self.persist_settings and self._shown:
            self.save_settings()
        self.debounce.stop()
        self.controller.shutdown()
        self.internals.shutdown()
        for dock in self._docks.values():
            stop = getattr(dock.widget(), "shutdown", None)
            if callable(stop):
                try:
                    stop()
                except Exception as exc:  # noqa: BLE001 - closing must not fail
                    log.warning("%s.shutdown failed: %s", type(dock.widget()).__name__, exc)
        super().closeEvent(event)

    def event(self, ev) -> bool:
        """Also stop the worker when the window is destroyed without being closed (tests)."""
        if ev.type() == QEvent.DeferredDelete:
            self.controller.shutdown()
            self.internals.shutdown()
        return super().event(ev)
