"""What flows through the attention layers of one text: :class:`AttentionFlow` (NumPy only, no torch).

:meth:`model.Predictor.attention_flow` returns it; the computation is :mod:`model.explain.value_flow` (value norms and
ALTI) and :mod:`model.explain.decompx` (DecompX). Like :class:`model.records.prediction.Prediction`, every array is
read-only, so the record may cross threads and reach the GUI's views.

Methods (:data:`FLOW_METHODS`):

``value_norm``
    Kobayashi et al. 2020, "Attention is Not Only a Weight: Analyzing Transformers with Vector Norms" (EMNLP),
    section 3: head h of layer l moves the vector alpha_ij^h f^h(x_j) from token j to token i, with
    f^h(x) = (x W_V + b_V)^h W_O^h (the head's value vector times its slice of the output projection, no bias);
    ``matrices[l, h, i, j]`` = ||alpha_ij^h f^h(x_j)||. The heads' sum, ``summed[l, i, j]`` =
    ||sum_h alpha_ij^h f^h(x_j)||, is the "mean of heads" picture (the norm of the summed vectors, not the mean
    of the norms).
``alti``
    Ferrando, Gallego & Costa-jussa 2022, "Measuring the Mixing of Contextual Information in the Transformer"
    (EMNLP), section 3: the attention block (multi-head attention, residual connection, LayerNorm) writes token i's
    output as y_i = sum_j T_i(x_j) + (bias terms); contribution c_ij = max(0, ||y_i||_1 - ||y_i - T_i(x_j)||_1),
    rows normalised to sum to 1. ``matrices`` (L, T, T); ``aggregated`` multiplies them through the layers.
``decompx``
    Modarressi et al. 2023, "DecompX: Explaining Transformers Decisions by Propagating Token Decomposition" (ACL),
    section 3: every token representation is carried as a sum of one vector per input token through attention,
    residual, LayerNorm, the feed-forward network (linearised at its activation) and the classification head;
    ``contributions[k, c]`` is input token k's share of logit c (they sum to the logits).

Shapes: L layers, H heads, T tokens (the special tokens included, as in ``Prediction.tokens``), C classes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from model.records.prediction import freeze_arrays
from model.tasks.types import SINGLE_LABEL, TaskType, task_type

FLOW_METHODS: tuple[str, ...] = ("value_norm", "alti", "decompx")
"""The methods :meth:`model.Predictor.attention_flow` accepts."""

FLOW_TITLES: dict[str, str] = {
    "value_norm": "Value-weighted norms \u2016\u03b1f(x)\u2016 (Kobayashi et al. 2020)",
    "alti": "ALTI contributions (Ferrando et al. 2022)",
    "decompx": "DecompX decomposition (Modarressi et al. 2023)",
}
"""Human-readable names of :data:`FLOW_METHODS`."""


class FlowNotSupported(NotImplementedError):
    """Raised when a flow method is not implemented for the loaded architecture (the message says which are)."""


def check_flow_method(method: str) -> str:
    """``method`` if it is one of :data:`FLOW_METHODS`.

    Raises:
        ValueError: for any other value; the message names the methods there are.
    """
    if method not in FLOW_METHODS:
        raise ValueError(f"unknown attention-flow method {method!r}; choose one of {', '.join(FLOW_METHODS)}")
    return method


def class_scores(contributions: np.ndarray, target: int, kind: str | TaskType = SINGLE_LABEL) -> np.ndarray:
    """Signed token scores for class ``target`` from per-class contributions (T, C), float32 [T]: single-label,
    the contribution to logit ``target`` minus the mean contribution to the other logits (for two classes, to the
    logit difference, the log-odds the gradient methods explain); multi-label (the label's logit is the log-odds
    of its sigmoid), regression or a single output: the contribution to that output itself."""
    return task_type(kind).class_scores(contributions, target)


@dataclass(frozen=True)
class AttentionFlow:
    """The attention flow of one text by one method; immutable, read-only float32 arrays.

    Attributes:
        method: one of :data:`FLOW_METHODS`.
        tokens: the T token strings (as in ``Prediction.tokens``).
        matrices: per layer; ``value_norm``: (L, H, T, T), ||alpha_ij^h f^h(x_j)||, in the units of the residual
            stream (an ablated head is all zeros); ``alti``: (L, T, T), c_ij >= 0, rows sum to 1; ``decompx``:
            (L, T, T), ||x_i^(l)[j]||, the norm of input token j's share of token i's representation after layer l
            (cumulative: DecompX carries the decomposition from the input), in residual-stream units.
        aggregated: (L, T, T), rows sum to 1: how much of token i after layer l comes from input token j. ``alti``:
            C_l ... C_1 (Ferrando et al. 2022, section 3, the rollout of the contributions); ``value_norm``: the
            rollout of 0.5 N_l + 0.5 I with N_l the row-normalised ``summed`` (Abnar & Zuidema 2020's residual
            approximation, norms in place of weights); ``decompx``: ``matrices`` row-normalised.
        importance: float32 [T], the token scores the explanation registry uses: the read-out row of
            ``aggregated[-1]`` (``cls`` pooling: row 0; ``mean``: the mean of the rows) for ``value_norm`` and
            ``alti``; for ``decompx`` the signed :func:`class_scores` of class ``target``.
        summed: ``value_norm`` only: (L, T, T), ||sum_h alpha_ij^h f^h(x_j)|| (the "mean of heads" view); else None.
        value_norms: ``value_norm`` only: (L, H, T), ||f^h(x_j)|| (shown beside alpha_ij); else None.
        contributions: ``decompx`` only: (T, C), token k's signed share of each logit; sums over k to ``logits``.
        logits: (C,), the model's logits for this text under ``head_mask``; (0,) without a classification head.
        labels: the class names (empty without a head).
        pooling: "mean" or "cls", how the head reads the sequence.
        head_mask: (L, H) the head mask in force (1 keeps, 0 removes), or None.
        elapsed_s: wall time of the computation, in seconds.
        target: the class ``importance`` is for (``decompx``; default the predicted one, ``argmax(logits)``); -1
            without a head.
        task: how the head is read (:data:`model.tasks.task.TASKS`), for :meth:`target_scores`.
        segment_ids: int8 [T] of a sentence pair (as ``Prediction.segment_ids``), or None.
    """

    method: str
    tokens: tuple[str, ...]
    matrices: np.ndarray
    aggregated: np.ndarray
    importance: np.ndarray
    logits: np.ndarray
    labels: tuple[str, ...] = ()
    pooling: str = "mean"
    summed: np.ndarray | None = None
    value_norms: np.ndarray | None = None
    contributions: np.ndarray | None = None
    head_mask: np.ndarray | None = None
    elapsed_s: float = 0.0
    target: int = -1
    task: str = SINGLE_LABEL
    segment_ids: np.ndarray | None = None

    def __post_init__(self) -> None:
        check_flow_method(self.method)
        T = len(self.tokens)
        want = (self.matrices.shape[0], self.n_heads, T, T) if self.method == "value_norm" else (
            self.matrices.shape[0], T, T)
        if self.matrices.shape != want or self.aggregated.shape != (self.n_layers, T, T):
            raise ValueError(f"matrices {self.matrices.shape} / aggregated {self.aggregated.shape} do not fit "
                             f"{T} tokens and method {self.method!r}")
        if self.importance.shape != (T,):
            raise ValueError(f"importance has shape {self.importance.shape}, expected ({T},)")
        freeze_arrays(self)

    @property
    def n_layers(self) -> int:
        """L."""
        return int(self.matrices.shape[0])

    @property
    def n_heads(self) -> int:
        """H for ``value_norm`` (per-head matrices); 1 for the methods that see the layer as a whole."""
        return int(self.matrices.shape[1]) if self.method == "value_norm" else 1

    @property
    def num_tokens(self) -> int:
        """T."""
        return len(self.tokens)

    @property
    def per_head(self) -> bool:
        """True when ``matrices`` has one matrix per head (``value_norm``)."""
        return self.method == "value_norm"

    def layer_matrix(self, layer: int, head: int | None = None) -> np.ndarray:
        """The (T, T) matrix a view shows for ``layer`` and ``head``.

        ``head`` None: the layer as a whole (``value_norm``: ``summed``, the norm of the heads' summed vectors;
        the other methods: ``matrices[layer]``). A head index is only meaningful for ``value_norm``.

        Raises:
            IndexError: layer or head out of range. ValueError: a head for a method without per-head matrices.
        """
        if not -self.n_layers <= layer < self.n_layers:
            raise IndexError(f"layer {layer} out of range for {self.n_layers} layers")
        if head is None:
            return self.summed[layer] if self.summed is not None else self.matrices[layer]
        if not self.per_head:
            raise ValueError(f"{self.method} gives one matrix per layer, not per head")
        if not -self.n_heads <= head < self.n_heads:
            raise IndexError(f"head {head} out of range for {self.n_heads} heads")
        return self.matrices[layer, head]

    def target_scores(self, target: int) -> np.ndarray:
        """``decompx``: the signed token scores for class ``target`` (:func:`class_scores`); other methods: the
        unsigned ``importance`` (the same for every class).

        Raises:
            IndexError: ``target`` outside the classes.
        """
        if self.contributions is None:
            return self.importance
        if not 0 <= target < self.contributions.shape[1]:
            raise IndexError(f"target {target} out of range for {self.contributions.shape[1]} classes")
        return class_scores(self.contributions, target, self.task)
