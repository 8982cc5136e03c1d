"""Batch scoring of any task (issue 30): the three column options, gold labels read for the model's labels and task,
the rows and columns of multi-class, multi-label, regression and pair models, and bad input (one message each). The
models are tiny real ones built once per session (``conftest.py``): each row is checked against the model's own
``score_many``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from model.batch import GoldReader, RowSchema, Summary, iter_records, read_results, score_records, write_rows
from model.scorer import main as score
from tests.model.batch.conftest import EMOTIONS


def rows_of(predictor, paths, **columns):
    summary = Summary()
    rows = [r for c in score_records(predictor, iter_records(paths, **columns),
                                     on_gold_problem=summary.gold_problem) for r in c]
    summary.add(rows)
    return rows, summary


@pytest.mark.parametrize(("raw", "source", "gold"), [
    ("Joy", "column", "joy"), (" SADNESS ", "column", "sadness"), ("2", "column", "joy"), ("4.0", "column", "sadness"),
    ("JOY", "folder", "joy"), ("reviews", "folder", None), ("", "column", None), (None, "column", None)])
def test_gold_reader_single_label(raw, source, gold):
    assert GoldReader(EMOTIONS).read(raw, source) == (gold, None)


def test_gold_reader_problems_and_other_tasks():
    g, problem = GoldReader(EMOTIONS).read("surprise")
    assert g is None and "'surprise' is not one of the model's labels (anger, fear" in problem
    assert GoldReader(EMOTIONS).read("7")[0] is None  # an id out of range
    ml = GoldReader(EMOTIONS, "multi_label")
    assert ml.read("sadness; Joy;anger") == ("anger;joy;sadness", None)
    assert ml.read("1;3") == ("fear;love", None)
    assert ml.read("joy;boredom")[1] is not None
    reg = GoldReader(("score",), "regression")
    assert reg.read("3.8") == ("3.8", None)
    assert reg.read("high")[0] is None and "not a number" in reg.read("high")[1]
    binary = GoldReader(("negative", "positive"))  # the bundled model keeps pos/neg, 0/1, true/false
    assert [binary.read(v, "folder")[0] for v in ("pos", "neg", "unsup")] == ["positive", "negative", None]
    assert [binary.read(v)[0] for v in ("1", "0", "true", "NEGATIVE")] == ["positive", "negative", "positive",
                                                                          "negative"]


def test_multi_label_explicit_empty_gold_is_a_label_set(tmp_path, emotions_multi, emotions_single):
    """Issue 46: ``"labels": []`` or an empty label cell is the empty label set, a gold label; only a missing field
    or column (or JSON null) is no gold. The metrics of 200 rows, a quarter of them empty, equal scikit-learn's."""
    from sklearn.metrics import f1_score, hamming_loss

    from model.corpus import corpus_metrics

    ml = GoldReader(EMOTIONS, "multi_label")
    assert ml.read("") == ("", None) and ml.read(None) == (None, None) and ml.read(" ", "folder") == (None, None)
    rng = np.random.default_rng(0)
    objs = []
    for i in range(200):
        labels = [] if i % 4 == 0 else sorted({EMOTIONS[k] for k in rng.integers(0, 5, rng.integers(1, 3))})
        objs.append({"text": "x" * int(rng.integers(1, 60)), "labels": labels})
    objs += [{"text": "no labels field"}, {"text": "null labels", "labels": None}]
    f = tmp_path / "toxic.jsonl"
    f.write_text("\n".join(json.dumps(o) for o in objs) + "\n")
    rows, summary = rows_of(emotions_multi, [f])
    assert all(r.ok for r in rows) and [r.has_gold for r in rows] == [True] * 200 + [False, False]
    assert rows[0].gold == "" and rows[0].correct == (rows[0].label == "") and rows[-1].correct is None
    assert summary.with_gold == 200
    m = corpus_metrics(rows)

    def onehot(texts):
        return np.array([[n in t.split(";") for n in EMOTIONS] for t in texts], int)

    y, yhat = onehot([r.gold for r in rows[:200]]), onehot([r.label for r in rows[:200]])
    assert m.n_with_gold == 200
    assert m.micro_f1 == pytest.approx(f1_score(y, yhat, average="micro", zero_division=0), abs=1e-12)
    assert m.hamming_loss == pytest.approx(hamming_loss(y, yhat), abs=1e-12)
    assert m.subset_accuracy == pytest.approx(np.mean((y == yhat).all(1)), abs=1e-12)
    csv = tmp_path / "toxic.csv"  # an empty cell is the empty set; a short row (no cell at all) is no gold
    csv.write_text("text,labels\nfine,\nangry,anger\nshort\n")
    rows, _ = rows_of(emotions_multi, [csv])
    assert [(r.gold, r.has_gold) for r in rows] == [("", True), ("anger", True), ("", False)]
    for fmt in ("csv", "jsonl"):  # the exported rows keep it (their correct column)
        write_rows(tmp_path / f"out.{fmt}", rows)
        assert [r.has_gold for r in read_results(tmp_path / f"out.{fmt}")] == [True, True, False]
    rows, _ = rows_of(emotions_single, [csv])  # single-label: an empty cell stays no gold
    assert [r.has_gold for r in rows] == [False, True, False]


def test_folders_named_after_classes_give_gold(tmp_path, emotions_single):
    for name in ("Joy", "FEAR", "misc"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "a.txt").write_text(f"a text in {name}")
    rows, summary = rows_of(emotions_single, [tmp_path])
    assert [(r.source.split("/")[-2], r.gold) for r in rows] == [("FEAR", "fear"), ("Joy", "joy"), ("misc", "")]
    assert summary.gold_problems == 0  # a folder that is no class is not a problem


def test_csv_columns_multi_class_rows_and_columns(tmp_path, emotions_single):
    f = tmp_path / "emo.csv"
    f.write_text("id,body,emotion\n1,I am so happy,Joy\n2,scared,1\n3,meh,boredom\n4,cry,\n")
    p = emotions_single
    rows, summary = rows_of(p, [f], text_column="body", label_column="emotion")
    assert [r.gold for r in rows] == ["joy", "fear", "", ""]
    assert summary.gold_problems == 1 and "boredom" in summary.gold_examples[0][1]
    assert "1 gold label(s) not understood" in summary.line()
    for row, want in zip(rows, p.score_many(["I am so happy", "scared", "meh", "cry"]), strict=True):
        assert row.label == want.label and np.allclose(row.probabilities, want.probabilities, atol=1e-6)
    r = rows[0]
    assert len(r.probabilities) == 5 and r.labels == EMOTIONS
    assert r.confidence == max(r.probabilities) == r.probability(r.label)
    assert r.correct == (r.label == "joy")
    schema = RowSchema.of_rows(rows)
    assert schema.columns == ("source", "text", "label", "confidence", "p_anger", "p_fear", "p_joy", "p_love",
                              "p_sadness", "num_tokens", "truncated", "gold", "correct", "status", "num_windows",
                              "model", "precision")
    for fmt in ("csv", "jsonl", "parquet"):
        out = tmp_path / f"out.{fmt}"
        write_rows(out, rows)
        assert read_results(out) == rows


def test_jsonl_multi_label_lists_and_pairs_found_without_flags(tmp_path, emotions_multi):
    f = tmp_path / "data.jsonl"
    f.write_text("\n".join(json.dumps(o) for o in [
        {"text": "what a day", "text_pair": "indeed", "labels": ["joy", "love"]},
        {"text": "no", "text_pair": "  ", "labels": []},
        {"text": "hmm", "text_pair": "ok", "labels": [0]}]) + "\n")
    p = emotions_multi
    rows, _ = rows_of(p, [f])
    assert [r.text_pair for r in rows] == ["indeed", None, "ok"]
    assert rows[1].status == "empty second text (sentence pair)" and rows[0].ok and rows[2].ok
    paired = p.score_many(["what a day", "hmm"], text_pairs=["indeed", "ok"])  # the second texts, index-aligned
    for row, want in zip((rows[0], rows[2]), paired, strict=True):
        assert row.label == want.label and np.allclose(row.probabilities, want.probabilities, atol=1e-6)
    alone = p.score_many(["what a day"])[0]  # the second text reaches the model
    assert not np.allclose(alone.probabilities, paired[0].probabilities, atol=1e-6)
    assert [r.gold for r in rows] == ["joy;love", "", "anger"]
    assert rows[0].correct == (set(rows[0].label.split(";")) == {"joy", "love"})
    assert RowSchema.of_rows(rows).columns[:4] == ("source", "text", "text_pair", "label")
    assert "confidence" not in RowSchema.of_rows(rows).columns and rows[0].confidence is None


def test_regression_rows_and_a_non_numeric_gold(tmp_path, similarity):
    f = tmp_path / "sts.tsv"
    f.write_text("text\ttext_pair\tscore\na\tb\t3.5\nc\td\thigh\n")
    rows, summary = rows_of(similarity, [f], label_column="score")
    assert all(r.ok for r in rows) and [r.gold for r in rows] == ["3.5", ""]
    assert summary.gold_problems == 1 and "'high' is not a number" in summary.gold_examples[0][1]
    assert rows[0].value is not None and rows[0].probabilities == () and rows[0].correct is None
    want = similarity.score_many(["a", "c"], text_pairs=["b", "d"])
    assert [r.value for r in rows] == pytest.approx([s.value for s in want], abs=1e-6)
    assert RowSchema.of_rows(rows).columns == ("source", "text", "text_pair", "label", "value", "num_tokens",
                                               "truncated", "gold", "correct", "status", "num_windows", "model",
                                               "precision")
    out = tmp_path / "out.csv"
    write_rows(out, rows)
    assert read_results(out) == rows


def test_a_pair_on_a_single_text_model_is_a_row_status(tmp_path, tiny_predictor):
    f = tmp_path / "nli.csv"
    f.write_text("text,text_pair,label\na,b,positive\n")
    rows, _ = rows_of(tiny_predictor, [f])
    assert not rows[0].ok and "reads single texts" in rows[0].status and rows[0].gold == "positive"


def test_named_columns_missing_are_statuses(tmp_path, emotions_single):
    f = tmp_path / "d.csv"
    f.write_text("text,label\na,joy\n")
    rows, _ = rows_of(emotions_single, [f], pair_column="hypothesis")
    assert rows[0].status == "no column named 'hypothesis' for the second text (sentence pair) (columns: 'text', " \
                             "'label')"
    rows, _ = rows_of(emotions_single, [f], label_column="gold_label")
    assert "no column named 'gold_label' for the gold label" in rows[0].status


def test_cli_missing_pair_or_label_column_is_a_usage_error(tmp_path, capsys):
    f = tmp_path / "d.csv"
    f.write_text("text,label\na,positive\n")
    assert score.main([str(f), "--pair-column", "hypothesis", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "no column named 'hypothesis' for the second text" in err and err.count("error:") == 1
    assert score.main([str(f), "--label-column", "gold_label", "--no-progress"]) == 2
    assert "no column named 'gold_label' for the gold label" in capsys.readouterr().err


def test_cli_pair_column_with_the_bundled_model_is_a_usage_error(tmp_path, capsys):
    f = tmp_path / "d.csv"
    f.write_text("premise,hypothesis\na,b\n")
    assert score.main([str(f), "--text-column", "premise", "--pair-column", "hypothesis", "--no-progress"]) == 2
    assert "reads single texts, not sentence pairs" in capsys.readouterr().err


def test_cli_bundled_model_columns_and_unknown_gold(tmp_path, capsys):
    f = tmp_path / "d.csv"
    f.write_text("review,sentiment\nA wonderful film.,pos\nAwful.,0\nFine.,maybe\n")
    out = tmp_path / "rows.csv"
    metrics = tmp_path / "metrics.json"
    assert score.main([str(f), "--label-column", "sentiment", "--out", str(out), "--metrics", str(metrics),
                       "--no-token-scores", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "1 gold label(s) not understood" in err and "'maybe' is not one of the model's labels" in err
    header = out.read_text().splitlines()[0].split(",")
    assert header[:6] == ["source", "text", "label", "confidence", "p_negative", "p_positive"]
    rows = read_results(out)
    assert [r.gold for r in rows] == ["positive", "negative", ""]
    assert all(abs(sum(r.probabilities) - 1) < 1e-5 for r in rows)
    d = json.loads(metrics.read_text())
    assert d["task"] == "single_label" and d["labels"] == ["negative", "positive"] and d["n_with_gold"] == 2
    assert set(d["per_class"]) == {"negative", "positive"} and d["confusion_matrix"]["labels"] == d["labels"]
