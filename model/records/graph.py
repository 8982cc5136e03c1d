"""The contribution graph of one text (Ferrando & Voita 2024, "Information Flow Routes"): :class:`ContributionGraph`
(NumPy only, no torch). :meth:`model.Predictor.contribution_graph` returns it; the computation and its definition
are :mod:`model.explain.contribution_graph`. Every array is read-only.

Shapes: N nodes, E edges, L layers, T tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from model.records.prediction import freeze_arrays

RESIDUAL = -1
"""The ``heads`` entry of an edge of the residual/FFN path (l, i) -> (l + 1, i)."""


@dataclass(frozen=True)
class ContributionGraph:
    """The residual states the read-out is built from, and through which heads (pruned by ``threshold``).

    Attributes:
        tokens: the T tokens as the model saw them.
        nodes: int32 (N, 2), read-only: (level, position) of each node; level 0 is the embeddings (layer 1's
            input), level l the output of layer l (1-based, as the app labels layers), level L the last.
        edges: int32 (E, 2), read-only: (source node, target node) indices into ``nodes``; a source is one level
            below its target.
        heads: int16 (E,), read-only: the 0-based head of the target's layer an edge goes through, or
            :data:`RESIDUAL` (-1) for the residual/FFN path.
        weights: float32 (E,), read-only: the edge's proportional contribution to its target (ALTI per head, in
            [0, 1]; the contributions into one node, kept or pruned, sum to 1).
        readout: int64 [R], read-only: the positions at level L the graph starts from (the classification token,
            or every token for a mean-pooled read-out).
        threshold: the least weight an edge keeps. n_layers: L.
        elapsed_s: wall seconds of the computation (the forward pass included).
    """

    tokens: tuple[str, ...]
    nodes: np.ndarray
    edges: np.ndarray
    heads: np.ndarray
    weights: np.ndarray
    readout: np.ndarray
    threshold: float
    n_layers: int
    elapsed_s: float

    def __post_init__(self) -> None:
        freeze_arrays(self)

    def edge_label(self, e: int) -> str:
        """How the app names edge ``e``'s path: ``"L2.H3"`` (1-based layer, 0-based head) or ``"L2 residual/FFN"``."""
        layer = int(self.nodes[self.edges[e, 1], 0])
        h = int(self.heads[e])
        return f"L{layer}.H{h}" if h != RESIDUAL else f"L{layer} residual/FFN"
