"""Screenshot of one text read by two models (issue 44): Model > Compare A and B on this text, the Compare view with
model B's word importances beside model A's. Run under a virtual X server::

    xvfb-run -a python build_scripts/screenshot_ab_text.py --compare OLD_MODEL_DIR

Starts the app as a user does (fresh settings, the bundled model as model A), opens ``--compare`` as model B (e.g. the
model the bundled one replaced, extracted from git history as docs/two_models.md says), analyses a short review,
pins B's reading of it, chooses gradient x input in Compare and saves ``docs/screenshots/two_models_text.png``.
With ``--attention`` it opens Model > Model B's attention instead, picks B's layer 4, head 6 and the query token
"wonderful", and saves ``docs/screenshots/model_b_attention.png``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "build_scripts"))

REVIEW = ("The cast is wonderful and the first hour is gripping, but the plot falls apart and the ending is a "
          "lazy, predictable mess.")


def main(argv: list[str] | None = None) -> int:
    """Save the screenshot; returns 0."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--compare", required=True, help="model B's folder")
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    p.add_argument("--attention", action="store_true", help="the Model B attention dock instead of Compare")
    args = p.parse_args(argv)
    os.environ["ATTENTION_EXPLORER_SETTINGS"] = str(Path(tempfile.mkdtemp(prefix="ae-ab-shot-")) / "settings.ini")
    from PySide6.QtWidgets import QApplication
    from screenshot_flow import settle, start
    from screenshots import wait_until

    app = QApplication.instance() or QApplication(sys.argv)
    win = start(app, None)
    win.resize(1400, 860)
    win.analyze_text(REVIEW)
    if not wait_until(app, lambda: win.state.prediction is not None, 60):
        raise SystemExit("no prediction")
    second = win.model_menu.second
    second.load(args.compare)
    if not wait_until(app, lambda: second.predictor is not None, 60):
        raise SystemExit("model B did not load")
    if args.attention:
        return _attention_shot(app, win, args.out)
    from desktop_app.views.compare_view import CompareView

    view = win.findChild(CompareView)
    view.method_combo.setCurrentIndex(view.method_combo.findData("grad_x_input"))  # as the user picks it
    view.method_chosen.emit("grad_x_input")
    second.pin_text()
    if not wait_until(app, lambda: win.compare.latest is not None and win.compare.latest.names[0] == "model B", 120):
        raise SystemExit("no comparison")
    settle(app, 1.0)
    args.out.mkdir(parents=True, exist_ok=True)
    win.grab().save(str(args.out / "two_models_text.png"))
    r = win.compare.latest
    print(f"saved {args.out / 'two_models_text.png'}: A {r.current.label}, B {r.pinned.label}")
    win.close()
    return 0


def _attention_shot(app, win, out: Path) -> int:
    """Model > Model B's attention: B's layer 4, head 6, the query "wonderful"; saves model_b_attention.png."""
    from screenshot_flow import settle
    from screenshots import wait_until

    att = win.model_b_attention
    att.show()
    if not wait_until(app, lambda: att.state.prediction is not None, 120):
        raise SystemExit("model B's attention did not come")
    pred = att.state.prediction
    att.state.set_layer_head(min(3, att.state.n_layers - 1), min(5, att.state.n_heads - 1))
    att.state.set_selection([i for i, t in enumerate(pred.tokens) if t.lower().lstrip("#") == "wonderful"][:1])
    settle(app, 1.0)
    out.mkdir(parents=True, exist_ok=True)
    win.grab().save(str(out / "model_b_attention.png"))
    print(f"saved {out / 'model_b_attention.png'}: {att.caption.text()}")
    win.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
