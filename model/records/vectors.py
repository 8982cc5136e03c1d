"""Sentence representations kept while scoring (issue 42, the corpus map): what to keep (:class:`VectorSpec`) and
the kept vectors of a corpus (:class:`SentenceVectors`). NumPy only, no torch.

What a vector is: the hidden states of one layer (the last by default) through the model's own read-out up to its
pooling, i.e. the vector the classification head reads. The bundled model: its final LayerNorm (pre-LN) and its
pooling (``config.pooling``: the first token's state or the mean over real tokens); Hugging Face models: the first
token's ([CLS], ``<s>``) state of the last layer, the input of the pooler / classification head (the read-out chains
of :mod:`model.hf.flow_taps`). ``pooling="mean"`` takes the mean over the real tokens (the attention mask, special
tokens included) instead. A text read in windows gets the mean of its windows' vectors; a sentence pair one vector.

Memory: N texts x d floats x 4 bytes, e.g. 25,000 x 768 float32 = 76.8 MB (a BERT-base), 25,000 x 256 = 25.6 MB.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .prediction import freeze_arrays

POOLINGS: tuple[str, ...] = ("readout", "mean")
"""``"readout"``: the model's own pooling (the vector its head reads); ``"mean"``: the mean over real tokens."""


@dataclass(frozen=True)
class VectorSpec:
    """Which sentence vector to keep while scoring (``Predictor.score_many(..., vectors=VectorSpec())``).

    Attributes:
        layer: None for the last layer (the vector the read-out uses); else a 0-based layer index (negative counts
            from the last: -1 is the last), whose output goes through the same read-out steps up to the pooling.
        pooling: one of :data:`POOLINGS`.

    Raises:
        ValueError: an unknown pooling; a layer that is not a whole number.
    """

    layer: int | None = None
    pooling: str = "readout"

    def __post_init__(self) -> None:
        if self.pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {', '.join(POOLINGS)}, got {self.pooling!r}")
        if self.layer is not None and (isinstance(self.layer, bool) or not isinstance(self.layer, (int, np.integer))):
            raise ValueError(f"layer must be a whole number or None, got {self.layer!r}")

    def resolve(self, n_layers: int) -> int:
        """The 0-based layer of a model with ``n_layers`` layers. Raises ValueError: a layer out of range (named)."""
        layer = n_layers - 1 if self.layer is None else int(self.layer)
        if not -n_layers <= layer < n_layers:
            raise ValueError(f"layer {self.layer} is out of range: the model has {n_layers} layers (0..{n_layers - 1})")
        return layer % n_layers

    def describe(self, n_layers: int | None = None) -> str:
        """A short human label, e.g. ``"last layer, read-out pooling"`` or ``"layer 3, mean-pooled"``."""
        where = "last layer" if self.layer is None else f"layer {self.resolve(n_layers) if n_layers else self.layer}"
        return f"{where}, {'read-out pooling' if self.pooling == 'readout' else 'mean-pooled'}"

    def key(self) -> tuple:
        """A hashable key of the spec (for caches of projections)."""
        return (self.layer, self.pooling)


@dataclass(frozen=True, eq=False)
class SentenceVectors:
    """The kept vectors of N scored texts.

    Attributes:
        vectors: float32 [N, d] (read-only): row i is the i-th scored text's vector (a run's failed inputs have none).
        rows: int64 [N] (read-only): the index of each vector's row among all the run's rows (failed ones included),
            e.g. the batch table's rows or the lines of ``--out``.
        spec: what was kept (:class:`VectorSpec`).
        model: the folder of the model that computed them ("" when unknown).

    Raises:
        ValueError: ``vectors`` not 2-D, or ``rows`` of another length.
    """

    vectors: np.ndarray
    rows: np.ndarray
    spec: VectorSpec = VectorSpec()
    model: str = ""

    def __post_init__(self) -> None:
        v = np.asarray(self.vectors, np.float32)
        if v.ndim != 2:
            raise ValueError(f"vectors must be 2-D (N, d), got shape {v.shape}")
        r = np.asarray(self.rows, np.int64).reshape(-1)
        if len(r) != len(v):
            raise ValueError(f"{len(r)} row indices for {len(v)} vectors")
        object.__setattr__(self, "vectors", v)
        object.__setattr__(self, "rows", r)
        freeze_arrays(self)

    @property
    def count(self) -> int:
        """N, the texts with a vector."""
        return int(self.vectors.shape[0])

    @property
    def dim(self) -> int:
        """d, the vector width."""
        return int(self.vectors.shape[1])

    @property
    def nbytes(self) -> int:
        """Bytes of :attr:`vectors` (N x d x 4)."""
        return int(self.vectors.nbytes)

    def take(self, rows: np.ndarray) -> SentenceVectors:
        """The vectors of the given row indices (int [K], a subset of :attr:`rows`, in that order), rows renumbered
        0..K-1. Raises KeyError: a row without a vector."""
        at = {int(r): i for i, r in enumerate(self.rows)}
        idx = np.array([at[int(r)] for r in rows], np.int64)
        return SentenceVectors(self.vectors[idx], np.arange(len(idx)), self.spec, self.model)


def stack_vectors(vectors: list[np.ndarray | None], spec: VectorSpec, model: str = "", dim: int = 0) -> SentenceVectors:
    """:class:`SentenceVectors` of one run's rows: ``vectors`` has one entry per row in order (None for a row without
    a vector: not scored); ``dim``: d when no row has one (an empty [0, dim] result)."""
    kept = [(i, v) for i, v in enumerate(vectors) if v is not None]
    if not kept:
        return SentenceVectors(np.zeros((0, dim), np.float32), np.zeros(0, np.int64), spec, model)
    return SentenceVectors(np.stack([v for _, v in kept]).astype(np.float32, copy=False),
                           np.array([i for i, _ in kept], np.int64), spec, model)


PROJECTIONS: tuple[str, ...] = ("pca", "umap")
"""The 2-D projections of the corpus map: ``"pca"`` (scikit-learn's PCA) and ``"umap"`` (umap-learn on a PCA-50)."""


@dataclass(frozen=True, eq=False)
class MapProjection:
    """The 2-D coordinates of N kept vectors (:func:`model.corpus.projection.project`).

    Attributes:
        coords: float32 [N, 2] (read-only), in the order of the vectors (``SentenceVectors.rows`` names their rows).
        method: one of :data:`PROJECTIONS`.
        seed: the random seed (UMAP; PCA is deterministic without one).
        explained: PCA: the share of the variance each of the two axes explains, float [2]; UMAP: the share kept by
            the PCA-50 it ran on (one number in a tuple), or () when the vectors had 50 dimensions or fewer.
        elapsed_s: wall seconds the projection took (0 when it came from the cache).
        note: why ``method`` is not the one asked for ("" when it is), e.g. UMAP of too few texts shown as PCA.
    """

    coords: np.ndarray
    method: str
    seed: int = 0
    explained: tuple[float, ...] = ()
    elapsed_s: float = 0.0
    note: str = ""

    def __post_init__(self) -> None:
        if self.method not in PROJECTIONS:
            raise ValueError(f"method must be one of {', '.join(PROJECTIONS)}, got {self.method!r}")
        c = np.asarray(self.coords, np.float32)
        if c.ndim != 2 or c.shape[1] != 2:
            raise ValueError(f"coords must be (N, 2), got shape {c.shape}")
        object.__setattr__(self, "coords", c)
        freeze_arrays(self)
