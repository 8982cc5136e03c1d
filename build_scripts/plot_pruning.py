"""Plot accuracy as attention heads are pruned, least important first, from head-importance JSON files.

    python -m model.evaluation.head_importance --data ../shared/data/imdb/test.jsonl.gz --n 500 --out heads.json
    QT_QPA_PLATFORM=offscreen python build_scripts/plot_pruning.py heads.json [more.json ...] --out pruning.png

Each JSON (written by :mod:`model.evaluation.head_importance`) gives one curve: x the percentage of heads removed
(Michel et al. 2019, "Are Sixteen Heads Really Better than One?", section 4.2, figure 3), y the accuracy on the same
reviews; the legend names the model and its L x H heads. The PNG is drawn with pyqtgraph's ImageExporter.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd")


def read_curve(path: Path) -> tuple[str, list[float], list[float]]:
    """(legend, percents, accuracies) of one head-importance JSON. Raises ValueError for a file without a curve."""
    data = json.loads(path.read_text(encoding="utf-8"))
    rows = data.get("pruning") or []
    if not rows:
        raise ValueError(f"{path} has no pruning curve")
    model = Path(str(data.get("model") or path.stem))
    name = "bundled model" if model.parts[-2:] == ("resources", "model") else model.name or path.stem
    legend = f"{name} ({data.get('n_layers')} \u00d7 {data.get('n_heads')} heads, {data.get('n')} reviews)"
    return legend, [float(r["percent"]) for r in rows], [100.0 * float(r["accuracy"]) for r in rows]


def plot(paths: list[Path], out: Path, width: int = 760) -> None:
    """Draw the curves of ``paths`` into the PNG ``out`` (``width`` pixels wide)."""
    import pyqtgraph as pg
    import pyqtgraph.exporters
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    pg.setConfigOptions(antialias=True, background="w", foreground="k")
    w = pg.PlotWidget()
    w.resize(width, 400)
    w.show()  # laid out at its real size: the exporter then draws axes and data to the same scale
    app.processEvents()
    p = w.getPlotItem()
    p.setTitle("Accuracy as heads are switched off, least important first")
    p.setLabel("bottom", "heads switched off (%)")
    p.setLabel("left", "accuracy (%)")
    p.showGrid(x=True, y=True, alpha=0.3)
    p.addLegend(offset=(10, -10))
    for colour, path in zip(COLOURS, paths):
        legend, x, y = read_curve(path)
        p.plot(x, y, pen=pg.mkPen(colour, width=2), symbol="o", symbolSize=6, symbolBrush=colour, name=legend)
    p.addLine(y=50, pen=pg.mkPen("#888", style=pg.QtCore.Qt.DashLine))
    p.setYRange(40, 100, padding=0)
    p.setXRange(0, 90, padding=0.03)
    app.processEvents()
    pg.exporters.ImageExporter(p).export(str(out))


def main(argv: list[str] | None = None) -> int:
    """Command line (see the module docstring); exit code 2 for a missing or damaged JSON."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json", nargs="+", type=Path, help="head-importance JSON files")
    ap.add_argument("--out", type=Path, default=Path("pruning.png"), help="PNG to write")
    args = ap.parse_args(argv)
    try:
        for path in args.json:
            read_curve(path)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    plot(args.json, args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
