"""The corpus dock and the batch table for models other than negative/positive (issue 30), offscreen: a 28-class
confusion matrix drawn and clicked through to the table, the per-class scores, the class columns and filters of the
table, the panel's column fields, multi-label and regression plots. The panels get tiny real Predictors of those
labels and tasks (the root conftest's ``predictor_for``)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from gui_helpers import corpus_panels, wait_metrics
from PySide6.QtCore import Qt

from desktop_app.panels.batch.panel import BatchPanel
from model.batch import ResultRow

pytestmark = [pytest.mark.gui, pytest.mark.timeout(180)]
WAIT_MS = 60_000
EMOTIONS = tuple(f"emotion{k:02d}" for k in range(28))


def class_rows(n: int, labels=EMOTIONS, seed: int = 0) -> list[ResultRow]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        probs = rng.dirichlet(np.ones(len(labels)) * 0.5)
        pred = labels[int(probs.argmax())]
        gold = pred if rng.random() < 0.5 else labels[int(rng.integers(len(labels)))]
        out.append(ResultRow(f"r/{i}.txt", f"text {i}", pred, tuple(float(p) for p in probs), 20, False, gold,
                             pred == gold, "ok", labels=labels))
    return out


@pytest.fixture
def panels(qtbot):
    yield from corpus_panels(qtbot, (900, 700))


def test_a_28_class_confusion_matrix_is_drawn_and_a_cell_click_filters_the_table(qtbot, panels, predictor_for):
    batch, corpus = panels
    batch.set_predictor(predictor_for(EMOTIONS))
    rows = class_rows(1500)
    batch.table_model.append_rows(rows)
    m = wait_metrics(qtbot, corpus, len(rows))
    assert m.labels == EMOTIONS and m.confusion.shape == (28, 28) and m.ece is not None
    plot = corpus.confusion
    corpus.metrics_scroll.ensureWidgetVisible(plot)
    plot.flush()
    assert plot.matrix.shape == (28, 28)
    assert plot.left_axis._labels[3].startswith("4 emotion03") and plot.bottom_axis._labels[27] == "28"
    assert plot.minimumHeight() >= 28 * 24  # every row keeps room for its count: the dock scrolls
    corpus.per_class.flush()
    assert not corpus.per_class.isHidden() and corpus.scatter.isHidden()
    gold, pred = 5, 17
    want = [r for r in rows if r.gold == EMOTIONS[gold] and r.label == EMOTIONS[pred]]
    assert want
    plot.resize(900, 900)
    qtbot.wait(50)
    pos = plot.mapFromScene(plot.cell_center(gold, pred))
    qtbot.mouseClick(plot.viewport(), Qt.LeftButton, pos=pos)
    assert batch.proxy.row_filter.cell == (EMOTIONS[gold], EMOTIONS[pred])
    assert batch.proxy.visible_rows() == want
    assert plot.selected == (gold, pred)


def test_the_table_shows_the_models_class_columns_and_filters(qtbot, panels, predictor_for):
    batch, _corpus = panels
    labels = ("anger", "joy", "sadness")
    batch.set_predictor(predictor_for(labels))
    rows = class_rows(30, labels, seed=2)
    batch.table_model.append_rows(rows)
    model = batch.table_model
    headers = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]
    assert headers[-3:] == ["P(anger)", "P(joy)", "P(sadness)"] and "P(positive)" not in headers
    assert batch.proxy.columnCount() == model.columnCount()
    assert model.index(0, model.column_of("joy")).data() == f"{rows[0].probability('joy'):.3f}"
    items = [batch.ui.category_combo.itemText(i) for i in range(batch.ui.category_combo.count())]
    assert items == ["All", "Predicted anger", "Predicted joy", "Predicted sadness", "Misclassified", "Failed"]
    batch.ui.category_combo.setCurrentText("Predicted joy")
    assert batch.proxy.rowCount() == sum(r.label == "joy" for r in rows)
    batch.ui.view.sortByColumn(model.column_of("sadness"), Qt.SortOrder.DescendingOrder)
    shown = [float(batch.proxy.index(i, model.column_of("sadness")).data()) for i in range(batch.proxy.rowCount())]
    assert shown == sorted(shown, reverse=True)


def test_regression_and_pairs_get_value_and_second_text_columns_and_a_scatter(qtbot, panels, predictor_for):
    batch, corpus = panels
    batch.set_predictor(predictor_for(("LABEL_0",), "regression", pairs=True))
    rows = [ResultRow(f"s{i}", "a", "", (), 9, False, repr(i / 10), None, "ok", text_pair=f"b {i}", value=i / 9,
                      task="regression") for i in range(40)]
    batch.table_model.append_rows(rows)
    model = batch.table_model
    headers = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]
    assert headers[-2:] == ["Second text", "Value"]
    assert model.index(9, len(headers) - 1).data() == "1.000" and model.index(3, len(headers) - 2).data() == "b 3"
    m = wait_metrics(qtbot, corpus, len(rows))
    assert m.task == "regression" and m.regression is not None
    assert not corpus.scatter.isHidden() and corpus.confusion.isHidden() and corpus.reliability.isHidden()
    corpus.scatter.flush()
    assert "MAE" in corpus.scatter.getPlotItem().titleLabel.text
    assert "Spearman" in corpus.numbers_label.text()


def test_the_panel_column_fields_reach_the_job_and_a_missing_column_is_one_message(qtbot, tmp_path, tiny_predictor):
    batch = BatchPanel()
    qtbot.addWidget(batch)
    f = tmp_path / "d.csv"
    f.write_text("body,mood\nA wonderful film,pos\nTerrible,neg\n")
    batch.ui.text_column_edit.setText("body")
    batch.ui.label_column_edit.setText("sentiment")
    batch.set_predictor(tiny_predictor)
    batch.add_paths([str(f)])
    assert "no column named 'sentiment' for the gold label" in batch.ui.message_label.text()
    assert batch.table_model.rowCount() == 0 and not batch.is_running()
    batch.ui.pair_column_edit.setText("other")
    batch.ui.label_column_edit.setText("")
    batch.add_paths([str(f)])
    assert "reads single texts" in batch.ui.message_label.text()
    batch.ui.pair_column_edit.setText("")
    batch.ui.label_column_edit.setText("mood")
    batch.add_paths([str(f)])
    qtbot.waitUntil(lambda: not batch.is_running() and batch.table_model.rowCount() == 2, timeout=WAIT_MS)
    assert [r.gold for r in batch.rows()] == ["positive", "negative"]
    batch.shutdown()


def test_what_drives_it_ranks_words_for_the_chosen_class(qtbot, panels, predictor_for, tiny_predictor):
    batch, corpus = panels
    words = corpus.words
    words.set_predictor(predictor_for(EMOTIONS))
    assert [words.class_combo.itemText(i) for i in range(words.class_combo.count())] == list(EMOTIONS)
    assert words.target() == EMOTIONS[-1]  # no "positive" class: the last, as before
    words.set_predictor(tiny_predictor)
    assert words.target() == "positive"
    words.class_combo.setCurrentText("negative")
    assert words.target() == "negative"


def test_corpus_token_scores_take_a_target_class(tiny_predictor):
    from model.corpus.tokens import corpus_token_scores, target_index

    texts = ["a wonderful film, wonderful acting", "an awful boring film", "wonderful story, awful end"] * 3
    toward_pos = corpus_token_scores(tiny_predictor, texts, min_count=1)
    toward_neg = corpus_token_scores(tiny_predictor, texts, min_count=1, target="negative")
    assert (toward_pos.positive_label, toward_neg.positive_label) == ("positive", "negative")
    assert toward_neg.sides == ("negative", "positive")
    assert toward_pos.tokens != toward_neg.tokens or not np.allclose(toward_pos.scores, toward_neg.scores)
    assert target_index(EMOTIONS, "emotion05") == 5 and target_index(EMOTIONS) == 27
    with pytest.raises(ValueError, match="unknown class"):
        target_index(EMOTIONS, "joy")


def test_the_real_window_scores_a_multi_label_pair_file_into_its_columns_and_dock(qtbot, tmp_path):
    """The app's own wiring (MainWindow -> batch panel, corpus dock): a tiny multi-label model that reads pairs."""
    import json

    from gui_helpers import loaded_window

    from tests.fixtures.tiny_hf import make_tiny_hf_dir

    model = make_tiny_hf_dir(tmp_path / "ml", num_labels=4, task="multi_label", init_std=0.5)
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps({"text": f"first {i}", "text_pair": f"second {i % 3}",
                                        "labels": [f"class_{i % 4}"]}) + "\n" for i in range(16)))
    win = loaded_window(qtbot, model, panels=True)
    batch, corpus = win.panels["batch"], win.panels["corpus"]
    with qtbot.waitSignal(batch.scoring_finished, timeout=WAIT_MS):
        win.paths_dropped.emit([str(data)])
    m = wait_metrics(qtbot, corpus, 16)
    headers = [batch.table_model.headerData(c, Qt.Orientation.Horizontal)
               for c in range(batch.table_model.columnCount())]
    assert headers[-5:] == ["Second text", "P(class_0)", "P(class_1)", "P(class_2)", "P(class_3)"]
    rows = batch.rows()
    assert all(r.ok and r.task == "multi_label" and r.text_pair for r in rows)
    assert m.task == "multi_label" and m.n_with_gold == 16 and m.micro_f1 is not None
    assert corpus.confusion.isHidden() and not corpus.per_class.isHidden()
    assert "micro-F1" in corpus.numbers_label.text()
    assert [corpus.words.class_combo.itemText(i) for i in range(4)] == [f"class_{k}" for k in range(4)]


def test_an_empty_table_shows_the_models_plots_not_p_positive(qtbot, panels, predictor_for):
    batch, corpus = panels
    batch.set_predictor(predictor_for(("not_equivalent", "equivalent"), pairs=True))  # a pair classifier
    qtbot.waitUntil(lambda: corpus.metrics is not None and corpus.metrics.labels == ("not_equivalent", "equivalent"),
                    timeout=WAIT_MS)
    corpus.histogram.flush()
    title = corpus.histogram.getPlotItem().titleLabel.text
    assert "P(positive)" not in title and "confidence" in title
    batch.set_predictor(predictor_for(("similarity",), "regression", pairs=True))
    qtbot.waitUntil(lambda: corpus.metrics is not None and corpus.metrics.task == "regression", timeout=WAIT_MS)

    def regression_plots_shown() -> bool:  # the dock arranges and draws its plots over a few event-loop turns
        corpus.histogram.flush()
        return "predicted value" in corpus.histogram.getPlotItem().titleLabel.text and not corpus.scatter.isHidden()

    qtbot.waitUntil(regression_plots_shown, timeout=WAIT_MS)
    assert corpus.confusion.isHidden()
    assert corpus.grid.getItemPosition(corpus.grid.indexOf(corpus.scatter))[:2] == (0, 0)  # the scatter first
    from desktop_app.panels.batch.table_model import CONFIDENCE, LABEL

    assert batch.ui.view.isColumnHidden(LABEL) and batch.ui.view.isColumnHidden(CONFIDENCE)  # no class, no confidence
    batch.set_predictor(predictor_for(("a", "b", "c")))
    assert not batch.ui.view.isColumnHidden(LABEL) and not batch.ui.view.isColumnHidden(CONFIDENCE)


def test_each_task_type_names_the_corpus_plots_it_shows(qtbot, panels):
    """``TaskType.corpus_plots`` picks the dock's plots, in order; the confusion matrix takes the full width from
    ``NUMBERED`` classes on."""
    from desktop_app.views.corpus.plots import NUMBERED
    from model.tasks.types import TASK_TYPES

    _, corpus = panels
    every = (corpus.confusion, corpus.per_class, corpus.histogram, corpus.reliability, corpus.slices, corpus.scatter)
    for t in TASK_TYPES.values():
        corpus._arrange(t.id, 3)
        shown = [getattr(corpus, name) for name in t.corpus_plots]
        assert [p for p in every if not p.isHidden()] == [p for p in every if p in shown], t.id
        cells = [corpus.grid.getItemPosition(corpus.grid.indexOf(p)) for p in shown]
        assert cells == sorted(cells) and cells[0][:2] == (0, 0), t.id  # in the type's order, row by row
    corpus._arrange("single_label", NUMBERED + 1)
    assert corpus.grid.getItemPosition(corpus.grid.indexOf(corpus.confusion)) == (0, 0, 1, 2)
    corpus._arrange("single_label", 3)
    assert corpus.grid.getItemPosition(corpus.grid.indexOf(corpus.confusion)) == (0, 0, 1, 1)
