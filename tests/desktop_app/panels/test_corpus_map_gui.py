"""The corpus map (issue 42), offscreen: the Map tab places the batch rows by their kept vectors (PCA equal to
scikit-learn's on those vectors), a lasso selection filters the table and the Corpus metrics (recounted here),
slices save, show and export, a click opens a text, the explored text gets its neighbours, and sessions restore
the slices and settings."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from gui_helpers import loaded_window, wait_metrics
from sklearn.decomposition import PCA

from model.batch import read_results

pytestmark = [pytest.mark.gui, pytest.mark.timeout(240)]
WAIT_MS = 60_000


def _score(qtbot, batch, tiny_predictor, reviews):
    batch.set_predictor(tiny_predictor)
    batch.ui.label_column_edit.setText("label")
    with qtbot.waitSignal(batch.scoring_finished, timeout=WAIT_MS):
        batch.add_paths([str(reviews)])
    return batch.table_model.rows()


def _mapped(qtbot, corpus, method="pca"):
    corpus.tabs.setCurrentIndex(corpus.tabs.indexOf(corpus.map.parentWidget().parentWidget()))  # the Map tab
    with qtbot.waitSignal(corpus.map.projected, timeout=WAIT_MS):
        assert corpus.map.project(method)
    return corpus.map


def test_map_places_rows_and_a_lasso_filters_table_and_metrics(qtbot, panels, tiny_predictor, reviews, tmp_path):
    batch, corpus = panels
    rows = _score(qtbot, batch, tiny_predictor, reviews)
    m = _mapped(qtbot, corpus)
    scored = [i for i, r in enumerate(rows) if r.ok]
    assert len(rows) == 31 and len(scored) == 30 and len(m.rows) == 30 and m.plot.xy.shape == (30, 2)
    vectors = batch.row_vectors.gather(len(rows))
    assert vectors.rows.tolist() == scored and vectors.dim == tiny_predictor.config.d_model
    np.testing.assert_allclose(m.plot.xy, PCA(2, svd_solver="full").fit_transform(vectors.vectors.astype(float)),
                               atol=1e-4)
    # a lasso around the left half of the points
    xy = m.plot.xy
    mid = float(np.median(xy[:, 0]))
    lo, hi = xy.min(axis=0) - 1, xy.max(axis=0) + 1
    polygon = np.array([[lo[0], lo[1]], [mid, lo[1]], [mid, hi[1]], [lo[0], hi[1]]])
    inside = [m.rows[i] for i in range(30) if xy[i, 0] < mid]
    m.plot.set_mode("lasso")
    m.plot.select_shape(polygon)
    assert batch.proxy.rowCount() == len(inside) > 0
    assert {id(r) for r in batch.proxy.visible_rows()} == {id(r) for r in inside}
    metrics = wait_metrics(qtbot, corpus, len(inside))
    gold = [r for r in inside if r.gold]
    assert metrics.n_with_gold == len(gold)
    assert metrics.accuracy == pytest.approx(sum(r.label == r.gold for r in gold) / len(gold))
    assert "map selection" in corpus.scope_label.text()
    # faded points: those the table now hides
    m.recolour()
    # a slice: saved, listed with its numbers, shown again after clearing, exported
    piece = m.slices.save_selection("left half")
    assert piece is not None and len(piece.sources) == len(inside)
    names = [row[0] for row in m.slices.metrics_rows()]
    assert names == ["All rows", "Map selection", "left half"]
    m.select_rows([])
    assert batch.proxy.rowCount() == 31
    m.slices.show_slice(0)
    assert batch.proxy.rowCount() == len(inside) and batch.proxy.row_filter.points_name == "left half"
    out = tmp_path / "slice.csv"
    assert m.slices.export(0, str(out)) == len(inside)
    assert [r.source for r in read_results(out)] == [r.source for r in inside]


def test_click_opens_and_explored_text_gets_neighbours(qtbot, panels, tiny_predictor, reviews):
    batch, corpus = panels
    rows = _score(qtbot, batch, tiny_predictor, reviews)
    m = _mapped(qtbot, corpus)
    corpus.map.set_predictor(tiny_predictor)
    opened = []
    batch.review_activated.connect(opened.append)
    m.plot.point_clicked.emit(3)
    assert opened == [m.rows[3].text]
    m.set_explored(rows[0].text)
    qtbot.waitUntil(lambda: m.neighbours.count() == 10, timeout=WAIT_MS)
    vectors = batch.row_vectors.gather(len(rows))
    v = vectors.vectors
    sim = (v @ v[0]) / (np.linalg.norm(v, axis=1) * np.linalg.norm(v[0]))
    sim[0] = -np.inf  # the text itself is not its own neighbour
    # the ten most similar texts by cosine; the fixture repeats texts, so equal similarities may come in either order
    # (float rounding decides a tie): compare the similarities, not the order of tied rows
    at = dict(zip(vectors.rows.tolist(), sim.tolist()))
    got = m.nearest.neighbour_rows
    assert len(set(got)) == 10 and int(vectors.rows[0]) not in got
    np.testing.assert_allclose(sorted((at[r] for r in got), reverse=True), np.sort(sim)[::-1][:10], atol=1e-5)
    assert m.plot.star.data.shape[0] == 1 and len(m.plot.marks.data) == 10
    np.testing.assert_allclose([m.plot.star.data[0]["x"], m.plot.star.data[0]["y"]], m.plot.xy[0], atol=1e-4)


def test_colourings_follow_the_task(qtbot, panels, tiny_predictor, reviews):
    batch, corpus = panels
    _score(qtbot, batch, tiny_predictor, reviews)
    m = _mapped(qtbot, corpus)
    modes = [m.colour_box.itemData(i) for i in range(m.colour_box.count())]
    assert modes[:3] == ["predicted", "gold", "correct"] and "word" in modes
    m.colour_box.setCurrentIndex(modes.index("correct"))
    entries = [item[1].text for item in m.plot.legend.items]
    assert any(t.startswith("right") for t in entries) and any(t.startswith("wrong") for t in entries)
    m.colour_box.setCurrentIndex(modes.index("word"))
    m.word_edit.setText("wonderful")
    m.word_edit.editingFinished.emit()
    entries = [item[1].text for item in m.plot.legend.items]
    n_word = sum("wonderful" in r.text for r in m.rows)
    assert any(t.startswith("“wonderful” occurs") and f"({n_word:,})" in t for t in entries)


def test_sessions_restore_the_map_settings_and_slices(qtbot, tiny_model_dir, tmp_path):
    from desktop_app.map_settings import MapSettings, Slice
    from desktop_app.window.session import save_open as session

    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    saved = (Slice("praise", ("a.csv:row 1", "a.csv:row 3")), Slice("pans", ("b.txt",)))
    win.corpus_map.apply_settings(MapSettings("umap", "gold", "", "great", "lasso", saved))
    with qtbot.waitSignal(win.state.events.prediction, timeout=WAIT_MS):
        win.open_review("A slow start, then a wonderful second half.")
    path = tmp_path / "s.aesession.json"
    session.write_session(session.capture(win), path)
    other = loaded_window(qtbot, tiny_model_dir, panels=True)
    done = []
    assert session.open_session(other, path, done.append)
    qtbot.waitUntil(lambda: bool(done), timeout=WAIT_MS)
    got = other.corpus_map.settings()
    assert got.slices == saved and (got.projection, got.word, got.select) == ("umap", "great", "lasso")
    assert session.read_session(path).corpus_map.slices == saved
    bad = path.read_text(encoding="utf-8").replace('"lasso"', '"circle"')
    path.write_text(bad, encoding="utf-8")
    with pytest.raises(session.SessionError, match="corpus_map.select"):
        session.read_session(path)
    for w in (win, other):
        w.shutdown_workers()


@pytest.mark.slow
def test_umap_runs_in_a_child_with_progress_and_cancel(qtbot, panels, tiny_predictor, reviews):
    pytest.importorskip("umap")
    batch, corpus = panels
    _score(qtbot, batch, tiny_predictor, reviews)
    m = _mapped(qtbot, corpus, "pca")
    pca = m.plot.xy.copy()
    reports = []
    m.handle.worker.yielded.connect(lambda _rid, value: reports.append(value))
    assert m.project("umap") and m.cancel_button.isEnabled()
    qtbot.waitUntil(lambda: len(reports) > 0, timeout=120_000)  # the child is fitting: an epoch reported
    m.cancel_button.click()
    qtbot.waitUntil(lambda: "cancelled" in m.status.text(), timeout=WAIT_MS)
    assert np.array_equal(m.plot.xy, pca)  # the previous projection stays
    assert all(done <= total for done, total in reports)


def test_clear_and_a_new_scoring_drop_every_filter_and_the_dock_names_a_map_selection(qtbot, panels, tiny_predictor,
                                                                                     reviews):
    """Issue 56: Clear kept the map selection (ids of rows no longer in the table), so the same folder scored again
    showed "Showing 0 of 31 (filtered)", and nothing in the batch dock said that a selection filtered the table."""
    from desktop_app.panels.batch.row_filter import MISCLASSIFIED, RowFilter

    batch, corpus = panels
    rows = _score(qtbot, batch, tiny_predictor, reviews)
    m = _mapped(qtbot, corpus)
    m.select_rows(m.rows[:13])
    assert batch.proxy.rowCount() == 13
    assert not batch.ui.corpus_filter_button.isHidden()
    assert batch.ui.corpus_filter_button.text() == "\u2715 map selection (13 texts)"
    batch.ui.search_edit.setText("review")
    batch.ui.category_combo.setCurrentText(MISCLASSIFIED)
    batch.navigation.set_cell_filter("positive", "negative")
    batch.clear()
    assert batch.proxy.row_filter == RowFilter() and batch.ui.corpus_filter_button.isHidden()
    assert (batch.ui.search_edit.text(), batch.ui.category_combo.currentText()) == ("", "All")
    with qtbot.waitSignal(batch.scoring_finished, timeout=WAIT_MS):
        batch.add_paths([str(reviews)])
    assert batch.proxy.rowCount() == len(rows) == 31
    assert "filtered" not in batch.ui.summary_label.text()
    # a new scoring (no Clear) drops a selection and a search too; the button removes the selection alone
    m = _mapped(qtbot, corpus)
    m.select_rows(m.rows[:5], "five")
    assert batch.ui.corpus_filter_button.text() == "\u2715 five (5 texts)"
    batch.ui.corpus_filter_button.click()
    assert batch.proxy.rowCount() == 31 and batch.ui.corpus_filter_button.isHidden()
    m.select_rows(m.rows[:5])
    batch.ui.search_edit.setText("review 1")
    with qtbot.waitSignal(batch.scoring_finished, timeout=WAIT_MS):
        batch.add_paths([str(reviews)])
    assert batch.proxy.row_filter == RowFilter() and batch.ui.search_edit.text() == ""
    assert batch.proxy.rowCount() == 62


def test_umap_of_a_handful_of_texts_shows_pca_with_a_note(qtbot, panels, tiny_predictor, tmp_path):
    """Issue 56: UMAP of a handful of texts failed in the map's child process (a SciPy error). The map shows PCA and
    says why, through the same code as the command line; no child process is left."""
    import multiprocessing

    pytest.importorskip("umap")
    path = tmp_path / "three.csv"
    path.write_text("text,label\na wonderful film,positive\na dreadful film,negative\nloved it,positive\n",
                    encoding="utf-8")
    batch, corpus = panels
    _score(qtbot, batch, tiny_predictor, path)
    m = _mapped(qtbot, corpus, "umap")
    assert m.projector.result.method == "pca" and m.plot.xy.shape == (3, 2)
    assert "UMAP needs at least 4 texts, 3 have vectors: PCA shown instead" in m.status.text()
    assert m.projection_box.currentData() == "pca" and "failed" not in m.status.text()
    assert not [p for p in multiprocessing.active_children() if p.name == "corpus-map-umap"]


def test_clear_empties_the_map_legend_too(qtbot, panels, tiny_predictor, reviews):
    """Under xvfb, 30 IMDB reviews mapped with UMAP, then Clear: the points went, the key under the empty map still
    said "negative (16)  positive (14)" (issue 56 put the legend in the plot's layout, and Clear reset the points
    only)."""
    batch, corpus = panels
    _score(qtbot, batch, tiny_predictor, reviews)
    m = _mapped(qtbot, corpus)
    assert [item[1].text for item in m.plot.legend.items]  # a key for the points
    batch.clear()
    assert len(m.plot.xy) == 0
    assert [item[1].text for item in m.plot.legend.items] == []
