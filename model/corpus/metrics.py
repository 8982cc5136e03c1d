"""What a pile of scored reviews says: corpus metrics from :class:`~model.batch.engine.ResultRow` rows (issue 23).

:func:`corpus_metrics` turns the rows of a batch job (the GUI's table, filtered or not, or the command line's
rows) into one immutable :class:`CorpusMetrics` record of NumPy arrays and plain numbers: counts, accuracy, F1,
the confusion matrix, per-class precision/recall/F1, the expected calibration error with its reliability bins,
P(positive) (or the top label's probability) split by gold label, and accuracy by review length and truncation;
multi-label and regression models get their own scores (issue 30; the NumPy formulas are
:mod:`model.corpus.task_metrics`, each tested against scikit-learn / SciPy). It is vectorised (25,000 rows in a few milliseconds, see
``docs/corpus.md``), so a user interface can recompute it on every throttled update.

Corpus-level token importance (a second pass through the model) is :mod:`model.corpus.tokens`
(:func:`corpus_token_scores` -> :class:`CorpusTokens`), re-exported here; the shareable outputs
(``metrics.json``, ``report.html``) are :mod:`model.report.report`.

Definitions (rows that were not scored, ``status != "ok"``, count in ``n_failed`` only):

* gold rows: scored rows with a known gold label (``gold != ""``); every gold-dependent field uses them only
  and is None when there are none.
* accuracy: the fraction of gold rows whose predicted label equals the gold label (``ResultRow.correct``).
* F1: for the labels ``("negative", "positive")`` (the bundled model), the F1 of the positive class
  (2 TP / (2 TP + FP + FN), 0 when that is 0/0, as scikit-learn's ``f1_score(pos_label="positive")``); for any
  other single-label set, the unweighted mean of the per-class F1 over the labels seen among the gold rows (gold or
  predicted), as ``f1_score(average="macro")``; multi-label: micro-F1; ``f1_kind`` says which. ``macro_f1``,
  ``weighted_f1`` and ``per_class`` are there for every classifier.
* multi-label: a row's label sets are the ``";"``-joined names; accuracy is the subset accuracy.
* regression: MAE, RMSE, Pearson, Spearman of the gold rows (``gold`` read as a number).
* confusion matrix: C x C counts, rows the gold label, columns the predicted label, in the order of ``labels``.
* ECE (Guo, Pleiss, Sun & Weinberger 2017, "On Calibration of Modern Neural Networks", eq. 3): the confidence of a
  row is the probability of its predicted class; the gold rows are put in ``n_bins`` equal-width bins
  B_m = (m-1)/M < conf <= m/M (confidence 0 goes to the first); ECE = sum_m |B_m| / n * |acc(B_m) - conf(B_m)|.
  Top-label calibration for any number of classes (single-label models; None for the other tasks).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from model.tasks.types import SINGLE_LABEL, MultiLabel, Regression, SingleLabel, task_type
from model.records.corpus import CorpusMetrics, Histogram, SliceAccuracy

from model.corpus.task_metrics import (
    PerClass, RegressionMetrics, ReliabilityBins, frozen, macro_weighted_f1, multi_label_metrics, per_class,
    regression_metrics, reliability
)
from model.corpus.tokens import CorpusTokens, corpus_token_scores
from model.batch.engine import ResultRow

BINARY_LABELS = ("negative", "positive")
HIST_BINS = 20  # bins of the P(positive) histogram, equal width on [0, 1]
LENGTH_EDGES = (128, 256, 384, 512, 1024)  # token-count bin edges; the last bin holds the longer reviews not truncated
# (read in windows, model.text.document_windows: a review above 512 tokens of the bundled model)





@dataclass(frozen=True)
class _Columns:
    """The scored rows as arrays; labels as int codes into ``vocab`` (first-seen order), -1 for no gold label."""

    label: np.ndarray  # int64 [N]
    gold: np.ndarray  # int64 [N]
    vocab: tuple[str, ...]
    tokens: np.ndarray  # int64 [N]
    truncated: np.ndarray  # bool [N]
    n_failed: int
    ok: list  # the scored ResultRows


def _columns(rows: Sequence[ResultRow]) -> _Columns:
    ok = [r for r in rows if r.status == "ok"]
    n = len(ok)
    vocab: dict[str, int] = {"": -1}
    code = vocab.setdefault
    label = np.fromiter((code(r.label, len(vocab) - 1) for r in ok), dtype=np.int64, count=n)
    gold = np.fromiter((code(r.gold, len(vocab) - 1) for r in ok), dtype=np.int64, count=n)
    return _Columns(
        label=label, gold=gold, vocab=tuple(k for k in vocab if k),
        tokens=np.fromiter((r.num_tokens for r in ok), dtype=np.int64, count=n),
        truncated=np.fromiter((r.truncated for r in ok), dtype=bool, count=n),
        n_failed=len(rows) - n, ok=ok,
    )


def _label_set(c: _Columns, labels: Sequence[str] | None) -> tuple[str, ...]:
    if labels is not None:
        return tuple(labels)
    first = next((r.labels for r in c.ok if r.labels), None)
    if first:
        return tuple(first)
    if set(c.vocab) <= set(BINARY_LABELS):
        return BINARY_LABELS
    return tuple(sorted(c.vocab))


def _probabilities(ok: list, names: tuple[str, ...]) -> np.ndarray:
    """float64 [N, C]: each scored row's probabilities in the order of ``names`` (NaN where a row lacks a class).
    Rows of the model itself (``labels == names``, the usual case) are copied in one ``np.array`` call."""
    C = len(names)
    same = [r.labels == names and len(r.probabilities) == C for r in ok]
    if all(same) and C:
        return np.array([r.probabilities for r in ok], dtype=np.float64).reshape(len(ok), C)
    out = np.full((len(ok), C), np.nan)
    for i, r in enumerate(ok):
        if same[i]:
            out[i] = r.probabilities
        elif r.probabilities:
            out[i] = [np.nan if (p := r.probability(n)) is None else p for n in names]
    return out


def _confusion(gold: np.ndarray, pred: np.ndarray, C: int) -> np.ndarray:
    """int64 [C, C] from label indices (rows gold, columns predicted); pairs with an index -1 are left out."""
    keep = (gold >= 0) & (pred >= 0)
    return np.bincount(gold[keep] * C + pred[keep], minlength=C * C).reshape(C, C).astype(np.int64)


def _slices(masks: list[np.ndarray], names: tuple[str, ...], has_gold: np.ndarray, correct: np.ndarray) -> SliceAccuracy:
    counts = np.array([int(m.sum()) for m in masks], dtype=np.int64)
    gold_counts = np.array([int((m & has_gold).sum()) for m in masks], dtype=np.int64)
    right = np.array([float(correct[m & has_gold].sum()) for m in masks], dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = right / gold_counts
    return SliceAccuracy(names, frozen(counts), frozen(gold_counts), frozen(acc))


def _length_slices(c: _Columns, has_gold: np.ndarray, correct: np.ndarray) -> SliceAccuracy:
    """By token count; ``correct`` (float or bool [N]) is averaged per slice (a 0/1 flag, or an absolute error)."""
    edges = (0, *LENGTH_EDGES)
    names = tuple(f"{lo + 1}-{hi}" for lo, hi in zip(edges[:-1], edges[1:])) + (f"{edges[-1] + 1}+", "truncated")
    masks = [~c.truncated & (c.tokens > lo) & (c.tokens <= hi) for lo, hi in zip(edges[:-1], edges[1:])]
    masks += [~c.truncated & (c.tokens > edges[-1]), c.truncated]
    return _slices(masks, names, has_gold, correct)


def corpus_metrics(rows: Sequence[ResultRow], n_bins: int = 10, labels: Sequence[str] | None = None,
                   task: str | None = None) -> CorpusMetrics:
    """The :class:`CorpusMetrics` of ``rows`` (definitions in the module docstring).

    Args:
        rows: result rows (any mix of scored and failed, with or without gold labels; one model's).
        n_bins: equal-width confidence bins of the ECE (10, as Guo et al. 2017).
        labels: the class order (e.g. ``Predictor.labels``); default: see ``CorpusMetrics.labels``.
        task: the task when no scored row says (e.g. an empty table: the model's ``Predictor.task.kind``).

    Returns:
        :class:`CorpusMetrics` with read-only arrays. Cost: linear, vectorised (about 10 ms for 25,000 rows).

    Raises:
        ValueError: ``n_bins`` < 1.
    """
    if n_bins < 1:
        raise ValueError(f"n_bins must be >= 1, got {n_bins}")
    c = _columns(rows)
    kind = task_type(c.ok[0].task if c.ok else (task or SINGLE_LABEL))
    if not kind.reads_probabilities:  # the gold values are no labels: no label set, no probabilities
        names = tuple(labels) if labels is not None else next((r.labels for r in c.ok if r.labels), ())
        probs = np.zeros((len(c.ok), 0))
    else:
        names = _label_set(c, labels)
        probs = _probabilities(c.ok, names)
    has_gold = np.fromiter((r.has_gold for r in c.ok), dtype=bool, count=len(c.ok))  # a multi-label [] too
    n_positive = int(np.sum(c.label == c.vocab.index("positive"))) if "positive" in c.vocab else 0
    common = {"n_rows": len(rows), "n_scored": len(c.ok), "n_failed": c.n_failed, "n_with_gold": int(has_gold.sum()),
              "labels": names, "task": kind.id, "n_bins": n_bins,
              "positive_share": n_positive / len(c.ok) if c.ok and "positive" in names else None}
    return kind.pick(TASK_METRICS)(c, common, has_gold, probs, names)


def _histogram(values: np.ndarray, gold_index: np.ndarray | None, C: int, edges: np.ndarray) -> Histogram:
    """The :class:`Histogram` of ``values`` [N] (NaN left out), split by ``gold_index`` [N] (-1: no gold) into C
    classes when given and C > 0."""
    finite = np.isfinite(values)
    by_gold = None
    if gold_index is not None and C:  # no classes (a model without a classification head): no split
        by_gold = frozen(np.stack([np.histogram(values[(gold_index == i) & finite], edges)[0] for i in range(C)])
                          .astype(np.int64).reshape(C, len(edges) - 1))
    return Histogram(frozen(edges), frozen(np.histogram(values[finite], edges)[0].astype(np.int64)), by_gold)


def _single_label(c: _Columns, common: dict, has_gold: np.ndarray, probs: np.ndarray,
                  names: tuple[str, ...]) -> CorpusMetrics:
    to_name = np.array([names.index(v) if v in names else -1 for v in c.vocab] + [-1], dtype=np.int64)  # code -> index
    pred, gold = to_name[c.label], to_name[c.gold]
    correct = has_gold & (c.label == c.gold)
    binary = names == BINARY_LABELS
    rows = np.arange(len(c.ok))
    confidence = np.nanmax(probs, axis=1) if probs.size and not np.isnan(probs).all() else np.full(len(c.ok), np.nan)
    score = probs[:, names.index("positive")] if binary else confidence
    edges = np.linspace(0.0, 1.0, HIST_BINS + 1)
    extra: dict = {}
    accuracy = f1 = f1_kind = confusion = ece = bins = None
    n_gold = int(has_gold.sum())
    if n_gold:
        accuracy = float(correct.sum() / n_gold)
    if n_gold and names:  # no classes (labels=(), a model without a head): no confusion matrix, F1 or calibration
        confusion = frozen(_confusion(gold[has_gold], pred[has_gold], len(names)))
        pc = per_class(confusion)
        macro, weighted = macro_weighted_f1(confusion) if confusion.sum() else (0.0, 0.0)
        extra = {"per_class": pc, "macro_f1": macro, "weighted_f1": weighted}
        if binary:  # the positive class's F1, as before issue 30
            f1, f1_kind = float(pc.f1[names.index("positive")]), "positive"
        else:
            f1, f1_kind = macro, "macro"
        top = np.where(pred >= 0, probs[rows, np.maximum(pred, 0)], np.nan) if probs.size else confidence
        top = np.where(np.isnan(top), confidence, top)[has_gold]
        if np.isfinite(top).all() and top.size:
            ece, bins = reliability(top, correct[has_gold], common["n_bins"])
    return CorpusMetrics(
        **common, accuracy=accuracy, f1=f1, f1_kind=f1_kind, confusion=confusion, ece=ece, reliability=bins,
        score=frozen(np.asarray(score, np.float64)), score_name="P(positive)" if binary else "confidence",
        histogram=_histogram(score, gold if n_gold else None, len(names), edges),
        by_length=_length_slices(c, has_gold, correct),
        by_truncation=_slices([~c.truncated, c.truncated], ("not truncated", "truncated"), has_gold, correct),
        **extra)


def _label_sets(texts: Sequence[str], names: tuple[str, ...]) -> np.ndarray:
    """bool [N, C]: the ``";"``-joined label names of each row as a multi-hot matrix (unknown names ignored)."""
    index = {n: k for k, n in enumerate(names)}
    seen: dict[str, list[int]] = {}  # each distinct label string split once
    rows, cols = [], []
    for i, t in enumerate(texts):
        ks = seen.get(t)
        if ks is None:
            ks = seen[t] = [index[p] for p in t.split(";") if p in index]
        rows += [i] * len(ks)
        cols += ks
    out = np.zeros((len(texts), len(names)), bool)
    out[np.asarray(rows, np.int64), np.asarray(cols, np.int64)] = True
    return out


def _multi_label(c: _Columns, common: dict, has_gold: np.ndarray, probs: np.ndarray,
                 names: tuple[str, ...]) -> CorpusMetrics:
    correct = np.array([bool(r.correct) for r in c.ok], bool) & has_gold
    score = np.nanmax(probs, axis=1) if probs.size and not np.isnan(probs).all() else np.full(len(c.ok), np.nan)
    extra: dict = {}
    accuracy = f1 = f1_kind = None
    if has_gold.any() and names:  # no classes (labels=()): no label-set scores
        gold_rows = [r for r, g in zip(c.ok, has_gold) if g]
        ml = multi_label_metrics(_label_sets([r.gold for r in gold_rows], names),
                                 _label_sets([r.label for r in gold_rows], names))
        accuracy, f1, f1_kind = ml.subset_accuracy, ml.micro_f1, "micro"
        extra = {"per_class": ml.per_class, "macro_f1": ml.macro_f1, "micro_f1": ml.micro_f1,
                 "subset_accuracy": ml.subset_accuracy, "hamming_loss": ml.hamming_loss}
    return CorpusMetrics(
        **common, accuracy=accuracy, f1=f1, f1_kind=f1_kind, confusion=None, ece=None, reliability=None,
        score=frozen(score), score_name="top sigmoid",
        histogram=_histogram(score, None, len(names), np.linspace(0.0, 1.0, HIST_BINS + 1)),
        by_length=_length_slices(c, has_gold, correct),
        by_truncation=_slices([~c.truncated, c.truncated], ("not truncated", "truncated"), has_gold, correct),
        **extra)


def _regression(c: _Columns, common: dict, has_gold: np.ndarray, _probs: np.ndarray,
                _names: tuple[str, ...]) -> CorpusMetrics:
    value = np.array([np.nan if r.value is None else r.value for r in c.ok], np.float64)
    gold = np.array([float(r.gold) if r.gold else np.nan for r in c.ok], np.float64)
    has_gold = has_gold & np.isfinite(gold) & np.isfinite(value)
    finite = value[np.isfinite(value)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    edges = np.linspace(lo, hi if hi > lo else lo + 1.0, HIST_BINS + 1)
    reg = regression_metrics(value[has_gold], gold[has_gold]) if has_gold.any() else None
    abs_err = np.where(has_gold, np.abs(value - np.nan_to_num(gold)), 0.0)
    never = np.zeros(len(c.ok), bool)
    return CorpusMetrics(
        **{**common, "n_with_gold": int(has_gold.sum())}, accuracy=None, f1=None, f1_kind=None, confusion=None,
        ece=None, reliability=None, score=frozen(value), score_name="predicted value",
        histogram=_histogram(value, None, 0, edges),
        by_length=_length_slices(c, never, never),
        by_truncation=_slices([~c.truncated, c.truncated], ("not truncated", "truncated"), never, never),
        regression=reg, error_by_length=_length_slices(c, has_gold, abs_err) if reg is not None else None)


def undefined_f1(m: CorpusMetrics) -> str:
    """Why the headline F1 of single-label metrics ``m`` is undefined, in words ("" when it is defined): the F1 of
    the positive class when no gold row has it and no row is predicted it (2 TP + FP + FN = 0), or macro-F1 when no
    gold row has a gold and predicted class of the model. ``m.f1`` is 0.0 then, as scikit-learn's
    ``f1_score(zero_division="warn")`` returns with an ``UndefinedMetricWarning``; a view shows "\u2013" and this
    reason (issue 56: a selection of correctly predicted negatives read "F1 0.000")."""
    c = m.confusion
    if c is None or m.f1 is None:
        return ""
    if m.f1_kind == "positive":
        k = m.labels.index("positive")
        if int(c[k, :].sum() + c[:, k].sum()) == 0:
            return ("F1 of the positive class is undefined: no row here has the gold label positive and none is "
                    "predicted positive (2 TP + FP + FN = 0; scikit-learn's zero_division)")
    elif int(c.sum()) == 0:
        return ("macro-F1 is undefined: no gold row here has a gold and a predicted label among the model's classes "
                "(scikit-learn's zero_division)")
    return ""


TASK_METRICS = {SingleLabel: _single_label, MultiLabel: _multi_label, Regression: _regression}
"""The corpus metrics of each task type: ``f(columns, common fields, has_gold [N], probabilities [N, C], labels)``
-> :class:`CorpusMetrics` (selected by :meth:`model.tasks.types.TaskType.pick`)."""

__all__ = [
    "BINARY_LABELS", "HIST_BINS", "LENGTH_EDGES", "CorpusMetrics", "CorpusTokens", "Histogram", "PerClass",
    "RegressionMetrics", "ReliabilityBins", "SliceAccuracy", "corpus_metrics", "corpus_token_scores", "reliability",
    "undefined_f1",
]
