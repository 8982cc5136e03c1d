"""The attention chapter's other steps, computed from one layer's :class:`model.records.internals.AttentionInternals`
(NumPy only, no torch; read-only arrays).

The teaching order of chapter 3 of Raschka, "Build a Large Language Model (From Scratch)" (2024), which most
courses follow, around the scaled dot product of Vaswani et al. 2017 (eq. 1) that
:meth:`~model.records.internals.AttentionInternals.steps` shows:

* :func:`plain_attention`, "step 0": self-attention without trainable weights (Raschka section 3.3.1). The scores
  are dot products of the layer's input states themselves, x_i . x_j, the weights their softmax (no scaling) and
  the context vector z_i = sum_j w_j x_j. Beside q_i . k_j it shows what the projections W^Q, W^K, W^V change.
* :func:`causal_what_if`: the causal mask of a decoder (Raschka section 3.5; Vaswani et al. 2017 section 3.2.3):
  every key after the query gets -inf before the softmax, so the row renormalises over keys 0..i. The encoders
  here were trained without it: this is a lesson, never the model's behaviour (no prediction uses it).
  :func:`causal_weights` does the same to whole attention matrices (the heatmap's what-if): renormalising the
  softmax weights over keys j <= i equals the softmax of the masked scores exactly.
* :func:`heads_joined`: multi-head attention (Raschka section 3.6; Vaswani et al. 2017 section 3.2.2). The heads'
  outputs are concatenated and projected by W^O, which is the same as summing each head's output times its own
  d rows of W^O: ``concat_h(o_h) W^O + b^O = sum_h o_h W^O_h + b^O``. The parts add up to the model's own
  attention output (checked by the tests to 1e-5).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from model.records.internals import AttentionInternals, softmax
from model.records.prediction import freeze_arrays

CAUSAL_NOTE = ("this encoder was trained without it, so this is a lesson, not the model's behaviour; the prediction "
               "is unchanged")
"""What every view says beside its "Causal mask (decoder what-if)" title."""


def _check_query(x: AttentionInternals, query: int, head: int = 0) -> None:
    if not (0 <= head < x.n_heads and 0 <= query < x.num_tokens):
        raise IndexError(f"head {head} / query {query} out of range ({x.n_heads} heads, {x.num_tokens} tokens)")


@dataclass(frozen=True)
class PlainAttention:
    """Step 0: self-attention without trainable weights for query token i (Raschka 2024, section 3.3.1).

    Attributes:
        query: the query token i.
        scores: float32 [T], x_i . x_j for every key j (masked, padded keys -inf).
        weights: float32 [T], softmax(scores) (no scaling, as in the chapter); sums to 1.
        context: float32 [D], z_i = sum_j w_j x_j, the context vector (in the input's space, D = d_model).
    """

    query: int
    scores: np.ndarray
    weights: np.ndarray
    context: np.ndarray

    def __post_init__(self) -> None:
        freeze_arrays(self)


def plain_attention(x: AttentionInternals, query: int) -> PlainAttention:
    """Attention without W^Q, W^K, W^V for ``query``: scores x_i . x_j of the layer's input states ``x.inputs``.

    Keys the model masks (padding: -inf in every head's scores) are masked here too.

    Raises:
        IndexError: ``query`` out of range. ValueError: the record carries no input states.
    """
    _check_query(x, query)
    if x.inputs is None:
        raise ValueError("these internals carry no layer input states")
    states = x.inputs.astype(np.float64)  # (T, D)
    scores = states @ states[query]  # (T,)
    scores[np.isneginf(x.scores[:, query, :]).all(axis=0)] = -np.inf
    weights = softmax(scores)
    context = (weights.astype(np.float64) @ states).astype(np.float32)  # (D,)
    return PlainAttention(query, scores.astype(np.float32), weights, context)


@dataclass(frozen=True)
class CausalWhatIf:
    """One head's attention row for query i had the layer been causal (a decoder's mask), beside the real one.

    Attributes:
        head, query: the head and the query token i.
        masked: bool [T], True for the keys the causal mask removes (j > i).
        scores: float32 [T], the real scores with the masked keys at -inf.
        weights: float32 [T], softmax(scores): the renormalised row, 0 for j > i, sums to 1.
        real_weights: float32 [T], the model's row.
        output: float32 [d_head], sum_j w'_j v_j: the head output the causal row would give.
        real_output: float32 [d_head], the model's head output o_i.
        difference: float32 [d_head], output - real_output.
    """

    head: int
    query: int
    masked: np.ndarray
    scores: np.ndarray
    weights: np.ndarray
    real_weights: np.ndarray
    output: np.ndarray
    real_output: np.ndarray
    difference: np.ndarray

    def __post_init__(self) -> None:
        freeze_arrays(self)


def causal_what_if(x: AttentionInternals, head: int, query: int) -> CausalWhatIf:
    """The causal mask applied to the real scores of ``head`` for ``query`` (-inf for keys j > i, then softmax).

    Defined wherever the record's scores are the model's whole logits (every family here; DeBERTa's
    relative-position part is in ``x.scores``). Query 0 attends only to itself.

    Raises:
        IndexError: ``head`` or ``query`` out of range.
    """
    _check_query(x, query, head)
    T = x.num_tokens
    masked = np.arange(T) > query
    scores = np.where(masked, -np.inf, x.scores[head, query]).astype(np.float32)
    weights = softmax(scores)
    output = (weights.astype(np.float64) @ x.values[head].astype(np.float64)).astype(np.float32)
    real = x.head_outputs[head, query]
    return CausalWhatIf(head, query, masked, scores, weights, softmax(x.scores[head, query]), output, real,
                        (output - real).astype(np.float32))


def causal_weights(weights: np.ndarray) -> np.ndarray:
    """Attention matrices as a causal (decoder) layer would give them: keys after the query 0, rows renormalised.

    For softmax weights, ``w_ij / sum_{k<=i} w_ik`` equals the softmax of the scores with keys j > i at -inf.

    Args:
        weights: float [..., T, T] attention rows (query i, key j), each summing to 1.

    Returns:
        float32 [..., T, T], lower-triangular, each row summing to 1 (a row whose kept keys all had weight 0 stays 0).
    """
    w = np.asarray(weights, dtype=np.float64)
    kept = np.tril(w)  # keys j <= i
    total = kept.sum(axis=-1, keepdims=True)
    out = np.divide(kept, total, out=np.zeros_like(kept), where=total > 0)
    return out.astype(np.float32)


@dataclass(frozen=True)
class HeadsJoined:
    """How the heads' outputs for query i become the layer's attention output (Vaswani et al. 2017, section 3.2.2).

    Attributes:
        query: the query token i.
        head_outputs: float32 [H, d_head], o_h for every head (times the head mask).
        parts: float32 [H, D], o_h W^O_h: head h's share of the attention output (D = d_model).
        bias: float32 [D], b^O.
        total: float32 [D], sum_h parts[h] + bias.
        attention_output: float32 [D], the model's own attention output for token i (equal to ``total``).
    """

    query: int
    head_outputs: np.ndarray
    parts: np.ndarray
    bias: np.ndarray
    total: np.ndarray
    attention_output: np.ndarray

    def __post_init__(self) -> None:
        freeze_arrays(self)

    @property
    def max_error(self) -> float:
        """max_k |total_k - attention_output_k|: how exactly the parts add up."""
        return float(np.max(np.abs(self.total.astype(np.float64) - self.attention_output)))


def heads_joined(x: AttentionInternals, query: int) -> HeadsJoined:
    """Each head's output times its rows of W^O for ``query``, and their sum beside the model's attention output.

    Raises:
        IndexError: ``query`` out of range. ValueError: the record carries no W^O or attention output.
    """
    _check_query(x, query)
    if x.output_weight is None or x.attention_output is None:
        raise ValueError("these internals carry no output projection W^O")
    scale = np.ones(x.n_heads) if x.head_scale is None else x.head_scale.astype(np.float64)
    o = x.head_outputs[:, query].astype(np.float64) * scale[:, None]  # (H, d)
    parts = np.einsum("hd,hde->he", o, x.output_weight.astype(np.float64))  # (H, D)
    bias = np.zeros(parts.shape[1]) if x.output_bias is None else x.output_bias.astype(np.float64)
    total = parts.sum(axis=0) + bias
    return HeadsJoined(query, o.astype(np.float32), parts.astype(np.float32), bias.astype(np.float32),
                       total.astype(np.float32), x.attention_output[query])
