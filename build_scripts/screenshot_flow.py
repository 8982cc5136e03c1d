"""Screenshots of what flows, heads switched off and two texts compared (README, docs/flow.md), from the real app.

Run under a virtual X server::

    xvfb-run -a -s "-screen 0 1600x1000x24" python build_scripts/screenshot_flow.py [--hf DIR] [--out DIR]

With the bundled model it analyses the sample review ``resources/samples/pos_1_10.txt`` as a user would (fresh
settings, the default 1400 x 860 layout) and saves:

* ``flow_value_norm.png``: the whole window with "Show: value-weighted" on, the heatmap raised;
* ``heads_off.png``: the whole window after switching off the head that matters most for ``--heads-sample``
  (default ``neg_13_1.txt``, a negative review the model gets wrong; the model view's head grid, the prediction by
  layer with the all-heads curve);
* ``compare.png``: the Compare dock after pinning "The acting was good." and analysing "The acting was not good.".

With ``--hf DIR`` (a Hugging Face classifier folder) it also saves ``flow_alti_hf.png``: the window with
"Show: ALTI contributions" on that model. Each step waits for the worker's result; nothing is drawn from a stale one.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "build_scripts"))


def settle(app, seconds: float = 0.3) -> None:
    """Process events for ``seconds`` (deferred renders, repaints)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        app.processEvents()
        time.sleep(0.01)


def start(app, model_dir: str | None):
    """A fresh main window with its panels, shown at the default size, the model loaded."""
    from screenshots import wait_until

    from desktop_app.app import attach_panels
    from desktop_app.window.main_window import MainWindow

    win = MainWindow(model_dir)
    attach_panels(win)
    win.show()
    if not wait_until(app, lambda: win.predictor is not None, 300):
        raise SystemExit(f"the model in {model_dir or 'resources/model'} did not load")
    return win


def analyse(app, win, text: str) -> None:
    """Put ``text`` in the editor, analyse it and wait for its prediction."""
    from screenshots import wait_until

    win.analyze_text(text)
    if not wait_until(app, lambda: win.state.prediction is not None and win.state.prediction.text == text, 120):
        raise SystemExit("no prediction")


def show(app, win, choice: str) -> None:
    """Switch the Show selector (as the toolbar combo does) and wait for the flow."""
    from screenshots import wait_until

    win.menus.show_combo.setCurrentIndex(win.menus.show_combo.findData(choice))
    win.menus.show_combo.activated.emit(win.menus.show_combo.currentIndex())
    if choice != "attention" and not wait_until(app, lambda: win.state.flow is not None, 300):
        raise SystemExit(f"no {choice} flow: {win.state.flow_note}")
    settle(app)


def bundled_shots(app, out: Path, sample: str, heads_sample: str) -> None:
    """flow_value_norm.png, heads_off.png and compare.png with the bundled model."""
    import numpy as np
    from screenshots import wait_until

    from model.core.paths import samples_dir

    win = start(app, None)
    text = (samples_dir() / sample).read_text(encoding="utf-8")
    analyse(app, win, text)
    win.state.set_layer_head(1, -1)
    show(app, win, "value_norm")
    win.heatmap_dock.raise_()
    settle(app, 1.0)
    win.grab().save(str(out / "flow_value_norm.png"))

    show(app, win, "attention")
    text = (samples_dir() / heads_sample).read_text(encoding="utf-8")
    analyse(app, win, text)
    win.model_dock.raise_()
    base = win.state.prediction.probabilities.copy()
    best, best_change = (0, 0), -1.0
    L, H = win.state.n_layers, win.state.n_heads
    for layer, h in np.ndindex(L, H):  # the head whose removal moves this review most
        mask = np.ones((L, H), np.float32)
        mask[layer, h] = 0
        change = float(np.abs(win.predictor.predict(text, head_mask=mask).probabilities - base).max())
        if change > best_change:
            best, best_change = (layer, h), change
    win.state.toggle_head(*best)
    wait_until(app, lambda: win.state.layer_probabilities is not None
               and win.state.layer_probabilities.reference is not None, 60)
    settle(app, 1.0)
    win.grab().save(str(out / "heads_off.png"))
    win.state.reset_heads()
    settle(app, 0.5)

    analyse(app, win, "The acting was good.")
    win.state.pin_current()
    analyse(app, win, "The acting was not good.")
    view = win.compare_view
    wait_until(app, lambda: getattr(view, "result", None) is not None
               and view.result.current.text == "The acting was not good.", 120)
    win.compare_dock.raise_()
    settle(app, 1.0)
    win.grab().save(str(out / "compare.png"))
    win.close()


def hf_shot(app, out: Path, folder: str, sample: str) -> None:
    """flow_alti_hf.png: ALTI on a Hugging Face classifier."""
    from model.core.paths import samples_dir

    win = start(app, folder)
    analyse(app, win, (samples_dir() / sample).read_text(encoding="utf-8"))
    win.state.set_layer_head(win.state.n_layers - 1, -1)
    show(app, win, "alti")
    win.heatmap_dock.raise_()
    settle(app, 1.0)
    win.grab().save(str(out / "flow_alti_hf.png"))
    win.close()


def main(argv: list[str] | None = None) -> int:
    """Take the screenshots (module docstring); returns 0."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hf", default=None, help="a Hugging Face classifier folder for flow_alti_hf.png")
    p.add_argument("--sample", default="pos_1_10.txt", help="sample review in resources/samples")
    p.add_argument("--heads-sample", default="neg_13_1.txt", help="sample review for heads_off.png")
    p.add_argument("--out", default=str(ROOT / "docs" / "screenshots"))
    p.add_argument("--only-hf", action="store_true", help="only the Hugging Face screenshot")
    args = p.parse_args(argv)
    os.environ["ATTENTION_EXPLORER_SETTINGS"] = str(Path(tempfile.mkdtemp(prefix="ae-flow-shot-")) / "s.ini")
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if not args.only_hf:
        bundled_shots(app, out, args.sample, args.heads_sample)
    if args.hf:
        hf_shot(app, out, args.hf, args.sample)
    print(f"screenshots in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
