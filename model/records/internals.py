"""Records of what happens inside one attention layer, for the teaching views (NumPy only, no torch).

:class:`AttentionInternals` is what :meth:`model.Predictor.attention_internals` returns: the per-head
query, key and value vectors of one layer, the scaled and masked logits before the softmax, and the
heads' outputs. Computed on demand for one layer, so a 512-token text never needs all layers' Q, K and
V at once. Like :class:`model.records.prediction.Prediction`, every array is read-only.

Source: Vaswani et al. 2017, "Attention Is All You Need", section 3.2.1, equation 1:
``Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V``. The record also carries what the lessons of
:mod:`model.attention.lessons` need (the layer's input states, W^O by head, the model's own attention output).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from model.records.prediction import freeze_arrays

MASKED_SCORE = float("-inf")
"""The score of a masked (padded) key: exactly 0 after the softmax."""


def softmax(scores: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along ``axis`` (``-inf`` entries become 0); float32 out, same shape.

    A row that is all ``-inf`` gives NaN, as torch does.
    """
    s = np.asarray(scores, dtype=np.float64)
    m = np.max(s, axis=axis, keepdims=True)
    e = np.exp(s - m)
    return (e / e.sum(axis=axis, keepdims=True)).astype(np.float32)


@dataclass(frozen=True)
class AttentionInternals:
    """One layer's self-attention, step by step; immutable, read-only float32 arrays.

    H heads, T tokens, d = d_head = d_model / H.

    Attributes:
        tokens: the T token strings (as in :class:`model.records.prediction.Prediction`).
        layer: the 0-based layer these come from.
        queries: float32 [H, T, d], q_i = x_i W^Q_h (+ bias) for every head h and token i.
        keys: float32 [H, T, d], k_j.
        values: float32 [H, T, d], v_j.
        scores: float32 [H, T, T], the scaled and masked logits before the softmax:
            ``scores[h, i, j] = q_i . k_j / scale`` (+ ``position_scores[h, i, j]`` where present), and
            :data:`MASKED_SCORE` (-inf) for masked keys. ``softmax(scores)`` equals
            ``Prediction.attention[layer]``.
        head_outputs: float32 [H, T, d], ``softmax(scores) @ values``: each head's output vector per
            query token, before the heads are concatenated and projected by W^O.
        extra_score_terms: None when the scores are exactly Q K^T / sqrt(d) (the bundled model);
            otherwise a short description of what else is added (e.g. DeBERTa's relative-position
            terms), so views do not claim ``scores == q k^T / sqrt(d)``.
        inputs: float32 [T, D] or None: the states x_j the layer's query/key/value projections read (the layer
            input; LayerNorm(input) for a pre-LN layer), D = d_model.
        position_scores: float32 [H, T, T] or None: a score part added to ``q . k / scale`` (DeBERTa's
            relative-position terms c2p + p2c, He et al. 2021 eq. 4, already scaled); None when there is none.
        score_scale: the divisor of q . k (None: sqrt(d); DeBERTa: sqrt(3 d)).
        output_weight: float32 [H, d, D] or None: W^O split by head, rows h*d..(h+1)*d of W^O (the model computes
            ``concat_h(o_h) W^O + b^O``, so head h contributes ``o_h W^O_h``; Vaswani et al. 2017, section 3.2.2).
        output_bias: float32 [D] or None: b^O.
        attention_output: float32 [T, D] or None: the layer's attention output ``concat_h(o_h) W^O + b^O`` as the
            model's own forward pass computed it (before dropout, residual and LayerNorm), head mask applied.
        head_scale: float32 [H] or None: the head mask of this layer (1 keeps a head, 0 switched off; None: all 1).
    """

    tokens: tuple[str, ...]
    layer: int
    queries: np.ndarray
    keys: np.ndarray
    values: np.ndarray
    scores: np.ndarray
    head_outputs: np.ndarray
    extra_score_terms: str | None = None
    inputs: np.ndarray | None = None
    position_scores: np.ndarray | None = None
    score_scale: float | None = None
    output_weight: np.ndarray | None = None
    output_bias: np.ndarray | None = None
    attention_output: np.ndarray | None = None
    head_scale: np.ndarray | None = None

    def __post_init__(self) -> None:
        H, T, d = self.queries.shape
        D = self.inputs.shape[-1] if self.inputs is not None else H * d
        for name, shape in (("keys", (H, T, d)), ("values", (H, T, d)), ("scores", (H, T, T)),
                            ("head_outputs", (H, T, d)), ("inputs", (T, D)), ("position_scores", (H, T, T)),
                            ("output_weight", (H, d, D)), ("output_bias", (D,)), ("attention_output", (T, D)),
                            ("head_scale", (H,))):
            value = getattr(self, name)
            if value is not None and value.shape != shape:
                raise ValueError(f"{name} has shape {value.shape}, expected {shape}")
        if len(self.tokens) != T:
            raise ValueError(f"{len(self.tokens)} tokens for arrays of {T}")
        freeze_arrays(self)

    @property
    def n_heads(self) -> int:
        """H."""
        return int(self.queries.shape[0])

    @property
    def num_tokens(self) -> int:
        """T."""
        return int(self.queries.shape[1])

    @property
    def d_head(self) -> int:
        """d = d_model / H, the width of one head's vectors."""
        return int(self.queries.shape[2])

    @property
    def scale(self) -> float:
        """The divisor of the raw dot products: sqrt(d_head) (``score_scale`` where the model uses another)."""
        return float(self.score_scale) if self.score_scale is not None else float(np.sqrt(self.d_head))

    def raw_scores(self, head: int, query: int) -> np.ndarray:
        """float32 [T]: q_i . k_j for every key j (before scaling), head ``head``, query token ``query``."""
        return (self.keys[head] @ self.queries[head, query]).astype(np.float32)

    def weights(self, head: int, query: int) -> np.ndarray:
        """float32 [T]: the attention row softmax(scores[head, query]) (sums to 1)."""
        return softmax(self.scores[head, query])

    def steps(self, head: int, query: int, top_k: int | None = None) -> AttentionSteps:
        """The computation of one attention row in teaching order (see :class:`AttentionSteps`).

        Args:
            head: 0-based head. query: the query token i.
            top_k: keep the ``top_k`` keys with the largest weights (None: all), for long texts.

        Raises:
            IndexError: ``head`` or ``query`` out of range.
        """
        if not (0 <= head < self.n_heads and 0 <= query < self.num_tokens):
            raise IndexError(f"head {head} / query {query} out of range ({self.n_heads} heads, {self.num_tokens} tokens)")
        raw = self.raw_scores(head, query)  # (T,)
        scaled = (raw / self.scale).astype(np.float32)
        masked = self.scores[head, query]  # (T,), -inf where masked
        weights = softmax(masked)
        order = np.argsort(-weights, kind="stable")
        keys = order if top_k is None else order[: max(1, int(top_k))]
        weighted = (weights[keys, None] * self.values[head, keys]).astype(np.float32)  # (k, d)
        return AttentionSteps(
            head=head, query=query, keys=keys.astype(np.int64), raw=raw, scaled=scaled, masked=masked,
            weights=weights, weighted_values=weighted, output=self.head_outputs[head, query],
            rest_weight=float(1.0 - weights[keys].sum()),
            position=None if self.position_scores is None else self.position_scores[head, query],
        )

    @classmethod
    def synthetic(cls, n_heads: int = 4, num_tokens: int = 512, d_head: int = 64, seed: int = 0) -> AttentionInternals:
        """Random but consistent internals (scores = Q K^T / sqrt(d), outputs = softmax(scores) V, the attention
        output = concat(outputs) W^O + b^O), for benchmarks and view tests without a model."""
        rng = np.random.default_rng(seed)
        D = n_heads * d_head
        q, k, v = (rng.standard_normal((n_heads, num_tokens, d_head)).astype(np.float32) for _ in range(3))
        scores = (q @ k.transpose(0, 2, 1) / np.sqrt(d_head)).astype(np.float32)
        out = (softmax(scores) @ v).astype(np.float32)
        x = (rng.standard_normal((num_tokens, D)) / np.sqrt(D)).astype(np.float32)
        w_o = (rng.standard_normal((n_heads, d_head, D)) / np.sqrt(D)).astype(np.float32)
        b_o = (0.1 * rng.standard_normal(D)).astype(np.float32)
        attn_out = (np.einsum("htd,hde->te", out.astype(np.float64), w_o) + b_o).astype(np.float32)
        return cls(tuple(f"tok{i}" for i in range(num_tokens)), 0, q, k, v, scores, out, inputs=x,
                   output_weight=w_o, output_bias=b_o, attention_output=attn_out)


@dataclass(frozen=True)
class AttentionSteps:
    """One attention row computed step by step (Vaswani et al. 2017, equation 1), for one head and query i.

    Attributes:
        head, query: the head and the query token i.
        keys: int64 [k], the keys shown (all T, or the top-k by weight, largest first).
        raw: float32 [T], step 1: q_i . k_j.
        scaled: float32 [T], step 2: raw / sqrt(d_head).
        masked: float32 [T], step 3: the scores with masked keys at -inf (plus any extra score terms:
            this is exactly ``AttentionInternals.scores[head, query]``).
        weights: float32 [T], step 4: softmax(masked), sums to 1.
        weighted_values: float32 [k, d_head], step 5: w_j v_j for the keys shown.
        output: float32 [d_head], step 6: sum over all j of w_j v_j, the head's output vector for token i.
        rest_weight: the attention weight of the keys not shown (0 when all are).
        position: float32 [T] or None: the relative-position score part included in ``masked`` (DeBERTa), else None.
    """

    head: int
    query: int
    keys: np.ndarray
    raw: np.ndarray
    scaled: np.ndarray
    masked: np.ndarray
    weights: np.ndarray
    weighted_values: np.ndarray
    output: np.ndarray
    rest_weight: float
    position: np.ndarray | None = None

    def __post_init__(self) -> None:
        freeze_arrays(self)


@dataclass(frozen=True)
class EmbeddingNorms:
    """How large the positional encoding is next to the token embedding, per position of one text.

    The model's input is ``token_embedding x sqrt(d_model) + PE(pos)`` (Vaswani et al. 2017, sections 3.4
    and 3.5); comparing the norms shows how much position information the sum carries.

    Attributes:
        tokens: the T token strings.
        pe_norm: float32 [T], ||PE(pos)|| (sqrt(d_model / 2) for the sinusoidal encoding).
        token_norm: float32 [T], ||token embedding x sqrt(d_model)||.
    """

    tokens: tuple[str, ...]
    pe_norm: np.ndarray
    token_norm: np.ndarray

    def __post_init__(self) -> None:
        if not len(self.tokens) == len(self.pe_norm) == len(self.token_norm):
            raise ValueError("tokens, pe_norm and token_norm must have the same length")
        freeze_arrays(self)
