"""The report's corpus map (issue 42): the projected rows as an inline SVG scatter under the heading "Corpus map",
coloured right/wrong where the rows have gold labels, else by predicted class (regression: by value), with a legend.
At most :data:`MAX_POINTS` points are drawn (evenly spaced through the rows; the note says so)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from model.records.batch import ResultRow
from model.records.vectors import MapProjection
from model.tasks.types import SINGLE_LABEL

from model.corpus.map_colours import Categories, colouring, modes_for, ramp_colours
from model.report.charts import esc, points_svg

MAX_POINTS = 10_000


def map_svg(rows: Sequence[ResultRow], coords: np.ndarray, title: str) -> tuple[str, str]:
    """``(svg, what the colours show)`` of the scored ``rows`` at float [N, 2] ``coords`` (same order)."""
    n = len(rows)
    keep = np.linspace(0, n - 1, MAX_POINTS).astype(int) if n > MAX_POINTS else np.arange(n)
    rows, xy = [rows[i] for i in keep], np.asarray(coords, np.float64)[keep]
    labels = next((r.labels for r in rows if r.labels), ())
    task = rows[0].task if rows else SINGLE_LABEL
    mode = "correct" if any(r.correct is not None for r in rows) else modes_for(task)[0]
    c = colouring(rows, mode, labels)
    if isinstance(c, Categories):
        fills = [c.colours[k] for k in c.codes]
        legend = list(zip(c.names, c.colours, strict=True))
    else:
        fills = ramp_colours(c.values)
        legend = [(f"{c.name}: low", ramp_colours(np.array([0.0, 1.0]))[0]),
                  (f"{c.name}: high", ramp_colours(np.array([0.0, 1.0]))[1])]
    what = {"correct": "right / wrong against the gold labels"}.get(mode, c.name if not isinstance(c, Categories)
                                                                       else "the predicted class")
    note = f"{len(keep):,} of {n:,} texts drawn" if n > MAX_POINTS else f"{n:,} texts"
    return points_svg(xy, fills, legend, title), f"Coloured by {what}; {note}."


def map_section(rows: Sequence[ResultRow], vector_rows: np.ndarray, projection: MapProjection) -> str:
    """The report section: the map of the rows with vectors (``vector_rows`` int [N]: their indices in ``rows``) at
    ``projection``'s coordinates, with what was projected."""
    placed = [rows[int(i)] for i in vector_rows]
    method = {"pca": "PCA", "umap": "UMAP (on a PCA-50, fixed seed)"}[projection.method]
    svg, note = map_svg(placed, projection.coords, f"Corpus map ({method})")
    explained = (f" The two axes explain {100 * sum(projection.explained):.1f}% of the variance."
                 if projection.method == "pca" and projection.explained else "")
    explained += f" {projection.note[0].upper()}{projection.note[1:]}." if projection.note else ""
    return (f'<section class="wide"><h2>Corpus map ({esc(method)})</h2>{svg}<p>{esc(note)} Each point is a text, '
            f"placed by its sentence vector (the vector the model's read-out uses).{esc(explained)}</p></section>")
