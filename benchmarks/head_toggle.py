"""Head-toggle latency: from switching a head off (or on) to the new prediction shown. Prints JSON; asserts nothing.

``python -m benchmarks.head_toggle [--tokens 100 256 512] [--repeats 15] [--model DIR] [--data FILE] [--no-panels]``

Opens the real main window (1600 x 1000, the batch, corpus and explanation panels attached unless ``--no-panels``;
offscreen when no display is set) on the bundled model, with the "Model view" dock raised (its head toggles are where
a user switches heads off). For each review length (IMDB test reviews of about ``--tokens`` tokens; 512: a long
review, truncated to the model's 512), the review is analysed, then ``--repeats`` times a head is switched off and on
again with ``state.toggle_head`` (the call the model view's toggles, Ctrl+click and context menu make), cycling
through the heads. For each toggle it records, in ms from the call:

* ``panel_ms``: the new prediction is in the prediction panel (its bars hold the new probabilities: the panel
  updates in its ``events.prediction`` slot);
* ``painted_ms``: the panel's first probability bar has painted it (the next paint event after ``panel_ms``);
* ``views_ms``: every visible view has drawn it (the shared render queue is empty).

and the split: ``forward_ms``, ``Prediction.elapsed_s`` (the model's forward pass on the inference thread), and
``layer_predictions_ms``, the prediction by layer the inference worker computes before handing the prediction over
(with the mask, and without it when heads are off: two more passes). Medians, 90th
percentiles and maxima per length; the issue's target is ``panel_ms`` < 100 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.batch_cli import DEFAULT_DATA
from benchmarks.batch_gui import prepare
from model.files.textio import read_labelled


def reviews_of_lengths(predictor, texts: list[str], lengths: list[int]) -> dict[int, str]:
    """A review of about each token count in ``lengths`` (within 10 %, else the closest of the first 3000); a length
    at or above the model's ``max_len`` gets the first review longer than it (the model truncates it)."""
    counts = [(len(predictor.encode(t).ids), t) for t in texts[:3000]]
    out = {}
    for n in lengths:
        if n >= predictor.config.max_len:
            out[n] = next((t for c, t in counts if c > n), max(counts)[1])
        else:
            out[n] = min(counts, key=lambda ct: abs(ct[0] - n))[1]
    return out


def _pump(app, until, timeout_s: float = 30.0) -> bool:
    """Process events until ``until()`` is true (True) or ``timeout_s`` passes (False)."""
    from PySide6.QtCore import QEventLoop, QTimer

    tick = QTimer()  # wakes the wait below at least every 10 ms (no busy loop competing with the inference thread)
    tick.start(10)
    deadline = time.perf_counter() + timeout_s
    try:
        while not until():
            if time.perf_counter() > deadline:
                return False
            app.processEvents(QEventLoop.AllEvents | QEventLoop.WaitForMoreEvents)
        return True
    finally:
        tick.stop()


class Recorder:
    """Times, in seconds from :meth:`start`, of the next prediction reaching the panel and of the bar's paint."""

    def __init__(self, window) -> None:
        from PySide6.QtCore import QEvent, QObject

        self.t0 = 0.0
        self.layer_s = 0.0
        self.panel: float | None = None
        self.painted: float | None = None
        self.pred = None
        window.state.events.prediction.connect(self._on_prediction)  # after the panel's own slot (connected first)
        rec = self

        class PaintSpy(QObject):
            def eventFilter(self, obj, event):  # noqa: N802 - Qt's name
                if event.type() == QEvent.Paint and rec.panel is not None and rec.painted is None:
                    rec.painted = time.perf_counter() - rec.t0
                return False

        self.spy = PaintSpy()
        self.bar = next(iter(window.prediction_panel.bars.values()))
        self.bar.installEventFilter(self.spy)

    def start(self) -> None:
        """Forget the last toggle; time from now."""
        self.panel = self.painted = self.pred = None
        self.layer_s = 0.0
        self.t0 = time.perf_counter()

    def time_layer_predictions(self, predictor) -> None:
        """Add the wall time of ``predictor.layer_predictions`` (the inference worker runs it before it hands the
        prediction over: with the mask and, when heads are off, without) to ``layer_s``."""
        inner = predictor.layer_predictions

        def timed(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                self.layer_s += time.perf_counter() - t0

        predictor.layer_predictions = timed

    def _on_prediction(self, pred) -> None:
        if pred is not None and self.panel is None:
            self.panel, self.pred = time.perf_counter() - self.t0, pred


def _stats(values_s: list[float]) -> dict:
    a = np.array(values_s) * 1000
    return {"median": round(float(np.median(a)), 1), "p90": round(float(np.percentile(a, 90)), 1),
            "max": round(float(a.max()), 1)}


def run_length(app, window, rec: Recorder, text: str, repeats: int) -> dict:
    """Analyse ``text``, then time ``repeats`` head toggles (see the module docstring)."""
    from desktop_app.views import render

    st = window.state
    rec.start()
    window.open_review(text)
    _pump(app, lambda: rec.panel is not None and not window.controller.busy, 120)
    _pump(app, lambda: not render._render_queue, 30)
    heads = [(l, h) for l in range(st.n_layers) for h in range(st.n_heads)]
    rows = {"panel": [], "painted": [], "views": [], "forward": [], "layer_predictions": []}
    for i in range(repeats):
        layer, head = heads[(i // 2) % len(heads)]  # off, then on again, head after head
        rec.start()
        st.toggle_head(layer, head)
        ok = _pump(app, lambda: rec.panel is not None)
        _pump(app, lambda: not render._render_queue and rec.painted is not None, 10)
        views = time.perf_counter() - rec.t0
        if not ok:
            continue
        bars = window.prediction_panel.bars
        assert_same = [bars[n].probability for n in rec.pred.labels] == [float(p) for p in rec.pred.probabilities]
        rows["panel"].append(rec.panel)
        rows["painted"].append(rec.painted if rec.painted is not None else float("nan"))
        rows["views"].append(views)
        rows["forward"].append(rec.pred.elapsed_s)
        rows["layer_predictions"].append(rec.layer_s)
        if not assert_same:
            print(f"warning: the panel does not show toggle {i}'s prediction", file=sys.stderr)
    st.reset_heads()
    _pump(app, lambda: not window.controller.busy, 30)
    pred = st.prediction
    return {"tokens": pred.num_tokens if pred else None, "truncated": bool(pred.truncated) if pred else None,
            "toggles": len(rows["panel"]), **{f"{k}_ms": _stats(v) for k, v in rows.items() if v}}


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; returns 0, 1 if the model did not load, 2 when the data file is missing."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tokens", type=int, nargs="+", default=[100, 256, 512], help="review lengths (tokens)")
    p.add_argument("--repeats", type=int, default=15, help="toggles per length")
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help="IMDB test.jsonl.gz")
    p.add_argument("--model", type=Path, default=None, help="model folder (default: the bundled one)")
    p.add_argument("--no-panels", action="store_true", help="without the batch, corpus and explanation panels")
    args = p.parse_args(argv)
    if not prepare(args.data):
        return 2
    with tempfile.TemporaryDirectory(prefix="ae-bench-heads-") as tmp:
        from desktop_app.window.settings import SETTINGS_ENV

        os.environ[SETTINGS_ENV] = str(Path(tmp) / "settings.ini")  # leave the user's settings alone
        return _run(args)


def _open_window(model: Path | None, panels: bool):
    from PySide6.QtWidgets import QApplication

    if panels:
        from benchmarks.batch_gui import open_loaded_window

        app, window, _ = open_loaded_window(model)
        return app, window
    from desktop_app.window.main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    window = MainWindow(str(model) if model else None, None)
    window.resize(1600, 1000)
    window.show()
    _pump(app, lambda: window.predictor is not None, 120)
    return app, window


def _run(args: argparse.Namespace) -> int:
    app, window = _open_window(args.model, not args.no_panels)
    if window.predictor is None:
        print(json.dumps({"ok": False, "error": "the model did not load"}))
        return 1
    window.persist_settings = False
    window.docks.raise_view("Model view")
    texts = read_labelled(args.data)[0]
    reviews = reviews_of_lengths(window.predictor, texts, args.tokens)
    rec = Recorder(window)
    rec.time_layer_predictions(window.predictor)
    results = {str(n): run_length(app, window, rec, reviews[n], args.repeats) for n in args.tokens}
    info = window.state.info
    print(json.dumps({
        "ok": True, "model": f"{info.n_layers} layers x {info.n_heads} heads, {info.device_name}",
        "panels": not args.no_panels, "repeats": args.repeats, "platform": os.environ.get("QT_QPA_PLATFORM", ""),
        "cpu": platform.processor() or platform.machine(), "by_length": results,
    }, indent=2))
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
