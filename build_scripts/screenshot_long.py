"""Screenshot of a long review read whole (README, docs/long_documents.md), from the real app.

Run under a virtual X server::

    xvfb-run -a -s "-screen 0 1600x1000x24" python build_scripts/screenshot_long.py [--data test.jsonl.gz] [--out DIR]

Picks a long IMDB test review (800-2,000 words) whose windows disagree most (the largest spread of
P(positive) along the document, :mod:`model.text.document_windows`), analyses it with the bundled model as a user would (fresh
settings, the default layout), shows its second window (as a click on the second point of the plot does) and saves
``long_review.png``: the whole review in the token view with the window marks, the window selector beside layer and
head, and the class probability along the document in the prediction panel.
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

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "imdb" / "test.jsonl.gz"


def pick_review(data: Path, limit: int = 40) -> str:
    """Among the first ``limit`` reviews of 800-2,000 words (three windows or more), the one whose windows'
    P(positive) spread most."""
    from model import Predictor
    from model.files.textio import read_labelled

    predictor = Predictor.from_pretrained(device="cpu")
    texts = [t for t in read_labelled(data)[0] if 800 < len(t.split()) < 2000][:limit]
    best, spread = texts[0], -1.0
    for t in texts:
        pred = predictor.predict(t)
        p = pred.document.window_probabilities[:, 1]
        if pred.num_windows >= 3 and p.max() - p.min() > spread:
            best, spread = t, float(p.max() - p.min())
    return best


def main() -> int:
    """Save the screenshot; returns 0."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=DEFAULT_DATA)
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    args = p.parse_args()
    tmp = tempfile.mkdtemp(prefix="ae-shot-long-")
    os.environ["ATTENTION_EXPLORER_SETTINGS"] = str(Path(tmp) / "settings.ini")
    from PySide6.QtWidgets import QApplication
    from screenshot_flow import settle, start
    from screenshots import wait_until

    from desktop_app.panels.editor import display_text

    app = QApplication.instance() or QApplication(sys.argv)
    review = display_text(pick_review(args.data))
    win = start(app, None)
    win.resize(1400, 860)
    win.analyze_text(review)
    if not wait_until(app, lambda: win.state.prediction is not None
                      and win.state.prediction.document.text == review, 120):
        raise SystemExit("no prediction")
    win.state.windows.request(1)
    if not wait_until(app, lambda: win.state.prediction.window == 1, 60):
        raise SystemExit("the second window was not shown")
    settle(app, 1.0)
    args.out.mkdir(parents=True, exist_ok=True)
    win.grab().save(str(args.out / "long_review.png"))
    doc = win.state.prediction.document
    print(f"saved {args.out / 'long_review.png'}: {doc.num_tokens} tokens, {doc.num_windows} windows, "
          f"P(positive) by window {[round(float(x), 2) for x in doc.window_probabilities[:, 1]]}")
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
