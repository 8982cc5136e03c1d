"""Pure-NumPy token importances from attention maps: attention rollout and the random baseline.

Attention rollout: Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers",
section 3. Inputs are attention probabilities float [L, H, T, T] (layers in forward
order, rows sum to 1); outputs are float32 [T] importances aligned with the tokens
(``[CLS]`` first). No torch: these run anywhere a :class:`model.Prediction` is.
"""

from __future__ import annotations

import zlib

import numpy as np


def attention_rollout(attn: np.ndarray) -> np.ndarray:
    """Attention rollout (Abnar & Zuidema 2020, section 3) of one input's attention maps.

    For each layer l = 1..L: A'_l = 0.5 * mean_heads(A_l) + 0.5 * I with rows
    renormalised to sum to 1 (the residual connection); then
    R = A'_L A'_{L-1} ... A'_1. ``R[i, j]`` is how much of token i's final
    representation flows from input token j.

    Args:
        attn: float [L, H, T, T] attention probabilities (rows sum to 1),
            layers in forward order.

    Returns:
        float64 [T, T]; every row sums to 1.

    Raises:
        ValueError: if ``attn`` is not 4-D with square T x T maps.
    """
    attn = np.asarray(attn, dtype=np.float64)
    if attn.ndim != 4 or attn.shape[-1] != attn.shape[-2]:
        raise ValueError(f"expected attention of shape [L, H, T, T], got {attn.shape}")
    T = attn.shape[-1]
    eye = np.eye(T)
    R = eye.copy()
    for layer in attn:  # (H, T, T)
        a = 0.5 * layer.mean(axis=0) + 0.5 * eye  # (T, T)
        a = a / a.sum(axis=-1, keepdims=True)
        R = a @ R
    return R


def readout_row(matrix: np.ndarray, pooling: str) -> np.ndarray:
    """The row of a [T, T] token-to-token matrix that the classification head reads.

    Args:
        matrix: [T, T], rows = query/output positions, columns = input tokens.
        pooling: ``"cls"`` (row 0, the ``[CLS]`` position) or ``"mean"``
            (the mean of all rows, since the head reads the mean of all
            final hidden states).

    Returns:
        float32 [T].

    Raises:
        ValueError: for an unknown pooling.
    """
    if pooling == "cls":
        row = matrix[0]
    elif pooling == "mean":
        row = matrix.mean(axis=0)
    else:
        raise ValueError(f"pooling must be 'mean' or 'cls', not {pooling!r}")
    return np.asarray(row, dtype=np.float32)


def rollout_importance(attn: np.ndarray, pooling: str) -> np.ndarray:
    """Token importance by attention rollout: ``readout_row(attention_rollout(attn), pooling)``.

    Args:
        attn: float [L, H, T, T].
        pooling: ``"mean"`` or ``"cls"``.

    Returns:
        float32 [T], sums to 1.
    """
    return readout_row(attention_rollout(attn), pooling)


def random_importance(num_tokens: int, text: str = "", seed: int = 0) -> np.ndarray:
    """The random baseline: i.i.d. uniform scores in [0, 1).

    The generator is seeded with ``(seed, crc32(text))``, so the same text
    and seed always give the same scores and different texts differ.

    Returns:
        float32 [num_tokens].
    """
    rng = np.random.default_rng([int(seed) & 0xFFFFFFFF, zlib.crc32(text.encode("utf-8", "replace"))])
    return rng.random(num_tokens).astype(np.float32)
