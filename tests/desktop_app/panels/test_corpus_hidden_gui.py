"""The Corpus dock computes its metrics only while someone can see it, in the real main window, offscreen: while it is
hidden (another workspace, or its tab behind another dock's) rows arriving and filter changes ask its worker nothing;
shown again, it computes once, with the current rows and filter, the numbers of :func:`model.corpus.metrics.
corpus_metrics`; Export > Metrics (JSON) while it is hidden still writes the current numbers (computed on demand).
Before, it recomputed as rows arrived (at most twice a second) however hidden, beside a 25,000-review batch."""

from __future__ import annotations

import json
import threading

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from gui_helpers import loaded_window, wait_metrics

from model.batch.rows import binary_row, precision_of
from model.corpus.metrics import corpus_metrics
from model.report.report import DEFAULT_TOP, metrics_dict

pytestmark = [pytest.mark.gui, pytest.mark.timeout(240)]
WAIT_MS = 60_000


def labelled_rows(start: int, n: int) -> list:
    """Scored rows ``start`` .. ``start + n - 1``: every third one wrong, every fifth without gold."""
    rows = []
    for i in range(start, start + n):
        label = ("negative", "positive")[i % 2]
        gold = "" if i % 5 == 4 else label if i % 3 else ("positive", "negative")[i % 2]
        rows.append(binary_row(f"r/{i}.txt", f"review {i}", label, 0.2 + 0.6 * (i % 2), 9, False, gold,
                               (gold == label) if gold else None, "ok"))
    return rows


@pytest.fixture
def metrics_calls(monkeypatch):
    """Every ``corpus_metrics`` call of the corpus workers (the Metrics tab's and the slices'), as row counts."""
    import desktop_app.workers.corpus.metrics as jobs

    calls = []

    def recording(rows, *args, **kwargs):
        calls.append((threading.get_ident(), len(rows)))
        return corpus_metrics(rows, *args, **kwargs)

    monkeypatch.setattr(jobs, "corpus_metrics", recording)
    return calls


@pytest.fixture
def window(qtbot, tiny_model_dir):
    """The real main window with its panels, the model loaded, in the Corpus workspace."""
    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    win.workspaces.switch("corpus")
    wait_metrics(qtbot, win.panels["corpus"], 0)
    yield win
    win.shutdown_workers()


def _line(rows, corpus) -> str:
    """The Metrics tab's line of numbers of ``rows``, computed here directly."""
    from desktop_app.panels.corpus.panel import metrics_line

    return metrics_line(corpus_metrics(rows, labels=corpus.batch.table_model.metrics_schema(rows)[0]))


def _arrive(qtbot, batch, rows, chunk: int = 8) -> None:
    """Append ``rows`` as a job sends them: ``chunk`` at a time, 150 ms apart (past the 500 ms throttle in all)."""
    for i in range(0, len(rows), chunk):
        batch.table_model.append_rows(rows[i : i + chunk])
        qtbot.wait(150)


def test_a_hidden_dock_computes_nothing_and_showing_it_computes_once(qtbot, window, metrics_calls):
    batch, corpus = window.panels["batch"], window.panels["corpus"]
    window.workspaces.switch("read")  # the Corpus dock hidden, as while exploring a text during a long batch
    asked = corpus.updates
    rows = labelled_rows(0, 40)
    _arrive(qtbot, batch, rows)
    batch.ui.search_edit.setText("review 1")  # a filter change meanwhile
    qtbot.wait(700)
    assert metrics_calls == [] and corpus.updates == asked  # nothing asked of the worker
    assert corpus.stale and corpus.metrics.n_rows == 0  # the numbers shown are those before the rows
    window.workspaces.switch("corpus")
    kept = [r for r in rows if "review 1" in r.text]
    m = wait_metrics(qtbot, corpus, len(kept))
    assert corpus.updates == asked + 1 and not corpus.stale  # once, with the current rows and filter
    assert corpus.numbers_label.text() == _line(kept, corpus)
    assert m.n_scored == len(kept) and f"{len(kept)} of {len(rows)} rows" in corpus.scope_label.text()
    assert [n for _ident, n in metrics_calls] == [len(kept)]
    assert all(ident != threading.main_thread().ident for ident, _n in metrics_calls)  # on the worker
    qtbot.wait(700)  # shown and nothing changed: nothing more
    assert corpus.updates == asked + 1


def test_a_dock_tab_behind_another_computes_when_raised(qtbot, window, metrics_calls):
    batch, corpus = window.panels["batch"], window.panels["corpus"]
    table_dock, corpus_dock = window.docks.get("Batch scoring"), window.docks.get("Corpus")
    window.tabifyDockWidget(table_dock, corpus_dock)
    table_dock.raise_()
    qtbot.wait(200)
    assert corpus.isVisible() and corpus.visibleRegion().isEmpty()  # "visible" to Qt, behind the table's tab
    asked = corpus.updates
    rows = labelled_rows(0, 24)
    _arrive(qtbot, batch, rows)
    qtbot.wait(700)
    assert metrics_calls == [] and corpus.updates == asked and corpus.stale
    corpus_dock.raise_()  # no show event: the dock's visibilityChanged
    m = wait_metrics(qtbot, corpus, len(rows))
    assert corpus.updates == asked + 1
    assert corpus.numbers_label.text() == _line(rows, corpus) and m.n_scored == len(rows)


def test_export_while_hidden_writes_the_current_numbers(qtbot, window, metrics_calls, tmp_path):
    batch, corpus = window.panels["batch"], window.panels["corpus"]
    first = labelled_rows(0, 20)
    batch.table_model.append_rows(first)
    wait_metrics(qtbot, corpus, len(first))
    window.workspaces.switch("read")
    rows = first + labelled_rows(20, 21)
    batch.table_model.append_rows(rows[len(first):])
    asked = corpus.updates
    with qtbot.waitSignal(corpus.report.message, timeout=WAIT_MS) as said:
        assert corpus.report.save_metrics(str(tmp_path / "metrics.json"))
    assert said.args[0].startswith("Saved the corpus metrics to")
    labels = batch.table_model.metrics_schema(rows)[0]
    want = metrics_dict(corpus_metrics(rows, labels=labels), None, DEFAULT_TOP, precision_of(rows))
    got = json.loads((tmp_path / "metrics.json").read_text(encoding="utf-8"))
    assert got == json.loads(json.dumps(want)) and got["n_scored"] == 41
    assert corpus.updates == asked + 1 and not corpus.stale  # computed once, on demand, on the dock's worker
    window.workspaces.switch("corpus")  # the dock already shows those numbers: nothing to compute
    qtbot.wait(300)
    assert corpus.updates == asked + 1 and corpus.numbers_label.text() == _line(rows, corpus)


def test_a_filter_undone_while_its_numbers_are_computed_shows_the_undone_ones(qtbot, panels):
    """Before, the dock compared a filter with the one of the numbers shown: a search typed and cleared while its
    numbers were computed left the search's numbers on screen, describing rows the table no longer kept."""
    batch, corpus = panels
    rows = labelled_rows(0, 30)
    batch.table_model.append_rows(rows)
    wait_metrics(qtbot, corpus, len(rows))
    batch.ui.search_edit.setText("review 2")
    corpus.refresh_now()  # its numbers under way (answered on a later event-loop turn) ...
    batch.ui.search_edit.setText("")  # ... when the search is cleared
    qtbot.waitUntil(lambda: not corpus._in_flight and not corpus.timer.isActive(), timeout=WAIT_MS)
    m = wait_metrics(qtbot, corpus, len(rows), timeout_ms=5000)
    assert m.n_rows == len(rows) and corpus.numbers_label.text() == _line(rows, corpus)
