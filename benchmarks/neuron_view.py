"""Neuron-view rendering benchmark: ``python -m benchmarks.neuron_view [--tokens 512] [--d-head 64] [--repeats N]``.

Shows synthetic :class:`model.records.internals.AttentionInternals` (4 heads, 512 tokens, d_head 64, consistent:
scores = Q K^T / sqrt(d), outputs = softmax(scores) V) in a 1000 x 800
:class:`~desktop_app.views.neuron_view.NeuronView` and times a new query token: ``set_data`` (q_i, q_i * k_j for
every key, the scaled dot products and softmax bars, scrolling to the most attended key) plus the event-loop turn
that paints it (``processEvents``; the number of paints is reported and equals the repeats). Prints one JSON object
with the median and max in milliseconds. Target: median < 30 ms. It reports; it does not assert. Runs offscreen when
no display is set.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print JSON; returns 0."""
    p = argparse.ArgumentParser(description="Neuron view redraw benchmark")
    p.add_argument("--tokens", type=int, default=512)
    p.add_argument("--d-head", type=int, default=64)
    p.add_argument("--repeats", type=int, default=30)
    args = p.parse_args(argv)
    if not os.environ.get("QT_QPA_PLATFORM") and not os.environ.get("DISPLAY"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    from desktop_app.state import ExplorerState
    from desktop_app.views.neuron_view import NeuronView
    from model.records.internals import AttentionInternals

    internals = AttentionInternals.synthetic(n_heads=4, num_tokens=args.tokens, d_head=args.d_head)
    view = NeuronView(ExplorerState())
    view.resize(1000, 800)
    view.show()
    from PySide6.QtCore import QEvent, QObject

    class PaintCounter(QObject):
        paints = 0

        def eventFilter(self, obj, ev):
            if ev.type() == QEvent.Paint:
                self.paints += 1
            return False

    counter = PaintCounter()
    view.set_data(internals, 0, 0)
    app.processEvents()
    view.glw.viewport().installEventFilter(counter)
    samples = []
    for k in range(args.repeats):
        query = (37 * (k + 1)) % args.tokens
        t0 = time.perf_counter()
        before = counter.paints
        view.set_data(internals, 0, query)
        app.processEvents()
        if counter.paints == before:  # not painted in that turn: paint now (still counted)
            view.glw.viewport().repaint()
        samples.append((time.perf_counter() - t0) * 1000.0)
    print(json.dumps({
        "tokens": args.tokens, "d_head": args.d_head, "repeats": args.repeats, "paints": counter.paints,
        "new_query_ms": {"median": round(statistics.median(samples), 2), "max": round(max(samples), 2)},
        "target_ms": 30,
    }))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
