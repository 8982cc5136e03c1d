"""The Block view's costs (issue 53, section 4): ``Predictor.block_trace`` against ``predict`` on the CPU, and the
time the Block view takes to draw the trace on the GUI thread. Prints a table and JSON lines.

Usage::

    QT_QPA_PLATFORM=offscreen python -m benchmarks.block_trace [--data ../shared/data/imdb/test.jsonl.gz]
                                                               [--repeats 20] [--threads 2] [--no-minilm]

For each model, the text of :mod:`benchmarks.components` (the longest of the first 300 test reviews cut at a word start
to 256 tokens for the bundled model, 128 for all-MiniLM-L6-v2 with a random 2-class head): the best and the median of
(a) ``block_trace(text, last layer, 0)`` (the layer's attention internals and one forward pass with capture, the
steps and their check), (b) ``predict(text)`` for reference, taking turns in every round; then (c) one whole draw of
the :class:`desktop_app.views.inside.block.BlockView` at the Block dock's size in the default window (672 x 760):
the layout, the diagram and the bars of the clicked step (W1, the longest vector), rendered into an image.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from benchmarks.components import both_models, interleaved, print_rows
from model.predictor.predictor import Predictor


def draw_ms(trace, repeats: int) -> list[float]:
    """Milliseconds of rendering a BlockView of ``trace`` (W1 clicked) into an image, ``repeats`` times."""
    from PySide6.QtGui import QImage
    from PySide6.QtWidgets import QApplication

    from desktop_app.state import ExplorerState
    from desktop_app.views.inside.block import BlockView

    QApplication.instance() or QApplication([])
    state = ExplorerState()
    view = BlockView(state)
    view.resize(672, 760)
    state.inside.set("block_trace", trace)
    view.diagram.selected = "w1"
    out = []
    for _ in range(repeats + 1):
        image = QImage(view.size(), QImage.Format_ARGB32)
        t = time.perf_counter()
        view.refresh()
        view.render(image)
        out.append(1000 * (time.perf_counter() - t))
    return out[1:]


def bench(name: str, predictor: Predictor, text: str, tokens: int, repeats: int) -> list[dict]:
    """Rows for block_trace, predict and the view's draw on ``text`` cut to ``tokens`` tokens."""
    from tests.fixtures.tiny_models import cut_at_word_start

    P, S = predictor.encoder.specials
    text = cut_at_word_start(predictor, text, tokens - P - S)[0]
    n = len(predictor.encode(text).ids)
    last = predictor.config.n_layers - 1
    runs = (("block_trace (last layer)", lambda: predictor.block_trace(text, last, 0)),
            ("predict", lambda: predictor.predict(text)))
    times = interleaved([fn for _, fn in runs], repeats) + [draw_ms(predictor.block_trace(text, last, 0), repeats)]
    whats = [w for w, _ in runs] + ["BlockView draw (GUI thread)"]
    return [{"model": name, "what": w, "tokens": n, "median_ms": float(np.median(t)), "min_ms": float(np.min(t))}
            for w, t in zip(whats, times)]


def main(argv: list[str] | None = None) -> int:
    print_rows(both_models(bench, __doc__, argv)[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
