"""The per-task corpus metrics (issue 30), each against scikit-learn / SciPy: per-class precision/recall/F1, macro and
weighted F1, the top-label ECE of N classes, multi-label micro/macro-F1, subset accuracy and Hamming loss, regression
MAE/RMSE/Pearson/Spearman; and metrics.json's keys per task."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from sklearn import metrics as skm

from model.batch import ResultRow
from model.corpus.metrics import corpus_metrics
from model.corpus.task_metrics import multi_label_metrics, per_class, regression_metrics
from model.report.report import METRICS_KEYS, TASK_KEYS, metrics_dict

LABELS = ("anger", "fear", "joy", "love", "sadness")


def single_rows(n: int, seed: int, labels=LABELS) -> list[ResultRow]:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        probs = rng.dirichlet(np.ones(len(labels)) * 0.7)
        pred = labels[int(probs.argmax())]
        gold = pred if rng.random() < 0.55 else labels[int(rng.integers(len(labels) - 1))]  # never the last: support 0
        gold = gold if rng.random() < 0.8 else ""
        rows.append(ResultRow(f"s{i}", "t", pred, tuple(float(p) for p in probs), int(rng.integers(3, 600)), False,
                              gold, (pred == gold) if gold else None, "ok", labels=labels))
    return rows


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_single_label_metrics_equal_sklearn(seed):
    rows = single_rows(800, seed)
    m = corpus_metrics(rows)
    gold_rows = [r for r in rows if r.gold]
    y, yhat = [r.gold for r in gold_rows], [r.label for r in gold_rows]
    assert m.task == "single_label" and m.labels == LABELS and m.f1_kind == "macro"
    np.testing.assert_array_equal(m.confusion, skm.confusion_matrix(y, yhat, labels=list(LABELS)))
    p, r, f, s = skm.precision_recall_fscore_support(y, yhat, labels=list(LABELS), zero_division=0)
    np.testing.assert_allclose(m.per_class.precision, p, atol=1e-12)
    np.testing.assert_allclose(m.per_class.recall, r, atol=1e-12)
    np.testing.assert_allclose(m.per_class.f1, f, atol=1e-12)
    np.testing.assert_array_equal(m.per_class.support, s)
    assert m.macro_f1 == pytest.approx(skm.f1_score(y, yhat, average="macro", zero_division=0), abs=1e-12)
    assert m.f1 == m.macro_f1
    assert m.weighted_f1 == pytest.approx(skm.f1_score(y, yhat, average="weighted", zero_division=0), abs=1e-12)
    assert m.accuracy == pytest.approx(skm.accuracy_score(y, yhat), abs=1e-12)
    conf = np.array([max(r.probabilities) for r in gold_rows])
    right = np.array([r.correct for r in gold_rows], float)
    bins = np.clip(np.ceil(conf * 10).astype(int) - 1, 0, 9)
    ece = sum(abs(right[bins == b].mean() - conf[bins == b].mean()) * (bins == b).mean() for b in range(10)
              if (bins == b).any())
    assert m.ece == pytest.approx(ece, abs=1e-12)
    assert m.score_name == "confidence" and m.histogram.counts_by_gold.shape == (5, len(m.histogram.counts))
    d = metrics_dict(m, None)
    assert tuple(d) == METRICS_KEYS + TASK_KEYS["single_label"]
    assert d["labels"] == list(LABELS) and d["confusion_matrix"]["labels"] == list(LABELS)
    assert d["per_class"]["joy"] == {"precision": pytest.approx(p[2]), "recall": pytest.approx(r[2]),
                                     "f1": pytest.approx(f[2]), "support": int(s[2])}


def test_per_class_of_an_empty_class_is_zero():
    pc = per_class(np.array([[3, 0, 1], [0, 0, 0], [2, 0, 4]]))
    assert pc.precision[1] == pc.recall[1] == pc.f1[1] == 0.0 and pc.support.tolist() == [4, 0, 6]


@pytest.mark.parametrize("seed", [0, 3])
def test_multi_label_metrics_equal_sklearn(seed):
    rng = np.random.default_rng(seed)
    y = rng.random((300, 7)) < 0.2
    p = np.where(rng.random((300, 7)) < 0.8, y, ~y)
    ml = multi_label_metrics(y, p)
    assert ml.micro_f1 == pytest.approx(skm.f1_score(y, p, average="micro", zero_division=0), abs=1e-12)
    assert ml.macro_f1 == pytest.approx(skm.f1_score(y, p, average="macro", zero_division=0), abs=1e-12)
    assert ml.subset_accuracy == pytest.approx(skm.accuracy_score(y, p), abs=1e-12)
    assert ml.hamming_loss == pytest.approx(skm.hamming_loss(y, p), abs=1e-12)
    pr, rc, f1, sup = skm.precision_recall_fscore_support(y, p, zero_division=0)
    np.testing.assert_allclose(ml.per_class.precision, pr, atol=1e-12)
    np.testing.assert_allclose(ml.per_class.recall, rc, atol=1e-12)
    np.testing.assert_allclose(ml.per_class.f1, f1, atol=1e-12)
    np.testing.assert_array_equal(ml.per_class.support, sup)


def test_corpus_metrics_of_multi_label_rows():
    labels = ("admiration", "anger", "joy", "neutral")
    rng = np.random.default_rng(5)
    rows, y, p = [], [], []
    for i in range(200):
        probs = rng.random(4)
        pred = tuple(n for n, q in zip(labels, probs) if q >= 0.5)
        gold = tuple(n for n in labels if rng.random() < 0.3) if i % 5 else ()
        rows.append(ResultRow(f"m{i}", "t", ";".join(pred), tuple(float(q) for q in probs), 12, False,
                              ";".join(gold), (set(pred) == set(gold)) if gold else None, "ok", labels=labels,
                              task="multi_label"))
        if gold:
            y.append([n in gold for n in labels])
            p.append([n in pred for n in labels])
    m = corpus_metrics(rows)
    y, p = np.array(y), np.array(p)
    assert m.task == "multi_label" and m.n_with_gold == len(y) and m.confusion is None and m.f1_kind == "micro"
    assert m.micro_f1 == pytest.approx(skm.f1_score(y, p, average="micro", zero_division=0), abs=1e-12)
    assert m.macro_f1 == pytest.approx(skm.f1_score(y, p, average="macro", zero_division=0), abs=1e-12)
    assert m.subset_accuracy == m.accuracy == pytest.approx(skm.accuracy_score(y, p), abs=1e-12)
    assert m.hamming_loss == pytest.approx(skm.hamming_loss(y, p), abs=1e-12)
    d = metrics_dict(m, None)
    assert tuple(d) == METRICS_KEYS + TASK_KEYS["multi_label"] and d["task"] == "multi_label"
    assert set(d["per_class"]) == set(labels)


def test_regression_metrics_equal_scipy():
    rng = np.random.default_rng(7)
    gold = np.round(rng.uniform(0, 5, 400), 1)  # rounded: ties in both rankings
    pred = np.round(gold + rng.normal(0, 0.8, 400), 1)
    reg = regression_metrics(pred, gold)
    assert reg.mae == pytest.approx(skm.mean_absolute_error(gold, pred), abs=1e-12)
    assert reg.rmse == pytest.approx(np.sqrt(skm.mean_squared_error(gold, pred)), abs=1e-12)
    assert reg.pearson == pytest.approx(stats.pearsonr(pred, gold)[0], abs=1e-12)
    assert reg.spearman == pytest.approx(stats.spearmanr(pred, gold)[0], abs=1e-12)
    assert regression_metrics(np.ones(3), np.arange(3.0)).pearson is None  # a constant side


def test_corpus_metrics_of_regression_rows():
    rng = np.random.default_rng(9)
    rows = []
    for i in range(120):
        v = float(rng.uniform(0, 5))
        gold = "" if i % 6 == 0 else repr(round(v + rng.normal(0, 0.5), 2))
        rows.append(ResultRow(f"r{i}", "t", "", (), int(rng.integers(5, 700)), False, gold, None, "ok", value=v,
                              task="regression"))
    m = corpus_metrics(rows)
    g = np.array([float(r.gold) for r in rows if r.gold])
    v = np.array([r.value for r in rows if r.gold])
    assert m.task == "regression" and m.n_with_gold == len(g) and m.accuracy is None and m.confusion is None
    assert m.labels == () and m.per_class is None  # gold values are no labels
    assert m.regression.mae == pytest.approx(np.abs(v - g).mean(), abs=1e-12)
    assert m.regression.spearman == pytest.approx(stats.spearmanr(v, g)[0], abs=1e-12)
    np.testing.assert_array_equal(m.regression.gold, g)
    assert int(m.error_by_length.gold_counts.sum()) == len(g)
    assert m.score_name == "predicted value" and m.histogram.counts.sum() == 120
    d = metrics_dict(m, None)
    assert tuple(d) == METRICS_KEYS + TASK_KEYS["regression"]
    assert d["rmse"] == pytest.approx(np.sqrt(((v - g) ** 2).mean()))


def test_report_html_draws_what_fits_the_task():
    from model.report.report import render_report_html

    labels = tuple(f"emotion_{k}" for k in range(28))
    html = render_report_html(corpus_metrics(single_rows(600, 4, labels)), None, model_name="m", date="d")
    assert html.count("<path") >= 28 * 28 and "Per class" in html and "emotion_27" in html
    assert 'rotate(-60)">emotion_27<' in html  # 28 column names turned so they stay readable (matplotlib's transform)
    reg_rows = [ResultRow(f"r{i}", "t", "", (), 9, False, repr(i / 10), None, "ok", value=i / 9, task="regression")
                for i in range(30)]
    html = render_report_html(corpus_metrics(reg_rows), None, model_name="m", date="d")
    assert "Predicted against gold" in html and 'id="PathCollection_1"' in html and "Error by length" in html
    assert "Confusion matrix" not in html and "Spearman" in html
