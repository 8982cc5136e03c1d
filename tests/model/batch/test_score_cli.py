"""The batch-scoring command line (attention-explorer-score = model.scorer.main:main): rows, formats, exit codes 0/1/2/130."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from model.batch import EXPORT_COLUMNS, read_results
from model.scorer import main as score

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def review_folder(tmp_path) -> Path:
    """An aclImdb-like folder: 3 pos + 2 neg reviews, plus a CSV with 2 rows."""
    root = tmp_path / "reviews"
    for label, n in (("pos", 3), ("neg", 2)):
        (root / label).mkdir(parents=True)
        for i in range(n):
            (root / label / f"{i}_{7 if label == 'pos' else 2}.txt").write_text(f"A {label} review number {i}, a film.")
    (root / "more.csv").write_text('text,label\n"Great, great film",pos\nDull.,neg\n')
    return root


def run_cli(argv, capsys):
    code = score.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_scores_a_folder_to_csv(review_folder, tiny_model_dir, tmp_path, capsys):
    out_file = tmp_path / "results.csv"
    code, out, err = run_cli([review_folder, "--model", tiny_model_dir, "--out", out_file, "--no-progress"], capsys)
    assert code == 0, err
    assert out == ""
    rows = read_results(out_file)
    assert len(rows) == 7
    assert all(r.ok for r in rows)
    assert sorted(r.gold for r in rows) == ["negative"] * 3 + ["positive"] * 4
    assert out_file.read_text().splitlines()[0].split(",") == list(EXPORT_COLUMNS)
    assert "7 reviews" in err and "accuracy" in err and "reviews/s" in err and "peak RSS" in err


def test_jsonl_to_stdout(review_folder, tiny_model_dir, capsys):
    code, out, err = run_cli([review_folder / "pos", "--model", tiny_model_dir, "--format", "jsonl",
                              "--batch-size", "2", "--no-progress"], capsys)
    assert code == 0, err
    lines = [json.loads(x) for x in out.splitlines()]
    assert len(lines) == 3
    assert all(set(d) == set(EXPORT_COLUMNS) for d in lines)
    assert all(0.0 <= d["p_positive"] <= 1.0 for d in lines)


def test_failed_inputs_give_exit_1_and_are_listed(review_folder, tiny_model_dir, tmp_path, capsys):
    (review_folder / "pos" / "image.txt").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(32))
    (review_folder / "neg" / "empty.txt").write_text("")
    out_file = tmp_path / "r.jsonl"
    code, _, err = run_cli([review_folder, tmp_path / "missing.txt", "--model", tiny_model_dir, "--out", out_file],
                           capsys)
    assert code == 1
    rows = read_results(out_file)
    assert len(rows) == 10
    failed = {Path(r.source).name: r.status for r in rows if not r.ok}
    assert set(failed) == {"image.txt", "empty.txt", "missing.txt"}
    assert "3 input(s) could not be scored" in err
    for name in failed:
        assert name in err


@pytest.mark.parametrize(
    "argv",
    [
        [],  # no PATH
        ["x.txt", "--batch-size", "0"],
        ["x.txt", "--batch-size", "many"],
        ["x.txt", "--max-file-mb", "-1"],
        ["x.txt", "--format", "xml"],
        ["x.txt", "--out", "results.txt"],  # format cannot be inferred
        ["x.txt", "--format", "parquet"],  # binary format to stdout
    ],
)
def test_usage_errors_exit_2(argv, capsys):
    code, out, err = run_cli(argv, capsys)
    assert code == 2
    assert "usage:" in err and out == ""


def test_bad_model_folder_exits_1(review_folder, tmp_path, capsys):
    code, _, err = run_cli([review_folder, "--model", tmp_path / "no-model"], capsys)
    assert code == 1
    assert "cannot load the model" in err and "Traceback" not in err


def test_ctrl_c_writes_rows_so_far(review_folder, tiny_model_dir, tmp_path, capsys, monkeypatch):
    real = score.score_records

    def interrupted(*args, **kwargs):
        gen = real(*args, **kwargs)
        yield next(gen)
        raise KeyboardInterrupt

    monkeypatch.setattr(score, "score_records", interrupted)
    out_file = tmp_path / "partial.parquet"
    code, _, err = run_cli([review_folder, "--model", tiny_model_dir, "--out", out_file, "--batch-size", "2"],
                           capsys)
    assert code == 130
    rows = read_results(out_file)
    assert 0 < len(rows) <= 7
    assert "interrupted" in err


def test_subprocess_run(review_folder, tiny_model_dir, tmp_path):
    out_file = tmp_path / "results.parquet"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "model.scorer.main", str(review_folder), "--model", str(tiny_model_dir), "--out",
         str(out_file)],
        check=False, capture_output=True, text=True, timeout=120, env=env, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert len(read_results(out_file)) == 7
    assert "peak RSS" in proc.stderr and "Traceback" not in proc.stderr
