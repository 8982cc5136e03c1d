"""The "What if" dock and the Corpus dock's "What if" tab (issue 43), offscreen, on real models."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from gui_helpers import corpus_panels, loaded_window
from PySide6.QtCore import Qt

from desktop_app.panels.whatif_widgets import edit_at, marked
from model.batch.rows import binary_row
from model.counterfactuals import counterfactual_metrics

pytestmark = [pytest.mark.gui, pytest.mark.timeout(240)]
WAIT_MS = 120_000
TEXT = "This movie was great and the acting is very good. The story is wonderful."


def _analysed(qtbot, win, text: str) -> None:
    win.analyze_text(text)
    qtbot.waitUntil(lambda: win.state.prediction is not None and win.state.prediction.text == text, timeout=WAIT_MS)


def test_edits_of_the_current_text_open_with_the_original_pinned(qtbot, tiny_model_dir):
    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    panel = win.panels["whatif"]
    assert win.docks.get("What if").isHidden() and "What if" in {a.text() for a in win.docks.panels_menu.actions()}
    win.docks.raise_view("What if")
    assert not win.docks.get("What if").isHidden()
    _analysed(qtbot, win, TEXT)
    for name, box in panel.picker.boxes.items():
        box.setChecked(name in ("word_replacer", "negation", "hotflip"))
    panel.run_generators()
    qtbot.waitUntil(lambda: not panel.running and bool(panel.edits), timeout=WAIT_MS)
    assert panel.table.rowCount() == len(panel.edits) >= 4
    assert {e.generator for e in panel.edits} == {"word_replacer", "negation", "hotflip"}
    panel.table.sortItems(4, Qt.AscendingOrder)  # by the change of probability, numerically
    deltas = [edit_at(panel.table, panel.edits, r).delta for r in range(panel.table.rowCount())]
    assert deltas == sorted(deltas)
    first = edit_at(panel.table, panel.edits, 0)
    assert panel.table.item(0, 2).text().count("[") == len(first.changes) or first.generator == "word_replacer"
    panel.table.cellClicked.emit(0, 1)
    _wait_text(qtbot, win, first.edited_text)
    assert [p.text for p in win.state.pins] == [TEXT]
    second = edit_at(panel.table, panel.edits, 1)
    panel.table.cellClicked.emit(1, 1)
    _wait_text(qtbot, win, second.edited_text)
    assert [p.text for p in win.state.pins] == [TEXT]  # still the original, not the first edit
    reported = second.edited_probabilities
    np.testing.assert_allclose(win.state.prediction.probabilities, reported, atol=2e-5)


def _wait_text(qtbot, win, text):
    qtbot.waitUntil(lambda: win.state.prediction is not None and win.state.prediction.text == text, timeout=WAIT_MS)


def test_smallest_flip_shows_one_edit(qtbot, tiny_model_dir):
    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    panel = win.panels["whatif"]
    _analysed(qtbot, win, TEXT)
    panel.run_search()
    qtbot.waitUntil(lambda: not panel.running, timeout=WAIT_MS)
    assert len(panel.edits) == 1 and panel.table.rowCount() == 1
    assert "Smallest flip" in panel.status.text() and "model evaluations" in panel.status.text()


def test_marked_text_shows_every_change():
    from model.counterfactuals.base import Settings, Source
    from model.counterfactuals.lexical import Negation, WordReplacer

    (edit,) = WordReplacer().generate(Source("Good acting & a good <b>plot</b>.", settings=Settings()))
    assert marked(edit, False) == "[Good -> Bad] acting & a [good -> bad] <b>plot</b>."
    html = marked(edit, True)
    assert html.count("<s>") == 2 and "&lt;b&gt;plot&lt;/b&gt;" in html
    (neg,) = Negation().generate(Source("It is fine.", settings=Settings()))
    assert marked(neg, False) == "It is [+not] fine."


@pytest.fixture
def panels(qtbot):
    yield from corpus_panels(qtbot)


def test_corpus_tab_counts_flips_by_generator_and_exports_them(panels, qtbot, tiny_predictor, tmp_path):
    batch, corpus = panels
    texts = ["It is a good film and the cast is great.", "The plot was terrible, I didn't like it.",
             "A wonderful, very funny story.", "It isn't bad at all."]
    rows = [binary_row(f"r/{i}.txt", t, "positive", 0.6, 12, False, "", None, "ok") for i, t in enumerate(texts)]
    batch.table_model.append_rows(rows)
    tab = corpus.whatif
    assert "What if" in [corpus.tabs.tabText(i) for i in range(corpus.tabs.count())]
    corpus.set_predictor(tiny_predictor)
    for name, box in tab.picker.boxes.items():
        box.setChecked(name in ("negation", "word_replacer", "ablation_flip"))
    assert tab.start()
    qtbot.waitUntil(lambda: bool(tab.edits) and not tab.running, timeout=WAIT_MS)
    assert tab.metrics == counterfactual_metrics(tab.edits)
    n_lines = sum(1 + len(m["by_class"]) for m in tab.metrics.values())
    assert tab.summary.rowCount() == n_lines
    flipped = [e for e in tab.edits if e.flipped]
    assert tab.flipped.rowCount() == len(flipped)
    out = tab.export(flipped_only=False, path=str(tmp_path / "all.jsonl"))
    lines = [json.loads(x) for x in Path(out).read_text(encoding="utf-8").splitlines()]
    assert len(lines) == len(tab.edits) and {x["source"] for x in lines} <= {r.source for r in rows}
    assert sum(x["flipped"] for x in lines) == len(flipped)


def test_corpus_tab_edits_the_rows_the_corpus_describes(panels, qtbot, tiny_predictor):
    """Issue 56: with "Describes 2 of 4 rows (map selection)" shown, the What if tab edited every scored row. It
    edits the rows the Corpus describes: a map selection's, but all of them whatever the confusion-matrix cell."""
    batch, corpus = panels
    texts = ["It is a good film and the cast is great.", "The plot was terrible, I didn't like it.",
             "A wonderful, very funny story.", "It isn't bad at all."]
    rows = [binary_row(f"r/{i}.txt", t, "positive", 0.6, 12, False, "positive", True, "ok")
            for i, t in enumerate(texts)]
    batch.table_model.append_rows(rows)
    tab = corpus.whatif
    corpus.set_predictor(tiny_predictor)
    for name, box in tab.picker.boxes.items():
        box.setChecked(name in ("negation", "ablation_flip"))
    corpus.map.select_rows(batch.rows()[1:3])
    batch.navigation.set_cell_filter("negative", "negative")  # hides every row of the table, not of the Corpus
    assert batch.proxy.rowCount() == 0
    assert tab.start()
    assert "map selection (2 texts)" in tab.status.text()
    qtbot.waitUntil(lambda: bool(tab.edits) and not tab.running, timeout=WAIT_MS)
    assert {e.source for e in tab.edits} == {texts[1], texts[2]}  # the texts edited
    corpus.map.select_rows([])
    batch.ui.search_edit.setText("no such text")
    assert not tab.start() and "no scored row among the rows the Corpus describes" in tab.status.text()


def test_the_what_if_settings_follow_a_task_change(qtbot, tmp_path):
    """Model > Task: a one-output head read as multi-label (a sigmoid) hides the threshold a regression flip needs,
    and read as a regression again shows it, in both "What if" pickers (before, only a model load updated them)."""
    pytest.importorskip("transformers")
    from tests.fixtures.tiny_hf import make_tiny_hf_dir

    folder = make_tiny_hf_dir(tmp_path / "sts", "bert", task="regression", seed=5, init_std=0.5)
    win = loaded_window(qtbot, folder, panels=True)
    failed = []
    win.controller.task_failed.connect(failed.append)
    pickers = (win.panels["whatif"].picker, win.panels["corpus"].whatif.picker)
    assert win.state.info.task == "regression" and not any(p.threshold.isHidden() for p in pickers)
    for kind, hidden in (("multi_label", True), ("regression", False)):
        win.controller.set_task(kind)
        qtbot.waitUntil(lambda k=kind: failed or win.state.info.task == k, timeout=WAIT_MS)
        assert not failed and [p.threshold.isHidden() for p in pickers] == [hidden, hidden], (kind, failed)
