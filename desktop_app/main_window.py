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
import os
import sys
from pathlib import Path

from PySide6.QtCore import QEvent, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QTextBrowser,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from model.atomic import atomic_path, atomic_write_bytes
from model.textio import read_text_file

from .views.common import MAX_HEADS, MEAN_HEADS, head_name
from .views.heatmap import AttentionHeatmap
from .views.links_view import AttentionLinksView
from .views.model_view import ModelView
from .views.pe_view import PositionalEncodingView
from .views.prediction_panel import PredictionPanel
from .views.state import ExplorerState
from .views.token_view import TokenView
from .worker import InferenceController

log = logging.getLogger(__name__)

APP_NAME = "Attention Explorer"
DEBOUNCE_MS = 250  # milliseconds after the last keystroke before live analysis
MAX_REVIEW_FILE_BYTES = 5_000_000  # larger text files are refused with a message
GUI_SWITCH_INTERVAL_S = 0.001  # seconds; see MainWindow.__init__
SETTINGS_ENV = "ATTENTION_EXPLORER_SETTINGS"  # path of an .ini file to use instead of the user's settings


def app_settings() -> QSettings:
    """The app's QSettings; an .ini file at ``$ATTENTION_EXPLORER_SETTINGS`` when set (tests use this)."""
    path = os.environ.get(SETTINGS_ENV)
    if path:
        return QSettings(path, QSettings.IniFormat)
    return QSettings("AttentionExplorer", APP_NAME)


def local_paths(mime) -> list[str]:
    """Local file/folder paths carried by a drag's QMimeData (empty when there are none)."""
    if mime is None or not mime.hasUrls():
        return []
    return [u.toLocalFile() for u in mime.urls() if u.isLocalFile() and u.toLocalFile()]


class ReviewEditor(QPlainTextEdit):
    """The review editor; dropped files/folders are reported, never pasted as paths.

    Signals:
        paths_dropped(list): local paths (list[str]) dropped on the editor.
    """

    paths_dropped = Signal(list)

    def dragEnterEvent(self, event) -> None:
        """Accept drags of local files (for ``paths_dropped``); text drags behave as usual."""
        if local_paths(event.mimeData()):
            event.acceptProposedAction()
            return
        super().dragEnterEvent(event)

    def dragMoveEvent(self, event) -> None:
        """See :meth:`dragEnterEvent`."""
        if local_paths(event.mimeData()):
            event.acceptProposedAction()
            return
        super().dragMoveEvent(event)

    def dropEvent(self, event) -> None:
        """Files -> ``paths_dropped``; anything else is inserted as text."""
        paths = local_paths(event.mimeData())
        if paths:
            event.acceptProposedAction()
            self.paths_dropped.emit(paths)
            return
        super().dropEvent(event)

    def canInsertFromMimeData(self, source) -> bool:
        """Pasting files inserts nothing (they are not review text)."""
        if local_paths(source) and not source.hasText():
            return False
        return super().canInsertFromMimeData(source)


class MainWindow(QMainWindow):
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
        self.heatmap = AttentionHeatmap(self.state)
        self.links_view = AttentionLinksView(self.state)
        self.model_view = ModelView(self.state)
        self.pe_view = PositionalEncodingView(self.state)
        self.setCentralWidget(self.token_view)

        self.view_menu_docks = None
        self._build_menus()
        self.review_dock = self._add_dock(review, "Review", Qt.LeftDockWidgetArea)
        self.prediction_dock = self._add_dock(self.prediction_panel, "Prediction", Qt.LeftDockWidgetArea)
        self.heatmap_dock = self._add_dock(self.heatmap, "Attention heatmap", Qt.RightDockWidgetArea)
        self.links_dock = self._add_dock(self.links_view, "Token links", Qt.RightDockWidgetArea)
        self.model_dock = self._add_dock(self.model_view, "Model view", Qt.RightDockWidgetArea)
        self.pe_dock = self._add_dock(self.pe_view, "Positional encoding", Qt.RightDockWidgetArea)
        for d in (self.links_dock, self.model_dock, self.pe_dock):
            self.tabifyDockWidget(self.heatmap_dock, d)
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
        self.state.layer_head_changed.connect(self._sync_layer_head_controls)

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
        """Put ``text`` in the editor and analyze it now."""
        self.editor.setPlainText(str(text))
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
        self._action(fm, "&Export current view (PNG/SVG)\u2026", self._export_current_view, "Ctrl+E")
        self.export_menu = fm.addMenu("Export &view")
        for name in (
            "Attention heatmap",
            "Token links",
            "Model view",
            "Positional encoding",
            "Token view",
            "Whole window",
        ):
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
        self.layer_combo = QComboBox()
        self.layer_combo.setMinimumContentsLength(8)
        tb.addWidget(self.layer_combo)
        tb.addWidget(QLabel("  Head: "))
        self.head_combo = QComboBox()
        self.head_combo.setMinimumContentsLength(12)
        tb.addWidget(self.head_combo)
        tb.addSeparator()
        tb.addAction(self.analyze_action)
        self.layer_combo.activated.connect(self._on_layer_head_combo)
        self.head_combo.activated.connect(self._on_layer_head_combo)

    def _fill_layer_head_controls(self, n_layers: int, n_heads: int) -> None:
        self.layer_combo.blockSignals(True)
        self.head_combo.blockSignals(True)
        self.layer_combo.clear()
        for layer in range(n_layers):
            self.layer_combo.addItem(f"layer {layer + 1}", layer)
        self.head_combo.clear()
        for h in range(n_heads):
            self.head_combo.addItem(head_name(h), h)
        self.head_combo.addItem(head_name(MEAN_HEADS), MEAN_HEADS)
        self.head_combo.addItem(head_name(MAX_HEADS), MAX_HEADS)
        self.layer_combo.blockSignals(False)
        self.head_combo.blockSignals(False)
        self._sync_layer_head_controls(self.state.layer, self.state.head)

    def _on_layer_head_combo(self, *_):
        layer = self.layer_combo.currentData()
        head = self.head_combo.currentData()
        if layer is not None and head is not None:
            self.state.set_layer_head(int(layer), int(head))

    def _sync_layer_head_controls(self, layer: int, head: int) -> None:
        for combo, value in ((self.layer_combo, layer), (self.head_combo, head)):
            i = combo.findData(value)
            if i >= 0 and combo.currentIndex() != i:
                combo.blockSignals(True)
                combo.setCurrentIndex(i)
                combo.blockSignals(False)

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
            self._action(self.samples_menu, text, lambda _=False, p=s["path"]: self._open_sample(p))

    def _open_sample(self, path: str) -> None:
        try:
            self.open_review(read_text_file(path, MAX_REVIEW_FILE_BYTES))
        except ValueError as exc:
            self._show_error(str(exc))

    # ------------------------------------------------------------------ worker results
    def _on_loaded(self, predictor, info) -> None:
        self._predictor = predictor
        # What is alive now (modules, Qt wrappers, the model) lives as long as the app: keep it out of the
        # cyclic collector's full scans, which otherwise stalled the event loop ~100 ms mid-batch.
        gc.collect()
        gc.freeze()
        self.setWindowTitle(f"{APP_NAME} \u2014 {Path(info.model_dir).name or 'model'} on {info.device_name}")
        self.prediction_panel.set_labels(info.labels, info.device_name)
        self.model_label.setText(
            f"{info.n_layers} layers \u00d7 {info.n_heads} heads, d_model {info.d_model}, max {info.max_len} tokens"
            f" \u2014 {info.device_name}"
        )
        self.state.set_model(info)
        self._fill_layer_head_controls(info.n_layers, info.n_heads)
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
        self.setWindowTitle(f"{APP_NAME} \u2014 no model")
        self.prediction_panel.set_error(message)
        self.model_label.setText("no model")
        self.statusBar().showMessage(message)
        self.model_load_failed.emit(message)

    def _on_prediction(self, pred) -> None:
        self.state.set_prediction(pred)
        self.prediction_panel.set_prediction(pred)
        self.statusBar().showMessage(
            f"{pred.label} ({pred.probabilities.max() * 100:.1f} %), {pred.num_tokens} tokens, {pred.elapsed_s * 1000:.0f} ms",
            4000,
        )
        self.prediction_changed.emit(pred)

    def _on_error(self, message: str) -> None:
        self.prediction_panel.set_error(message)
        self.statusBar().showMessage(f"Analysis failed: {message}", 10000)
        self.analysis_failed.emit(message)

    def _show_error(self, message: str) -> None:
        self.statusBar().showMessage(message, 10000)
        QMessageBox.warning(self, APP_NAME, message)

    # ------------------------------------------------------------------ files
    def _last_folder(self) -> str:
        return str(self.settings.value("files/last_folder", str(Path.home())))

    def _remember_folder(self, path: str) -> None:
        p = Path(path)
        self.settings.setValue("files/last_folder", str(p if p.is_dir() else p.parent))

    def _open_files(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(
            self,
            "Open review files",
            self._last_folder(),
            "Reviews (*.txt *.csv *.jsonl *.json *.parquet *.gz);;All files (*)",
        )
        if paths:
            self._remember_folder(paths[0])
            self.paths_dropped.emit(list(paths))

    def _open_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Open a folder of reviews", self._last_folder())
        if folder:
            self.settings.setValue("files/last_folder", folder)
            self.paths_dropped.emit([folder])

    def _load_review_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Load a review", self._last_folder(), "Text (*.txt);;All files (*)")
        if path:
            self._remember_folder(path)
            try:
                self.open_review(read_text_file(path, MAX_REVIEW_FILE_BYTES))
            except ValueError as exc:
                self._show_error(str(exc))

    def save_json(self, path: str | Path) -> None:
        """Write the current analysis (``Prediction.to_json_dict()``) to ``path`` atomically.

        Raises:
            ValueError: when there is no analysis yet.
            OSError: when the file cannot be written.
        """
        pred = self.state.prediction
        if pred is None:
            raise ValueError("there is no analysis to save yet")
        atomic_write_bytes(path, json.dumps(pred.to_json_dict(), ensure_ascii=False).encode("utf-8"))

    def _save_json(self) -> None:
        if self.state.prediction is None:
            self._show_error("There is no analysis to save yet.")
            return
        path, _ = QFileDialog.getSaveFileName(
            self, "Save analysis", str(Path(self._last_folder()) / "analysis.json"), "JSON (*.json)"
        )
        if not path:
            return
        self._remember_folder(path)
        try:
            self.save_json(path)
            self.statusBar().showMessage(f"Saved {path}", 5000)
        except (OSError, ValueError) as exc:
            self._show_error(str(exc))

    def view_widgets(self) -> dict[str, QWidget]:
        """Name -> widget of every exportable view."""
        return {
            "Attention heatmap": self.heatmap,
            "Token links": self.links_view,
            "Model view": self.model_view,
            "Positional encoding": self.pe_view,
            "Token view": self.token_view,
            "Whole window": self,
        }

    def export_view(self, name: str, path: str | Path) -> None:
        """Export view ``name`` (see :meth:`view_widgets`) to ``path``; the suffix picks PNG or SVG.

        PNG: pyqtgraph's ImageExporter for plots, ``QWidget.grab`` otherwise. SVG:
        pyqtgraph's SVGExporter, falling back to ``QSvgGenerator``. The file is
        written to a temporary name and renamed (atomic).

        Raises:
            ValueError: unknown view or a suffix other than .png/.svg.
            OSError: the file cannot be written.
        """
        widget = self.view_widgets().get(name)
        if widget is None:
            raise ValueError(f"unknown view {name!r}")
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix not in (".png", ".svg"):
            raise ValueError("choose a file name ending in .png or .svg")
        if hasattr(widget, "flush"):
            widget.flush()
        with atomic_path(path, suffix=f".partial{suffix}") as tmp_name:
            tmp = Path(tmp_name)
            tmp.unlink()  # the exporters create the file themselves; its absence means they failed
            if suffix == ".png" and hasattr(widget, "export_item"):
                from pyqtgraph import exporters

                exporters.ImageExporter(widget.export_item()).export(fileName=str(tmp))
            elif suffix == ".png":
                if not widget.grab().save(str(tmp), "PNG"):
                    raise OSError(f"cannot write {path}")
            else:
                self._export_svg(widget, tmp)
            if not tmp.is_file():
                raise OSError(f"cannot write {path}")

    @staticmethod
    def _export_svg(widget: QWidget, out: Path) -> None:
        """SVG via pyqtgraph's SVGExporter, or QSvgGenerator when that fails (pyqtgraph 0.14 cannot parse
        the path data Qt 6.12 writes) or the widget is not a plot."""
        if hasattr(widget, "export_item"):
            from pyqtgraph import exporters

            try:
                exporters.SVGExporter(widget.export_item()).export(fileName=str(out))
                return
            except Exception as exc:  # noqa: BLE001 - fall back to Qt's own SVG writer
                log.info("pyqtgraph SVG export failed (%s: %s); using QSvgGenerator", type(exc).__name__, exc)
                out.unlink(missing_ok=True)
        from PySide6.QtCore import QPoint
        from PySide6.QtGui import QPainter, QRegion
        from PySide6.QtSvg import QSvgGenerator

        gen = QSvgGenerator()
        gen.setFileName(str(out))
        gen.setSize(widget.size())
        gen.setViewBox(widget.rect())
        gen.setTitle(APP_NAME)
        painter = QPainter(gen)
        try:
            flags = QWidget.RenderFlag.DrawWindowBackground | QWidget.RenderFlag.DrawChildren
            widget.render(painter, QPoint(0, 0), QRegion(widget.rect()), flags)
        finally:
            painter.end()

    def _current_view_name(self) -> str:
        for name in ("Attention heatmap", "Token links", "Model view", "Positional encoding"):
            w = self.view_widgets()[name]
            if w.isVisible() and not w.visibleRegion().isEmpty():
                return name
        return "Token view"

    def _export_current_view(self) -> None:
        self._export_view_dialog(self._current_view_name())

    def _export_view_dialog(self, name: str) -> None:
        default = Path(self._last_folder()) / (name.lower().replace(" ", "_") + ".png")
        path, _ = QFileDialog.getSaveFileName(
            self, f"Export {name}", str(default), "PNG image (*.png);;SVG vector (*.svg)"
        )
        if not path:
            return
        self._remember_folder(path)
        try:
            self.export_view(name, path)
            self.statusBar().showMessage(f"Exported {name} to {path}", 5000)
        except (OSError, ValueError) as exc:
            self._show_error(str(exc))

    # ------------------------------------------------------------------ about
    def about_html(self) -> tuple[str, str]:
        """(model card markdown, metrics as HTML) for the About dialog."""
        info = self.controller.info
        card = (
            info.model_card
            if info is not None and info.model_card
            else "*No model card (README.md) in the model folder.*"
        )
        rows = []
        metrics = info.metrics if info is not None else {}

        def flat(prefix, obj):
            if isinstance(obj, dict):
                for k, v in obj.items():
                    flat(f"{prefix}{k}.", v)
            elif not isinstance(obj, list):
                rows.append((prefix.rstrip("."), obj))

        flat("", metrics)
        table = "".join(
            f"<tr><td>{k}</td><td>{v:.4g}</td></tr>" if isinstance(v, float) else f"<tr><td>{k}</td><td>{v}</td></tr>"
            for k, v in rows[:60]
        )
        head = (
            f"<p><b>Model folder:</b> {info.model_dir}<br><b>Device:</b> {info.device_name}<br>"
            f"<b>Architecture:</b> {info.n_layers} layers, {info.n_heads} heads, d_model {info.d_model}, "
            f"max_len {info.max_len}, pooling {info.pooling}</p>"
            if info is not None
            else "<p>The model has not loaded.</p>"
        )
        metrics_html = head + (f"<table border=1 cellpadding=3>{table}</table>" if table else "<p>No metrics.json.</p>")
        return card, metrics_html

    def show_about(self) -> QDialog:
        """Show the About dialog: model card and metrics (non-modal; returned for tests)."""
        card, metrics_html = self.about_html()
        dlg = QDialog(self)
        dlg.setWindowTitle(f"About {APP_NAME}")
        dlg.resize(700, 600)
        lay = QVBoxLayout(dlg)
        lay.addWidget(
            QLabel(
                f"<h2>{APP_NAME}</h2><p>See why a Transformer-encoder sentiment classifier, trained on IMDB "
                "(Maas et al. 2011), classifies a review the way it does.</p>"
            )
        )
        card_view = QTextBrowser()
        card_view.setMarkdown(card)
        metrics_view = QTextBrowser()
        metrics_view.setHtml(metrics_html)
        lay.addWidget(QLabel("<b>Model card</b>"))
        lay.addWidget(card_view, 2)
        lay.addWidget(QLabel("<b>Metrics</b>"))
        lay.addWidget(metrics_view, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        buttons.rejected.connect(dlg.close)
        lay.addWidget(buttons)
        dlg.show()
        return dlg

    # ------------------------------------------------------------------ settings, drops, close
    def _restore_settings(self) -> None:
        geom = self.settings.value("window/geometry")
        if geom is not None:
            self.restoreGeometry(geom)
        else:
            self.resize(1400, 860)
        state = self.settings.value("window/state")
        if state is not None:
            self._saved_state = state
            docks = self.settings.value("window/docks")
            self._saved_docks = set(docks) if isinstance(docks, (list, tuple)) else {docks} if docks else set()
            self.restoreState(state)
        zoom = self.settings.value("view/zoom")
        if zoom is not None:
            try:
                self._zoom_pt = float(zoom)
            except (TypeError, ValueError):
                pass

    def save_settings(self) -> None:
        """Store geometry, dock layout, zoom and the selected layer/head in QSettings."""
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self.saveState())
        self.settings.setValue("window/docks", sorted(d.objectName() for d in self._docks.values()))
        self.settings.setValue("view/layer", self.state.layer)
        self.settings.setValue("view/head", self.state.head)
        self.settings.setValue("view/zoom", self._zoom_pt)
        self.settings.sync()

    def showEvent(self, event) -> None:
        """Remember that the window was shown: only then is its layout worth saving."""
        super().showEvent(event)
        self._shown = True

    def dragEnterEvent(self, event) -> None:
        """Accept local files and folders dropped anywhere on the window."""
        if local_paths(event.mimeData()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event) -> None:
        """See :meth:`dragEnterEvent`."""
        if local_paths(event.mimeData()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event) -> None:
        """Emit ``paths_dropped`` with the dropped local paths."""
        paths = local_paths(event.mimeData())
        if paths:
            event.acceptProposedAction()
            self._remember_folder(paths[0])
            self.paths_dropped.emit(paths)
        else:
            event.ignore()

    def closeEvent(self, event) -> None:
        """Save settings (see :attr:`persist_settings`) and stop the worker threads (ours, and added panels')."""
        if self.persist_settings and self._shown:
            self.save_settings()
        self.debounce.stop()
        self.controller.shutdown()
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
        return super().event(ev)
