"""``model.training.finetune_hf`` on every task type (issue 30): a tiny random BERT fine-tuned for one short epoch on
a handful of rows of single-label, multi-label, regression and sentence-pair data (JSON Lines and CSV), the output
folder read back by ``transformers``; the gold-label parsing and the metrics of :mod:`model.datasets.task_data`."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from model.datasets import task_data as td
from model.datasets.splits import UsageError
from model.training import finetune_hf as ft
from tests.fixtures.tiny_models import SAMPLE_TEXTS

EMOTIONS = ("joy", "anger", "neutral")


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """A tiny random BERT with a 2-class head (so a task of another size must get a fresh head)."""
    from tests.fixtures.tiny_hf import make_tiny_hf_dir

    return make_tiny_hf_dir(tmp_path_factory.mktemp("tiny") / "bert")


def _row(task: str, i: int, pairs: bool) -> dict:
    row = {"text": SAMPLE_TEXTS[i % len(SAMPLE_TEXTS)]}
    if pairs:
        row["text_pair"] = SAMPLE_TEXTS[(i + 3) % len(SAMPLE_TEXTS)]
    if task == "multi_label":
        row["labels"] = [EMOTIONS[i % 3]] + ([EMOTIONS[(i + 1) % 3]] if i % 2 else [])
    elif task == "regression":
        row["label"] = float(i % 6)
    else:
        row["label"] = ("entailment", "neutral", "contradiction")[i % 3]
    return row


def _write(folder: Path, task: str, pairs: bool, splits=("train", "dev", "test"), fmt: str = "jsonl") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in splits:
        rows = [_row(task, i, pairs) for i in range(12)]
        if fmt == "csv":
            with open(folder / f"{name}.csv", "w", newline="", encoding="utf-8") as fh:
                writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
                writer.writeheader()
                writer.writerows({**r, "labels": ";".join(r["labels"])} if "labels" in r else r for r in rows)
        else:
            (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    if task == "multi_label":
        (folder / "labels.txt").write_text("\n".join(EMOTIONS) + "\n")
    return folder


def _run(base: Path, data: Path, out: Path, *flags: str) -> dict:
    args = ["--base", str(base), "--data", str(data), "--out", str(out), "--epochs", "1", "--batch-size", "4",
            "--max-len", "32", "--device", "cpu", "--precision", "fp32", *flags]
    assert ft.main(args) == 0
    return json.loads((out / "metrics.json").read_text())


CASES = {  # name: (task, pairs, format, flags, problem_type, id2label)
    "nli_pairs": ("single_label", True, "jsonl", ["--labels", "entailment,neutral,contradiction"],
                  "single_label_classification", ["entailment", "neutral", "contradiction"]),
    "multi_label_csv": ("multi_label", False, "csv", ["--task", "multi_label"], "multi_label_classification",
                        list(EMOTIONS)),
    "sts_pairs": ("regression", True, "jsonl", ["--task", "regression", "--labels", "similarity"], "regression",
                  ["similarity"]),
    "three_class_sorted": ("single_label", False, "jsonl", [], "single_label_classification",
                           ["contradiction", "entailment", "neutral"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_task_type_trains_into_a_folder_transformers_loads(base, tmp_path, case):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    task, pairs, fmt, flags, problem_type, names = CASES[case]
    metrics = _run(base, _write(tmp_path / "data", task, pairs, fmt=fmt), tmp_path / "out", *flags)
    config = json.loads((tmp_path / "out" / "config.json").read_text())
    assert config["problem_type"] == problem_type
    assert [config["id2label"][str(i)] for i in range(len(names))] == names
    assert config["label2id"] == {n: i for i, n in enumerate(names)}
    assert metrics["task"] == task and metrics["labels"] == names and metrics["test_count"] == 12
    assert metrics["splits"] == {"train": "train", "validation": "dev", "train_count": 12, "test": "test"}
    assert f"val_{ft.SELECT_BY[task]}" in metrics["epochs"][0]
    assert not (tmp_path / "out" / ".checkpoint").exists()
    model = AutoModelForSequenceClassification.from_pretrained(tmp_path / "out", local_files_only=True)
    tok = AutoTokenizer.from_pretrained(tmp_path / "out", local_files_only=True)
    batch = tok(["a great film"], ["a dull film"] if pairs else None, return_tensors="pt")
    with torch.no_grad():
        assert model(**batch).logits.shape == (1, len(names))


def test_pairs_are_encoded_as_the_tokenizer_encodes_a_pair(base):
    tok, _ = ft.load_base(base)
    split = td.Split([SAMPLE_TEXTS[0], "short"], [SAMPLE_TEXTS[1], SAMPLE_TEXTS[2] * 3], ["a", "b"])
    enc = ft.encode_split(tok, split, np.zeros(2, dtype=np.int64), max_len=24)
    want = tok(split.texts, split.pairs, truncation="longest_first", max_length=24)
    assert [list(s) for s in enc.seqs] == want["input_ids"] and [list(s) for s in enc.segs] == want["token_type_ids"]
    assert all(len(s) <= 24 for s in enc.seqs) and len(enc.seqs[1]) == 24  # the long second text was cut
    assert all(1 in s and s[0] == 0 for s in enc.segs)  # the second text is segment 1
    batch = ft.model_inputs(enc.seqs, enc.segs, tok.pad_token_id, torch.device("cpu"))
    assert batch["token_type_ids"].shape == batch["input_ids"].shape and int(batch["token_type_ids"].max()) == 1
    single = ft.encode_split(tok, td.Split(split.texts, None, split.gold), enc.y, max_len=24)
    assert single.segs is None


def test_without_a_train_split_it_trains_on_dev_and_says_so(base, tmp_path):
    data = _write(tmp_path / "snli", "single_label", True, splits=("dev", "test"))
    metrics = _run(base, data, tmp_path / "out", "--labels", "entailment,neutral,contradiction")
    assert metrics["splits"]["note"] == td.NO_TRAIN_NOTE
    assert metrics["splits"]["train_count"] + metrics["validation"]["size"] == 12 and metrics["test_count"] == 12


def test_bad_task_data_gets_one_clear_message(base, tmp_path, capsys):
    data = _write(tmp_path / "d", "single_label", True)
    out = str(tmp_path / "out")
    common = ["--base", str(base), "--data", str(data), "--out", out, "--device", "cpu"]
    assert ft.main([*common, "--task", "ranking"]) == 2
    assert ft.main([*common, "--pair-column", "hypothesis"]) == 2
    assert "no pair column 'hypothesis'" in capsys.readouterr().err
    assert ft.main([*common, "--task", "regression"]) == 2
    assert "bad regression gold label" in capsys.readouterr().err
    assert ft.main([*common, "--labels", "entailment,neutral"]) == 2
    assert "unknown label 'contradiction'" in capsys.readouterr().err
    assert ft.main([*common[:2], "--data", str(tmp_path / "none"), *common[4:]]) == 2


def test_gold_labels_by_name_any_case_by_id_and_as_lists(tmp_path):
    names = ("joy", "anger", "neutral")
    assert td.targets("single_label", ["Joy", 2, "ANGER", "1"], names).tolist() == [0, 2, 1, 1]
    multi = td.targets("multi_label", [["joy", "neutral"], "anger; Joy", [2]], names)
    assert multi.tolist() == [[1, 0, 1], [1, 1, 0], [0, 0, 1]] and multi.dtype == np.float32
    assert td.targets("regression", [4.75, "2.5", 0], ("similarity",)).tolist() == [4.75, 2.5, 0.0]
    with pytest.raises(UsageError, match="row 2"):
        td.targets("regression", [1.0, "high"], ("similarity",))
    assert td.label_names("single_label", "", tmp_path, [0, 1, 1]) == ("negative", "positive")  # IMDB's 0/1
    assert td.label_names("single_label", "", tmp_path, ["b", "a"]) == ("a", "b")
    assert td.label_names("multi_label", "", tmp_path, [["b"], "c;a"]) == ("a", "b", "c")
    (tmp_path / "labels.txt").write_text("z\ny\n")
    assert td.label_names("multi_label", "", tmp_path, [["y"]]) == ("z", "y")


def test_metrics_of_each_task():
    y = np.array([0, 1, 1, 0])
    single = td.evaluate("single_label", np.array([[2.0, 0], [0, 1], [1, 0], [3, 0]]), y, ("no", "yes"))
    assert single["accuracy"] == 0.75 and single["f1"] == pytest.approx(2 / 3) and single["positive_class"] == "yes"
    multi = td.evaluate("multi_label", np.array([[1.0, -1], [1, 1]]), np.array([[1.0, 0], [0, 1]]), ("a", "b"))
    assert multi["micro_f1"] == pytest.approx(0.8) and multi["subset_accuracy"] == 0.5
    reg = td.evaluate("regression", np.array([[1.0], [2], [4]]), np.array([1.0, 2, 3]), ("score",))
    assert reg["spearman"] == pytest.approx(1.0) and reg["mae"] == pytest.approx(1 / 3)
    assert reg["rmse"] == pytest.approx(np.sqrt(1 / 3))


def test_logits_of_pads_and_batches_pairs_as_one_row_at_a_time(base):
    tok, model = ft.load_base(base, ("a", "b", "c"), "single_label_classification")
    texts = [SAMPLE_TEXTS[i % 7] * (1 + i % 3) for i in range(9)]
    split = td.Split(texts, [SAMPLE_TEXTS[(i + 2) % 7] for i in range(9)], ["a"] * 9)
    enc = ft.encode_split(tok, split, np.zeros(9, dtype=np.int64), max_len=48)
    batched = ft.logits_of(model, enc.seqs, tok.pad_token_id, torch.device("cpu"), tokens_per_batch=100,
                           precision="fp32", segs=enc.segs)
    with torch.no_grad():
        one = [model(**ft.model_inputs([s], [g], tok.pad_token_id, "cpu")).logits[0].numpy()
               for s, g in zip(enc.seqs, enc.segs, strict=True)]
        no_segments = model(**ft.model_inputs(enc.seqs[:1], None, tok.pad_token_id, "cpu")).logits[0].numpy()
    np.testing.assert_allclose(batched, np.stack(one), atol=1e-5)
    assert not np.allclose(no_segments, one[0], atol=1e-5)  # the segment ids reach the model
