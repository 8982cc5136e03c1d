"""The corpus-level result records (NumPy only, read-only arrays): the metrics of scored rows
(:class:`CorpusMetrics`, from :func:`model.corpus.metrics.corpus_metrics`, with its parts :class:`PerClass`,
:class:`MultiLabelMetrics`, :class:`RegressionMetrics`, :class:`ReliabilityBins`, :class:`Histogram`,
:class:`SliceAccuracy`) and the corpus-level token importance (:class:`CorpusTokens`, from
:func:`model.corpus.tokens.corpus_token_scores`). See docs/corpus.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from model.tasks.types import SINGLE_LABEL


@dataclass(frozen=True)
class PerClass:
    """Per-class scores, in the model's label order (gold rows only).

    Attributes:
        precision, recall, f1: float64 [C] in [0, 1] (0 where the ratio is 0/0).
        support: int64 [C], gold rows of each class (multi-label: rows carrying the label).
    """

    precision: np.ndarray
    recall: np.ndarray
    f1: np.ndarray
    support: np.ndarray


@dataclass(frozen=True)
class MultiLabelMetrics:
    """Multi-label scores over N gold rows and C labels (module docstring).

    Attributes:
        micro_f1, macro_f1, subset_accuracy, hamming_loss: in [0, 1].
        per_class: :class:`PerClass` per label.
    """

    micro_f1: float
    macro_f1: float
    subset_accuracy: float
    hamming_loss: float
    per_class: PerClass


@dataclass(frozen=True)
class RegressionMetrics:
    """Regression scores of N gold rows (module docstring).

    Attributes:
        mae, rmse: in the model's output units. pearson, spearman: in [-1, 1], None for N < 2 or a constant side.
        predicted, gold: float64 [N], the values the scores (and the predicted-vs-gold scatter) come from.
    """

    mae: float
    rmse: float
    pearson: float | None
    spearman: float | None
    predicted: np.ndarray
    gold: np.ndarray


@dataclass(frozen=True)
class ReliabilityBins:
    """The reliability diagram behind the ECE (gold rows only; Guo et al. 2017, section 2).

    Attributes:
        edges: float64 [M + 1], the bin edges 0, 1/M, ..., 1 (probability units); bin m is (edges[m], edges[m+1]],
            the first one also holds 0.
        counts: int64 [M], gold rows per bin.
        confidence: float64 [M], mean confidence (probability of the predicted class) per bin; NaN for an empty bin.
        accuracy: float64 [M], fraction correct per bin; NaN for an empty bin.
    """

    edges: np.ndarray
    counts: np.ndarray
    confidence: np.ndarray
    accuracy: np.ndarray


@dataclass(frozen=True)
class Histogram:
    """Histogram of ``CorpusMetrics.score`` (P(positive), the top label's probability, ...), all scored rows and split
    by gold label.

    Attributes:
        edges: float64 [B + 1], equal-width edges on [0, 1] (B = :data:`~model.corpus.metrics.HIST_BINS`); bins are
            half-open [edges[b], edges[b+1]) except the last, which holds 1 (``numpy.histogram``'s convention).
        counts: int64 [B], every scored row.
        counts_by_gold: int64 [C, B], the gold rows of each label (rows in the order of ``CorpusMetrics.labels``);
            None without gold labels.
    """

    edges: np.ndarray
    counts: np.ndarray
    counts_by_gold: np.ndarray | None


@dataclass(frozen=True)
class SliceAccuracy:
    """Accuracy over slices of the scored rows (by length or by truncation).

    Attributes:
        names: S slice names, e.g. ``("1-128", "129-256", ...)`` or ``("not truncated", "truncated")``.
        counts: int64 [S], scored rows per slice.
        gold_counts: int64 [S], gold rows per slice.
        accuracy: float64 [S], fraction correct of the slice's gold rows; NaN where it has none.
    """

    names: tuple[str, ...]
    counts: np.ndarray
    gold_counts: np.ndarray
    accuracy: np.ndarray


@dataclass(frozen=True)
class CorpusMetrics:
    """The metrics of a set of result rows; see the module docstring for the definitions.

    Attributes:
        n_rows: rows given (scored + failed).
        n_scored: rows scored (``status == "ok"``).
        n_failed: rows not scored.
        n_with_gold: scored rows with a gold label (the rows every gold-dependent field uses).
        labels: C class names, the row/column order of ``confusion``, ``per_class`` and
            ``Histogram.counts_by_gold``: the ``labels`` given, else the model's (the first scored row's), else
            ``("negative", "positive")`` when every label seen is one of those, else the sorted labels seen.
        task: :data:`model.tasks.task.TASKS`, the first scored row's.
        positive_share: fraction of scored rows predicted ``"positive"`` (None when nothing was scored or the model
            has no class of that name).
        accuracy: fraction correct of the gold rows (multi-label: subset accuracy); None without gold and for
            regression.
        f1: single-label, the positive class's F1 (``f1_kind`` "positive", a negative/positive model) or macro-F1
            ("macro"); multi-label micro-F1 ("micro"); None without gold, without classes and for regression.
        f1_kind: ``"positive"``, ``"macro"``, ``"micro"`` or None.
        confusion: int64 [C, C], rows gold, columns predicted (single-label); None without gold, without classes
            (C = 0: ``labels=()``, a model without a classification head) or for other tasks.
        ece: expected calibration error of the top label (single-label), in [0, 1]; None without gold.
        reliability: the ECE's :class:`ReliabilityBins`; None when ``ece`` is None.
        score: float64 [n_scored], the number each row's histogram shows, in row order: P(positive) for a
            negative/positive model, else the predicted class's probability (single-label), the highest sigmoid
            (multi-label) or the predicted value (regression); ``score_name`` names it.
        score_name: e.g. ``"P(positive)"``, ``"confidence"``, ``"top sigmoid"``, ``"predicted value"``.
        histogram: the ``score`` :class:`Histogram` (``counts_by_gold`` None without gold, without classes or for
            regression).
        by_length: :class:`SliceAccuracy` over token-count bins (``num_tokens``, the classification token included):
            1-128, 129-256, 257-384, 385-512, 513-1024, 1025+ (not truncated: reviews above the model's limit are read
            in windows, :mod:`model.text.document_windows`) and "truncated" (cut to the model's limit).
        by_truncation: :class:`SliceAccuracy` over ``("not truncated", "truncated")``.
        n_bins: the ECE's bin count M.
        per_class: :class:`~model.corpus.task_metrics.PerClass` (single- and multi-label, gold rows); else None.
        macro_f1, weighted_f1: single-label macro- and support-weighted F1; multi-label macro-F1 (weighted None).
        micro_f1, subset_accuracy, hamming_loss: multi-label only, else None.
        regression: :class:`~model.corpus.task_metrics.RegressionMetrics` (MAE, RMSE, Pearson, Spearman, the values
            of the predicted-vs-gold scatter); None without gold or for classifiers.
        error_by_length: regression only: the ``by_length`` slices with the mean absolute error in place of the
            accuracy (``SliceAccuracy.accuracy`` holds the MAE); else None.
    """

    n_rows: int
    n_scored: int
    n_failed: int
    n_with_gold: int
    labels: tuple[str, ...]
    positive_share: float | None
    accuracy: float | None
    f1: float | None
    f1_kind: str | None
    confusion: np.ndarray | None
    ece: float | None
    reliability: ReliabilityBins | None
    score: np.ndarray
    histogram: Histogram
    by_length: SliceAccuracy
    by_truncation: SliceAccuracy
    n_bins: int
    task: str = SINGLE_LABEL
    score_name: str = "P(positive)"
    per_class: PerClass | None = None
    macro_f1: float | None = None
    weighted_f1: float | None = None
    micro_f1: float | None = None
    subset_accuracy: float | None = None
    hamming_loss: float | None = None
    regression: RegressionMetrics | None = None
    error_by_length: SliceAccuracy | None = None

    @property
    def has_gold(self) -> bool:
        """True when some scored row has a gold label."""
        return self.n_with_gold > 0


@dataclass(frozen=True)
class CorpusTokens:
    """Per word and bigram, the mean signed attribution toward the positive class (module docstring).

    Attributes:
        tokens: N words and bigrams (``"first second"``), sorted by score, most positive first.
        scores: float64 [N], mean attribution toward ``positive_label`` over the reviews containing the token,
            in log-odds units (read-only).
        counts: int64 [N], reviews containing the token (>= ``min_count``; read-only).
        is_bigram: bool [N] (read-only).
        labels: the model's class names.
        positive_label: the class the scores point to.
        method: ``"grad_x_input"`` or ``"integrated_gradients"``.
        min_count: the smallest count kept.
        n_texts: texts given.
        n_explained: reviews explained (the scores are over these).
        n_skipped: texts not explained because they are not valid reviews (empty, not a string, too long).
        complete: False when ``should_stop`` ended the pass early (the scores cover the reviews explained so far).
        elapsed_s: wall time of the pass in seconds.
    """

    tokens: tuple[str, ...]
    scores: np.ndarray
    counts: np.ndarray
    is_bigram: np.ndarray
    labels: tuple[str, ...]
    positive_label: str
    method: str
    min_count: int
    n_texts: int
    n_explained: int
    n_skipped: int
    complete: bool
    elapsed_s: float

    def __len__(self) -> int:
        return len(self.tokens)

    def top(self, k: int = 20, toward: str = "positive", kind: str = "all") -> list[tuple[str, float, int]]:
        """The ``k`` tokens pushing most toward one side, strongest first.

        Args:
            k: at most this many (fewer when fewer tokens lean that way).
            toward: ``"positive"`` (highest scores) or ``"negative"`` (lowest; the score returned is minus the
                stored one, so it is the attribution toward the negative class for a two-class model).
            kind: ``"all"``, ``"words"`` or ``"bigrams"``.

        Returns:
            ``[(token, score > 0, count), ...]``; ties broken by count (higher first), then alphabetically.

        Raises:
            ValueError: bad ``toward`` or ``kind``.
        """
        if toward not in ("positive", "negative"):
            raise ValueError(f"toward must be 'positive' or 'negative', got {toward!r}")
        if kind not in ("all", "words", "bigrams"):
            raise ValueError(f"kind must be 'all', 'words' or 'bigrams', got {kind!r}")
        s = self.scores if toward == "positive" else -self.scores
        keep = s > 0
        if kind != "all":
            keep &= self.is_bigram == (kind == "bigrams")
        idx = np.flatnonzero(keep)
        names = np.array(self.tokens, dtype=object)[idx] if len(idx) else np.array([], dtype=object)
        order = np.lexsort((names, -self.counts[idx], -s[idx]))[: max(0, k)]
        return [(str(names[i]), float(s[idx[i]]), int(self.counts[idx[i]])) for i in order]

    @property
    def sides(self) -> tuple[str, str]:
        """The two directions of the ranking: ``(positive_label, the other class)`` for two classes, else
        ``(positive_label, "not " + positive_label)`` (issue 30: words ranked for any chosen class)."""
        if len(self.labels) == 2 and self.positive_label in self.labels:
            return self.positive_label, self.labels[1 - self.labels.index(self.positive_label)]
        return self.positive_label, f"not {self.positive_label}"

    def lookup(self, token: str) -> tuple[float, int] | None:
        """``(score toward positive, count)`` of ``token`` (lower-cased), or None when it was left out."""
        try:
            i = self.tokens.index(token.lower())
        except ValueError:
            return None
        return float(self.scores[i]), int(self.counts[i])
