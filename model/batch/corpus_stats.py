"""The per-task metrics of batch rows in NumPy (issue 30): per-class precision/recall/F1, multi-label and regression.

The runtime may not import scikit-learn (an import-linter contract; the bundle leaves it out), so each metric is a
few vectorised NumPy lines here; ``tests/model/batch/test_corpus_stats.py`` checks every one against scikit-learn / SciPy:

* :func:`per_class` from a C x C confusion matrix (rows gold, columns predicted): precision TP / (TP + FP), recall
  TP / (TP + FN), F1 2 TP / (2 TP + FP + FN), support TP + FN, 0 where a ratio is 0/0 (scikit-learn's
  ``precision_recall_fscore_support(..., zero_division=0)``); :func:`macro_weighted_f1`: the unweighted mean of F1
  over the classes seen among gold or predicted labels (``f1_score(average="macro")``) and the support-weighted
  mean (``average="weighted"``).
* :func:`multi_label_metrics` from bool [N, C] gold and predicted label sets: micro-F1 (pooled TP, FP, FN),
  macro-F1 over the C labels, subset accuracy (every label right), Hamming loss (the share of wrong row-label
  cells), and the per-label precision/recall/F1/support.
* :func:`regression_metrics`: MAE, RMSE, Pearson's r and Spearman's rho (Pearson's r of the average ranks, ties
  sharing their mean rank, as ``scipy.stats.spearmanr``); r and rho are None for fewer than two rows or a constant
  side.
"""

from __future__ import annotations

import math

import numpy as np

from model.records.corpus import MultiLabelMetrics, PerClass, RegressionMetrics, ReliabilityBins


def frozen(a: np.ndarray) -> np.ndarray:
    """``a`` made read-only (returned)."""
    a.flags.writeable = False
    return a



def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    num, den = np.asarray(num, np.float64), np.asarray(den, np.float64)
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


def _scores(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> PerClass:
    return PerClass(frozen(_ratio(tp, tp + fp)), frozen(_ratio(tp, tp + fn)), frozen(_ratio(2 * tp, 2 * tp + fp + fn)),
                    frozen(np.asarray(tp + fn, np.int64)))


def per_class(confusion: np.ndarray) -> PerClass:
    """:class:`PerClass` of a C x C confusion matrix (int [C, C], rows gold, columns predicted)."""
    m = np.asarray(confusion, np.int64)
    tp = np.diag(m)
    return _scores(tp, m.sum(axis=0) - tp, m.sum(axis=1) - tp)


def macro_weighted_f1(confusion: np.ndarray) -> tuple[float, float]:
    """``(macro_f1, weighted_f1)`` of a confusion matrix: F1 averaged over the classes that occur as gold or
    predicted labels, unweighted and weighted by support. Raises ValueError on an all-zero matrix."""
    m = np.asarray(confusion, np.int64)
    seen = (m.sum(axis=0) + m.sum(axis=1)) > 0
    if not seen.any():
        raise ValueError("an empty confusion matrix has no F1")
    s = per_class(m)
    support = s.support.astype(np.float64)
    return float(s.f1[seen].mean()), float((s.f1 * support).sum() / max(support.sum(), 1.0))



def multi_label_metrics(gold: np.ndarray, predicted: np.ndarray) -> MultiLabelMetrics:
    """:class:`MultiLabelMetrics` of bool [N, C] label sets (N >= 1). Raises ValueError on different shapes or N = 0."""
    y, p = np.asarray(gold, bool), np.asarray(predicted, bool)
    if y.shape != p.shape or y.ndim != 2 or y.shape[0] == 0:
        raise ValueError(f"gold and predicted must be the same non-empty [N, C] shape, got {y.shape} and {p.shape}")
    tp = (y & p).sum(axis=0)
    fp = (~y & p).sum(axis=0)
    fn = (y & ~p).sum(axis=0)
    scores = _scores(tp, fp, fn)
    den = 2 * tp.sum() + fp.sum() + fn.sum()
    return MultiLabelMetrics(
        micro_f1=float(2 * tp.sum() / den) if den else 0.0, macro_f1=float(scores.f1.mean()),
        subset_accuracy=float((y == p).all(axis=1).mean()), hamming_loss=float((y != p).mean()), per_class=scores)


def rank_average(x: np.ndarray) -> np.ndarray:
    """float64 [N] ranks 1..N of ``x``, ties given their mean rank (``scipy.stats.rankdata(method="average")``)."""
    x = np.asarray(x, np.float64)
    _, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    return ((ends - (counts - 1) / 2.0))[inverse.reshape(-1)]


def _pearson(a: np.ndarray, b: np.ndarray) -> float | None:
    if len(a) < 2:
        return None
    da, db = a - a.mean(), b - b.mean()
    den = math.sqrt(float((da * da).sum()) * float((db * db).sum()))
    return float((da * db).sum() / den) if den > 0 else None



def regression_metrics(predicted: np.ndarray, gold: np.ndarray) -> RegressionMetrics:
    """:class:`RegressionMetrics` of float [N] predictions and gold values (N >= 1). Raises ValueError otherwise."""
    p, y = np.asarray(predicted, np.float64), np.asarray(gold, np.float64)
    if p.shape != y.shape or p.ndim != 1 or p.size == 0:
        raise ValueError(f"predicted and gold must be the same non-empty [N] shape, got {p.shape} and {y.shape}")
    err = p - y
    return RegressionMetrics(
        mae=float(np.abs(err).mean()), rmse=float(np.sqrt((err * err).mean())), pearson=_pearson(p, y),
        spearman=_pearson(rank_average(p), rank_average(y)), predicted=frozen(p.copy()), gold=frozen(y.copy()))



def reliability(confidence: np.ndarray, correct: np.ndarray, n_bins: int = 10) -> tuple[float, ReliabilityBins]:
    """ECE and reliability bins (Guo et al. 2017, eq. 3) of confidences and correctness.

    Args:
        confidence: float [N], the probability of each predicted class, in [0, 1].
        correct: bool [N], the prediction was right.
        n_bins: M equal-width bins on [0, 1]; bin m is (m/M, (m+1)/M], confidence 0 in the first.

    Returns:
        ``(ece, bins)``; ECE in probability units (0 when N = 0).

    Raises:
        ValueError: ``n_bins`` < 1 or arrays of different lengths.
    """
    if n_bins < 1:
        raise ValueError(f"n_bins must be >= 1, got {n_bins}")
    conf = np.asarray(confidence, dtype=np.float64)
    ok = np.asarray(correct, dtype=np.float64)
    if conf.shape != ok.shape:
        raise ValueError(f"confidence and correct differ in shape: {conf.shape} vs {ok.shape}")
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    idx = np.clip(np.searchsorted(edges, conf, side="left") - 1, 0, n_bins - 1)
    counts = np.bincount(idx, minlength=n_bins).astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_conf = np.bincount(idx, weights=conf, minlength=n_bins) / counts
        acc = np.bincount(idx, weights=ok, minlength=n_bins) / counts
    n = max(1, len(conf))
    ece = float(np.nansum(counts / n * np.abs(acc - mean_conf)))
    bins = ReliabilityBins(frozen(edges), frozen(counts), frozen(mean_conf), frozen(acc))
    return ece, bins


__all__ = ["MultiLabelMetrics", "frozen", "PerClass", "RegressionMetrics", "ReliabilityBins", "reliability", "macro_weighted_f1", "multi_label_metrics",
           "per_class", "rank_average", "regression_metrics"]
