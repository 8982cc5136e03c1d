"""The per-task metrics of batch rows (issues 30 and 55): per-class precision/recall/F1, multi-label and regression,
computed by scikit-learn and SciPy (base dependencies: umap-learn needs them and the bundle carries them); only the
expected calibration error with its bins (:func:`reliability`), which no library has, is our own.

* :func:`per_class` from a C x C confusion matrix (rows gold, columns predicted): ``sklearn.metrics.
  precision_recall_fscore_support(..., labels=range(C), zero_division=0)`` on the matrix's cells (each cell one
  (gold, predicted) pair weighted by its count): precision TP / (TP + FP), recall TP / (TP + FN), F1, support
  TP + FN. A ratio that is 0/0 (a class never predicted, or absent from the gold labels) is **0.0**
  (``zero_division=0``, given explicitly: a view that shows it as undefined must test the support and the column
  sums, not the value). :func:`macro_weighted_f1`: ``f1_score(average="macro")`` over the classes seen among gold or
  predicted labels and ``average="weighted"`` (support-weighted), also with ``zero_division=0``.
* :func:`multi_label_metrics` from bool [N, C] gold and predicted label sets: ``f1_score`` micro (pooled TP, FP,
  FN) and macro over the C labels, ``accuracy_score`` (subset accuracy: every label right), ``hamming_loss`` (the
  share of wrong row-label cells), and the per-label ``precision_recall_fscore_support``; ``zero_division=0``.
* :func:`regression_metrics`: ``mean_absolute_error``, the root of ``mean_squared_error``, ``scipy.stats.pearsonr``
  and ``scipy.stats.spearmanr`` (Pearson's r of the average ranks); r and rho are None for fewer than two rows or a
  constant side (where SciPy has no coefficient).

scikit-learn and SciPy are imported when a metric is first computed, not when this module is (the window imports
it; the import costs about a second). ``tests/model/batch/test_corpus_stats.py`` checks every value.
"""

from __future__ import annotations

import numpy as np

from model.records.corpus import MultiLabelMetrics, PerClass, RegressionMetrics, ReliabilityBins


def frozen(a: np.ndarray) -> np.ndarray:
    """``a`` made read-only (returned)."""
    a.flags.writeable = False
    return a


def _cells(confusion: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(gold int [K], predicted int [K], count int [K]) of the K non-empty cells of a confusion matrix: the pairs
    scikit-learn's metrics take, each weighted by its count (``sample_weight``)."""
    m = np.asarray(confusion, np.int64)
    gold, pred = np.nonzero(m)
    return gold, pred, m[gold, pred]


def per_class(confusion: np.ndarray) -> PerClass:
    """:class:`PerClass` of a C x C confusion matrix (int [C, C], rows gold, columns predicted): float64 [C]
    precision, recall, F1 (0.0 where 0/0) and int64 [C] support, by ``sklearn.metrics.precision_recall_fscore_support``."""
    from sklearn.metrics import precision_recall_fscore_support

    m = np.asarray(confusion, np.int64)
    c = m.shape[0]
    gold, pred, count = _cells(m)
    if not len(count):  # nothing counted: every ratio 0/0
        zeros = np.zeros(c, np.float64)
        return PerClass(frozen(zeros.copy()), frozen(zeros.copy()), frozen(zeros.copy()), frozen(np.zeros(c, np.int64)))
    precision, recall, f1, _ = precision_recall_fscore_support(gold, pred, labels=np.arange(c), sample_weight=count,
                                                               zero_division=0)
    return PerClass(frozen(np.asarray(precision, np.float64)), frozen(np.asarray(recall, np.float64)),
                    frozen(np.asarray(f1, np.float64)), frozen(m.sum(axis=1)))


def macro_weighted_f1(confusion: np.ndarray) -> tuple[float, float]:
    """``(macro_f1, weighted_f1)`` of a confusion matrix: ``sklearn.metrics.f1_score`` averaged over the classes that
    occur as gold or predicted labels, unweighted and weighted by support (``zero_division=0``). Raises ValueError on
    an all-zero matrix."""
    from sklearn.metrics import f1_score

    gold, pred, count = _cells(confusion)
    if not len(count):
        raise ValueError("an empty confusion matrix has no F1")
    return tuple(float(f1_score(gold, pred, average=a, sample_weight=count, zero_division=0))
                 for a in ("macro", "weighted"))  # type: ignore[return-value]


def multi_label_metrics(gold: np.ndarray, predicted: np.ndarray) -> MultiLabelMetrics:
    """:class:`MultiLabelMetrics` of bool [N, C] label sets (N >= 1), by scikit-learn (``zero_division=0``). Raises
    ValueError on different shapes or N = 0."""
    from sklearn.metrics import accuracy_score, f1_score, hamming_loss, precision_recall_fscore_support

    y, p = np.asarray(gold, bool), np.asarray(predicted, bool)
    if y.shape != p.shape or y.ndim != 2 or y.shape[0] == 0:
        raise ValueError(f"gold and predicted must be the same non-empty [N, C] shape, got {y.shape} and {p.shape}")
    precision, recall, f1, support = precision_recall_fscore_support(y, p, zero_division=0)
    scores = PerClass(frozen(np.asarray(precision, np.float64)), frozen(np.asarray(recall, np.float64)),
                      frozen(np.asarray(f1, np.float64)), frozen(np.asarray(support, np.int64)))
    return MultiLabelMetrics(
        micro_f1=float(f1_score(y, p, average="micro", zero_division=0)),
        macro_f1=float(f1_score(y, p, average="macro", zero_division=0)),
        subset_accuracy=float(accuracy_score(y, p)), hamming_loss=float(hamming_loss(y, p)), per_class=scores)


def _coefficient(fn, a: np.ndarray, b: np.ndarray) -> float | None:
    """``fn(a, b).statistic`` (``scipy.stats.pearsonr`` / ``spearmanr``), or None for fewer than two rows or a
    constant side (no coefficient)."""
    if len(a) < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return None
    return float(fn(a, b).statistic)


def regression_metrics(predicted: np.ndarray, gold: np.ndarray) -> RegressionMetrics:
    """:class:`RegressionMetrics` of float [N] predictions and gold values (N >= 1): MAE and RMSE (scikit-learn),
    Pearson's r and Spearman's rho (SciPy). Raises ValueError otherwise."""
    from scipy.stats import pearsonr, spearmanr
    from sklearn.metrics import mean_absolute_error, mean_squared_error

    p, y = np.asarray(predicted, np.float64), np.asarray(gold, np.float64)
    if p.shape != y.shape or p.ndim != 1 or p.size == 0:
        raise ValueError(f"predicted and gold must be the same non-empty [N] shape, got {p.shape} and {y.shape}")
    return RegressionMetrics(
        mae=float(mean_absolute_error(y, p)), rmse=float(np.sqrt(mean_squared_error(y, p))),
        pearson=_coefficient(pearsonr, p, y), spearman=_coefficient(spearmanr, p, y), predicted=frozen(p.copy()),
        gold=frozen(y.copy()))


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


__all__ = ["MultiLabelMetrics", "frozen", "PerClass", "RegressionMetrics", "ReliabilityBins", "reliability",
           "macro_weighted_f1", "multi_label_metrics", "per_class", "regression_metrics"]
