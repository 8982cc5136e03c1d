"""Two models compared row by row (issue 44, model side): B's columns equal a run of B alone, McNemar's exact test
against ``scipy.stats.binomtest``, the paired metrics counted from the rows, and a clear error on a task or label
mismatch. The models are real: the bundled model (when present) and tiny random ones built offline."""

from __future__ import annotations

import csv
import dataclasses

import numpy as np
import pytest
from imdb_data import imdb_sample

from model import Predictor
from model.batch import Record, RowSchema, score_records, write_rows
from model.corpus.comparison import (
    CompareSchema,
    check_comparable,
    compare_columns,
    compared,
    comparison_dict,
    comparison_metrics,
    mcnemar_exact,
    pair_rows,
    score_compared,
)
from model.core.config import EncoderConfig
from model.records.batch import ResultRow
from tests.fixtures.tiny_models import make_random_model_dir
from tests.model.batch.conftest import EMOTIONS

BINARY = ("negative", "positive")


def _tiny(folder, labels, seed):
    config = EncoderConfig(max_len=64, d_model=16, n_heads=2, n_layers=2, d_ff=32, labels=tuple(labels))
    return Predictor.from_pretrained(make_random_model_dir(folder, config, seed=seed), device="cpu")


@pytest.fixture(scope="module")
def other_emotions(tmp_path_factory):
    """A second tiny model with the five emotions (another seed: other weights, other predictions)."""
    return _tiny(tmp_path_factory.mktemp("emotions_b"), EMOTIONS, seed=7)


@pytest.fixture(scope="module")
def random_binary(tmp_path_factory):
    """A tiny random negative/positive model (about chance on IMDB)."""
    return _tiny(tmp_path_factory.mktemp("binary_b"), BINARY, seed=3)


def _records():
    """The 40 committed IMDB test reviews tagged clear40 (24 positive, 16 negative)."""
    return [Record(f"imdb:{d['row']}", d["text"], BINARY[d["label"]]) for d in imdb_sample("clear40")]


def _emotion_records():
    texts = ["I am so happy today", "This is terrifying", "I hate this", "What a lovely gift", "so sad and alone",
             "", "ok then"]
    return [Record(f"t{i}", t or None, EMOTIONS[i % 5], "ok" if t else "empty file") for i, t in enumerate(texts)]


def _csv(path):
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def test_b_columns_equal_a_run_of_b_alone(tmp_path, emotions_single, other_emotions):
    rows = [r for c in score_compared(emotions_single, other_emotions, _emotion_records(), batch_size=3)
            for r in c]
    b_alone = [r for c in score_records(other_emotions, _emotion_records(), batch_size=3) for r in c]
    a_alone = [r for c in score_records(emotions_single, _emotion_records(), batch_size=3) for r in c]
    assert [r.b for r in rows] == b_alone
    assert [ResultRow(**{f.name: getattr(r, f.name) for f in dataclasses.fields(ResultRow)}) for r in rows] == a_alone
    schema = RowSchema.of_predictor(emotions_single)
    write_rows(tmp_path / "both.csv", rows, schema=CompareSchema.of(schema))
    write_rows(tmp_path / "b.csv", b_alone, schema=RowSchema.of_predictor(other_emotions))
    both, alone = _csv(tmp_path / "both.csv"), _csv(tmp_path / "b.csv")
    own = ("label", "confidence", *(f"p_{n}" for n in EMOTIONS), "status")
    assert list(both[0])[-len(compare_columns("single_label", EMOTIONS)):] == [
        "b_label", "b_confidence", *(f"b_p_{n}" for n in EMOTIONS), "b_status", "agree"]
    for x, y in zip(both, alone, strict=True):
        assert {c: x["b_" + c] for c in own} == {c: y[c] for c in own}
    scored = [x for x in both if x["status"] == "ok"]
    assert len(scored) == 6 and all(x["agree"] == ("true" if x["label"] == x["b_label"] else "false") for x in scored)
    assert both[5]["agree"] == "" and both[5]["b_status"] == "empty file"


def test_compare_schema_parquet_and_jsonl(tmp_path, emotions_single, other_emotions):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    rows = [r for c in score_compared(emotions_single, other_emotions, _emotion_records()) for r in c]
    schema = CompareSchema.of(RowSchema.of_predictor(emotions_single))
    write_rows(tmp_path / "rows.parquet", rows, schema=schema)
    table = pq.read_table(tmp_path / "rows.parquet")
    assert table.schema.field("agree").type == pa.bool_() and table.schema.field("b_p_joy").type == pa.float64()
    assert table.column("b_p_joy").to_pylist()[0] == rows[0].b.probability("joy")
    write_rows(tmp_path / "rows.jsonl", rows, schema=schema)
    assert (tmp_path / "rows.jsonl").read_text().count('"agree": ') == len(rows)


@pytest.mark.parametrize(("b01", "b10"), [(0, 1), (1, 0), (3, 3), (2, 9), (9, 2), (14, 25), (0, 12), (40, 61),
                                          (150, 190), (1, 1000)])
def test_mcnemar_matches_scipy(b01, b10):
    stats = pytest.importorskip("scipy.stats")
    assert mcnemar_exact(b01, b10) == pytest.approx(stats.binomtest(b01, b01 + b10, 0.5).pvalue, rel=1e-9, abs=1e-300)


def test_mcnemar_without_discordant_rows_and_bad_counts():
    assert mcnemar_exact(0, 0) is None
    with pytest.raises(ValueError, match="counts must be >= 0"):
        mcnemar_exact(-1, 2)


def _built_rows(pattern):
    """Compared rows of a negative/positive task whose (A right, B right) follow ``pattern``."""
    rows = []
    for i, (a_right, b_right) in enumerate(pattern):
        gold = BINARY[i % 2]
        a = ResultRow(f"r{i}", "t", gold if a_right else BINARY[1 - i % 2], (0.4, 0.6), 3, False, gold, a_right,
                      "ok", labels=BINARY)
        b = dataclasses.replace(a, label=gold if b_right else BINARY[1 - i % 2], correct=b_right)
        rows.append(compared(a, b))
    return rows


def test_comparison_metrics_on_a_built_case():
    stats = pytest.importorskip("scipy.stats")
    pattern = [(True, True)] * 50 + [(True, False)] * 13 + [(False, True)] * 4 + [(False, False)] * 8
    m = comparison_metrics(_built_rows(pattern), BINARY, "single_label", "A", "B")
    assert (m.mcnemar.b01, m.mcnemar.b10) == (13, 4)
    assert m.mcnemar.p_value == pytest.approx(stats.binomtest(13, 17, 0.5).pvalue, rel=1e-12)
    assert m.a_accuracy == pytest.approx(63 / 75) and m.b_accuracy == pytest.approx(54 / 75)
    assert m.agreement == pytest.approx(58 / 75) and m.n_with_gold == 75 and m.confusion.sum() == 75
    d = comparison_dict(m)
    assert list(d)[:4] == ["a_accuracy", "b_accuracy", "agreement", "mcnemar"]
    assert d["mcnemar"] == {"b01": 13, "b10": 4, "p_value": m.mcnemar.p_value}


def test_bundled_against_a_random_model(bundled_predictor, random_binary):
    """Real models on 40 IMDB test reviews: the counts equal those read off the two runs, the confusion adds up."""
    stats = pytest.importorskip("scipy.stats")
    rows = [r for c in score_compared(bundled_predictor, random_binary, _records(), chunk=32) for r in c]
    a = [r for c in score_records(bundled_predictor, _records()) for r in c]
    b = [r for c in score_records(random_binary, _records()) for r in c]
    assert [r.label for r in rows] == [r.label for r in a] and [r.b.label for r in rows] == [r.label for r in b]
    m = comparison_metrics(rows, BINARY, "single_label")
    b01 = sum(x.correct and not y.correct for x, y in zip(a, b))
    b10 = sum(y.correct and not x.correct for x, y in zip(a, b))
    assert (m.mcnemar.b01, m.mcnemar.b10) == (b01, b10) and b01 + b10 > 0
    assert m.mcnemar.p_value == pytest.approx(stats.binomtest(b01, b01 + b10, 0.5).pvalue, rel=1e-9)
    assert m.a_accuracy == pytest.approx(np.mean([x.correct for x in a]))
    agree = sum(x.label == y.label for x, y in zip(a, b))
    assert m.agreement == pytest.approx(agree / 40) and np.trace(m.confusion) == agree


def test_label_mismatch_names_both_folders(emotions_single, predictor_for):
    other = predictor_for(("anger", "fear", "joy", "love", "surprise"))
    with pytest.raises(ValueError) as err:
        check_comparable(emotions_single, other)
    msg = str(err.value)
    assert str(emotions_single.model_dir) in msg and str(other.model_dir) in msg
    assert "only A: sadness; only B: surprise" in msg
    with pytest.raises(ValueError, match="different labels"):
        next(score_compared(emotions_single, other, _emotion_records()))


def test_task_mismatch_names_both_folders(tmp_path, emotions_single):
    b = _tiny(tmp_path / "multi", EMOTIONS, seed=1)
    b.set_task("multi_label")
    with pytest.raises(ValueError) as err:
        check_comparable(emotions_single, b)
    msg = str(err.value)
    assert str(emotions_single.model_dir) in msg and str(b.model_dir) in msg
    assert "single-label classification" in msg and "multi-label classification" in msg


def test_pair_rows_refuses_rows_of_other_inputs():
    a = _built_rows([(True, True)] * 2)
    with pytest.raises(ValueError, match="did not read the same inputs"):
        pair_rows(a, list(reversed([r.b for r in a])))


def test_regression_pair_has_no_agreement_but_a_mean_difference(similarity):
    recs = [Record("x", "a cat sits", "0.5", text_pair="a cat sat"), Record("y", "dogs run", "2", text_pair="no")]
    rows = [r for c in score_compared(similarity, similarity, recs) for r in c]
    m = comparison_metrics(rows, similarity.labels, "regression")
    assert m.agreement is None and m.mean_abs_difference == 0.0 and m.confusion is None
    assert compare_columns("regression", ("score",)) == ("b_label", "b_value", "b_status", "agree")
    assert CompareSchema.of(RowSchema.of_predictor(similarity, True)).values(rows[0])["b_value"] == rows[0].value


def test_mcnemar_per_length_slice_adds_up(bundled_predictor, random_binary):
    """Per length slice: each slice's counts are those of its own rows, and the slices add up to the whole."""
    from model.corpus.comparison import length_slice

    rows = [r for c in score_compared(bundled_predictor, random_binary, _records()) for r in c]
    m = comparison_metrics(rows, BINARY, "single_label", by_length=True)
    assert [name for name, _ in m.by_length] == sorted({length_slice(r.num_tokens, r.truncated) for r in rows},
                                                       key=[n for n, _ in m.by_length].index)
    assert sum(s.n_compared for _, s in m.by_length) == m.n_compared == 40
    assert sum(s.mcnemar.b01 for _, s in m.by_length) == m.mcnemar.b01
    assert sum(s.mcnemar.b10 for _, s in m.by_length) == m.mcnemar.b10
    for name, s in m.by_length:
        mine = [r for r in rows if length_slice(r.num_tokens, r.truncated) == name]
        assert s.mcnemar.b01 == sum(r.correct and not r.b.correct for r in mine)
    d = comparison_dict(m)["by_length"]
    assert [x["slice"] for x in d] == [n for n, _ in m.by_length] and d[0]["mcnemar"]["b01"] == m.by_length[0][1].mcnemar.b01
    assert comparison_metrics(rows, BINARY, "single_label").by_length == ()


def test_length_slices_follow_the_corpus_edges():
    from model.corpus.comparison import length_slice

    assert [length_slice(n, False) for n in (1, 128, 129, 512, 513, 1025)] == [
        "1-128", "1-128", "129-256", "385-512", "513-1024", "1025+"]
    assert length_slice(40, True) == "truncated"


def test_the_corpus_map_colours_rows_by_agreement(emotions_single, other_emotions):
    """Issue 44 with the corpus map (issue 42): rows scored by two models add the "model A and model B agree"
    colouring, whose categories follow each row's own ``agree``; rows of one model do not offer it."""
    from model.corpus.map_colours import AGREEMENT, colouring, compared, modes_for

    rows = [r for c in score_compared(emotions_single, other_emotions, _emotion_records(), batch_size=3) for r in c]
    alone = [r for c in score_records(emotions_single, _emotion_records(), batch_size=3) for r in c]
    assert compared(rows) and not compared(alone)
    assert AGREEMENT in modes_for("single_label", compared(rows)) and AGREEMENT not in modes_for("single_label")
    c = colouring(rows, AGREEMENT)
    want = ["agree" if r.agree else "disagree" if r.agree is not None else "not compared" for r in rows]
    assert [c.names[k] for k in c.codes] == want and "not compared" in want  # the empty text: neither model scored it
    one = colouring(alone, AGREEMENT)
    assert {one.names[k] for k in one.codes} == {"not compared"}
