"""Batch scoring and the command line end to end with tiny random Hugging Face models of each task (issue 30): a
5-class model with folders named after its classes, a multi-label pair model, a regression pair model; the rows
equal ``Predictor.score_many`` and ``metrics.json`` has each task's keys."""

from __future__ import annotations

import json

import numpy as np
import pytest

from model.batch import iter_records, read_results, score_records
from model.scorer import main as score
from model.report.report import METRICS_KEYS, TASK_KEYS
from tests.fixtures.tiny_hf import make_tiny_hf_dir

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("hf_tasks")
    return {
        "five": make_tiny_hf_dir(root / "five", num_labels=5, task="single_label", init_std=0.5),
        "multi": make_tiny_hf_dir(root / "multi", num_labels=4, task="multi_label", init_std=0.5),
        "sts": make_tiny_hf_dir(root / "sts", task="regression", init_std=0.5),
    }


def run(argv, capsys) -> tuple[int, str]:
    code = score.main([str(a) for a in argv] + ["--no-progress"])
    return code, capsys.readouterr().err


def test_five_classes_from_folders_named_after_them(models, tmp_path, capsys):
    from model import Predictor

    data = tmp_path / "data"
    for k, name in enumerate(("CLASS_0", "class_3", "Class_4", "other")):
        (data / name).mkdir(parents=True)
        for i in range(3):
            (data / name / f"{i}.txt").write_text(f"text number {i} of {name} with words {k * i}")
    out, metrics = tmp_path / "rows.csv", tmp_path / "metrics.json"
    code, err = run([data, "--model", models["five"], "--out", out, "--metrics", metrics, "--no-token-scores"], capsys)
    assert code == 0, err
    rows = read_results(out)
    header = out.read_text().splitlines()[0].split(",")
    assert header[2:9] == ["label", "confidence", "p_class_0", "p_class_1", "p_class_2", "p_class_3", "p_class_4"]
    assert [r.gold for r in rows[:3]] == ["class_0"] * 3 and rows[-1].gold == ""
    predictor = Predictor.from_pretrained(models["five"], device="cpu")
    scores = predictor.score_many([r.text for r in rows])
    for r, s in zip(rows, scores):
        assert r.label == s.label and np.allclose(r.probabilities, s.probabilities, atol=1e-6)
        assert r.confidence == pytest.approx(float(np.max(s.probabilities)), abs=1e-6)
    d = json.loads(metrics.read_text())
    assert tuple(d) == METRICS_KEYS + TASK_KEYS["single_label"] and d["n_with_gold"] == 9
    assert d["labels"] == [f"class_{k}" for k in range(5)] and len(d["confusion_matrix"]["matrix"]) == 5
    assert set(d["per_class"]) == set(d["labels"]) and d["ece"] is not None


def test_multi_label_pairs_through_the_cli(models, tmp_path, capsys):
    from model import Predictor

    data = tmp_path / "pairs.csv"
    data.write_text("premise,hypothesis,tags\n" + "".join(
        f"first text {i},second text {i % 3},class_{i % 4};CLASS_{(i + 1) % 4}\n" for i in range(10))
        + "one more,,class_1\nlast,pair,unknown_tag\n")
    out, metrics = tmp_path / "rows.jsonl", tmp_path / "metrics.json"
    code, err = run([data, "--model", models["multi"], "--text-column", "premise", "--pair-column", "hypothesis",
                     "--label-column", "tags", "--out", out, "--metrics", metrics, "--no-token-scores"], capsys)
    assert code == 1, err  # the empty second text is one failed row
    assert "empty second text" in err and "'unknown_tag' is not one of the model's labels" in err
    rows = read_results(out)
    first = json.loads(out.read_text().splitlines()[0])
    assert list(first)[:4] == ["source", "text", "text_pair", "label"] and "confidence" not in first
    assert [k for k in first if k.startswith("p_")] == [f"p_class_{k}" for k in range(4)]
    assert rows[0].gold == "class_0;class_1" and rows[11].ok and rows[11].gold == ""
    predictor = Predictor.from_pretrained(models["multi"], device="cpu")
    ok = [r for r in rows if r.ok]
    scores = predictor.score_many([r.text for r in ok], text_pairs=[r.text_pair for r in ok])
    for r, s in zip(ok, scores):
        assert r.label == s.label and np.allclose(r.probabilities, s.probabilities, atol=1e-6)
    d = json.loads(metrics.read_text())
    assert d["task"] == "multi_label" and tuple(d) == METRICS_KEYS + TASK_KEYS["multi_label"]
    assert d["n_with_gold"] == 10 and d["confusion_matrix"] is None and 0 <= d["hamming_loss"] <= 1


def test_task_and_threshold_override_the_config(models, tmp_path, capsys):
    """``--task`` and ``--threshold`` read the same logits as Model > Task and the threshold do in the app
    (``Predictor.set_task``); a task the head cannot be read as is a usage error (exit 2) naming why."""
    from model import Predictor

    data = tmp_path / "texts.jsonl"
    data.write_text("".join(f'{{"text": "text number {i} with some words {i * 7}"}}\n' for i in range(12)))
    predictor = Predictor.from_pretrained(models["multi"], device="cpu")
    texts = [f"text number {i} with some words {i * 7}" for i in range(12)]
    for argv, task in ((["--threshold", "0.3"], ("multi_label", 0.3)), (["--threshold", "0.7"], ("multi_label", 0.7)),
                       (["--task", "single_label"], ("single_label", None))):
        out = tmp_path / "rows.jsonl"
        code, err = run([data, "--model", models["multi"], "--out", out, *argv], capsys)
        assert code == 0, err
        predictor.set_task(*task)
        expected = predictor.score_many(texts)
        rows = read_results(out)
        assert [r.label for r in rows] == [s.label for s in expected]
        assert all(np.allclose(r.probabilities, s.probabilities, atol=1e-6) for r, s in zip(rows, expected))
    assert {r.label for r in rows} <= {f"class_{k}" for k in range(4)}  # single-label: one class per row
    code, err = run([data, "--model", models["multi"], "--task", "regression"], capsys)
    assert code == 2 and "--task/--threshold" in err and "regression reads one output" in err
    for bad in ("1", "0", "-0.2", "x"):
        code, err = run([data, "--model", models["multi"], "--threshold", bad], capsys)
        assert code == 2 and "--threshold" in err


def test_regression_pairs_and_a_non_numeric_gold(models, tmp_path, capsys):
    data = tmp_path / "sts.jsonl"
    data.write_text("".join(json.dumps({"text": f"a girl {i}", "text_pair": f"a boy {i}", "label": i / 2}) + "\n"
                            for i in range(8)) + json.dumps({"text": "x", "text_pair": "y", "label": "high"}) + "\n")
    out, metrics = tmp_path / "rows.csv", tmp_path / "metrics.json"
    code, err = run([data, "--model", models["sts"], "--out", out, "--metrics", metrics, "--report",
                     tmp_path / "r.html", "--no-token-scores"], capsys)
    assert code == 0, err
    assert "1 gold label(s) not understood" in err and "'high' is not a number" in err
    rows = read_results(out)
    assert all(r.ok and r.value is not None for r in rows) and rows[-1].gold == ""
    assert out.read_text().splitlines()[0].split(",")[:5] == ["source", "text", "text_pair", "label", "value"]
    d = json.loads(metrics.read_text())
    assert d["task"] == "regression" and tuple(d) == METRICS_KEYS + TASK_KEYS["regression"] and d["n_with_gold"] == 8
    v = np.array([r.value for r in rows[:8]])
    assert d["mae"] == pytest.approx(np.abs(v - np.arange(8) / 2).mean(), abs=1e-6)
    assert "Predicted against gold" in (tmp_path / "r.html").read_text()


def test_the_engine_passes_pairs_to_score_many(models):
    from model import Predictor

    predictor = Predictor.from_pretrained(models["sts"], device="cpu")
    from model.batch import Record

    recs = [Record("a", "a cat sits", "1.5", text_pair="a cat is sitting"), Record("b", "a dog runs", None)]
    rows = [r for c in score_records(predictor, recs) for r in c]
    want = predictor.predict("a cat sits", text_pair="a cat is sitting")
    assert rows[0].value == pytest.approx(want.value, abs=1e-5) and rows[0].gold == "1.5"
    assert rows[1].value == pytest.approx(predictor.predict("a dog runs").value, abs=1e-5)
    assert list(iter_records([])) == []


def test_token_scores_toward_a_chosen_class(models, tmp_path, capsys):
    data = tmp_path / "d.csv"
    data.write_text("text,label\n" + "".join(f"words {i % 4} and more words {i % 3},class_{i % 5}\n" for i in range(20)))
    report, metrics = tmp_path / "r.html", tmp_path / "m.json"
    code, err = run([data, "--model", models["five"], "--out", tmp_path / "rows.csv", "--report", report,
                     "--metrics", metrics, "--token-class", "class_2", "--min-count", "1"], capsys)
    assert code == 0, err
    html = report.read_text()
    assert "Toward class_2" in html and "Toward not class_2" in html
    assert json.loads(metrics.read_text())["top_tokens"] is not None
    code, err = run([data, "--model", models["five"], "--metrics", metrics, "--token-class", "joy"], capsys)
    assert code == 2 and "--token-class joy: not one of the model's classes (class_0" in err
