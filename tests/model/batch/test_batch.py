"""The batch engine (model.batch): streaming in chunks, stopping, summaries, and the atomic writers."""

from __future__ import annotations

import builtins
import json

import numpy as np
import pytest

from model.batch import (
    EXPORT_COLUMNS,
    Record,
    ResultRow,
    RowWriter,
    Summary,
    format_for_path,
    read_results,
    score_records,
    write_rows,
)

WORDS = ["good", "bad", "great", "awful", "movie", "film", "boring", "wonderful", "acting", "story"]


def make_texts(n: int, seed: int = 0, length: int | None = None) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=length or int(rng.integers(3, 40)))) for _ in range(n)]


def make_records(texts, gold_every: int = 2) -> list[Record]:
    return [
        Record(f"mem:{i}", t, ("positive" if i % 4 == 0 else "negative") if i % gold_every == 0 else None)
        for i, t in enumerate(texts)
    ]


def flatten(chunks) -> list[ResultRow]:
    return [r for c in chunks for r in c]


def test_a_run_keeps_the_task_it_started_with(tiny_predictor):
    """Issue 41: the GUI's Model > Task (``set_task``) while a batch job runs on the shared Predictor reaches the next
    job, never the running one: every row of a run is read as the run's first rows are."""
    from model import Predictor

    p = Predictor.from_pretrained(tiny_predictor.model_dir, device="cpu")  # its own: the task is changed below
    recs = make_records(make_texts(12, seed=3))
    expected = flatten(score_records(p, recs, batch_size=2, chunk=4))
    it = score_records(p, recs, batch_size=2, chunk=4)
    first = next(it)
    p.set_task("multi_label", 0.3)
    rows = first + flatten(it)
    after = flatten(score_records(p, recs[:2], batch_size=2))
    assert {r.task for r in rows} == {"single_label"} and {r.task for r in after} == {"multi_label"}
    assert [(r.label, r.probabilities) for r in rows] == [(r.label, r.probabilities) for r in expected]


def test_rows_follow_record_order_and_match_predict(tiny_predictor):
    texts = make_texts(45)
    recs = make_records(texts)
    recs.insert(7, Record("bad-file", None, "positive", "binary file (PNG image), not text"))
    chunks = list(score_records(tiny_predictor, recs, batch_size=4, chunk=10))
    assert [len(c) for c in chunks] == [10, 10, 10, 10, 6]
    rows = flatten(chunks)
    assert [r.source for r in rows] == [r.source for r in recs]
    bad = rows[7]
    assert (bad.status, bad.label, bad.probability("positive"), bad.gold, bad.correct) == (
        "binary file (PNG image), not text", "", None, "positive", None)
    pos = tiny_predictor.labels.index("positive")
    for rec, row in list(zip(recs, rows))[:12]:
        if not rec.ok:
            continue
        pred = tiny_predictor.predict(rec.text)
        assert row.label == pred.label
        assert row.probability("positive") == pytest.approx(float(pred.probabilities[pos]), abs=1e-4)
        assert row.probabilities == pytest.approx(tuple(float(p) for p in pred.probabilities), abs=1e-4)
        assert row.confidence == pytest.approx(float(pred.probabilities.max()), abs=1e-4)
        assert row.num_tokens == pred.num_tokens
        assert row.gold == (rec.gold or "")
        assert row.correct == ((row.label == rec.gold) if rec.gold else None)
        assert row.text == rec.text and row.status == "ok"


def test_empty_text_from_score_many_becomes_a_status(tiny_predictor):
    rows = flatten(score_records(tiny_predictor, [Record("x", "   ")], batch_size=2))
    assert rows[0].status == "the text is empty" and rows[0].probabilities == ()


def test_records_are_pulled_lazily(tiny_predictor):
    pulled = []

    def gen():
        for i, t in enumerate(make_texts(100)):
            pulled.append(i)
            yield Record(str(i), t)

    it = score_records(tiny_predictor, gen(), batch_size=8, chunk=16)
    first = next(it)
    assert len(first) == 16
    assert len(pulled) <= 17  # one chunk (+ at most the look-ahead of the loop)
    assert sum(len(c) for c in it) == 84


def test_progress_is_monotonic_and_complete(tiny_predictor):
    seen = []
    recs = make_records(make_texts(30)) + [Record("f", None, None, "empty file")]
    list(score_records(tiny_predictor, recs, batch_size=4, chunk=8, progress=seen.append))
    assert seen == sorted(seen)
    assert seen[-1] == len(recs)


def test_should_stop_keeps_the_scored_prefix(tiny_predictor):
    texts = ["a good film with great acting"] * 64  # equal lengths: the length-bucketed order is the input order
    recs = make_records(texts)
    calls = []

    def progress(done):
        calls.append(done)

    def should_stop():
        return len(calls) >= 1  # stop after the first batch reported progress

    rows = flatten(score_records(tiny_predictor, recs, batch_size=4, chunk=16, progress=progress,
                                 should_stop=should_stop))
    assert 0 < len(rows) < len(recs)
    assert [r.source for r in rows] == [r.source for r in recs[: len(rows)]]
    assert all(r.ok for r in rows)


def test_bad_arguments(tiny_predictor):
    with pytest.raises(ValueError):
        next(score_records(tiny_predictor, [], batch_size=0))
    assert list(score_records(tiny_predictor, [])) == []


def _row(i: int, p_positive: float | None = -1.0, **kw) -> ResultRow:
    p = 0.1 + i / 7 if p_positive == -1.0 else p_positive
    base = {"source": f"s{i}", "text": f"text {i}, with \"quotes\"\nand a newline · ünïcode", "label": "positive",
            "probabilities": () if p is None else (1.0 - p, p), "num_tokens": 10 + i, "truncated": bool(i % 2),
            "gold": "negative", "correct": False, "status": "ok", "labels": () if p is None else ("negative", "positive")}
    base.update(kw)
    return ResultRow(**base)


SAMPLE_ROWS = [
    _row(0),
    _row(1, gold="", correct=None),
    _row(2, text="", label="", p_positive=None, num_tokens=0, truncated=False, gold="positive", correct=None,
         status="binary file (PNG image), not text"),
    _row(3, p_positive=float(np.float32(0.123456789)), correct=True, gold="positive"),
]


def test_summary_counts():
    s = Summary()
    s.add(SAMPLE_ROWS)
    s.elapsed_s = 2.0
    assert (s.count, s.ok, s.failed, s.positive, s.with_gold, s.correct) == (4, 3, 1, 3, 2, 1)
    assert s.positive_share == 1.0
    assert s.accuracy == 0.5
    assert s.reviews_per_s == 2.0
    line = s.line()
    assert "4 reviews" in line and "1 failed" in line and "accuracy 50.0%" in line
    assert s.failures == [("s2", "binary file (PNG image), not text")]
    empty = Summary()
    assert (empty.accuracy, empty.positive_share, empty.reviews_per_s) == (None, None, None)


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_writers_round_trip(tmp_path, fmt):
    path = tmp_path / f"out.{fmt}"
    assert write_rows(path, SAMPLE_ROWS) == len(SAMPLE_ROWS)
    assert read_results(path) == SAMPLE_ROWS
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_csv_and_jsonl_have_the_schema_columns(tmp_path):
    write_rows(tmp_path / "a.csv", SAMPLE_ROWS)
    header = (tmp_path / "a.csv").read_text(encoding="utf-8").splitlines()[0]
    assert tuple(header.split(",")) == EXPORT_COLUMNS
    write_rows(tmp_path / "a.jsonl", SAMPLE_ROWS)
    first = json.loads((tmp_path / "a.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert tuple(first) == EXPORT_COLUMNS
    third = json.loads((tmp_path / "a.jsonl").read_text(encoding="utf-8").splitlines()[2])
    assert third["p_positive"] is None and third["p_negative"] is None and third["correct"] is None
    assert EXPORT_COLUMNS[:6] == ("source", "text", "label", "confidence", "p_negative", "p_positive")


def test_failed_write_leaves_the_old_file(tmp_path):
    path = tmp_path / "keep.csv"
    path.write_text("old contents")

    def rows():
        yield SAMPLE_ROWS[0]
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        write_rows(path, rows())
    assert path.read_text() == "old contents"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.csv"]


def test_incremental_writer_to_stream():
    import io

    buf = io.StringIO()
    w = RowWriter(None, "jsonl", stream=buf)
    w.write(SAMPLE_ROWS[:2])
    w.write(SAMPLE_ROWS[2:])
    w.commit()
    assert [json.loads(x)["source"] for x in buf.getvalue().splitlines()] == ["s0", "s1", "s2", "s3"]
    with pytest.raises(ValueError, match="Parquet"):
        RowWriter(None, "parquet", stream=buf)


def test_format_inference():
    assert format_for_path("x.CSV") == "csv"
    assert format_for_path("x.ndjson") == "jsonl"
    assert format_for_path("x.pq") == "parquet"
    assert format_for_path("x.txt", "jsonl") == "jsonl"
    with pytest.raises(ValueError, match="cannot tell the format"):
        format_for_path("x.txt")
    with pytest.raises(ValueError, match="unknown format"):
        format_for_path("x.csv", "xml")


def test_parquet_without_pyarrow_gives_a_clear_message(tmp_path, monkeypatch):
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == "pyarrow" or name.startswith("pyarrow."):
            raise ImportError("No module named 'pyarrow'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(RuntimeError, match="pyarrow"):
        write_rows(tmp_path / "x.parquet", SAMPLE_ROWS)
    assert list(tmp_path.iterdir()) == []


def test_excerpt_export_is_a_helper_in_model_batch():
    from model.batch.export import excerpt_rows
    from model.batch.rows import binary_row

    rows = excerpt_rows([binary_row("a", "x" * 100, "positive", 0.9, 5, False, "", None, "ok")], 10)
    assert len(rows[0].text) == 10 and rows[0].text.endswith("\u2026")
    assert np.all([r.source == "a" for r in rows])
