"""One class palette everywhere (issue 33, item 3): the prediction bars, the batch table, Compare, the Corpus plots and
the HTML report all colour a class with :mod:`model.palette`, a colour-blind-safe palette that extends to 28 classes."""

from __future__ import annotations

import re

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from model import palette
from model.batch import ResultRow
from model.batch.rows import binary_row
from model.corpus.metrics import corpus_metrics
from model.report.report import render_report_html
from model.report.charts import GREY, GRID

pytestmark = [pytest.mark.gui, pytest.mark.timeout(120)]

NEG, POS = palette.class_colour(0), palette.class_colour(1)


def same(colour, hex_code: str) -> bool:
    return QColor(colour).name().lower() == hex_code.lower()


def scored_rows() -> list[ResultRow]:
    out = []
    for i in range(40):
        p = (i % 10) / 10 + 0.05
        gold = "positive" if i % 3 else "negative"
        label = "positive" if p >= 0.5 else "negative"
        out.append(binary_row(f"r{i}.txt", f"review {i}", label, p, 20 + 10 * i, i % 7 == 0, gold, label == gold, "ok"))
    return out


def test_the_palette_is_okabe_ito_first_and_has_28_distinct_classes():
    assert palette.CLASS_COLOURS[:8] == palette.OKABE_ITO
    assert len(set(c.lower() for c in palette.CLASS_COLOURS)) == len(palette.CLASS_COLOURS) >= 28
    assert all(re.fullmatch(r"#[0-9A-Fa-f]{6}", c) for c in palette.CLASS_COLOURS)
    assert palette.label_colour("positive") == POS and palette.label_colour("negative") == NEG
    assert palette.label_colour("") == palette.NEUTRAL
    assert palette.class_colour(28) == palette.class_colour(0)
    with pytest.raises(ValueError):
        palette.class_colour(-1)


def test_prediction_bars_and_label_use_the_palette(qtbot):
    from desktop_app.state import ExplorerState
    from desktop_app.views.prediction_panel import PredictionPanel

    panel = PredictionPanel(ExplorerState())
    qtbot.addWidget(panel)
    panel.set_labels(("negative", "positive"))
    assert same(panel.bars["negative"].colour, NEG) and same(panel.bars["positive"].colour, POS)
    panel.set_labels(tuple(f"class {i}" for i in range(12)))  # many classes: each its own palette colour
    assert [panel.bars[f"class {i}"].colour.name().lower() for i in range(12)] == \
        [c.lower() for c in palette.CLASS_COLOURS[:12]]


def test_batch_table_shows_class_swatches_from_the_palette(qtbot):
    from desktop_app.panels.batch.table_model import GOLD, LABEL, BatchTableModel

    model = BatchTableModel()
    model.append_rows(scored_rows()[:4])
    for r in range(4):
        row = model.row_at(r)
        assert same(model.index(r, LABEL).data(Qt.ItemDataRole.DecorationRole), palette.label_colour(row.label))
        assert same(model.index(r, GOLD).data(Qt.ItemDataRole.DecorationRole), palette.label_colour(row.gold))


def test_compare_word_plot_and_corpus_plots_use_the_palette(qtbot):
    from desktop_app.views import colours, compare_view, word_plot
    from desktop_app.views.corpus.plots import ProbabilityHistogramPlot

    for module in (colours, compare_view, word_plot):  # the delta bars and the word bars: toward a class
        assert (module.NEGATIVE_COLOUR, module.POSITIVE_COLOUR) == (palette.TOWARD_NEGATIVE, palette.TOWARD_POSITIVE)
    m = corpus_metrics(scored_rows())
    plot = ProbabilityHistogramPlot()
    qtbot.addWidget(plot)
    plot._draw(m.histogram, m.labels)
    pens = [item.opts["pen"].color().name().lower() for item in plot.getPlotItem().listDataItems()]
    assert pens[:2] == [c.lower() for c in palette.class_colours(m.labels).values()]


def test_the_report_uses_the_same_class_colours():
    m = corpus_metrics(scored_rows())
    html = render_report_html(m, None, model_name="m", date="d")
    low = html.lower()  # matplotlib writes colours in lower case
    assert NEG.lower() in low and POS.lower() in low
    for old in ("#2b6cb0", "#c0504d", "#1a7f37", "#c0392b", "#d62728", "#1f77b4"):  # matplotlib's C0, C3 among them
        assert old not in low
    drawn = set(re.findall(r"(?:fill|stroke): (#[0-9a-f]{6})", low))  # matplotlib's bars, cells, lines, text
    coloured = {c for c in drawn if len({c[1:3], c[3:5], c[5:7]}) > 1}  # not a grey
    assert coloured and coloured <= {c.lower() for c in palette.CLASS_COLOURS} | {GREY, GRID}
