"""Screenshot of the corpus dock after scoring IMDB test reviews, taken from the real app (``desktop_app.app.main``).

Run under a virtual X server at the default window size::

    xvfb-run -a -s "-screen 0 1600x1000x24" python build_scripts/screenshot_corpus.py [--n 3000] [--words]

The app starts as a user starts it (fresh settings in a temporary folder, so the default layout; 1400 x 860), then
this script does what a user would: drops a folder of ``--n`` IMDB test reviews laid out as aclImdb ``pos/`` and
``neg/`` (gold labels) on the window, waits for the scores and the corpus dock, clicks the confusion matrix's
false positives, sorts them by confidence, presses F8 (the most confident of them opens in the explorer) and saves
``docs/screenshots/corpus.png``. With ``--words`` it then runs "What drives
it", clicks the first word toward negative (the table keeps the reviews that contain it, the explorer underlines
it), opens the first of them and saves ``corpus_words.png``.
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


def main(argv: list[str] | None = None) -> int:
    """Start the app with the automation below; returns its exit code."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=3000, help="IMDB test reviews to score")
    p.add_argument("--imdb", default=str(ROOT.parent / "shared" / "data" / "imdb" / "test.jsonl.gz"))
    p.add_argument("--out", default=str(ROOT / "docs" / "screenshots"))
    p.add_argument("--words", action="store_true", help="also run the word scores and save corpus_words.png")
    args = p.parse_args(argv)
    scratch = Path(tempfile.mkdtemp(prefix="ae-corpus-shot-"))
    os.environ["ATTENTION_EXPLORER_SETTINGS"] = str(scratch / "settings.ini")  # the default layout

    from screenshots import wait_until, write_review_folder

    import desktop_app.app as app_module

    folder = write_review_folder(Path(args.imdb), args.n, scratch / "aclImdb-test")
    real_attach = app_module.attach_panels

    def attach_and_drive(window):
        panels = real_attach(window)
        from PySide6.QtCore import QTimer

        QTimer.singleShot(500, lambda: drive(window, panels, folder, Path(args.out), args.words))
        return panels

    app_module.attach_panels = attach_and_drive
    return app_module.main([])


def drive(window, panels, folder: Path, out: Path, words: bool) -> None:
    """The user's steps (module docstring), then quit."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication
    from screenshots import wait_until

    from desktop_app.panels.batch.table_model import CONFIDENCE

    app = QApplication.instance()
    batch, corpus = panels["batch"], panels["corpus"]
    wait_until(app, lambda: window.predictor is not None, 120)
    finished = []
    batch.scoring_finished.connect(finished.append)
    window.paths_dropped.emit([str(folder)])  # what a drop of the folder on the window does
    wait_until(app, lambda: bool(finished), 1800)
    wait_until(app, lambda: corpus.metrics is not None and corpus.metrics.n_rows == len(batch.rows()), 60)
    corpus.confusion.flush()
    corpus.confusion.cell_clicked.emit(0, 1)  # a click on gold negative -> predicted positive: the false positives
    batch.ui.view.sortByColumn(CONFIDENCE, Qt.SortOrder.DescendingOrder)  # the most confident first
    window.activateWindow()
    window.raise_()
    settle(app, 0.5)
    analysed = []
    window.state.events.prediction.connect(analysed.append)
    QTest.keyClick(window, Qt.Key.Key_F8)  # the next error opens in the explorer
    wait_until(app, lambda: bool(analysed), 60)
    settle(app, 3.0)
    out.mkdir(parents=True, exist_ok=True)
    window.grab().save(str(out / "corpus.png"))
    shown = window.state.prediction
    view = batch.ui.view
    print(f"size {window.width()} x {window.height()}, rows {len(batch.rows())}, "
          f"visible rows {view.viewport().height() // view.rowHeight(0)}, "
          f"explorer shows row {view.currentIndex().row()}: {shown.text[:60] if shown else None!r}", flush=True)
    if words:
        batch.navigation.set_cell_filter(None)
        corpus.tabs.setCurrentWidget(corpus.words)
        done = []
        corpus.words.finished.connect(done.append)
        corpus.words.start()
        wait_until(app, lambda: bool(done), 3600)
        corpus.words.negative_list.cellClicked.emit(0, 0)
        batch.navigation.open_row(0)
        settle(app, 3.0)
        window.grab().save(str(out / "corpus_words.png"))
    window.close()
    app.quit()


def settle(app, seconds: float) -> None:
    """Let the views render for ``seconds``."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        app.processEvents()
        time.sleep(0.02)


if __name__ == "__main__":
    raise SystemExit(main())
