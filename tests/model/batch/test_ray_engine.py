"""The Ray engine (model.batch.ray_engine, ``--engine ray``): same rows, statuses and exit codes as the local engine.

Tests that start Ray are marked ``slow`` and share one local 2-CPU Ray
instance (module fixture); they skip with the reason when the ``cluster``
extra (ray[data]) is not installed. The pool-sizing, block-fallback and
shard-writer tests need no Ray.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from imdb_data import imdb_sample

from model.batch import (Record, ResultRow, iter_records, ray_engine, ray_pool, read_results, score_records,
                         scoring_actor)
from model.scorer.main import main as score_main
from model.batch.shards import ShardWriter

ROOT = Path(__file__).resolve().parents[3]
BUNDLED_MODEL = ROOT / "resources" / "model"
SAMPLES = ROOT / "resources" / "samples"


def _has_ray() -> bool:
    try:
        return importlib.util.find_spec("ray") is not None and importlib.util.find_spec("ray.data") is not None
    except (ImportError, ValueError):  # ValueError: sys.modules["ray"] is None (blocked)
        return False


HAS_RAY = _has_ray()
needs_ray = pytest.mark.skipif(not HAS_RAY, reason="ray is not installed: pip install 'attention-explorer[cluster]'")


@pytest.fixture(scope="module")
def ray_session():
    """One local Ray instance with 2 CPUs for the module; the engine reuses it and leaves it running."""
    import ray

    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def hostile_folder(tmp_path_factory) -> Path:
    """Real reviews (the bundled samples, 60 committed IMDB test reviews) plus hostile files."""
    root = tmp_path_factory.mktemp("ray_inputs") / "reviews"
    for label in ("pos", "neg"):
        (root / label).mkdir(parents=True)
    for f in sorted(SAMPLES.glob("*.txt")):
        (root / ("pos" if f.name.startswith("pos") else "neg") / f.name).write_bytes(f.read_bytes())
    lines = []
    for i, d in enumerate(imdb_sample("first80")[:60]):
        lines.append(json.dumps({"text": d["text"], "label": d["label"]}) + "\n")
        (root / ("pos" if d["label"] in (1, "pos", "positive") else "neg") / f"imdb_{i}.txt").write_text(
            d["text"], encoding="utf-8")
    lines.append("{not json\n")
    lines.append(json.dumps({"review": "no text key but a review key: a fine film"}) + "\n")
    lines.append(json.dumps({"text": ""}) + "\n")
    (root / "more.jsonl").write_text("".join(lines), encoding="utf-8")
    hostile = root / "hostile"
    hostile.mkdir()
    (hostile / "image.txt").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    (hostile / "garbage.txt").write_bytes(np.random.default_rng(0).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    (hostile / "empty.txt").write_bytes(b"")
    (hostile / "blank.txt").write_text("   \n\t\n")
    (hostile / "utf16.txt").write_text("Ein großartiger Film, wirklich schön.", encoding="utf-16")
    (hostile / "cp1252.txt").write_bytes("Café owner’s “best” film – très bien.".encode("cp1252"))
    (hostile / "latin1.txt").write_bytes("Ça alors, quel navet! Où est la fin?".encode("latin-1"))
    (hostile / "table.csv").write_text('text,label\n"Loved it, truly",pos\n,neg\n"Awful.",neg\n')
    (hostile / "notext.csv").write_text("title,year\nX,1999\n")
    (hostile / "bad.json").write_text("[1, 2")
    return root


def _cli(argv, capsys) -> tuple[int, str]:
    code = score_main([str(a) for a in argv])
    return code, capsys.readouterr().err


def assert_same_rows(local: list[ResultRow], ray_rows: list[ResultRow]) -> None:
    """Same sources (order too), texts, labels, statuses, gold labels, token counts, precision; P(positive) within
    1e-5. The callers pin float32 (``--precision fp32``): the actors are other processes, which see the real CPU
    flags (an AMX CPU's ``auto`` is bf16 there, not in this process: tests/conftest.py)."""
    assert [r.source for r in ray_rows] == [r.source for r in local]
    for a, b in zip(local, ray_rows, strict=True):
        assert (a.text, a.label, a.status, a.gold, a.correct, a.num_tokens, a.truncated, a.text_pair, a.labels,
                a.task, a.precision) == (b.text, b.label, b.status, b.gold, b.correct, b.num_tokens, b.truncated,
                                         b.text_pair, b.labels, b.task, b.precision), a.source
        assert (a.value is None) == (b.value is None) and (a.value is None or abs(a.value - b.value) <= 1e-5)
        if not a.probabilities:
            assert not b.probabilities
        else:
            assert np.allclose(a.probabilities, b.probabilities, atol=1e-5), a.source


# ---------------------------------------------------------------------------------------------------------------
# Without Ray


def test_plan_pool_keeps_a_cpu_for_ray_data():
    assert ray_pool.plan_pool({"CPU": 2.0}) == ray_pool.PoolPlan(2, 0.5, 0.0, 1)
    assert ray_pool.plan_pool({"CPU": 16.0}) == ray_pool.PoolPlan(15, 1.0, 0.0, 1)
    assert ray_pool.plan_pool({"CPU": 16.0}, num_workers=3) == ray_pool.PoolPlan(3, 5.0, 0.0, 5)
    assert ray_pool.plan_pool({"CPU": 1.0}) == ray_pool.PoolPlan(1, 0.5, 0.0, 1)
    assert ray_pool.plan_pool({"CPU": 64.0}, num_workers=2, max_node_cpus=16).cpus_per_worker == 16.0
    assert ray_pool.plan_pool({"CPU": 32.0, "GPU": 4.0}, gpus_per_worker=1) == ray_pool.PoolPlan(4, 1.0, 1.0, 1)
    assert ray_pool.plan_pool({"CPU": 8.0, "GPU": 1.0}, gpus_per_worker=0.5).num_workers == 2
    with pytest.raises(ValueError, match="GPU"):
        ray_pool.plan_pool({"CPU": 8.0}, gpus_per_worker=1)
    with pytest.raises(ValueError):
        ray_pool.plan_pool({"CPU": 8.0}, num_workers=0)


def test_a_review_that_breaks_scoring_gets_its_status(tiny_predictor, monkeypatch):
    score_many = tiny_predictor.score_many

    def fragile(texts, *args, **kwargs):  # the real model, whose scoring crashes on one review
        if any("BOOM" in t for t in texts):
            raise RuntimeError("tokenizer crashed")
        return score_many(texts, *args, **kwargs)

    records = [Record(f"r{i}", "BOOM" if i == 3 else f"a good film {i}", "positive") for i in range(6)]
    records.append(Record("bad", None, None, "binary file (PNG image)"))
    monkeypatch.setattr(tiny_predictor, "score_many", fragile)
    rows = scoring_actor.score_block(tiny_predictor, records, batch_size=4)
    monkeypatch.undo()
    assert [r.source for r in rows] == [r.source for r in records]
    assert [r.status for r in rows] == ["ok"] * 3 + ["scoring failed: RuntimeError: tokenizer crashed"] + \
        ["ok"] * 2 + ["binary file (PNG image)"]
    expected = [r for chunk in score_records(tiny_predictor, records[:3]) for r in chunk]
    assert_same_rows(expected, rows[:3])  # one by one vs in a batch: P(positive) differs by float rounding only


def test_blocks_round_trip_through_arrow(tiny_predictor):
    pytest.importorskip("pyarrow", reason="pyarrow is not installed")
    records = [Record("a", "fine", "positive"), Record("b", None, None, "empty file"), Record("c", "x", None)]
    assert scoring_actor.table_to_records(scoring_actor.records_to_table(records)) == records
    rows = scoring_actor.score_block(tiny_predictor, records)
    assert scoring_actor.table_to_rows(scoring_actor.rows_to_table(rows)) == rows


def test_shard_writer_writes_complete_shards_atomically(tmp_path, tiny_predictor):
    pytest.importorskip("pyarrow", reason="pyarrow is not installed")
    records = [Record(f"r{i}", f"review number {i}", None) for i in range(25)]
    rows = scoring_actor.score_block(tiny_predictor, records)
    out = tmp_path / "shards"
    w = ShardWriter(out, shard_rows=10)
    w.write(rows[:7])
    w.write(rows[7:])
    assert [p.name for p in sorted(out.iterdir())] == ["part-00000.parquet", "part-00001.parquet"]  # 5 buffered
    w.commit()
    names = sorted(p.name for p in out.iterdir())
    assert names == ["part-00000.parquet", "part-00001.parquet", "part-00002.parquet"]  # no temp files left
    assert [r for n in names for r in read_results(out / n)] == rows and w.rows_written == 25
    with pytest.raises(OSError, match="already holds"):
        ShardWriter(out)


@pytest.mark.parametrize("argv", [
    ["x.txt", "--num-workers", "2"],
    ["x.txt", "--gpus-per-worker", "1"],
    ["x.txt", "--out", "dir/"],
    ["x.txt", "--engine", "ray", "--out", "dir/", "--format", "csv"],
    ["x.txt", "--engine", "spark"],
])
def test_ray_usage_errors_exit_2(argv, capsys):
    code, err = _cli(argv, capsys)
    assert code == 2 and "error" in err


def test_missing_ray_names_the_extra(tmp_path, tiny_model_dir, capsys, monkeypatch):
    def no_ray():
        raise RuntimeError(ray_engine.CLUSTER_HINT)

    monkeypatch.setattr(ray_engine, "import_ray", no_ray)
    code, err = _cli([SAMPLES, "--engine", "ray", "--model", tiny_model_dir, "--out", tmp_path / "r.csv"], capsys)
    assert code == 1 and "attention-explorer[cluster]" in err and "Traceback" not in err
    assert not (tmp_path / "r.csv").exists()


# ---------------------------------------------------------------------------------------------------------------
# With a local 2-CPU Ray instance


@pytest.mark.slow
@needs_ray
def test_ray_rows_equal_local_rows_and_exit_codes(ray_session, bundled_predictor, hostile_folder, tmp_path, capsys):
    common = [hostile_folder, tmp_path / "missing.txt", "--model", BUNDLED_MODEL, "--batch-size", "4",
              "--no-progress", "--precision", "fp32"]
    code_local, _ = _cli([*common, "--out", tmp_path / "local.jsonl"], capsys)
    code_ray, err = _cli([*common, "--out", tmp_path / "ray.jsonl", "--engine", "ray", "--num-workers", "2"], capsys)
    assert code_local == code_ray == 1, err
    local, ray_rows = read_results(tmp_path / "local.jsonl"), read_results(tmp_path / "ray.jsonl")
    assert_same_rows(local, ray_rows)
    statuses = {Path(r.source.split(":")[0]).name: r.status for r in local if not r.ok}
    assert {"image.txt", "garbage.txt", "empty.txt", "blank.txt", "notext.csv", "bad.json", "missing.txt"} <= \
        set(statuses)
    assert sum(r.ok for r in local) >= 12 and "ray: 2 worker(s) x 0.5 CPU" in err

    clean = [hostile_folder / "pos", "--model", BUNDLED_MODEL, "--no-progress", "--format", "jsonl"]
    assert _cli(clean, capsys)[0] == 0
    assert _cli([*clean, "--engine", "ray"], capsys)[0] == 0


@pytest.mark.slow
@needs_ray
def test_ray_rows_equal_local_rows_for_a_multi_label_pair_model(ray_session, tmp_path, capsys):
    """Issue 30: the Ray engine gives the local engine's rows for a multi-label model reading sentence pairs
    (probabilities of every label, the second text, ";"-joined gold)."""
    from tests.fixtures.tiny_hf import make_tiny_hf_dir

    model = make_tiny_hf_dir(tmp_path / "ml", num_labels=4, task="multi_label", init_std=0.5)
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(f'{{"text": "first text {i}", "text_pair": "second {i % 3}", "labels": ["class_{i % 4}"]}}\n'
                            for i in range(12)) + '{"text": "x", "text_pair": "y", "labels": ["nope"]}\n')
    common = [data, "--model", model, "--batch-size", "4", "--no-progress", "--threshold", "0.45", "--precision",
              "fp32"]
    code, err_local = _cli([*common, "--out", tmp_path / "local.jsonl"], capsys)
    assert code == 0, err_local
    code, err = _cli([*common, "--out", tmp_path / "ray.jsonl", "--engine", "ray", "--num-workers", "1"], capsys)
    assert code == 0, err
    for e in (err_local, err):  # the unknown gold label counted by both engines
        assert "1 gold label(s) not understood" in e and "'nope' is not one of the model's labels" in e
    local, ray_rows = read_results(tmp_path / "local.jsonl"), read_results(tmp_path / "ray.jsonl")
    assert_same_rows(local, ray_rows)
    assert local[0].task == "multi_label" and local[0].text_pair == "second 0" and len(local[0].probabilities) == 4
    assert local[1].gold == "class_1"
    from model import Predictor

    predictor = Predictor.from_pretrained(model, device="cpu")
    predictor.set_task(threshold=0.45)  # --threshold reached the actors: the labels are read at 0.45
    assert [r.label for r in ray_rows[:12]] == [s.label for s in predictor.score_many(
        [f"first text {i}" for i in range(12)], text_pairs=[f"second {i % 3}" for i in range(12)])]


@pytest.mark.slow
@needs_ray
def test_shard_folder_output(ray_session, bundled_predictor, hostile_folder, tmp_path, capsys):
    out = tmp_path / "shards"
    code, err = _cli([hostile_folder, "--model", BUNDLED_MODEL, "--engine", "ray", "--out", f"{out}/",
                      "--no-progress"], capsys)
    assert code == 1, err
    names = sorted(p.name for p in out.iterdir())
    assert names == ["part-00000.parquet"]
    local = [r for c in score_records(bundled_predictor, iter_records([hostile_folder])) for r in c]
    assert_same_rows(local, read_results(out / names[0]))
    assert "Parquet shard" in err


@pytest.mark.slow
@needs_ray
def test_killed_actor_is_retried_without_losing_or_duplicating_rows(ray_session, bundled_predictor, hostile_folder,
                                                                     tmp_path, monkeypatch):
    marker = tmp_path / "crashed-once"
    monkeypatch.setenv(scoring_actor.TEST_CRASH_ENV, str(marker))
    rows = [r for c in ray_engine.score_paths_ray([hostile_folder], BUNDLED_MODEL, batch_size=4, block_rows=4,
                                                  num_workers=2, precision="fp32") for r in c]
    assert marker.exists(), "no actor exited: the crash hook did not run"
    local = [r for c in score_records(bundled_predictor, iter_records([hostile_folder])) for r in c]
    assert len({r.source for r in rows}) == len(rows)
    assert_same_rows(local, rows)


@pytest.mark.slow
@needs_ray
def test_ctrl_c_writes_the_rows_scored_so_far(ray_session, hostile_folder, tmp_path, capsys, monkeypatch):
    real = ray_engine.score_paths_ray

    def interrupted(*args, **kwargs):
        gen = real(*args, **kwargs)
        try:
            yield next(gen)
            raise KeyboardInterrupt
        finally:
            gen.close()

    monkeypatch.setattr(ray_engine, "score_paths_ray", interrupted)
    out = tmp_path / "partial.csv"
    code, err = _cli([hostile_folder, "--model", BUNDLED_MODEL, "--engine", "ray", "--batch-size", "4",
                      "--out", out, "--no-progress"], capsys)
    assert code == 130 and "interrupted" in err
    assert 0 < len(read_results(out)) < len(list(iter_records([hostile_folder])))



@pytest.mark.slow
@needs_ray
def test_ray_keeps_the_same_vectors_and_map(ray_session, hostile_folder, tmp_path, capsys):
    """``--embeddings``/``--projection`` with ``--engine ray``: the actors' vectors equal the local engine's, row for
    scored row (issue 42)."""
    common = [hostile_folder, "--model", BUNDLED_MODEL, "--batch-size", "4", "--no-progress", "--precision", "fp32",
              "--projection", "pca"]
    _cli([*common, "--out", tmp_path / "local.csv", "--embeddings", tmp_path / "local.npy"], capsys)
    code, err = _cli([*common, "--out", tmp_path / "ray.csv", "--embeddings", tmp_path / "ray.npy", "--engine", "ray",
                      "--num-workers", "2"], capsys)
    assert code == 1, err
    local, ray_v = np.load(tmp_path / "local.npy"), np.load(tmp_path / "ray.npy")
    assert local.shape == ray_v.shape and local.shape[0] == sum(r.ok for r in read_results(tmp_path / "ray.csv"))
    np.testing.assert_allclose(ray_v, local, atol=1e-4)
    assert "x,y" in (tmp_path / "ray.csv").read_text(encoding="utf-8").splitlines()[0]


def test_ray_gives_the_same_top_components(ray_session, hostile_folder, tmp_path, capsys):
    """``--components`` with ``--engine ray``: the actors' ``top_components`` column equals the local engine's, row
    for row (issue 53)."""
    import csv

    common = [hostile_folder, "--model", BUNDLED_MODEL, "--batch-size", "4", "--no-progress", "--precision", "fp32",
              "--components"]
    code, err = _cli([*common, "--out", tmp_path / "local.csv"], capsys)
    assert code == 1, err  # the hostile files fail; every review is scored
    code, err = _cli([*common, "--out", tmp_path / "ray.csv", "--engine", "ray", "--num-workers", "2"], capsys)
    assert code == 1, err
    read = lambda p: [(r["source"], r["top_components"]) for r in csv.DictReader(p.open(encoding="utf-8"))]  # noqa: E731
    local, ray_rows = read(tmp_path / "local.csv"), read(tmp_path / "ray.csv")
    assert local == ray_rows and sum(bool(t) for _, t in local) >= 60
