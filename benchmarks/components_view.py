"""Draw time of the Components view (issue 53, section 1) on the GUI thread: ``ComponentsView.redraw()`` (the grid,
the bars over the tokens and the detail pane, then one turn of the event loop that paints them), best and median of
N, offscreen.

Usage::

    QT_QPA_PLATFORM=offscreen python -m benchmarks.components_view [--repeats 10]

Two records: the bundled model's on the first bundled sample review (2 layers x 4 heads, 16 parts), and a synthetic
one of BERT-base's shape (12 layers x 12 heads, 182 parts) over 512 tokens (the draw depends on the shape only; the
numbers are random). Target of issue 53 (not asserted): the GUI's event loop never stalls more than 100 ms.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time

import numpy as np


def draw_ms(app, view, state, record, prediction, repeats: int) -> list[float]:
    """Milliseconds of ``repeats`` redraws of ``view`` showing ``record`` over ``prediction`` (its L2.ffn selected)."""
    state.set_prediction(prediction)
    state.inside.set("components", record)
    view.part = "L2.ffn"
    out = []
    for _ in range(repeats + 1):  # the first one warms up
        t = time.perf_counter()
        view.redraw()
        app.processEvents()
        out.append(1000 * (time.perf_counter() - t))
    return out[1:]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=10)
    args = ap.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from desktop_app.app import first_sample_text
    from desktop_app.state import ExplorerState
    from desktop_app.views.inside.components import ComponentsView
    from model import Predictor
    from model.explain.components import part_names
    from model.records.components import ComponentAttribution

    app = QApplication.instance() or QApplication([])
    predictor = Predictor.from_pretrained(device="cpu")
    text = first_sample_text()
    pred = predictor.predict(text)
    state = ExplorerState()
    view = ComponentsView(state)
    view.resize(670, 760)
    view.show()
    rows = [("bundled (2 x 4)", predictor.component_attribution(text), pred)]
    names, T = part_names(12, 12, True), 512
    parts = (np.random.default_rng(0).normal(size=(len(names), T)) * 0.01).astype(np.float32)
    tokens = tuple(f"t{i}" for i in range(T))
    rows.append(("BERT-base shape (12 x 12), random", ComponentAttribution(
        tuple(names), parts.sum(-1), float(parts.sum()), parts, 1, "positive", tokens, 12, 12),
        dataclasses.replace(pred, tokens=list(tokens), offsets=np.zeros((T, 2), np.int64), document=None,
                            attention=np.full((12, 12, T, T), 1.0 / T, np.float32), document_index=np.arange(T))))
    for name, record, prediction in rows:
        ms = draw_ms(app, view, state, record, prediction, args.repeats)
        print(f"{name:<36} {len(record.names):>4} parts {len(record.tokens):>4} tokens  best {min(ms):7.1f} ms  "
              f"median {float(np.median(ms)):7.1f} ms")
        print(json.dumps({"record": name, "parts": len(record.names), "tokens": len(record.tokens),
                          "best_ms": min(ms), "median_ms": float(np.median(ms))}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
