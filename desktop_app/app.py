"""Command line and panel wiring of Attention Explorer.

Usage::

    python -m desktop_app [--model DIR] [--device cpu|cuda] [--self-test] [--quit-after-show] [PATH ...]

``PATH``: files or folders to open, as a desktop app does (:mod:`desktop_app.window.open_paths`): one review file
opens in the editor and is analysed, one session file opens the session, folders, tables of reviews and several
files are scored in the Batch scoring panel.

``--self-test`` loads the model, analyses a bundled sample offscreen, scores its
words in the corpus dock's child process and prints one JSON line (exit 0 when it worked, 1 with ``{"ok": false, "error": ...}``
otherwise). ``--quit-after-show`` prints ``{"first_window_s": ...}``, the
seconds from the app's own start (its first module run by the interpreter) until the main window was first shown and
painted, and quits.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time

log = logging.getLogger("desktop_app")

SELF_TEST_TIMEOUT_S = 300.0  # seconds to wait for the model and the first analysis


def app_age_s(app_start: float) -> float:
    """Seconds since the app's own start, ``app_start`` (``time.perf_counter()`` when its first module ran:
    :data:`desktop_app.__main__.PROCESS_START`). Not the process's start in ``/proc``: a launcher that ``exec``s into
    the app (an install script, a wrapper) keeps its process and so its start time (issue 46: 181 s, the installation,
    counted as start-up)."""
    return time.perf_counter() - app_start


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Parse the command line (see module docstring)."""
    p = argparse.ArgumentParser(
        prog="attention-explorer", description="Attention Explorer: why does the model say that?"
    )
    p.add_argument("--model", metavar="DIR", default=None,
                   help="model folder: ours or a local Hugging Face encoder folder (default: the bundled resources/model)")
    p.add_argument("--device", default=None, help="torch device, e.g. cpu or cuda (default: CUDA if available)")
    p.add_argument(
        "--self-test", action="store_true", help="analyse a bundled sample offscreen, print one JSON line, exit"
    )
    p.add_argument(
        "--quit-after-show", action="store_true", help="print the cold-start time to the first painted window and quit"
    )
    p.add_argument("--verbose", action="store_true", help="log debug messages")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="files or folders to open: a review (.txt) opens in the editor, a session opens, folders, "
                        "tables of reviews and several files are scored in the Batch scoring panel")
    return p.parse_args(argv)


def open_command_line_paths(window, paths: list[str]) -> None:
    """Open the command line's files and folders in ``window`` (its panels attached) as a desktop app does
    (:mod:`desktop_app.window.open_paths`), and from then on the files the system asks the running app to open
    (macOS ``QFileOpenEvent``); missing paths are also named on stderr."""
    from PySide6.QtWidgets import QApplication

    from desktop_app.window.open_paths import FileOpenEvents, open_paths, sort_paths

    window.file_open_events = FileOpenEvents(window)
    QApplication.instance().installEventFilter(window.file_open_events)
    if not paths:
        return

    request = sort_paths(paths)
    if request.problems():
        print(f"attention-explorer: {request.problems()}", file=sys.stderr, flush=True)
    open_paths(window, request)


def attach_panels(window) -> dict:
    """Add the batch, corpus, explanation and "What if" panels to ``window`` and wire them (a What-if edit clicked
    becomes the current text, the original pinned: :func:`desktop_app.panels.whatif_panel.open_edit`), and the
    "Model B attention" dock (:class:`desktop_app.window.model_b_attention.ModelBAttention`, ``window.model_b_attention``),
    then opens the window's workspace (:mod:`desktop_app.window.workspaces`: which docks show).

    The batch and corpus docks (the results working area) are :func:`desktop_app.window.results_area.attach_results`'s.
    The explanation panel follows the window's explorer state itself (each new prediction, the selected layer;
    its chosen method colours the tokens through the state); it scrolls, so its fixed-height faithfulness table does
    not set the height of the right-hand dock area.

    Returns:
        {"batch": BatchPanel, "corpus": CorpusPanel, "explain": ExplanationPanel, "whatif": WhatIfPanel}
    """
    from PySide6.QtCore import Qt

    from desktop_app.panels.explain_panel import ExplanationPanel
    from desktop_app.panels.inside.docks import attach_inside
    from desktop_app.panels.whatif_panel import WhatIfPanel, open_edit
    from desktop_app.views.widgets import scrollable
    from desktop_app.window.model_b_attention import ModelBAttention
    from desktop_app.window.results_area import attach_results

    batch, corpus = attach_results(window)
    explain = ExplanationPanel(state=window.state)
    window.docks.add_panel(scrollable(explain), "Explanations", Qt.RightDockWidgetArea)
    window.predictor_loaded.connect(explain.set_predictor)
    if window.predictor is not None:
        explain.set_predictor(window.predictor)
    if window.current_prediction is not None:
        explain.set_prediction(window.current_prediction)
    whatif = WhatIfPanel(state=window.state)  # issue 43: counterfactual edits of the current text
    window.docks.add_panel(scrollable(whatif), "What if", Qt.RightDockWidgetArea)
    window.predictor_loaded.connect(whatif.set_predictor)
    whatif.set_predictor(window.predictor)
    whatif.open_requested.connect(lambda text, pair: open_edit(window, whatif.source, text, pair))
    window.model_b_attention = ModelBAttention(window, window.model_menu.second)  # B's own heatmap and links
    attach_inside(window, lambda: whatif.source)  # issue 53: the encoder block's docks (window.inside_panels)
    window.workspaces.start()  # every dock exists: open the saved workspace (else Read) with its layout
    return {"batch": batch, "corpus": corpus, "explain": explain, "whatif": whatif}


def first_sample_text() -> str:
    """The text of the first bundled sample review (``resources/samples/index.json``).

    Raises:
        FileNotFoundError / ValueError: when the samples are missing or the index is broken.
    """
    from model.core.paths import samples_dir

    folder = samples_dir()
    index = json.loads((folder / "index.json").read_text(encoding="utf-8"))
    return (folder / index["samples"][0]["file"]).read_text(encoding="utf-8")


def open_sample_when_empty(window) -> bool:
    """First run teaches: once the model has loaded, analyse the first bundled sample if the editor is empty.

    Returns True when a sample was opened (False: the user already typed something, or no sample exists).
    """
    if window.editor.toPlainText().strip() or window.current_prediction is not None:
        return False
    try:
        window.open_review(first_sample_text())
    except (OSError, ValueError, KeyError, IndexError) as exc:
        log.warning("no sample review to open: %s", exc)
        return False
    window.statusBar().showMessage("A sample review from IMDB; more in the Samples menu, or type your own.", 8000)
    return True


def run_self_test(app, window) -> dict:
    """Wait for the model, analyse the first sample, render every view; returns the JSON dict to print."""
    from PySide6.QtCore import QEventLoop, QTimer

    result: dict = {}
    loop = QEventLoop()

    def fail(msg: str) -> None:
        result.setdefault("error", msg)
        loop.quit()

    def on_loaded(_predictor) -> None:
        try:
            window.open_review(first_sample_text())
        except (OSError, ValueError, KeyError, IndexError) as exc:
            fail(f"bundled sample unavailable: {exc}")

    def on_prediction(pred) -> None:
        if pred is not None:
            result["prediction"] = pred
            loop.quit()

    window.predictor_loaded.connect(on_loaded)
    window.model_load_failed.connect(fail)
    window.analysis_failed.connect(fail)
    window.state.events.prediction.connect(on_prediction)
    QTimer.singleShot(int(SELF_TEST_TIMEOUT_S * 1000), lambda: fail(f"timed out after {SELF_TEST_TIMEOUT_S:.0f} s"))
    if window.predictor is not None:
        on_loaded(window.predictor)
    loop.exec()
    if "error" in result:
        return {"ok": False, "error": result["error"]}
    pred = result["prediction"]
    for view in (window.token_view, window.heatmap, window.links_view, window.model_view, window.pe_view):
        view.flush()
    app.processEvents()
    info = window.model_info
    words = self_test_corpus_words(window.predictor)
    umap = self_test_corpus_map(window.predictor) if getattr(sys, "frozen", False) else None
    return {
        "ok": True,
        "label": pred.label,
        "probabilities": {k: round(float(v), 6) for k, v in zip(pred.labels, pred.probabilities)},
        "num_tokens": pred.num_tokens,
        "layers": int(pred.attention.shape[0]),
        "heads": int(pred.attention.shape[1]),
        "model_dir": info.model_dir if info is not None else "",
        "device": pred.device,
        "precision": info.precision if info is not None else "",
        "elapsed_s": round(float(pred.elapsed_s), 6),
        "corpus_words": words,
        **({} if umap is None else {"corpus_map_umap": umap}),
    }


def self_test_corpus_words(predictor) -> int:
    """The self-test's corpus check: score the words of the bundled samples in the corpus dock's child process
    (:func:`desktop_app.workers.corpus.metrics.score_words_once`; a frozen bundle re-runs its own executable for it).

    Returns:
        the number of words scored (> 0).

    Raises:
        RuntimeError: the child failed, or scored no word.
    """
    from desktop_app.workers.corpus.metrics import score_words_once

    texts = [first_sample_text()] * 2
    words = len(score_words_once(predictor, texts, min_count=1).tokens)
    if words == 0:
        raise RuntimeError("the corpus word scores found no word in the bundled sample")
    return words


def self_test_corpus_map(predictor, points: int = 60) -> dict:
    """The self-test's corpus-map check, run by a packaged executable (issue 42: numba and umap-learn in the bundle):
    the bundled sample's sentence vector (``score_many(vectors=VectorSpec())``) repeated to ``points`` points with
    seeded noise of 5% of its scale, mapped with UMAP in the map's child process
    (:func:`desktop_app.workers.corpus.map_jobs.projection_job`'s path; the first UMAP compiles numba's code into
    ``NUMBA_CACHE_DIR``, later ones load it).

    Returns:
        ``{"points": N, "seconds": wall seconds of the fit, child start included}``.

    Raises:
        RuntimeError: the child failed; ValueError: no vector.
    """
    import numpy as np

    from desktop_app.workers.corpus.map_jobs import fit_projection
    from model.records.vectors import SentenceVectors, VectorSpec

    vector = predictor.score_many([first_sample_text()], vectors=VectorSpec())[0].vector
    rng = np.random.default_rng(0)
    scale = 0.05 * (float(np.abs(vector).mean()) or 1.0)
    vectors = (vector[None, :] + rng.normal(0.0, scale, (points, len(vector)))).astype(np.float32)
    t0 = time.perf_counter()
    fit_projection(SentenceVectors(vectors, np.arange(points)), "umap", 42, lambda *_: None, lambda: False)
    return {"points": points, "seconds": round(time.perf_counter() - t0, 2)}


def set_app_icon(app) -> None:
    """Give the application its icon (``resources/icons/attention-explorer.png``) and its desktop-file name."""
    from PySide6.QtGui import QGuiApplication, QIcon

    from model.core.paths import resources_dir

    icon = resources_dir() / "icons" / "attention-explorer.png"
    if icon.is_file():
        app.setWindowIcon(QIcon(str(icon)))
    QGuiApplication.setDesktopFileName("attention-explorer")


def main(argv: list[str] | None = None, process_start: float | None = None) -> int:
    """Run Attention Explorer; returns the exit code (see module docstring for the options)."""
    process_start = process_start if process_start is not None else time.perf_counter()
    args = parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    headless = args.self_test or args.quit_after_show
    if (
        headless
        and not os.environ.get("QT_QPA_PLATFORM")
        and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    ):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    if args.self_test:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    try:
        from PySide6.QtCore import QCoreApplication, QEvent, QObject, QTimer
        from PySide6.QtWidgets import QApplication

        QCoreApplication.setOrganizationName("AttentionExplorer")
        QCoreApplication.setApplicationName("Attention Explorer")
        app = QApplication.instance() or QApplication(sys.argv[:1])
        set_app_icon(app)
        from desktop_app.window.main_window import MainWindow

        window = MainWindow(args.model, args.device)
        window.persist_settings = not headless
        from desktop_app.errors import install_error_hooks

        install_error_hooks(window)  # an exception in a slot or a thread: logged, and a short message in the app
    except Exception as exc:  # no traceback for the user: one line, exit 1  # noqa: BLE001 - any failure becomes a message
        msg = f"{type(exc).__name__}: {exc}"
        if args.self_test:
            print(json.dumps({"ok": False, "error": msg}), flush=True)
        else:
            print(f"attention-explorer: cannot start: {msg}", file=sys.stderr)
        return 1
    if args.self_test:
        attach_panels(window)
        try:
            out = run_self_test(app, window)
        except Exception as exc:  # noqa: BLE001 - any failure becomes a message
            out = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(out), flush=True)
        window.close()
        return 0 if out.get("ok") else 1

    class FirstPaint(QObject):
        """On the main window's first paint: attach the extra panels (their modules import torch,
        which would otherwise delay the first window by seconds) and, with --quit-after-show,
        report the cold-start time and quit."""

        done = False

        def eventFilter(self, obj, ev):
            if ev.type() == QEvent.Paint and not self.done:
                self.done = True
                QTimer.singleShot(0, self.after_first_paint)
            return False

        def after_first_paint(self):
            window.removeEventFilter(self)
            if args.quit_after_show:
                print(json.dumps({"first_window_s": round(app_age_s(process_start), 4)}), flush=True)
                window.close()
                app.quit()
                return
            attach_panels(window)
            open_command_line_paths(window, args.paths)

    watcher = FirstPaint()
    window.installEventFilter(watcher)
    if window.predictor is not None:
        open_sample_when_empty(window)
    else:
        window.predictor_loaded.connect(lambda _predictor: open_sample_when_empty(window))
    window.show()
    return app.exec()
