"""``attention-explorer-score ... --compare-model DIR`` (issue 44): B's columns equal a run of B alone (local and Ray
engines), ``--metrics`` gains "comparison", ``--report`` the "Two models" section, a mismatch is a usage error
naming both folders. Real tiny models built offline."""

from __future__ import annotations

import csv
import importlib.util
import json

import pytest

from model.scorer import main as score
from model.corpus.comparison import mcnemar_exact
from model.core.config import EncoderConfig
from tests.fixtures.tiny_models import make_random_model_dir
from tests.model.batch.conftest import EMOTIONS

TEXTS = ["I am so happy today", "This is terrifying", "I hate this so much", "What a lovely gift", "so sad and alone",
         "ok then", "the best day of my life", "I fear the dark", "angry again", "love it"]


@pytest.fixture(scope="module")
def two_models(tmp_path_factory):
    """Two tiny random models of ours with the five emotions (different seeds) and one with other labels."""
    def make(name, labels, seed):
        config = EncoderConfig(max_len=64, d_model=16, n_heads=2, n_layers=2, d_ff=32, labels=tuple(labels))
        return make_random_model_dir(tmp_path_factory.mktemp(name), config, seed=seed)

    return make("a", EMOTIONS, 1), make("b", EMOTIONS, 2), make("c", (*EMOTIONS[:4], "surprise"), 3)


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "emotions.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["text", "label"])
        w.writerows((t, EMOTIONS[i % 5]) for i, t in enumerate(TEXTS))
    return path


def _run(argv, capsys):
    code = score.main([str(a) for a in argv])
    return code, capsys.readouterr().err


def _csv(path):
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _check_b_columns(both, alone):
    own = ("label", "confidence", *(f"p_{n}" for n in EMOTIONS), "status")
    assert len(both) == len(alone) == len(TEXTS)
    for x, y in zip(both, alone, strict=True):
        assert {c: x["b_" + c] for c in own} == {c: y[c] for c in own}
        assert x["agree"] == ("true" if x["label"] == x["b_label"] else "false")


def test_compare_model_rows_metrics_and_report(two_models, data, tmp_path, capsys):
    a, b, _ = two_models
    code, err = _run([data, "--model", a, "--compare-model", b, "--out", tmp_path / "both.csv", "--no-progress",
                      "--metrics", tmp_path / "m.json", "--report", tmp_path / "r.html", "--no-token-scores"], capsys)
    assert code == 0, err
    assert _run([data, "--model", b, "--out", tmp_path / "b.csv", "--no-progress"], capsys)[0] == 0
    both = _csv(tmp_path / "both.csv")
    _check_b_columns(both, _csv(tmp_path / "b.csv"))
    comparison = json.loads((tmp_path / "m.json").read_text())["comparison"]
    assert list(comparison)[:4] == ["a_accuracy", "b_accuracy", "agreement", "mcnemar"]
    a_right = [x["correct"] == "true" for x in both]
    b_right = [x["b_label"] == x["gold"] for x in both]
    b01 = sum(x and not y for x, y in zip(a_right, b_right))
    b10 = sum(y and not x for x, y in zip(a_right, b_right))
    assert comparison["mcnemar"] == {"b01": b01, "b10": b10, "p_value": mcnemar_exact(b01, b10)}
    assert comparison["a_accuracy"] == pytest.approx(sum(a_right) / len(TEXTS))
    assert comparison["b_accuracy"] == pytest.approx(sum(b_right) / len(TEXTS))
    assert comparison["agreement"] == pytest.approx(sum(x["agree"] == "true" for x in both) / len(TEXTS))
    assert sum(map(sum, comparison["confusion"]["matrix"])) == len(TEXTS)
    assert sum(s["n_compared"] for s in comparison["by_length"]) == len(TEXTS)  # all short: one slice
    assert comparison["by_length"][0]["slice"] == "1-128" and comparison["by_length"][0]["mcnemar"]["b01"] == b01
    html = (tmp_path / "r.html").read_text()
    assert "Two models: A against B" in html and "b01: A right, B wrong" in html and "Per length slice" in html
    assert "compared with model B" in err and f"McNemar b01 {b01}, b10 {b10}" in err


def test_jsonl_stdout_has_the_b_columns(two_models, data, capsys):
    a, b, _ = two_models
    code = score.main([str(data), "--model", str(a), "--compare-model", str(b), "--format", "jsonl", "--no-progress"])
    out = capsys.readouterr().out
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(rows) == len(TEXTS)
    assert list(rows[0])[-3:] == ["b_p_sadness", "b_status", "agree"] and isinstance(rows[0]["agree"], bool)


def test_label_mismatch_is_a_usage_error_naming_both_folders(two_models, data, tmp_path, capsys):
    a, _, c = two_models
    code, err = _run([data, "--model", a, "--compare-model", c, "--out", tmp_path / "x.csv", "--no-progress"], capsys)
    assert code == 2
    assert "--compare-model" in err and str(a) in err and str(c) in err and "only A: sadness; only B: surprise" in err
    assert not (tmp_path / "x.csv").exists()


def test_unloadable_model_b_exits_1(two_models, data, tmp_path, capsys):
    code, err = _run([data, "--model", two_models[0], "--compare-model", tmp_path / "nowhere", "--no-progress"],
                     capsys)
    assert code == 1 and "cannot load the model" in err


HAS_RAY = importlib.util.find_spec("ray") is not None


@pytest.mark.slow
@pytest.mark.skipif(not HAS_RAY, reason="ray is not installed: pip install 'attention-explorer[cluster]'")
def test_compare_model_with_the_ray_engine(two_models, data, tmp_path, capsys):
    import ray

    a, b, _ = two_models
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        code, err = _run([data, "--model", a, "--compare-model", b, "--engine", "ray", "--num-workers", "1",
                          "--out", tmp_path / "ray.csv", "--no-progress", "--metrics", tmp_path / "m.json",
                          "--no-token-scores"], capsys)
    finally:
        ray.shutdown()
    assert code == 0, err
    assert _run([data, "--model", b, "--out", tmp_path / "b.csv", "--no-progress"], capsys)[0] == 0
    ray_rows, alone = _csv(tmp_path / "ray.csv"), _csv(tmp_path / "b.csv")
    for x, y in zip(ray_rows, alone, strict=True):  # the Ray engine's batches differ: probabilities to ~1e-6
        assert x["b_label"] == y["label"] and x["b_status"] == y["status"]
        assert float(x["b_p_joy"]) == pytest.approx(float(y["p_joy"]), abs=1e-5)
    assert json.loads((tmp_path / "m.json").read_text())["comparison"]["mcnemar"]["b01"] >= 0
