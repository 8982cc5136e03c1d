"""Prediction panel redraw time for a 28-label result (issue 30's target: < 30 ms). Prints JSON; asserts nothing.

``python -m benchmarks.prediction_panel [--labels 28] [--repeats 200]``

A shown :class:`desktop_app.views.prediction_panel.PredictionPanel` (420 x 900 pixels; offscreen when no display is
set) follows an :class:`desktop_app.state.ExplorerState` whose model has ``--labels`` classes. For each task
(single-label: the classes sorted by probability; multi-label: each label's sigmoid against the threshold line) and
for the top-5 view and "Show all", ``--repeats`` predictions with fresh random logits (so the order of the bars
changes every time) are set with ``state.set_prediction``, the events it posted are processed (the re-sorted rows'
layout) and the panel is repainted synchronously (``QWidget.repaint``). ``redraw_ms`` is the time from the call to the
end of the paint: the panel's slot (the label, the sorted bars, the details), the layout and the paint of every bar. Median, 90th percentile and maximum.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import numpy as np


def _prediction(labels, logits, task):
    from model.records.prediction import Prediction
    from model.tasks.task import label_text, predicted_labels, probabilities_of

    probs = probabilities_of(logits, task)
    tokens = ["[CLS]", "i", "am", "so", "happy", "[SEP]"]
    T = len(tokens)
    att = np.full((6, 12, T, T), 1.0 / T, np.float32)
    offsets = np.array([(0, 0), (0, 1), (2, 4), (5, 7), (8, 13), (0, 0)], np.int64)
    return Prediction("i am so happy", tokens, offsets, label_text(predicted_labels(probs, labels, task)), labels,
                      probs, logits.astype(np.float32), att, False, T, 0.004, task=task)


def measure(labels: tuple[str, ...], task: str, show_all: bool, repeats: int, seed: int = 0) -> dict:
    """Redraw times (ms) of ``repeats`` predictions of ``task`` over ``labels``; see the module docstring."""
    from PySide6.QtWidgets import QApplication

    from desktop_app.state import ExplorerState
    from desktop_app.views.prediction_panel import PredictionPanel
    from model.records.info import ModelInfo

    state = ExplorerState()
    panel = PredictionPanel(state)
    panel.resize(420, 900)
    panel.show()
    state.set_model(ModelInfo(6, 12, 384, 512, 10000.0, "mean", labels, "CPU", "", None, task=task))
    panel.bars_box.set_show_all(show_all)
    rng = np.random.default_rng(seed)
    preds = [_prediction(labels, rng.normal(0.0, 2.0, len(labels)), task) for _ in range(repeats + 5)]
    app = QApplication.instance()
    times = []
    for i, pred in enumerate(preds):
        app.processEvents()
        t0 = time.perf_counter()
        state.set_prediction(pred)
        app.processEvents()  # the layout request of the re-sorted rows, the posted updates
        panel.repaint()
        dt = (time.perf_counter() - t0) * 1000
        if i >= 5:  # warm-up: first paints, font caches
            times.append(dt)
    panel.close()
    panel.deleteLater()
    a = np.asarray(times)
    return {"task": task, "labels": len(labels), "show_all": show_all, "repeats": repeats,
            "median_ms": round(float(np.median(a)), 2), "p90_ms": round(float(np.percentile(a, 90)), 2),
            "max_ms": round(float(a.max()), 2)}


def main(argv=None) -> None:
    """Run the benchmark and print JSON (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--labels", type=int, default=28)
    ap.add_argument("--repeats", type=int, default=200)
    args = ap.parse_args(argv)
    if not os.environ.get("DISPLAY") and not os.environ.get("QT_QPA_PLATFORM"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])  # noqa: F841 - kept alive for the widgets
    labels = tuple(f"label_{i:02d}" for i in range(args.labels))
    rows = [measure(labels, task, show_all, args.repeats)
            for task in ("single_label", "multi_label") for show_all in (False, True)]
    print(json.dumps({"benchmark": "prediction_panel", "platform": platform.platform(),
                      "qpa": os.environ.get("QT_QPA_PLATFORM", "xcb"), "target_ms": 30, "results": rows}, indent=1))


if __name__ == "__main__":
    main()
