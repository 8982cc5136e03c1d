"""The Corpus dock's plots stay readable (issue 33): empty plots are drawn empty with their hint (item 4), and a short
dock scrolls instead of squashing the plots until their text overlaps (item 9)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

import pyqtgraph as pg

from desktop_app.panels.batch.panel import BatchPanel
from desktop_app.panels.corpus.panel import CorpusPanel
from model.batch import ResultRow
from model.batch.rows import binary_row
from model.corpus.metrics import corpus_metrics

pytestmark = [pytest.mark.gui, pytest.mark.timeout(120)]


@pytest.fixture
def corpus(qtbot):
    batch = BatchPanel()
    panel = CorpusPanel(batch)
    qtbot.addWidget(batch)
    qtbot.addWidget(panel)
    yield panel
    panel.handle.shutdown()
    batch.shutdown()


def metric_plots(panel):
    return [panel.confusion, panel.histogram, panel.reliability, panel.slices]


def texts(plot) -> list[pg.TextItem]:
    """The text items drawn in a plot (cell texts, counts, the key), the hint excluded."""
    return [it for it in plot.getPlotItem().items if isinstance(it, pg.TextItem) and it is not plot._message]


def rows(n: int = 300) -> list[ResultRow]:
    rng = np.random.default_rng(0)
    out = []
    for i in range(n):
        gold = "positive" if i % 2 else "negative"
        p = float(np.clip(rng.normal(0.8 if gold == "positive" else 0.2, 0.2), 0, 1))
        label = "positive" if p >= 0.5 else "negative"
        out.append(binary_row(f"r{i}.txt", "t", label, p, int(rng.integers(20, 600)), i % 9 == 0, gold, label == gold,
                             "ok"))
    return out


def test_empty_plots_show_their_hint_and_no_tick_labels(qtbot, corpus):
    corpus.resize(700, 520)
    corpus.show()
    corpus.show_metrics(corpus_metrics([]), 0)
    for plot in metric_plots(corpus) + [corpus.words.plot]:
        plot.flush()
        item = plot.getPlotItem()
        shown_axes = [name for name in ("left", "bottom") if item.getAxis(name).isVisible()]
        assert shown_axes == [], f"{plot.title}: an empty plot draws axes whose ticks pile up"
        assert plot._message.toPlainText(), f"{plot.title}: no hint"
        assert texts(plot) == [], f"{plot.title}: counts drawn over an empty plot"
    # with rows, the axes come back
    corpus.show_metrics(corpus_metrics(rows()), 300)
    for plot in metric_plots(corpus):
        plot.flush()
        assert plot.getPlotItem().getAxis("bottom").isVisible() and not plot._message.toPlainText()


def scene_rects(items):
    return [it.sceneBoundingRect() for it in items]


def test_a_short_dock_scrolls_and_no_plot_text_overlaps(qtbot, corpus):
    corpus.resize(640, 180)  # the bottom area after a 6 x 12 model's model view took the room
    corpus.show()
    corpus.show_metrics(corpus_metrics(rows()), 300)
    qtbot.wait(20)
    for plot in metric_plots(corpus):
        plot.flush()
        plot.grab()  # painted as when scrolled into view (pyqtgraph places text items when it paints)
    for plot in metric_plots(corpus):
        assert plot.height() >= 150 and plot.width() >= 250, f"{plot.title} squashed to {plot.width()}x{plot.height()}"
    assert corpus.metrics_scroll.verticalScrollBar().maximum() > 0  # the page scrolls instead
    # the confusion matrix's cell texts never print over each other
    cells = scene_rects(texts(corpus.confusion))
    assert len(cells) == 4
    for a, b in itertools.combinations(cells, 2):
        assert not a.intersects(b)
    # the histogram's key never covers its bars: it is a line of the title, outside the plot area
    hist = corpus.histogram
    assert texts(hist) == []
    title = hist.getPlotItem().titleLabel.text
    assert "negative 150" in title and "positive 150" in title
    # the length plot's counts stay inside the plot, clear of each other
    counts = scene_rects(texts(corpus.slices))
    view_rect = corpus.slices.getPlotItem().getViewBox().sceneBoundingRect()
    assert all(view_rect.adjusted(-1, -1, 1, 1).contains(r) for r in counts)


@pytest.mark.parametrize("width", [220, 300, 500])
def test_per_class_scores_show_the_ends_of_their_scale(qtbot, width):
    """An analyst saw precision and recall markers at 1.0 against the plot's right edge, half cut, on an axis
    labelled only 0.2 ... 0.8: neither 0 nor 1 had a tick label, so a perfect score could not be read."""
    from PySide6.QtCore import QPointF
    from PySide6.QtGui import QImage, QPainter

    from desktop_app.views.corpus.task_plots import PerClassPlot
    from model.records.corpus import PerClass

    plot = PerClassPlot()
    qtbot.addWidget(plot)
    plot.resize(width, 170)
    plot.show()
    per_class = PerClass(precision=np.array([1.0, 0.75]), recall=np.array([5 / 6, 1.0]),
                         f1=np.array([10 / 11, 6 / 7]), support=np.array([6, 3]))
    plot.set_per_class(("negative", "positive"), per_class)
    plot.flush()
    qtbot.wait(20)
    axis = plot.getAxis("bottom")
    image = QImage(8, 8, QImage.Format_ARGB32)
    painter = QPainter(image)
    drawn = [float(text) for _, _, text in axis.generateDrawSpecs(painter)[2]]
    painter.end()
    assert 0.0 in drawn and 1.0 in drawn, drawn
    box = plot.getPlotItem().getViewBox()
    right_px = box.mapViewToDevice(QPointF(box.viewRange()[0][1], 0)).x()
    assert right_px - box.mapViewToDevice(QPointF(1.0, 0)).x() >= 5  # a 7-pixel marker at 1.0 is whole


@pytest.mark.parametrize("width", [300, 420])
def test_length_plot_counts_in_thousands_do_not_print_over_each_other(qtbot, width):
    """The README's corpus screenshot (3,000 IMDB reviews, the Corpus workspace at 1400 x 860, the plot ~300 px wide)
    printed "3771,406565": each slice's count in the window's font, wider than its bar's spacing."""
    from desktop_app.views.corpus.plots import SliceAccuracyPlot
    from model.records.corpus import SliceAccuracy

    plot = SliceAccuracyPlot()
    qtbot.addWidget(plot)
    plot.resize(width, 170)
    plot.show()
    counts = np.array([377, 1406, 565, 293, 303, 56])
    by_length = SliceAccuracy(("1-128", "129-256", "257-384", "385-512", "513-1024", "1025-"), counts, counts,
                              np.full(6, 0.9))
    by_truncation = SliceAccuracy(("not truncated", "truncated"), np.array([3000, 0]), np.array([3000, 0]),
                                  np.array([0.9, np.nan]))
    plot.set_slices(by_length, by_truncation, 0.9)
    plot.flush()
    plot.grab()  # pyqtgraph places text items when it paints
    labels = texts(plot)
    assert len(labels) == 8
    for a, b in itertools.combinations(scene_rects(labels), 2):
        assert not a.intersects(b), (a, b)
