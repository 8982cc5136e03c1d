"""The corpus map in the real window (issue 56), offscreen at the default 1400 x 860 with the Corpus dock where the
window puts it: a ringed neighbour opens on a click, the Map tab fits the dock (no scrolling; the plot follows the
dock's size), the legend stands beside the data instead of over it, and the UMAP progress text fits its bar."""

from __future__ import annotations

import csv

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from gui_helpers import loaded_window
from PySide6.QtCore import QPoint, QPointF, QRect, Qt

pytestmark = [pytest.mark.gui, pytest.mark.timeout(240)]
WAIT_MS = 60_000


GOOD = ("wonderful", "moving", "funny", "superb", "warm")
BAD = ("dreadful", "boring", "flat", "dull", "lifeless")
NOUNS = ("film", "plot", "cast")


@pytest.fixture
def varied(tmp_path):
    """``varied.csv``: 30 labelled reviews, no two alike (the map's points stay apart)."""
    path = tmp_path / "varied.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["text", "label"])
        for noun in NOUNS:
            for good, bad in zip(GOOD, BAD, strict=True):
                w.writerow([f"the {noun} was {good}", "positive"])
                w.writerow([f"a {bad} {noun}, sadly", "negative"])
    return path


@pytest.fixture
def mapped(qtbot, tiny_model_dir, varied):
    """The window (1400 x 860) after scoring :func:`varied`, its Corpus dock on the Map tab with the PCA map drawn:
    ``(window, map panel)``."""
    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    batch, corpus = win.panels["batch"], win.panels["corpus"]
    with qtbot.waitSignal(batch.scoring_finished, timeout=WAIT_MS):
        batch.add_paths([str(varied)])
    m = corpus.map
    corpus.tabs.setCurrentIndex(corpus.tabs.indexOf(m.parentWidget().parentWidget()))
    qtbot.waitUntil(lambda: m.projector is not None and len(m.rows) == 30, timeout=WAIT_MS)
    qtbot.wait(50)
    yield win, m
    win.shutdown_workers()


def _on_screen(plot, xy) -> QPoint:
    """The plot widget's pixel of the view coordinates ``xy``."""
    vb = plot.getPlotItem().vb
    return plot.mapFromScene(vb.mapViewToScene(QPointF(float(xy[0]), float(xy[1]))))


def _within(outer, widget) -> bool:
    """Whether ``widget``'s whole rectangle lies inside ``outer`` (a widget that holds it)."""
    return outer.rect().contains(QRect(widget.mapTo(outer, QPoint(0, 0)), widget.size()))


def test_a_ringed_neighbour_opens_on_a_click(qtbot, mapped):
    """The rings of the explored text's neighbours were drawn over the points and took their clicks (pyqtgraph gives
    a click to the topmost item that accepts it): the ringed texts, the most interesting ones, could not be opened;
    the star over the explored text took its clicks too."""
    win, m = mapped
    m.open_row(int(m.vectors.rows[0]))
    qtbot.waitUntil(lambda: m.neighbours.count() == 10 and len(m.plot.marks.data) == 10, timeout=WAIT_MS)
    opened = []
    m.batch.review_activated.connect(opened.append)
    pixels = np.array([[p.x(), p.y()] for p in (_on_screen(m.plot, xy) for xy in m.plot.xy)])
    for k, table_row in enumerate(m.nearest.neighbour_rows[:3]):
        point = m.rows.index(m.batch.table_model.row_at(table_row))
        at = _on_screen(m.plot, m.plot.xy[point])
        qtbot.mouseClick(m.plot.viewport(), Qt.MouseButton.LeftButton, pos=at)
        assert len(opened) == k + 1, f"the click on ringed neighbour {point} opened nothing"
        near = np.flatnonzero(np.hypot(*(pixels - [at.x(), at.y()]).T) <= POINT_RADIUS_PX)
        assert opened[-1] in {m.rows[i].text for i in near}  # the point under the pointer (texts may coincide)
    assert win.editor.toPlainText() == opened[-1]
    explored = next(i for i, r in enumerate(m.rows) if r.text == opened[-1])
    qtbot.waitUntil(lambda: np.allclose([m.plot.star.data[0]["x"], m.plot.star.data[0]["y"]], m.plot.xy[explored],
                                        atol=1e-4), timeout=WAIT_MS)
    m.open_row(int(m.vectors.rows[1]))  # elsewhere: a click on the star must open its text again
    qtbot.mouseClick(m.plot.viewport(), Qt.MouseButton.LeftButton, pos=_on_screen(m.plot, m.plot.xy[explored]))
    assert len(opened) == 5 and opened[-1] == m.rows[explored].text  # the star lets the click through to its point


POINT_RADIUS_PX = 7  # the ring's radius: a click inside it is a click on its point


def test_the_map_tab_fits_the_corpus_dock_and_follows_its_size(qtbot, mapped):
    """The Map tab was 234 px taller than the dock (its word-wrapped status made the scroll area size it to its
    preferred height): the plot's bottom and the slices (Export..., Delete) were below the fold, most points hidden."""
    win, m = mapped
    scroll = m.parentWidget().parentWidget()
    viewport = scroll.viewport()
    assert m.height() <= viewport.height() and not scroll.verticalScrollBar().isVisible()
    for widget in (m.plot, m.slices, m.neighbours):
        assert _within(viewport, widget), widget
    pixels = [_on_screen(m.plot, xy) for xy in m.plot.xy]
    assert all(m.plot.rect().contains(p) for p in pixels)  # every point on screen
    dock = win.docks.get("Corpus")
    before = m.plot.height()
    win.resizeDocks([dock], [dock.height() - 30], Qt.Orientation.Vertical)  # (the docks above keep it from growing)
    qtbot.waitUntil(lambda: m.plot.height() <= before - 25, timeout=5_000)  # the plot follows the dock
    assert m.height() <= viewport.height() and _within(viewport, m.slices)


def test_the_legend_stays_off_the_data(qtbot, mapped):
    """The legend was drawn inside the data (top left) and hid points: after a UMAP, the explored star and its rings.
    It is now a row of the plot under the data, exported with it."""
    _win, m = mapped
    m.open_row(int(m.vectors.rows[0]))
    qtbot.waitUntil(lambda: len(m.plot.star.data) == 1, timeout=WAIT_MS)
    vb = m.plot.getPlotItem().vb
    legend = m.plot.legend
    assert len(legend.items) == 2 and legend.isVisible()
    assert legend.sceneBoundingRect().top() >= vb.sceneBoundingRect().bottom() - 1  # under the data, not on it
    assert m.plot.rect().contains(m.plot.mapFromScene(legend.sceneBoundingRect().bottomRight()))
    assert legend.parentItem() is m.plot.export_item()  # PNG/SVG export draws it


def test_the_umap_progress_text_fits_its_bar(qtbot, mapped):
    """"UMAP epoch 500/500" wrapped onto two lines and was cut: the bar was squeezed to 95 px in the tool row."""
    _win, m = mapped
    bar = m.progress
    bar.setVisible(True)
    m._on_progress((500, 500))
    qtbot.wait(20)
    assert bar.text() == "UMAP epoch 500/500"
    assert bar.fontMetrics().horizontalAdvance(bar.text()) + 16 <= bar.width()
    assert _within(m, bar)
