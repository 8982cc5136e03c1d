"""The batch panel (desktop_app.panels.batch.panel) offscreen: drops, queued scoring, cancel, filter, open, export."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication

from desktop_app.panels.batch.table_model import CORRECT, EXCERPT, WINDOWS, BatchTableModel
from desktop_app.panels.batch.proxy import BatchFilterProxy
from desktop_app.panels.batch.panel import BatchPanel
from desktop_app.workers.batch import BatchProgress
from model.batch import read_results

pytestmark = [pytest.mark.gui, pytest.mark.timeout(120)]
WAIT_MS = 60_000


def make_folder(root: Path, n_pos: int, n_neg: int, text: str | None = None) -> Path:
    for label, n in (("pos", n_pos), ("neg", n_neg)):
        (root / label).mkdir(parents=True, exist_ok=True)
        for i in range(n):
            (root / label / f"{i}_5.txt").write_text(text or f"a {label} film, review {i} " + "great " * (i % 7))
    return root


@pytest.fixture
def panel(qtbot, tiny_predictor):
    p = BatchPanel(batch_size=4, chunk=8)
    qtbot.addWidget(p)
    p.set_predictor(tiny_predictor)
    yield p
    p.shutdown()


def drag_enter_event(widget, mime: QMimeData) -> QDragEnterEvent:
    """A drag-enter event at the widget's centre, as a file manager sends it.

    Qt 6 declares ``QDragEnterEvent(const QPoint &, ...)`` (integer position) while ``QDropEvent`` takes a
    ``QPointF``; some PySide6 releases accept either for the drag event, 6.11 only ``QPoint``.
    """
    args = (Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    try:
        return QDragEnterEvent(widget.rect().center(), *args)  # QPoint
    except TypeError:  # a binding that only takes the floating-point position
        return QDragEnterEvent(QPointF(widget.rect().center()), *args)


def drop(widget, paths) -> QDropEvent:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    enter = drag_enter_event(widget, mime)
    QApplication.sendEvent(widget, enter)
    assert enter.isAccepted()
    ev = QDropEvent(QPointF(widget.rect().center()), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                    Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(widget, ev)
    return ev


def test_dropping_a_folder_fills_the_table(qtbot, panel, tmp_path):
    folder = make_folder(tmp_path / "reviews", 6, 5)
    (folder / "pos" / "broken.txt").write_bytes(b"%PDF-1.4\n")
    with qtbot.waitSignal(panel.scoring_finished, timeout=WAIT_MS) as blocker:
        ev = drop(panel, [folder])
        assert ev.isAccepted()
    summary = blocker.args[0]
    assert summary.count == 12 and summary.failed == 1
    assert panel.table_model.rowCount() == 12
    assert panel.proxy.rowCount() == 12
    rows = panel.rows()
    assert sum(r.gold == "positive" for r in rows) == 7  # the PDF keeps the gold label of its pos/ folder
    assert not panel.is_running()
    assert "12 reviews" in panel.ui.summary_label.text()
    # P(positive) column shows the probability with 3 decimals
    first_ok = next(i for i, r in enumerate(rows) if r.ok)
    p_positive = panel.table_model.column_of("positive")
    assert panel.table_model.headerData(p_positive, Qt.Orientation.Horizontal) == "P(positive)"
    shown = panel.table_model.index(first_ok, p_positive).data()
    assert shown == f"{rows[first_ok].probability('positive'):.3f}"


def test_clear_puts_the_progress_bar_back_to_idle(qtbot, panel, tmp_path):
    """Under xvfb, 30 IMDB reviews scored, then Clear: the table emptied and the bar beside it still said "Done: 30
    reviews in 0:00"."""
    with qtbot.waitSignal(panel.scoring_finished, timeout=WAIT_MS):
        drop(panel, [make_folder(tmp_path / "reviews", 2, 2)])
    assert panel.ui.progress_bar.format().startswith("Done: 4 reviews")
    panel.clear()
    assert panel.table_model.rowCount() == 0
    assert (panel.ui.progress_bar.format(), panel.ui.progress_bar.value()) == ("idle", 0)


def test_a_long_review_shows_its_windows(qtbot, panel, tmp_path):
    """Issue 31: a review longer than the model's maximum length (64 tokens here) is read whole in windows; the table's
    Windows column says how many (as the exports' ``num_windows``) and sorts by it."""
    folder = tmp_path / "reviews"
    folder.mkdir()
    (folder / "short.txt").write_text("a short and fine film")
    (folder / "long.txt").write_text(" ".join(f"word{i % 37} film great plot" for i in range(120)))
    with qtbot.waitSignal(panel.scoring_finished, timeout=WAIT_MS):
        drop(panel, [folder])
    model = panel.table_model
    assert model.headerData(WINDOWS, Qt.Orientation.Horizontal) == "Windows"
    by_source = {r.source.rsplit("/", 1)[-1]: (i, r) for i, r in enumerate(panel.rows())}
    (i_long, long_row), (i_short, short_row) = by_source["long.txt"], by_source["short.txt"]
    assert long_row.num_windows > 1 and short_row.num_windows == 1
    assert model.index(i_long, WINDOWS).data() == str(long_row.num_windows)
    assert model.index(i_short, WINDOWS).data() == "1"
    order = model.sort_order(WINDOWS, [i_long, i_short])
    assert list(order) == [i_short, i_long]


def test_drag_without_local_files_is_ignored(qtbot, panel):
    mime = QMimeData()
    mime.setText("just text")
    enter = drag_enter_event(panel, mime)
    QApplication.sendEvent(panel, enter)
    assert not enter.isAccepted()


def test_paths_wait_for_the_predictor_and_queue(qtbot, tiny_predictor, tmp_path):
    a = make_folder(tmp_path / "a", 3, 2)
    b = make_folder(tmp_path / "b", 1, 1)
    p = BatchPanel(batch_size=4, chunk=8)
    qtbot.addWidget(p)
    try:
        p.add_paths([str(a)])
        p.add_paths([str(b)])
        assert not p.is_running() and p.table_model.rowCount() == 0
        finished = []
        p.scoring_finished.connect(finished.append)
        p.set_predictor(tiny_predictor)
        qtbot.waitUntil(lambda: len(finished) == 2, timeout=WAIT_MS)
        assert [s.count for s in finished] == [5, 2]
        assert p.table_model.rowCount() == 7
        assert [Path(r.source).parent.parent.name for r in p.rows()] == ["a"] * 5 + ["b"] * 2
    finally:
        p.shutdown()


def test_cancel_midway_keeps_partial_rows(qtbot, panel, tmp_path):
    n = 200
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(n):
        (folder / f"{i:04d}.txt").write_text("a good film with great acting")  # equal lengths: prefix order
    stopped = []

    def stop_on_first_progress(_request, output):
        # runs on the worker thread (direct connection), right after the first batch reports progress
        if isinstance(output, BatchProgress) and output.done > 0 and not stopped:
            stopped.append(True)
            panel.handle.request_stop()

    panel.handle.worker.yielded.connect(stop_on_first_progress, Qt.ConnectionType.DirectConnection)
    with qtbot.waitSignal(panel.scoring_finished, timeout=WAIT_MS) as blocker:
        panel.add_paths([str(folder)])
    summary = blocker.args[0]
    rows = panel.rows()
    assert stopped
    assert 0 < len(rows) < n
    assert summary.count == len(rows)
    assert [Path(r.source).name for r in rows] == [f"{i:04d}.txt" for i in range(len(rows))]
    assert "Cancelled" in panel.ui.progress_bar.format()


def test_cancel_from_the_gui_thread(qtbot, panel, tmp_path):
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(400):
        (folder / f"{i:04d}.txt").write_text(f"review {i} " + "good " * (i % 13))
    with qtbot.waitSignal(panel.scoring_finished, timeout=WAIT_MS):
        panel.add_paths([str(folder)])
        qtbot.waitUntil(lambda: panel.table_model.rowCount() > 0 or not panel.is_running(), timeout=WAIT_MS)
        panel.cancel()
    assert 0 < panel.table_model.rowCount() <= 400
    assert not panel.is_running()
    panel.cancel()  # idle cancel is harmless


def test_double_click_emits_the_full_text(qtbot, panel, tmp_path):
    f = tmp_path / "one.txt"
    long_text = "An unforgettable film. " * 30
    f.write_text(long_text)
    with qtbot.waitSignal(panel.scoring_finished, timeout=WAIT_MS):
        panel.add_paths([str(f)])
    index = panel.proxy.index(0, EXCERPT)
    assert index.data().endswith("…") and len(index.data()) < len(long_text)
    with qtbot.waitSignal(panel.review_activated, timeout=1000) as blocker:
        panel.ui.view.doubleClicked.emit(index)
    assert blocker.args == [long_text]


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_export_round_trips(qtbot, panel, tmp_path, fmt):
    folder = make_folder(tmp_path / "reviews", 4, 4)
    (folder / "neg" / "empty.txt").write_text("  ")
    with qtbot.waitSignal(panel.scoring_finished, timeout=WAIT_MS):
        panel.add_paths([str(folder)])
    out = tmp_path / f"export.{fmt}"
    assert panel.export_to(str(out))
    assert read_results(out) == panel.rows()
    assert len(panel.rows()) == 9


def test_export_failure_is_a_message(qtbot, panel, tmp_path):
    messages = []
    panel.message.connect(messages.append)
    assert not panel.export_to(str(tmp_path / "no-such-dir" / "x.csv"))
    assert not panel.export_to(str(tmp_path / "x.unknown"))
    assert len(messages) == 2 and all(m.startswith("Export failed") for m in messages)


def test_filter_and_sort(qtbot, panel, tmp_path):
    folder = make_folder(tmp_path / "reviews", 5, 5)
    (folder / "pos" / "bad.txt").write_bytes(b"\x89PNG\r\n\x1a\n")
    with qtbot.waitSignal(panel.scoring_finished, timeout=WAIT_MS):
        panel.add_paths([str(folder)])
    rows = panel.rows()
    panel.ui.category_combo.setCurrentText("Failed")
    assert panel.proxy.rowCount() == 1
    panel.ui.category_combo.setCurrentText("Misclassified")
    assert panel.proxy.rowCount() == sum(r.correct is False for r in rows)
    panel.ui.category_combo.setCurrentText("All")
    panel.ui.search_edit.setText("REVIEW 3")
    assert panel.proxy.rowCount() == sum("review 3" in r.text for r in rows) == 2
    panel.ui.search_edit.clear()
    p_positive = panel.table_model.column_of("positive")
    panel.ui.view.sortByColumn(p_positive, Qt.SortOrder.DescendingOrder)
    shown = [panel.proxy.index(i, p_positive).data() for i in range(panel.proxy.rowCount())]
    values = [float(s) if s else -1.0 for s in shown]
    assert values == sorted(values, reverse=True)


def test_model_appends_in_one_block(qtbot):
    from model.batch.rows import binary_row

    model = BatchTableModel()
    proxy = BatchFilterProxy()
    proxy.setSourceModel(model)
    inserted = []
    model.rowsInserted.connect(lambda _parent, first, last: inserted.append((first, last)))
    resets = []
    model.modelReset.connect(lambda: resets.append(1))
    row = binary_row("s", "t", "positive", 0.9, 3, False, "positive", True, "ok")
    model.append_rows([row] * 5)
    model.append_rows([row] * 3)
    assert inserted == [(0, 4), (5, 7)] and not resets
    assert model.index(0, CORRECT).data() == "✓"
    assert model.summary.count == 8 and model.summary.accuracy == 1.0


def test_engine_error_becomes_a_message_and_the_panel_recovers(qtbot, tiny_predictor, tmp_path, monkeypatch):
    from model import Predictor

    def out_of_memory(self, *args, **kwargs):
        raise RuntimeError("out of memory (simulated)")

    folder = make_folder(tmp_path / "reviews", 2, 2)
    p = BatchPanel(batch_size=4, chunk=8)
    qtbot.addWidget(p)
    try:
        messages = []
        p.message.connect(messages.append)
        monkeypatch.setattr(Predictor, "score_many", out_of_memory)  # a real model whose scoring fails
        p.set_predictor(tiny_predictor)
        with qtbot.waitSignal(p.scoring_finished, timeout=WAIT_MS):
            p.add_paths([str(folder)])
        assert any("out of memory (simulated)" in m for m in messages)
        assert p.table_model.rowCount() == 0 and not p.is_running()
        monkeypatch.undo()  # the model works again: the next job runs normally
        with qtbot.waitSignal(p.scoring_finished, timeout=WAIT_MS):
            p.add_paths([str(folder)])
        assert p.table_model.rowCount() == 4
        p.clear()
        assert p.table_model.rowCount() == 0 and p.table_model.summary.count == 0
    finally:
        p.shutdown()


def test_a_drop_on_the_window_brings_the_closed_batch_dock_back(qtbot, tiny_model_dir, tmp_path, monkeypatch):
    """Files dropped on the explorer are scored into the batch panel, which is shown even if the user closed it."""
    monkeypatch.setenv("ATTENTION_EXPLORER_SETTINGS", str(tmp_path / "settings.ini"))
    from desktop_app.app import attach_panels
    from desktop_app.window.main_window import MainWindow

    win = MainWindow(tiny_model_dir, device="cpu")
    qtbot.addWidget(win)
    win.resize(1200, 800)
    panels = attach_panels(win)
    win.show()
    with qtbot.waitSignal(win.predictor_loaded, timeout=WAIT_MS):
        pass
    batch, dock = panels["batch"], win.docks.get("Batch scoring")
    dock.close()
    assert not dock.isVisible()
    folder = make_folder(tmp_path / "reviews", 3, 2)
    with qtbot.waitSignal(batch.scoring_finished, timeout=WAIT_MS):
        win.paths_dropped.emit([str(folder)])
    assert dock.isVisible() and batch.table_model.rowCount() == 5
    # the default layout docks it 220 px high; scoring gives it as much as the other docks' minimum sizes allow
    qtbot.waitUntil(lambda: dock.height() > 240, timeout=5000)
    batch.shutdown()


def test_filtered_summary_is_extended_with_appended_rows_not_recomputed(qapp):
    """The summary of the filtered rows grows with each appended batch and equals a full recount."""
    from model.batch import Summary
    from model.batch.rows import binary_row

    model, proxy = BatchTableModel(), BatchFilterProxy()
    proxy.setSourceModel(model)

    def rows(n, start):
        return [binary_row(f"f{i}.txt", "t", "positive" if i % 3 else "negative", 0.9 if i % 3 else 0.1, 3, False,
                          "positive", bool(i % 3), "ok") for i in range(start, start + n)]

    model.append_rows(rows(10, 0))
    proxy.set_category("Misclassified")
    cached = proxy.shown_summary()
    assert cached.count == 4  # i = 0, 3, 6, 9
    model.append_rows(rows(20, 10))
    assert proxy.shown_summary() is cached  # extended in place, not rebuilt
    full = Summary()
    full.add(proxy.visible_rows())
    assert (cached.count, cached.positive, cached.correct) == (full.count, full.positive, full.correct) == (10, 0, 0)
    model.clear()
    assert proxy.shown_summary().count == 0


def _row(source, text="good film", label="positive", p=0.9, gold="", correct=None, status="ok"):
    """A two-class batch row (:func:`model.batch.rows.binary_row`, 5 tokens, not truncated)."""
    from model.batch.rows import binary_row

    return binary_row(source, text, label, p, 5, False, gold, correct, status)


# -- batch summary follows the filter and the search box -------------------------------------------------------
def test_batch_summary_describes_the_filtered_rows(qtbot):
    from desktop_app.panels.batch.panel import BatchPanel

    panel = BatchPanel()
    qtbot.addWidget(panel)
    panel.table_model.append_rows([
        _row("a/1.txt"), _row("a/2.txt", label="negative", p=0.1), _row("a/3.txt", text="", label="", p=None,
                                                                        status="not found"),
    ])
    panel._update_summary()
    assert panel.ui.summary_label.text().startswith("3 reviews")
    panel.ui.category_combo.setCurrentText("Predicted negative")
    text = panel.ui.summary_label.text()
    assert "1 of 3" in text and "0.0% positive" in text, text
    panel.ui.category_combo.setCurrentText("All")
    panel.ui.search_edit.setText("2.txt")
    assert "1 of 3" in panel.ui.summary_label.text()
    panel.ui.search_edit.setText("")
    assert "showing" not in panel.ui.summary_label.text().lower()
    assert " of 3" not in panel.ui.summary_label.text()


# -- batch table's Source column: the path relative to what was dropped ------------------------------------------
def test_source_column_shows_path_relative_to_dropped_folder(qtbot, tmp_path):
    from desktop_app.panels.batch.table_model import SOURCE, BatchTableModel

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


# -- CSV export: an excerpt-only export for spreadsheets -------------------------------------------------------
def test_csv_excerpt_export_keeps_cells_short(qtbot, tmp_path):
    from desktop_app.panels.batch.panel import SPREADSHEET_CELL_LIMIT, BatchPanel

    panel = BatchPanel()
    qtbot.addWidget(panel)
    long_text = "word " * 10_000  # 50,000 characters
    panel.table_model.append_rows([_row("long.txt", text=long_text)])
    actions = [a.text() for a in panel.ui.export_button.menu().actions()]
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
