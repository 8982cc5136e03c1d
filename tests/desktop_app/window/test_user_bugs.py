"""Regression tests for the bugs a user trying the app reported (issue 11, item 7). One test per bug."""

from __future__ import annotations

import csv
import os
import stat
from pathlib import Path

import numpy as np
import pytest
from gui_helpers import loaded_window
from PySide6.QtCore import QMimeData, QPoint, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent

pytestmark = pytest.mark.gui

LOAD_TIMEOUT_MS = 60_000



def _row(source, text="good film", label="positive", p=0.9, gold="", correct=None, status="ok"):
    from model.batch.rows import binary_row

    return binary_row(source, text, label, p, 5, False, gold, correct, status)


def _window(qtbot, model_dir, size=(1400, 860), panels=False):
    return loaded_window(qtbot, model_dir, size, panels)


# -- token view: the caption must not change height, so a second click clears the selection --------------------
def test_token_view_caption_height_is_stable_and_second_click_clears(qtbot, tiny_predictor):
    from desktop_app.state import ExplorerState
    from desktop_app.views.token_view import TokenView

    state = ExplorerState()
    view = TokenView(state)
    qtbot.addWidget(view)
    view.resize(260, 400)  # narrow: the long default caption would wrap to several lines
    view.show()
    state.set_prediction(tiny_predictor.predict("a truly wonderful film with a great cast and a fine story " * 3))
    view.flush()
    qtbot.wait(20)
    i = 5
    before = view.canvas.mapTo(view, view.token_center(i))
    cap_h = view.caption.height()
    qtbot.mouseClick(view.canvas, Qt.LeftButton, pos=view.token_center(i))
    assert state.selection == (i,)
    view.flush()
    qtbot.wait(20)
    assert view.caption.height() == cap_h
    # the same spot on screen still holds token i: a second click there clears the selection
    qtbot.mouseClick(view.canvas, Qt.LeftButton, pos=view.canvas.mapFrom(view, before))
    assert state.selection == ()
    assert view.caption.toolTip()  # the full caption is one hover away


# -- explanations: the faithfulness table shows every row at the default window size ---------------------------
def test_faithfulness_table_shows_all_rows_at_default_size(qtbot, tiny_model_dir):
    win = _window(qtbot, tiny_model_dir, panels=True)
    explain = win.panels["explain"]
    dock = win.dock("Explanations")
    dock.show()
    dock.raise_()
    qtbot.wait(50)
    table = explain.table
    viewport = table.viewport().rect()
    for row in range(table.rowCount()):
        rect = table.visualRect(table.model().index(row, 0))
        assert viewport.contains(rect), f"row {row} of {table.rowCount()} is cut off ({rect} in {viewport})"


# -- batch summary follows the filter and the search box -------------------------------------------------------
def test_batch_summary_describes_the_filtered_rows(qtbot):
    from desktop_app.panels.batch_panel import BatchPanel

    panel = BatchPanel()
    qtbot.addWidget(panel)
    panel.table_model.append_rows([
        _row("a/1.txt"), _row("a/2.txt", label="negative", p=0.1), _row("a/3.txt", text="", label="", p=None,
                                                                        status="not found"),
    ])
    panel._update_summary()
    assert panel.summary_label.text().startswith("3 reviews")
    panel.category_combo.setCurrentText("Predicted negative")
    text = panel.summary_label.text()
    assert "1 of 3" in text and "0.0% positive" in text, text
    panel.category_combo.setCurrentText("All")
    panel.search_edit.setText("2.txt")
    assert "1 of 3" in panel.summary_label.text()
    panel.search_edit.setText("")
    assert "showing" not in panel.summary_label.text().lower()
    assert " of 3" not in panel.summary_label.text()


# -- exported files honour the umask; overwriting keeps the mode ----------------------------------------------
@pytest.fixture
def umask_027():
    old = os.umask(0o027)
    yield 0o640
    os.umask(old)


def _mode(p) -> int:
    return stat.S_IMODE(os.stat(p).st_mode)


def test_every_export_path_honours_umask_and_keeps_mode(qtbot, tmp_path, umask_027, tiny_model_dir, tiny_predictor):
    from desktop_app.panels.batch_panel import BatchPanel
    from desktop_app.state import ExplorerState
    from desktop_app.views.heatmap import AttentionHeatmap
    from desktop_app.window.view_export import export_widget
    from model.files.atomic import atomic_path, atomic_write_bytes
    from model.core.config import EncoderConfig

    panel = BatchPanel()
    qtbot.addWidget(panel)
    panel.table_model.append_rows([_row("x.txt")])
    state = ExplorerState()
    heat = AttentionHeatmap(state)
    qtbot.addWidget(heat)
    state.set_prediction(tiny_predictor.predict("good film"))

    def with_atomic_path(p):
        with atomic_path(p) as tmp:
            Path(tmp).write_bytes(b"x")

    writers = {
        "bytes.bin": lambda p: atomic_write_bytes(p, b"x"),
        "path.bin": with_atomic_path,
        "rows.csv": lambda p: panel.export_to(str(p)),
        "rows.jsonl": lambda p: panel.export_to(str(p)),
        "rows.parquet": lambda p: panel.export_to(str(p)),
        "view.png": lambda p: export_widget(heat, p),
        "view.svg": lambda p: export_widget(heat, p),
        "config.json": lambda p: EncoderConfig().to_json(p),
    }
    for name, write in writers.items():
        p = tmp_path / name
        write(p)
        assert _mode(p) == umask_027, f"{name}: {oct(_mode(p))}"
        os.chmod(p, 0o604)
        write(p)
        assert _mode(p) == 0o604, f"{name} after overwrite: {oct(_mode(p))}"
    # a symlink stays a symlink; its target is replaced
    target = tmp_path / "target.bin"
    target.write_bytes(b"old")
    os.chmod(target, 0o600)
    link = tmp_path / "link.bin"
    link.symlink_to(target)
    atomic_write_bytes(link, b"new")
    assert link.is_symlink() and target.read_bytes() == b"new" and _mode(target) == 0o600


# -- the empty heatmap has no SI-prefixed axes and a sensible colour bar ---------------------------------------
def test_empty_heatmap_has_no_unit_prefix_and_a_unit_colour_bar(qtbot):
    from desktop_app.state import ExplorerState
    from desktop_app.views.heatmap import AttentionHeatmap

    state = ExplorerState()
    heat = AttentionHeatmap(state)
    qtbot.addWidget(heat)
    heat.resize(500, 400)
    heat.show()
    heat.request_render()
    heat.flush()
    qtbot.wait(50)
    for name in ("left", "bottom"):
        ax = heat.plot.getAxis(name)
        assert "x0.001" not in ax.labelString() and ax.autoSIPrefixScale == 1.0, ax.labelString()
    lo, hi = heat.colorbar.levels()
    assert (lo, hi) == (0.0, 1.0)
    cb_axis = heat.colorbar.axis
    assert cb_axis.autoSIPrefixScale == 1.0


# -- a drop indicator while files are dragged over the window ---------------------------------------------------
def test_drop_indicator_shows_while_dragging(qtbot, tiny_model_dir, tmp_path):
    win = _window(qtbot, tiny_model_dir)
    (tmp_path / "a.txt").write_text("good")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(tmp_path / "a.txt"))])
    ev = QDragEnterEvent(QPoint(50, 50), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
    win.dragEnterEvent(ev)
    assert win.drop_overlay.isVisible()
    assert "1 file" in win.drop_overlay.text()
    from PySide6.QtGui import QDragLeaveEvent

    win.dragLeaveEvent(QDragLeaveEvent())
    assert not win.drop_overlay.isVisible()
    # the editor takes drops itself (the window sees no drag events there): it shows the banner too
    win.editor.dragEnterEvent(QDragEnterEvent(QPoint(5, 5), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier))
    assert win.drop_overlay.isVisible()
    win.editor.dragLeaveEvent(QDragLeaveEvent())
    assert not win.drop_overlay.isVisible()


# -- batch table's Source column: the path relative to what was dropped ------------------------------------------
def test_source_column_shows_path_relative_to_dropped_folder(qtbot, tmp_path):
    from desktop_app.panels.batch_model import SOURCE, BatchTableModel

    model = BatchTableModel()
    root = tmp_path / "train"
    model.add_roots([str(root), str(tmp_path / "single.txt")])
    model.append_rows([
        _row(str(root / "pos" / "00.txt")),
        _row(str(root / "neg" / "00.txt")),
        _row(str(tmp_path / "single.txt")),
        _row(str(root / "x.csv") + ":row 3"),
    ])
    shown = [model.data(model.index(r, SOURCE)) for r in range(4)]
    assert shown == ["pos/00.txt", "neg/00.txt", "single.txt", "x.csv:row 3"]


# -- File > Open offers only what the readers read -------------------------------------------------------------
def test_open_files_filter_matches_the_readers():
    from desktop_app.window.file_actions import review_file_filter
    from model.batch.readers import READERS

    filt = review_file_filter()
    first = filt.split(";;")[0]
    patterns = first[first.index("(") + 1 : first.index(")")].split()
    assert sorted(p.lstrip("*") for p in patterns) == sorted(READERS)
    assert "parquet" not in first and ".gz" not in first


# -- CSV export: an excerpt-only export for spreadsheets -------------------------------------------------------
def test_csv_excerpt_export_keeps_cells_short(qtbot, tmp_path):
    from desktop_app.panels.batch_panel import SPREADSHEET_CELL_LIMIT, BatchPanel

    panel = BatchPanel()
    qtbot.addWidget(panel)
    long_text = "word " * 10_000  # 50,000 characters
    panel.table_model.append_rows([_row("long.txt", text=long_text)])
    actions = [a.text() for a in panel.export_button.menu().actions()]
    assert any("excerpt" in a.lower() for a in actions), actions
    out = tmp_path / "x.csv"
    assert panel.export_to(str(out), "csv", excerpt_chars=200)
    with open(out, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows[0]["text"]) <= 200
    full = tmp_path / "full.csv"
    assert panel.export_to(str(full), "csv")
    with open(full, encoding="utf-8", newline="") as fh:
        assert len(next(csv.DictReader(fh))["text"]) > SPREADSHEET_CELL_LIMIT
    assert str(SPREADSHEET_CELL_LIMIT) in panel.export_hint("csv").replace(",", "")


def test_excerpt_export_is_a_helper_in_model_batch():
    from model.batch.export import excerpt_rows

    rows = excerpt_rows([_row("a", text="x" * 100)], 10)
    assert len(rows[0].text) == 10 and rows[0].text.endswith("\u2026")
    assert np.all([r.source == "a" for r in rows])
