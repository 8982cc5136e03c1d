"""Save docs/screenshots/patching.png: the Inside workspace at 1400 x 860 with the Patching dock in front, a real
review pinned (the clean text) and an edited version of it current (the corrupted text).

Run under a virtual X server::

    xvfb-run -a -s '-screen 0 1600x1000x24' python build_scripts/patching_shot.py [--model DIR] [--site resid]
        [--out docs/screenshots/patching.png]

The review is the bundled sample ``pos_6_7.txt``; the edit negates its last sentence ("pretty good and worth checking
out" -> "not good and not worth checking out"), as What if's negation generator would. Uses
:func:`build_scripts.screenshots.wait_until`. Prints the result's site, shape, scores and time as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

EDIT = ("pretty good and worth", "not good and not worth")


def main(argv: list[str] | None = None) -> int:
    """Take the screenshot; returns 0 on success, 1 when the model or the result did not come."""
    from build_scripts.screenshots import wait_until
    from model.core.paths import default_model_dir, samples_dir

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default=str(default_model_dir()))
    p.add_argument("--sample", default="pos_6_7.txt")
    p.add_argument("--site", default="resid", choices=("resid", "head", "ffn"))
    p.add_argument("--out", default=str(ROOT / "docs" / "screenshots" / "patching.png"))
    args = p.parse_args(argv)
    os.environ.setdefault("ATTENTION_EXPLORER_SETTINGS", str(Path(tempfile.mkdtemp()) / "settings.ini"))
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    from desktop_app.app import attach_panels
    from desktop_app.window.main_window import MainWindow

    win = MainWindow(args.model)
    attach_panels(win)
    win.resize(1400, 860)
    win.show()
    if not wait_until(app, lambda: win.predictor is not None):
        print("model did not load", file=sys.stderr)
        return 1
    text = (samples_dir() / args.sample).read_text(encoding="utf-8")
    win.open_review(text)
    wait_until(app, lambda: win.current_prediction is not None)
    clean = win.current_prediction.document.text
    win.state.pin_current()
    edited = clean.replace(*EDIT)
    win.analyze_text(edited)
    wait_until(app, lambda: win.current_prediction is not None and win.current_prediction.document.text == edited)
    if win.workspaces.hint is not None:
        win.workspaces.hint.close()
    win.inside_panels["patching"].apply_settings({"site": args.site})
    win.raise_view("Patching")
    if not wait_until(app, lambda: win.state.inside.patching is not None, 600):
        print(f"no patching result: {win.state.inside.patching_note}", file=sys.stderr)
        return 1
    result = win.state.inside.patching
    view = win.inside_panels["patching"].view
    view.flush()
    row, col = np.unravel_index(np.nanargmax(np.abs(view.matrix)), view.matrix.shape)  # the strongest cell
    view._on_hover(view.cell_scene_pos(int(row), int(col)))  # its hover line, as the mouse over it gives
    for _ in range(30):
        app.processEvents()
        time.sleep(0.01)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    win.grab().save(args.out)
    print(json.dumps({"out": args.out, "site": result.site, "shape": list(result.effects.shape),
                      "clean": result.clean_score, "corrupted": result.corrupted_score, "passes": result.passes,
                      "elapsed_s": round(result.elapsed_s, 3), "unaligned": list(result.unaligned)}))
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
