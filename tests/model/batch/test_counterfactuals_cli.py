"""``attention-explorer-score --counterfactuals`` (issue 43): the JSON lines, the metrics recomputed from them, the
report's section and the usage errors."""

from __future__ import annotations

import json
from collections import defaultdict

import numpy as np
import pytest

from model.scorer import main as score

LINE_KEYS = ["source", "generator", "text", "edited_text", "label", "edited_label", "probabilities",
             "edited_probabilities", "flipped"]
REVIEWS = ["This movie was great and the acting is very good.", "A boring film. The plot is terrible, I hated it.",
           "It isn't bad, and I didn't hate the ending.", "The story is wonderful, the cast is excellent."]


@pytest.fixture
def reviews(tmp_path):
    path = tmp_path / "reviews.jsonl"
    path.write_text("".join(json.dumps({"text": t}) + "\n" for t in REVIEWS), encoding="utf-8")
    return path


def _run(argv, capsys):
    code = score.main([str(a) for a in argv])
    return code, capsys.readouterr().err


def test_lines_metrics_and_report_agree(reviews, tiny_model_dir, tmp_path, capsys):
    lines_path, metrics_path, report = tmp_path / "edits.jsonl", tmp_path / "m.json", tmp_path / "r.html"
    code, err = _run([reviews, "--model", tiny_model_dir, "--out", tmp_path / "rows.csv", "--no-progress",
                      "--counterfactuals", "word_replacer,negation,ablation_flip,hotflip,scrambler",
                      "--counterfactuals-out", lines_path, "--metrics", metrics_path, "--report", report,
                      "--no-token-scores"], capsys)
    assert code == 0, err
    lines = [json.loads(x) for x in lines_path.read_text(encoding="utf-8").splitlines()]
    assert lines and {tuple(x) for x in lines} == {tuple(LINE_KEYS)}
    assert {x["generator"] for x in lines} == {"word_replacer", "negation", "ablation_flip", "hotflip", "scrambler"}
    assert all(x["source"].endswith(f":line {REVIEWS.index(x['text']) + 1}") for x in lines)
    by = defaultdict(list)
    for x in lines:
        assert x["flipped"] == (x["label"] != x["edited_label"])
        assert set(x["probabilities"]) == set(x["edited_probabilities"]) == {"negative", "positive"}
        by[x["generator"]].append(x)
    cf = json.loads(metrics_path.read_text())["counterfactuals"]
    assert set(cf) == set(by)
    for name, rows in by.items():
        assert cf[name]["n"] == len(rows)
        assert cf[name]["flip_rate"] == pytest.approx(np.mean([x["flipped"] for x in rows]))
        deltas = [x["edited_probabilities"][x["label"]] - x["probabilities"][x["label"]] for x in rows]
        assert cf[name]["mean_abs_delta"] == pytest.approx(np.mean(np.abs(deltas)), abs=1e-5)
    html = report.read_text(encoding="utf-8")
    assert "What if: counterfactual edits" in html and "flip rate" in html
    assert "counterfactuals negation:" in err and f"wrote {len(lines)} edits" in err


def test_metrics_only_and_a_sample(reviews, tiny_model_dir, tmp_path, capsys):
    metrics_path = tmp_path / "m.json"
    code, err = _run([reviews, "--model", tiny_model_dir, "--out", tmp_path / "rows.csv", "--no-progress",
                      "--counterfactuals", "negation", "--cf-sample", "1", "--metrics", metrics_path,
                      "--no-token-scores"], capsys)
    assert code == 0, err
    m = json.loads(metrics_path.read_text())
    assert m["counterfactuals"]["negation"]["n"] == 2  # only the first review: "was -> was not", "is -> is not"
    assert "n_scored" in m


@pytest.mark.parametrize("extra, message", [
    (["--counterfactuals", "nope", "--counterfactuals-out", "x.jsonl"], "unknown counterfactual generator nope"),
    (["--counterfactuals-out", "x.jsonl"], "--counterfactuals-out needs --counterfactuals"),
    (["--counterfactuals", "negation"], "needs --counterfactuals-out, --metrics or --report"),
    (["--counterfactuals", "word_replacer", "--cf-rules", "good bad", "--metrics", "m.json"], "--cf-rules"),
])
def test_usage_errors_before_the_model_loads(reviews, extra, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, err = _run([reviews, "--model", tmp_path / "no-model-here", *extra], capsys)
    assert code == 2 and message in err


def test_the_second_side_without_second_texts_is_one_clear_line(reviews, tiny_model_dir, tmp_path, capsys):
    code, err = _run([reviews, "--model", tiny_model_dir, "--out", tmp_path / "rows.csv", "--no-progress",
                      "--counterfactuals", "negation", "--cf-side", "second", "--counterfactuals-out",
                      tmp_path / "e.jsonl"], capsys)
    assert code == 1 and "--counterfactuals: the second text was chosen for editing, and input 1 has no second" in err
    assert "Traceback" not in err and not (tmp_path / "e.jsonl").exists()

