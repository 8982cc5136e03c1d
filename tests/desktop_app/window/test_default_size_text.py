"""Issue 46, item 10: every label readable in the default window (1400 x 860). Text that does not fit ends at a
whole word with "…" and keeps the whole text as its tooltip; boxes, bars and headers are wide enough for their
text; the Compare summary has room for its scroll bar; the norm plot has a real height and no legend over it."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from gui_helpers import loaded_window

pytestmark = [pytest.mark.gui, pytest.mark.timeout(120)]

HEADER = "Layer 12, mean of heads \u2014 value-weighted norms (Kobayashi et al. 2020) \u2014 512 \u00d7 512"


@pytest.fixture
def window(qtbot, tiny_model_dir):
    win = loaded_window(qtbot, tiny_model_dir, size=(1400, 860), panels=True)
    qtbot.wait(100)
    yield win
    win.shutdown_workers()


def fits(widget, text: str, margin: int = 0) -> bool:
    return widget.fontMetrics().horizontalAdvance(text) + margin <= widget.width()


@pytest.mark.parametrize("width", [60, 120, 200, 333, 1000])
def test_an_elided_label_ends_at_a_whole_word_and_keeps_the_text_as_tooltip(qtbot, width):
    from desktop_app.views.widgets import ElidedLabel

    label = ElidedLabel()
    qtbot.addWidget(label)
    label.resize(width, 20)
    label.setText(HEADER)
    shown = label.shown_text()
    assert label.toolTip() == HEADER and label.text() == HEADER
    assert label.fontMetrics().horizontalAdvance(shown) <= width
    if shown != HEADER:
        assert shown.endswith("\u2026")
        head = shown[:-1]
        words = HEADER.split()
        assert head.split() == words[: len(head.split())]  # whole words only, never "mea…"
        assert HEADER.startswith(head)


def test_the_heatmap_header_and_token_legend_have_a_row_of_their_own(window):
    title, caption = window.heatmap.title, window.token_view.caption
    assert title.width() >= window.heatmap.width() - 12  # not beside the selectors any more
    assert caption.width() >= window.token_view.width() - 12  # nor beside the colour scale
    for label in (title, caption):
        assert label.toolTip() == label.text()
        assert label.shown_text() == label.text() or label.shown_text().endswith("\u2026")


def test_the_heatmap_key_axis_shows_a_nine_letter_word_whole(window):
    axis = window.heatmap.x_axis
    axis.set_tokens(["[CLS]", "recommend", "emotional", "unforgettable!"])
    assert axis._labels[:3] == ["[CLS]", "recommend", "emotional"]  # not "recomme…"
    assert axis._labels[3].endswith("…")  # longer tokens still end in "…"


def test_batch_progress_columns_and_summary_fit_the_default_window(window, qtbot):
    batch = window.panels["batch"]
    bar = batch.ui.progress_bar
    from desktop_app.panels.batch.ui import PROGRESS_TEXT_SAMPLE

    assert fits(bar, PROGRESS_TEXT_SAMPLE)  # "Done: 33 reviews in 0:01" on one line
    ui = batch.ui
    for edit in (ui.text_column_edit, ui.pair_column_edit, ui.label_column_edit):  # in the Columns popup
        need = edit.fontMetrics().horizontalAdvance(edit.placeholderText()) + 8
        assert edit.minimumWidth() >= need, edit.placeholderText()  # not "auto …"
    assert batch.ui.columns_button.menu() is not None and fits(batch.ui.columns_button, "Columns")
    for label in (batch.ui.summary_label, batch.ui.message_label):  # each on a row of its own
        assert label.width() >= batch.width() * 0.6
    header = batch.ui.view.horizontalHeader()
    model = batch.ui.view.model()
    for c in range(model.columnCount()):
        name = model.headerData(c, header.orientation())
        assert header.fontMetrics().horizontalAdvance(name) + 8 <= header.sectionSize(c), name


def test_compare_summary_leaves_room_for_its_scroll_bar(qtbot):
    from desktop_app.state import ExplorerState
    from desktop_app.views.compare_view import CompareView

    view = CompareView(ExplorerState())
    qtbot.addWidget(view)
    view.resize(380, 600)
    view.show()
    side = SimpleNamespace(text="A long pinned review " * 10, label="positive", head_mask=None,
                           probabilities=np.array([0.1, 0.9]))
    r = SimpleNamespace(labels=("negative", "positive"), pinned=side, current=side,
                        delta_probabilities=np.array([0.0, 0.0]), names=("pinned", "current"))
    view._fill_summary(r)
    qtbot.wait(20)
    t = view.summary_table
    rows = sum(t.rowHeight(i) for i in range(t.rowCount()))
    bar = t.horizontalScrollBar().sizeHint().height()
    assert t.height() >= t.horizontalHeader().height() + rows + bar  # the delta row is never under the bar


def test_the_norm_plot_has_a_readable_height_and_no_legend_over_its_curves(window, qtbot):
    from desktop_app.views.pe_view import NORM_PLOT_MIN_HEIGHT

    window.pe_dock.raise_()
    qtbot.wait(50)
    plot = window.pe_view.norm_plot
    assert plot.legend is None  # the curves are named in the title
    assert "PE(pos)" in plot.titleLabel.text and "token embedding" in plot.titleLabel.text
    assert plot.geometry().height() >= NORM_PLOT_MIN_HEIGHT


def test_corpus_titles_and_hints_are_broken_into_lines_that_fit(qtbot):
    from desktop_app.views.corpus.task_plots import PerClassPlot

    plot = PerClassPlot()
    qtbot.addWidget(plot)
    plot.resize(260, 200)
    plot.show()
    plot.set_per_class((), None)  # no gold labels: the hint
    plot.flush()
    qtbot.wait(20)
    from PySide6.QtGui import QFont, QFontMetrics

    from desktop_app.views.corpus.corpus_plot import TITLE_POINTS

    font = QFont()
    font.setPointSizeF(TITLE_POINTS)
    lines = plot.getPlotItem().titleLabel.text.split("<br>")
    assert len(lines) >= 2 and "".join(lines).replace(" ", "") == plot.title.replace(" ", "")
    assert all(QFontMetrics(font).horizontalAdvance(line) <= plot.width() for line in lines)
    hint = plot._message.textItem.toPlainText()
    assert "needs gold labels" in hint.replace("\n", " ")
    assert all(plot.fontMetrics().horizontalAdvance(line) <= plot.width() for line in hint.split("\n"))
