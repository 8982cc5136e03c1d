"""Screenshots of the Compare dock running a slow DecompX, and after Cancel (issue 34; docs/flow.md).

Run under a virtual X server::

    xvfb-run -a -s "-screen 0 1600x1000x24" python build_scripts/screenshot_cancel.py [--sample neg_18_1.txt]

With the bundled model it pins "The acting was good.", analyses the long sample review (two windows), chooses DecompX
in the Compare dock (computed whatever its estimate), and saves the dock while it runs
(``docs/screenshots/compare_running.png``: progress and Cancel) and after Cancel is clicked
(``docs/screenshots/compare_cancelled.png``: no result, the message and Compare again).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "build_scripts"))


def main() -> None:
    """Take the two screenshots (exits with a message when a step does not happen in time)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", default="neg_18_1.txt", help="a long review in resources/samples")
    parser.add_argument("--out", default=str(ROOT / "docs" / "screenshots"))
    args = parser.parse_args()
    from PySide6.QtWidgets import QApplication, QDockWidget

    app = QApplication(sys.argv)
    from screenshot_flow import analyse, settle, start
    from screenshots import wait_until

    win = start(app, None)
    win.persist_settings = False
    analyse(app, win, "The acting was good.")
    win.state.pin_current()
    text = (ROOT / "resources" / "samples" / args.sample).read_text(encoding="utf-8")
    win.analyze_text(text)
    if not wait_until(app, lambda: win.state.prediction is not None and win.state.prediction.document.text != "The "
                      "acting was good.", 120):
        raise SystemExit("no prediction")
    win.compare.set_method("decompx")
    view = win.compare_view
    view.raise_dock()
    if not wait_until(app, lambda: not view.cancel_button.isHidden() and "DecompX" in view.status_label.text(), 120):
        raise SystemExit("the comparison did not start")
    dock = view
    while not isinstance(dock, QDockWidget):
        dock = dock.parentWidget()
    settle(app, 0.5)
    out = Path(args.out)
    dock.grab().save(str(out / "compare_running.png"))
    view.cancel_button.click()
    settle(app, 0.5)
    dock.grab().save(str(out / "compare_cancelled.png"))
    print(view.status_label.text())
    win.close()


if __name__ == "__main__":
    main()
