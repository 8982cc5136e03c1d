"""Screenshots of the "What if" dock and the Corpus dock's "What if" tab (issue 43), taken from the real app.

Run under a virtual X server at the default window size::

    xvfb-run -a -s "-screen 0 1600x1000x24" python build_scripts/screenshot_whatif.py [--corpus 40]

The app starts as a user starts it (fresh settings, the default layout, the bundled model); the script analyses a
short review, opens View > What if, runs word_replacer, negation, ablation_flip and hotflip, selects the first edit
that flipped the label and saves ``docs/screenshots/whatif.png``; it clicks that edit (it becomes the current text,
the original pinned, Compare raised) and saves ``whatif_compare.png``. With ``--corpus N`` it drops N IMDB test
reviews (aclImdb layout) on the window, runs negation, ablation_flip and hotflip on them in the Corpus dock's What if
tab and saves ``whatif_corpus.png``.
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

REVIEW = ("I expected a lot from this film. The cast is great and the music is wonderful, but the story is thin and "
          "the ending didn't work for me. Still, it was a fun evening and I would watch it again.")


def main(argv: list[str] | None = None) -> int:
    """Start the app with the automation below; returns its exit code."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", type=int, default=0, help="also the corpus tab on this many IMDB test reviews")
    p.add_argument("--imdb", default=str(ROOT.parent / "shared" / "data" / "imdb" / "test.jsonl.gz"))
    p.add_argument("--out", default=str(ROOT / "docs" / "screenshots"))
    args = p.parse_args(argv)
    scratch = Path(tempfile.mkdtemp(prefix="ae-whatif-shot-"))
    os.environ["ATTENTION_EXPLORER_SETTINGS"] = str(scratch / "settings.ini")  # the default layout

    import desktop_app.app as app_module

    real_attach = app_module.attach_panels

    def attach_and_drive(window):
        panels = real_attach(window)
        from PySide6.QtCore import QTimer

        QTimer.singleShot(500, lambda: drive(window, panels, args, scratch))
        return panels

    app_module.attach_panels = attach_and_drive
    return app_module.main([])


def drive(window, panels, args, scratch: Path) -> None:
    """The user's steps (module docstring), then quit."""
    from PySide6.QtWidgets import QApplication
    from screenshot_corpus import settle
    from screenshots import wait_until, write_review_folder

    app = QApplication.instance()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    panel = panels["whatif"]
    wait_until(app, lambda: window.predictor is not None, 120)
    window.analyze_text(REVIEW)
    wait_until(app, lambda: window.state.prediction is not None and window.state.prediction.text == REVIEW, 60)
    window.docks.raise_view("What if")
    panel.run_generators()
    wait_until(app, lambda: not panel.running, 300)
    rows = [r for r in range(panel.table.rowCount()) if panel.table.item(r, 6).text() == "yes"] or [0]
    panel.table.selectRow(rows[0])
    settle(app, 2.0)
    window.grab().save(str(out / "whatif.png"))
    print(f"{len(panel.edits)} edits, {sum(bool(e.flipped) for e in panel.edits)} flipped", flush=True)
    panel.table.cellClicked.emit(rows[0], 1)
    wait_until(app, lambda: window.state.prediction is not None and window.state.prediction.text != REVIEW, 60)
    settle(app, 8.0)  # the comparison is explained on its worker
    window.grab().save(str(out / "whatif_compare.png"))
    if args.corpus:
        batch, corpus = panels["batch"], panels["corpus"]
        folder = write_review_folder(Path(args.imdb), args.corpus, scratch / "aclImdb-test")
        finished = []
        batch.scoring_finished.connect(finished.append)
        window.paths_dropped.emit([str(folder)])
        wait_until(app, lambda: bool(finished), 600)
        tab = corpus.whatif
        corpus.tabs.setCurrentIndex(corpus.tabs.count() - 1)
        for name, box in tab.picker.boxes.items():
            box.setChecked(name in ("negation", "ablation_flip", "hotflip"))
        tab.start()
        wait_until(app, lambda: not tab.running, 1800)
        settle(app, 2.0)
        window.grab().save(str(out / "whatif_corpus.png"))
        print(f"corpus: {len(tab.edits)} edits", flush=True)
    window.close()
    app.quit()


if __name__ == "__main__":
    raise SystemExit(main())
