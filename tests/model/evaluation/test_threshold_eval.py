"""``python -m model.evaluation.threshold``: the multi-label threshold is chosen on dev only, then applied to test."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

pytest.importorskip("sklearn")

from model.evaluation.threshold import THRESHOLDS, choose, main  # noqa: E402


def test_the_threshold_comes_from_dev_and_test_chooses_nothing():
    rng = np.random.default_rng(0)
    dev_y = rng.integers(0, 2, (200, 3))
    dev_p = np.where(dev_y == 1, 0.22, 0.18) + rng.normal(0, 0.005, (200, 3))  # dev: 0.2 separates the labels
    test_y = rng.integers(0, 2, (200, 3))
    test_p = np.where(test_y == 1, 0.6, 0.4)  # test alone would pick 0.45 or 0.5
    out = choose(dev_p, dev_y, test_p, test_y)
    assert out["chosen_on_dev"] == 0.2 and set(out["dev_by_threshold"]) == set(THRESHOLDS)
    assert out["dev_by_threshold"][0.2]["macro_f1"] == pytest.approx(1.0)
    assert out["test_macro_f1"] < out["test_macro_f1_at_0.5"] == pytest.approx(1.0)


def test_bad_data_and_a_single_label_model_get_exit_2(tmp_path, capsys):
    from tests.fixtures.tiny_hf import make_tiny_hf_dir

    multi = make_tiny_hf_dir(tmp_path / "m", num_labels=4, task="multi_label")
    single = make_tiny_hf_dir(tmp_path / "s", num_labels=3, task="single_label")
    data = tmp_path / "data"
    data.mkdir()
    for split in ("dev", "test"):
        with gzip.open(data / f"{split}.jsonl.gz", "wt") as f:
            f.write(json.dumps({"text": "some words", "labels": ["class_1", "nope"]}) + "\n")
    assert main(["--model", str(single), "--data", str(data)]) == 2 and "single_label model" in capsys.readouterr().err
    assert main(["--model", str(multi), "--data", str(data)]) == 2 and "'nope'" in capsys.readouterr().err
    with gzip.open(data / "test.jsonl.gz", "wt") as f:
        f.write(json.dumps({"text": "other words", "labels": ["class_0"]}) + "\n")
    with gzip.open(data / "dev.jsonl.gz", "wt") as f:
        f.write(json.dumps({"text": "some words", "labels": ["class_1", "class_3"]}) + "\n")
    assert main(["--model", str(multi), "--data", str(data)]) == 0
    assert json.loads(capsys.readouterr().out)["chosen_on_dev"] in THRESHOLDS
