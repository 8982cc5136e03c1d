"""Screenshot of two models compared (issue 44), taken from the real app (``desktop_app.app.main``).

Run under a virtual X server at the default window size::

    xvfb-run -a -s "-screen 0 1600x1000x24" python build_scripts/screenshot_two_models.py --compare OLD_MODEL_DIR [--n 400]

The app starts as a user starts it (fresh settings, the default layout, the bundled model as model A), then this
script does what a user would: Model > Compare with a second model... (``--compare``, e.g. the model the bundled one
replaced, extracted from git history as docs/two_models.md says), drops a folder of ``--n`` IMDB test reviews
(aclImdb ``pos/`` and ``neg/``: gold labels), waits for both models' scores, sorts disagreements first (Analysis >
Batch: disagreements first), opens the first disagreement in the explorer (the prediction panel's Model B section
says they disagree), shows the Corpus dock's "A vs B" tab and saves ``docs/screenshots/two_models.png``.
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


def main(argv: list[str] | None = None) -> int:
    """Start the app with the automation below; returns its exit code."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--compare", required=True, help="model B's folder")
    p.add_argument("--n", type=int, default=400, help="IMDB test reviews to score")
    p.add_argument("--imdb", default=str(ROOT.parent / "shared" / "data" / "imdb" / "test.jsonl.gz"))
    p.add_argument("--out", default=str(ROOT / "docs" / "screenshots"))
    p.add_argument("--reviews", help="score this file or folder instead of --n IMDB test reviews")
    p.add_argument("--precision", default="fp32", help="Model > Precision for both models (default fp32, as the "
                   "command line's numbers in docs/two_models.md)")
    args = p.parse_args(argv)
    scratch = Path(tempfile.mkdtemp(prefix="ae-two-models-shot-"))
    os.environ["ATTENTION_EXPLORER_SETTINGS"] = str(scratch / "settings.ini")  # the default layout
    (scratch / "settings.ini").write_text(f"[inference]\nprecision={args.precision}\n", encoding="utf-8")

    from screenshots import write_review_folder

    folder = Path(args.reviews) if args.reviews else write_review_folder(Path(args.imdb), args.n,
                                                                          scratch / "aclImdb-test")
    return drive_app(lambda window, panels: drive(window, panels, folder, args.compare, Path(args.out)))


def drive_app(drive) -> int:
    """Start the real app (``desktop_app.app.main``, no arguments) and call ``drive(window, panels)`` half a second
    after its panels are attached; returns the app's exit code."""
    import desktop_app.app as app_module

    attach = app_module.attach_panels

    def attach_then_drive(window):
        panels = attach(window)
        from PySide6.QtCore import QTimer

        QTimer.singleShot(500, lambda: drive(window, panels))
        return panels

    app_module.attach_panels = attach_then_drive
    return app_module.main([])


def drive(window, panels, folder: Path, compare: str, out: Path) -> None:
    """The user's steps (module docstring), then quit."""
    from PySide6.QtWidgets import QApplication
    from screenshot_corpus import settle
    from screenshots import wait_until

    app = QApplication.instance()
    batch, corpus, second = panels["batch"], panels["corpus"], window.model_menu.second
    wait_until(app, lambda: window.predictor is not None, 120)
    second.load(compare)  # Model > Compare with a second model...
    wait_until(app, lambda: second.predictor is not None, 120)
    done = []
    batch.scoring_finished.connect(done.append)
    window.paths_dropped.emit([str(folder)])  # the folder dropped on the window: both models score it
    wait_until(app, lambda: len(done) > 0, 1800)
    wait_until(app, lambda: corpus.comparison.result is not None
               and corpus.comparison.result[2].n_rows == len(batch.rows()), 120)
    next(a for a in window.menus.analysis_menu.actions() if "disagreements first" in a.text()).trigger()
    corpus.tabs.setCurrentIndex(next(i for i in range(corpus.tabs.count()) if corpus.tabs.tabText(i) == "A vs B"))
    analysed = []
    window.state.events.prediction.connect(analysed.append)
    batch.navigation.open_row(0)  # the first disagreement opens in the explorer
    agree = batch.table_model.columnCount() - 1
    batch.ui.view.scrollTo(batch.proxy.index(0, agree))  # B's columns and "Agree?" in sight
    wait_until(app, lambda: bool(analysed), 60)
    wait_until(app, lambda: second.box.verdict.text() != "", 60)
    settle(app, 3.0)
    out.mkdir(parents=True, exist_ok=True)
    window.grab().save(str(out / "two_models.png"))
    m = corpus.comparison.result[2]
    print(f"rows {len(batch.rows())}, agreement {m.agreement}, A {m.a_accuracy}, B {m.b_accuracy}, "
          f"b01 {m.mcnemar.b01}, b10 {m.mcnemar.b10}, p {m.mcnemar.p_value}; box: {second.box.agreement.text()!r}",
          flush=True)
    window.close()
    app.quit()


if __name__ == "__main__":
    raise SystemExit(main())
