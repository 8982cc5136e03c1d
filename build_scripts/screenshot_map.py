"""Screenshot of the corpus map (issue 42), taken from the real app (``desktop_app.app.main``).

Run under a virtual X server at the default window size::

    xvfb-run -a -s "-screen 0 1600x1000x24" python build_scripts/screenshot_map.py [--n 1000] [--umap]

The app starts as a user starts it (fresh settings, the default layout; 1400 x 860), then this script does what a
user would: drops a folder of ``--n`` IMDB test reviews (aclImdb ``pos/``/``neg/``: gold labels) on the window,
waits for the scores, raises the Corpus dock's Map tab, colours it right/wrong, maps it (PCA, or UMAP with
``--umap``), draws a lasso around the points nearest the map's lower left corner (the table and the metrics follow),
clicks the first selected point (its review opens in the explorer; the map stars it and lists its 10 nearest
neighbours) and saves ``docs/screenshots/corpus_map.png``.

``--model DIR --data FILE.jsonl --colour label_gold --label joy --out ...`` maps another model's corpus instead (e.g. a
multi-label GoEmotions model on its test split, coloured by one label): the file is dropped as it is (its gold labels
read by the batch panel) and the map coloured by ``--colour`` (a Map colouring, ``model.corpus.map_colours.TITLES``)
and ``--label``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "build_scripts"))


def main(argv: list[str] | None = None) -> int:
    """Start the app with the automation below; returns its exit code."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1000, help="IMDB test reviews to score")
    p.add_argument("--imdb", default=str(ROOT.parent / "shared" / "data" / "imdb" / "test.jsonl.gz"))
    p.add_argument("--out", default=str(ROOT / "docs" / "screenshots" / "corpus_map.png"))
    p.add_argument("--umap", action="store_true", help="map with UMAP instead of PCA")
    p.add_argument("--model", help="the model folder to open (default: the bundled model)")
    p.add_argument("--data", help="a labelled .jsonl file to drop instead of --n IMDB test reviews")
    p.add_argument("--colour", default="correct", help="the Map colouring (default: right / wrong)")
    p.add_argument("--label", default="", help="the class or label of a per-label colouring")
    p.add_argument("--dock-only", action="store_true", help="save the Corpus dock alone, floated at 1100 x 720")
    args = p.parse_args(argv)
    scratch = Path(tempfile.mkdtemp(prefix="ae-map-shot-"))
    os.environ["ATTENTION_EXPLORER_SETTINGS"] = str(scratch / "settings.ini")

    from screenshots import write_review_folder

    import desktop_app.app as app_module

    folder = Path(args.data) if args.data else write_review_folder(Path(args.imdb), args.n, scratch / "aclImdb-test")
    real_attach = app_module.attach_panels

    def attach_and_drive(window):
        panels = real_attach(window)
        from PySide6.QtCore import QTimer

        QTimer.singleShot(500, lambda: drive(window, panels, folder, Path(args.out), args.umap, args.colour, args.label,
                                                      args.dock_only))
        return panels

    app_module.attach_panels = attach_and_drive
    return app_module.main(["--model", args.model] if args.model else [])


def drive(window, panels, folder: Path, out: Path, umap: bool, colour: str = "correct", label: str = "",
          dock_only: bool = False) -> None:
    """The user's steps (module docstring), then quit."""
    from PySide6.QtWidgets import QApplication
    from screenshot_corpus import settle
    from screenshots import wait_until

    app = QApplication.instance()
    batch, corpus = panels["batch"], panels["corpus"]
    wait_until(app, lambda: window.predictor is not None, 120)
    finished = []
    batch.scoring_finished.connect(finished.append)
    window.paths_dropped.emit([str(folder)])
    wait_until(app, lambda: bool(finished), 1800)
    m = corpus.map
    corpus.tabs.setCurrentIndex(next(i for i in range(corpus.tabs.count()) if corpus.tabs.tabText(i) == "Map"))
    m.colour_box.setCurrentIndex(max(0, m.colour_box.findData(colour)))
    if label:
        m.label_box.setCurrentIndex(max(0, m.label_box.findText(label)))
    projected = []
    m.projected.connect(projected.append)
    m.project("umap" if umap else "pca")
    wait_until(app, lambda: bool(projected), 1800)
    xy = m.plot.xy
    corner = xy.min(axis=0)
    near = np.argsort(np.linalg.norm(xy - corner, axis=1))[: max(10, len(xy) // 8)]
    lo, hi = xy[near].min(axis=0), xy[near].max(axis=0)
    m.plot.set_mode("lasso")
    m.plot.select_shape(np.array([[lo[0], lo[1]], [hi[0], lo[1]], [hi[0], hi[1]], [lo[0], hi[1]]]))
    analysed = []
    window.state.events.prediction.connect(analysed.append)
    first = next(i for i, r in enumerate(m.rows) if id(r) in batch.proxy.row_filter.points)
    m.plot.point_clicked.emit(first)
    wait_until(app, lambda: bool(analysed), 120)
    wait_until(app, lambda: m.neighbours.count() > 0, 300)
    from PySide6.QtWidgets import QDockWidget

    dock = next((d for d in window.findChildren(QDockWidget) if d.widget() is corpus), None)
    if dock_only and dock is not None:  # the Corpus dock floated and enlarged, as a user undocks it to study the map
        dock.setFloating(True)
        dock.resize(1100, 720)
    settle(app, 3.0)
    out.parent.mkdir(parents=True, exist_ok=True)
    (dock if dock_only and dock is not None else window).grab().save(str(out))
    print(f"rows {len(batch.rows())}, points {len(m.rows)}, selected {batch.proxy.rowCount()}, "
          f"neighbours {m.neighbours.count()}; {m.status.text()}", flush=True)
    window.close()
    app.quit()


if __name__ == "__main__":
    raise SystemExit(main())
