"""The corpus map's slices table, offscreen: its numbers are those of :func:`model.corpus.metrics.corpus_metrics` of
every row, the map selection and each slice, computed on the "corpus-slices" worker and only while the table is on
screen. "Errors first" froze the window 1.3 s on 300 rows: every filter change recomputed the slices on the GUI thread
(the first one importing scikit-learn there), seen or not. Sessions bring the slices back with their numbers."""

from __future__ import annotations

import sys
import threading

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from gui_helpers import loaded_window, wait_slices
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QLabel, QMainWindow

from model.batch.rows import binary_row
from model.corpus.metrics import corpus_metrics

pytestmark = [pytest.mark.gui, pytest.mark.timeout(240)]
WAIT_MS = 60_000


def labelled_rows(n: int = 40) -> list:
    """``n`` scored rows, every third one wrong (P(positive) 0.2 + 0.6 * (i % 2); gold the label, flipped when
    ``i % 3 == 0``), every fifth without gold, and one failed row."""
    rows = []
    for i in range(n):
        label = ("negative", "positive")[i % 2]
        gold = "" if i % 5 == 4 else label if i % 3 else ("positive", "negative")[i % 2]
        rows.append(binary_row(f"r/{i}.txt", f"review {i}", label, 0.2 + 0.6 * (i % 2), 9, False, gold,
                               (gold == label) if gold else None, "ok"))
    return rows + [binary_row("bad.bin", "", "", None, 0, False, "positive", None, "binary file")]


def expected(groups: list[tuple[str, list]]) -> list[tuple[str, int, str]]:
    """The table's rows as the GUI thread computed them before the fix: the Metrics tab's line of
    ``corpus_metrics`` of each group (called here directly)."""
    from desktop_app.panels.corpus.panel import metrics_line

    return [(name, len(rows), metrics_line(corpus_metrics(rows))) for name, rows in groups]


@pytest.fixture
def metrics_calls(monkeypatch):
    """Every ``corpus_metrics`` call of the app's modules (each module that imported it, the slices' module too),
    recorded as ``(thread ident, rows)`` and passed on."""
    import desktop_app.panels.corpus.a_vs_b  # noqa: F401 - the modules that compute metrics, imported to be patched
    import desktop_app.panels.corpus.map_slices  # noqa: F401
    import desktop_app.workers.corpus.metrics  # noqa: F401

    calls = []

    def recording(rows, *args, **kwargs):
        calls.append((threading.get_ident(), len(rows)))
        return corpus_metrics(rows, *args, **kwargs)

    for name, module in list(sys.modules.items()):
        if name.startswith("desktop_app") and getattr(module, "corpus_metrics", None) is corpus_metrics:
            monkeypatch.setattr(module, "corpus_metrics", recording)
    monkeypatch.setattr("desktop_app.panels.corpus.map_slices.corpus_metrics", recording, raising=False)
    return calls


def on_gui_thread(calls) -> list[int]:
    """The row counts of the recorded calls made on the GUI thread."""
    return [n for ident, n in calls if ident == threading.main_thread().ident]


def test_the_slices_show_corpus_metrics_of_all_rows_a_selection_and_two_slices(qtbot, panels, metrics_calls):
    batch, corpus = panels
    rows = labelled_rows()
    batch.table_model.append_rows(rows)
    m = corpus.map
    m.select_rows(rows[0:10])
    assert m.slices.save_selection("first ten") is not None
    m.select_rows(rows[5:25], "middle")
    assert m.slices.save_selection("middle") is not None
    m.select_rows(rows[20:37])
    assert on_gui_thread(metrics_calls) == []
    got = wait_slices(qtbot, corpus)
    assert got == expected([("All rows", rows), ("Map selection", rows[20:37]), ("first ten", rows[0:10]),
                            ("middle", rows[5:25])])
    # recounted by hand: rows 0-9 with gold are 0-3 and 5-8, the wrong ones 0, 3 and 6
    assert got[2][1] == 10 and "accuracy 62.5%" in got[2][2] and "8 with gold" in got[2][2]
    assert got[0][1] == 41
    assert metrics_calls and on_gui_thread(metrics_calls) == []
    # a slice's rows are those of its sources, in table order
    assert [r.source for r in m.slices.rows_of(m.slices.saved()[1])] == [r.source for r in rows[5:25]]


def test_filters_while_the_slices_are_hidden_compute_nothing_and_showing_them_computes_once(qtbot, panels,
                                                                                            metrics_calls, tmp_path):
    batch, corpus = panels
    rows = labelled_rows()
    corpus.tabs.setCurrentIndex(0)  # the Metrics tab: the map and its slices are hidden
    batch.table_model.append_rows(rows)
    box = corpus.map.slices
    batch.navigation.show_errors_first()
    batch.ui.category_combo.setCurrentText("All")
    corpus.map.select_rows(rows[:12], "twelve")
    box.save_selection("twelve")
    corpus.map.select_rows(rows[12:30])
    batch.ui.search_edit.setText("review 1")
    qtbot.wait(300)
    assert on_gui_thread(metrics_calls) == []
    assert box.requests == 0 and box.updating  # nothing asked of the worker either
    assert box.export(0, str(tmp_path / "twelve.csv")) == 12  # exporting needs no numbers
    got = wait_slices(qtbot, corpus)
    assert box.requests == 1
    assert got == expected([("All rows", rows), ("Map selection", rows[12:30]), ("twelve", rows[:12])])
    # shown: a filter that keeps the map selection asks nothing; another selection asks again, on the worker
    batch.navigation.show_errors_first()
    batch.ui.search_edit.setText("")
    qtbot.wait(100)
    assert box.requests == 1 and not box.updating
    corpus.map.select_rows(rows[:5])
    assert box.updating and box.metrics_rows()[1][:2] == ("Map selection", 5)  # the count at once
    assert box.metrics_rows()[1][2] == got[1][2]  # the selection's previous numbers, greyed, until the new ones come
    from desktop_app.panels.corpus.map_slices import UPDATING_TIP

    assert box.table.item(1, 2).toolTip() == UPDATING_TIP
    assert box.metrics_rows()[2] == got[2] and box.table.item(2, 2).toolTip() == ""  # the slice's rows: unchanged
    qtbot.waitUntil(lambda: not box.updating, timeout=WAIT_MS)
    assert box.requests == 2 and box.metrics_rows()[1] == expected([("Map selection", rows[:5])])[0]
    assert on_gui_thread(metrics_calls) == []


def test_a_dock_tab_behind_another_computes_when_raised(qtbot, panels, metrics_calls):
    batch, corpus = panels
    win = QMainWindow()
    qtbot.addWidget(win)
    win.setCentralWidget(QLabel("centre"))
    docks = []
    for title, widget in (("Corpus", corpus), ("Other", QLabel("other"))):
        docks.append(QDockWidget(title))
        docks[-1].setWidget(widget)
        win.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, docks[-1])
    win.tabifyDockWidget(*docks)
    corpus.tabs.setCurrentIndex(corpus.tabs.indexOf(corpus.map.parentWidget().parentWidget()))
    win.resize(1200, 800)
    win.show()
    try:
        docks[1].raise_()
        qtbot.wait(100)
        box = corpus.map.slices
        asked = box.requests
        rows = labelled_rows()
        batch.table_model.append_rows(rows)
        corpus.map.select_rows(rows[:7])
        qtbot.wait(700)  # past the throttle of arriving rows
        assert on_gui_thread(metrics_calls) == []
        assert box.isVisible() and not box.shown()  # "visible" to Qt, behind the other tab
        assert box.requests == asked and box.updating
        docks[0].raise_()
        qtbot.waitUntil(lambda: not box.updating, timeout=WAIT_MS)
        assert box.requests == asked + 1
        assert box.metrics_rows() == expected([("All rows", rows), ("Map selection", rows[:7])])
    finally:
        corpus.setParent(None)  # the fixture shuts it down: the window must not delete it


def test_a_session_brings_back_the_slices_with_their_numbers(qtbot, tiny_model_dir, tmp_path, metrics_calls):
    """The slices of a session opened over the same rows show the numbers they had; the session's workspace (Read)
    hides the Corpus dock, so nothing is computed until the Corpus workspace shows it."""
    from desktop_app.window.session import save_open as session

    rows = labelled_rows()
    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    corpus = win.panels["corpus"]
    win.panels["batch"].table_model.append_rows(rows)
    win.workspaces.switch("corpus")
    corpus.map.select_rows(rows[3:15])  # the Map tab is not raised yet: computed once wait_slices raises it
    corpus.map.slices.save_selection("a dozen")
    corpus.map.select_rows(rows[20:26], "six")
    corpus.map.slices.save_selection("six")
    corpus.map.select_rows([])
    before = wait_slices(qtbot, corpus)
    assert [name for name, *_ in before] == ["All rows", "a dozen", "six"]
    with qtbot.waitSignal(win.state.events.prediction, timeout=WAIT_MS):
        win.open_review("A slow start, then a wonderful second half.")
    win.workspaces.switch("read")
    path = tmp_path / "s.aesession.json"
    session.write_session(session.capture(win), path)

    other = loaded_window(qtbot, tiny_model_dir, panels=True)
    other_corpus = other.panels["corpus"]
    other.panels["batch"].table_model.append_rows(labelled_rows())  # the same files scored again: new row objects
    other.workspaces.switch("read")
    other_corpus.tabs.setCurrentIndex(other_corpus.tabs.indexOf(other_corpus.map.parentWidget().parentWidget()))
    box = other_corpus.map.slices
    done = []
    assert session.open_session(other, path, done.append)
    qtbot.waitUntil(lambda: bool(done), timeout=WAIT_MS)
    assert [s.name for s in box.saved()] == ["a dozen", "six"]
    assert other.workspaces.current.key == "read" and box.requests == 0
    other.workspaces.switch("corpus")
    assert wait_slices(qtbot, other_corpus) == before
    assert on_gui_thread(metrics_calls) == []
    for w in (win, other):
        w.shutdown_workers()
