"""``attention-explorer-score --components`` (issue 53, section 5): a ``top_components`` column per scored row,
``metrics.json``'s ``"components"`` (mean |value| per part) and the report's heatmap, all from the one batch code
path; the rows' parts survive the Ray engine's Arrow blocks."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from model.batch import Record, score_records, scoring_actor
from model.scorer import main as score
from model.records.components import top_text

TEXTS = ["Not good at all, a dull film.", "A wonderful, moving story.", "The acting was superb but the plot thin."]


@pytest.fixture
def reviews(tmp_path):
    path = tmp_path / "reviews.csv"
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["text", "label"])
        w.writerows([[t, "positive"] for t in TEXTS] + [["", "negative"]])
    return path


def test_column_metrics_and_report(reviews, tiny_model_dir, tiny_predictor, tmp_path, capsys):
    out, metrics, report = tmp_path / "rows.csv", tmp_path / "metrics.json", tmp_path / "report.html"
    code = score.main([str(reviews), "--model", str(tiny_model_dir), "--out", str(out), "--metrics", str(metrics),
                       "--report", str(report), "--no-progress", "--no-token-scores", "--components"])
    assert code == 1, capsys.readouterr().err  # the empty row failed; the others are scored
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert list(rows[0])[-1] == "top_components"
    splits = [tiny_predictor.component_attribution(t) for t in TEXTS]
    assert [r["top_components"] for r in rows] == [s.top_text() for s in splits] + [""]
    assert rows[0]["top_components"].count(";") == 4
    means = json.loads(metrics.read_text(encoding="utf-8"))["components"]
    assert list(means) == list(splits[0].names)
    expected = np.mean([np.abs(s.values) for s in splits], axis=0)
    np.testing.assert_allclose([means[n] for n in splits[0].names], expected, rtol=1e-5, atol=1e-6)
    html = report.read_text(encoding="utf-8")
    assert "Components the corpus leans on" in html and ">L2<" in html and ">ffn<" in html


def test_without_the_flag_nothing_changes(reviews, tiny_model_dir, tmp_path, capsys):
    out, metrics = tmp_path / "rows.csv", tmp_path / "metrics.json"
    score.main([str(reviews), "--model", str(tiny_model_dir), "--out", str(out), "--metrics", str(metrics),
                "--no-progress", "--no-token-scores"])
    capsys.readouterr()
    assert "top_components" not in out.read_text(encoding="utf-8").splitlines()[0]
    assert "components" not in json.loads(metrics.read_text(encoding="utf-8"))


def test_engine_rows_keep_every_part_and_survive_arrow(tiny_predictor):
    pytest.importorskip("pyarrow", reason="pyarrow is not installed")
    records = [Record("a", TEXTS[0], None), Record("b", None, None, "empty file")]
    rows = [r for chunk in score_records(tiny_predictor, records, components=True) for r in chunk]
    split = tiny_predictor.component_attribution(TEXTS[0])
    assert rows[0].components == split.pairs() and rows[1].components == ()
    assert top_text(rows[0].components) == split.top_text()
    block = scoring_actor.score_block(tiny_predictor, records, components=True)
    assert scoring_actor.table_to_rows(scoring_actor.rows_to_table(block)) == block == rows


def test_a_family_that_cannot_be_split_is_a_usage_error(reviews, tiny_model_dir, tmp_path, capsys, monkeypatch):
    from model.predictor.predictor import Predictor
    from model.records.components import ComponentsNotSupported

    def refuse(self, *a, **k):
        raise ComponentsNotSupported("component attribution cannot split this model's logits exactly: DeBERTa (v1)")

    monkeypatch.setattr(Predictor, "component_attribution", refuse)
    code = score.main([str(reviews), "--model", str(tiny_model_dir), "--out", str(tmp_path / "rows.csv"),
                       "--no-progress", "--components"])
    assert code == 2 and "--components: component attribution cannot split" in capsys.readouterr().err
    assert not (tmp_path / "rows.csv").exists()


def test_the_split_follows_the_rows_verdict(tiny_predictor, monkeypatch):
    """The row's parts are of the output the row shows (its scored probabilities' argmax), not of a second reading: a
    bf16 score and the float32 split can disagree on a close call."""
    from dataclasses import replace

    import model.predictor.predictor as predictor_module

    real = predictor_module.Predictor.score_many

    def flipped(self, *a, **k):  # the scores of a close call read the other way (as bf16 may)
        return [replace(s, probabilities=s.probabilities[::-1].copy()) for s in real(self, *a, **k)]

    monkeypatch.setattr(predictor_module.Predictor, "score_many", flipped)
    rows = [r for chunk in score_records(tiny_predictor, [Record("a", TEXTS[0], None)], components=True) for r in chunk]
    shown = int(np.argmax(rows[0].probabilities))
    assert rows[0].components == tiny_predictor.component_attribution(TEXTS[0], target=shown).pairs()
