"""The Corpus dock's Export > Report (HTML) and Metrics (JSON), offscreen: the scorer's files, written from what the
dock shows (the rows the Metrics tab describes, the map when drawn), equal to the scorer's own writer on the same
rows; nothing to report and an unwritable path are messages, never a crash."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from gui_helpers import wait_metrics

from model.corpus import corpus_metrics
from model.report.report import DEFAULT_TOP, metrics_dict
from model.batch.rows import precision_of

pytestmark = [pytest.mark.gui, pytest.mark.timeout(240)]
WAIT_MS = 60_000


def _written(qtbot, report, save, path) -> str:
    with qtbot.waitSignal(report.message, timeout=WAIT_MS) as got:
        assert save(str(path))
    return got.args[0]


def test_report_and_metrics_are_the_scorers_of_the_rows_shown(qtbot, panels, tiny_predictor, reviews, tmp_path):
    batch, corpus = panels
    report = corpus.report
    assert not report.save_report(str(tmp_path / "early.html"))  # nothing scored yet: a message, no file
    assert not (tmp_path / "early.html").exists()
    batch.set_predictor(tiny_predictor)
    batch.ui.label_column_edit.setText("label")
    with qtbot.waitSignal(batch.scoring_finished, timeout=WAIT_MS):
        batch.add_paths([str(reviews)])
    rows = batch.table_model.rows()
    wait_metrics(qtbot, corpus, len(rows))

    said = _written(qtbot, report, report.save_metrics, tmp_path / "metrics.json")
    assert said.startswith("Saved the corpus metrics to") and said.endswith("metrics.json")
    want = metrics_dict(corpus_metrics(rows, labels=tuple(tiny_predictor.labels)), None, DEFAULT_TOP, precision_of(rows))
    assert json.loads((tmp_path / "metrics.json").read_text(encoding="utf-8")) == json.loads(json.dumps(want))

    with qtbot.waitSignal(corpus.map.projected, timeout=WAIT_MS):
        assert corpus.map.project("pca")
    _written(qtbot, report, report.save_report, tmp_path / "report.html")
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "Corpus report" in html and "Corpus map (PCA)" in html
    assert f"all {len(rows):,} rows" in html and "empty text" in html  # the scope and the failed row
    assert "<script" not in html

    batch.ui.search_edit.setText("wonderful")  # the Metrics tab describes the filter: so do the files
    kept = [r for r in rows if r.ok and "wonderful" in r.text]
    qtbot.waitUntil(lambda: corpus.metrics is not None and corpus.metrics.n_rows == len(kept), timeout=WAIT_MS)
    _written(qtbot, report, report.save_metrics, tmp_path / "filtered.json")
    got = json.loads((tmp_path / "filtered.json").read_text(encoding="utf-8"))
    assert 0 < got["n_scored"] == len(kept) < len(rows) - 1 and got["n_failed"] == 0
    _written(qtbot, report, report.save_report, tmp_path / "filtered.html")
    assert "search \u201cwonderful\u201d" in (tmp_path / "filtered.html").read_text(encoding="utf-8")


def test_an_unwritable_path_is_a_message(qtbot, panels, tiny_predictor, reviews, tmp_path):
    batch, corpus = panels
    batch.set_predictor(tiny_predictor)
    with qtbot.waitSignal(batch.scoring_finished, timeout=WAIT_MS):
        batch.add_paths([str(reviews)])
    wait_metrics(qtbot, corpus, len(batch.table_model.rows()))
    target = tmp_path / "no such folder" / "report.html"
    with qtbot.waitSignal(corpus.report.failed, timeout=WAIT_MS) as got:
        assert corpus.report.save_report(str(target))
    assert str(target) in got.args[0] and not target.exists()
