"""Multi-class, multi-label and regression heads (issue 30): the task read from config.json as transformers'
text-classification pipeline reads it, compared with transformers' own outputs on tiny random folders."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("transformers")

import torch

from model import Predictor
from model.tasks.task import MULTI_LABEL, REGRESSION, SINGLE_LABEL, Task
from tests.fixtures.tiny_hf import make_tiny_hf_dir

TEXTS = ["This movie was wonderful, the acting superb.", "A dull and boring film.", "ok"]
KINDS = {  # name: (make_tiny_hf_dir keywords, expected task)
    "multi_class": ({"num_labels": 5}, SINGLE_LABEL),
    "multi_label": ({"num_labels": 4, "task": MULTI_LABEL}, MULTI_LABEL),
    "regression": ({"task": REGRESSION}, REGRESSION),
    "one_output": ({"num_labels": 1}, MULTI_LABEL),  # no problem_type and one output: a sigmoid, as the pipeline
}


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tasks")
    return {k: make_tiny_hf_dir(root / k, "bert", seed=3, **kw) for k, (kw, _) in KINDS.items()}


@pytest.fixture(scope="module")
def predictors(folders) -> dict[str, Predictor]:
    return {k: Predictor.from_pretrained(d, device="cpu") for k, d in folders.items()}


def _reference_logits(folder: Path, text: str, pair: str | None = None) -> np.ndarray:
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSequenceClassification.from_pretrained(folder, use_safetensors=True).eval()
    with torch.no_grad():
        return model(**tok(text, pair, truncation="longest_first", max_length=64, return_tensors="pt")).logits[0].numpy()


@pytest.mark.parametrize("name", list(KINDS))
def test_task_from_config_and_outputs_equal_transformers(folders, predictors, name):
    p = predictors[name]
    assert p.task == Task(KINDS[name][1], source="config")
    info = p.model_info()
    assert (info.task, info.task_source, info.threshold, info.reads_pairs) == (KINDS[name][1], "config", 0.5, True)
    for text in TEXTS:
        pred = p.predict(text)
        z = _reference_logits(folders[name], text)
        np.testing.assert_allclose(pred.logits, z, atol=1e-5)
        assert pred.task == KINDS[name][1]
        if pred.task == SINGLE_LABEL:
            expected = torch.from_numpy(z).softmax(-1).numpy()
            np.testing.assert_allclose(pred.probabilities, expected, atol=1e-5)
            assert pred.label == p.labels[int(z.argmax())]
        elif pred.task == MULTI_LABEL:
            sig = 1 / (1 + np.exp(-z))
            np.testing.assert_allclose(pred.probabilities, sig, atol=1e-5)
            assert pred.label == ";".join(n for n, s in zip(p.labels, sig, strict=True) if s >= 0.5)
        else:
            assert pred.probabilities.shape == (0,) and pred.label == ""
            assert pred.value == pytest.approx(float(z[0]), abs=1e-5)


@pytest.mark.parametrize("name", list(KINDS))
def test_score_many_equals_predict(predictors, name):
    p = predictors[name]
    scores = p.score_many(TEXTS + [""])
    for text, s in zip(TEXTS, scores, strict=False):
        pred = p.predict(text)
        assert s.ok and s.task == pred.task == KINDS[name][1] and s.label == pred.label
        np.testing.assert_allclose(s.probabilities, pred.probabilities, atol=1e-5)
        if pred.task == REGRESSION:
            assert s.value == pytest.approx(pred.value, abs=1e-5) and s.probabilities.shape == (0,)
        else:
            assert s.value is None
    assert not scores[-1].ok and "empty" in scores[-1].error


def test_pipeline_function_to_apply_agrees(folders, predictors):
    """The task matches transformers' TextClassificationPipeline's choice of function_to_apply."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, pipeline

    for name, p in predictors.items():
        model = AutoModelForSequenceClassification.from_pretrained(folders[name], use_safetensors=True)
        pipe = pipeline("text-classification", model=model, tokenizer=AutoTokenizer.from_pretrained(folders[name]))
        out = pipe(TEXTS[0], top_k=None, function_to_apply=None)
        got = {d["label"]: d["score"] for d in out}
        pred = p.predict(TEXTS[0])
        want = pred.logits if pred.task == REGRESSION else pred.probabilities
        if pred.task == REGRESSION:  # the pipeline applies no function to a regression head
            assert got[p.labels[0]] == pytest.approx(float(want[0]), abs=1e-5)
        else:
            np.testing.assert_allclose([got[n] for n in p.labels], want, atol=1e-5)


def test_set_task_reads_the_same_logits_another_way(folders):
    p = Predictor.from_pretrained(folders["multi_class"], device="cpu")
    before = p.predict(TEXTS[0])
    task = p.set_task(MULTI_LABEL, threshold=0.3)
    assert task == Task(MULTI_LABEL, 0.3, "user") and p.task == task and p.model_info().task_source == "user"
    after = p.predict(TEXTS[0])
    np.testing.assert_array_equal(after.logits, before.logits)
    np.testing.assert_allclose(after.probabilities, 1 / (1 + np.exp(-before.logits)), atol=1e-6)
    assert after.label == ";".join(p.labels)  # every sigmoid of a tiny logit is above 0.3
    assert p.score_many([TEXTS[0]])[0].label == after.label
    assert p.options().task == task  # what the next call or job takes
    with pytest.raises(ValueError, match="regression"):
        p.set_task(REGRESSION)
    with pytest.raises(ValueError, match="unknown task"):
        p.set_task("ranking")
    with pytest.raises(ValueError, match="threshold"):
        p.set_task(threshold=1.5)
    p.set_task(SINGLE_LABEL)
    np.testing.assert_array_equal(p.predict(TEXTS[0]).probabilities, before.probabilities)


def test_bundled_style_model_is_single_label(tiny_predictor):
    assert tiny_predictor.task == Task(SINGLE_LABEL, source="bundled")
    assert not tiny_predictor.reads_pairs
    info = tiny_predictor.model_info()
    assert (info.task, info.task_source, info.reads_pairs) == (SINGLE_LABEL, "bundled", False)
    pred = tiny_predictor.predict(TEXTS[0])
    assert pred.task == SINGLE_LABEL and pred.label == tiny_predictor.labels[int(pred.probabilities.argmax())]
