"""The contribution graph of one text (Ferrando & Voita 2024, "Information Flow Routes"): :class:`ContributionGraph`
(NumPy only, no torch). :meth:`model.Predictor.contribution_graph` returns it; the computation and its definition
are :mod:`model.explain.contribution_graph`. Every array is read-only.

Shapes: N nodes, E edges, L layers, T tokens.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from model.records.components import head_part
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
        node_outputs: float32 (N, C), read-only: what the read-out would say from each node's state alone
            (:func:`model.explain.contribution_graph.node_outputs`: probabilities, or the value for regression); (N, 0)
            when not computed.
        labels: the C class names. task: how the logits are read (a :data:`model.tasks.types.TASK_TYPES` id).
        head_mask: float32 (L, H) the head mask of the forward pass, or None (every head on).
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
    node_outputs: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.float32))
    labels: tuple[str, ...] = ()
    task: str = "single_label"
    head_mask: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.node_outputs.shape[0] != len(self.nodes):
            object.__setattr__(self, "node_outputs", np.zeros((len(self.nodes), 0), np.float32))
        freeze_arrays(self)

    def pruned(self, threshold: float) -> ContributionGraph:
        """This graph as :meth:`model.Predictor.contribution_graph` returns it at the higher ``threshold``: the edges
        of weight >= ``threshold`` reached backwards from the read-out, their nodes, in the same order (levels from the
        top, positions ascending; per level the residual/FFN edges, then the head edges by (target, head, source)).
        The proportional contributions do not depend on the threshold, so the result equals the recomputed graph
        (tests/model/explain/test_contribution_graph.py checks it). NumPy only: O(E).

        Raises:
            ValueError: ``threshold`` below this graph's (pruned edges cannot come back) or above 1.
        """
        if not self.threshold <= threshold <= 1:
            raise ValueError(f"a graph computed at threshold {self.threshold} prunes to a threshold in "
                             f"[{self.threshold}, 1], not {threshold!r}")
        levels = self.nodes[:, 0]
        alive = levels == self.n_layers  # the read-out positions are always kept
        strong = self.weights >= threshold
        kept = np.zeros(len(self.edges), bool)
        target_level = levels[self.edges[:, 1]]
        for level in range(self.n_layers, 0, -1):  # each level's kept nodes keep their strong edges' sources
            sel = strong & (target_level == level) & alive[self.edges[:, 1]]
            alive[self.edges[sel, 0]] = True
            kept |= sel
        index = np.cumsum(alive) - 1
        return replace(self, nodes=self.nodes[alive].copy(), edges=index[self.edges[kept]].astype(np.int32),
                       heads=self.heads[kept].copy(), weights=self.weights[kept].copy(),
                       node_outputs=self.node_outputs[alive].copy(), threshold=float(threshold))

    def node_readout(self, n: int) -> tuple[str, float]:
        """What the read-out would say from node ``n``'s state (:attr:`node_outputs`): ``(label, probability)`` of its
        most likely class, or ``("value", v)`` for regression; ``("", nan)`` without a classification head."""
        row = self.node_outputs[n]
        if row.size == 0:
            return "", float("nan")
        if self.task == "regression":
            return "value", float(row[0])
        c = int(np.argmax(row))
        return (self.labels[c] if c < len(self.labels) else str(c)), float(row[c])

    def edge_label(self, e: int) -> str:
        """How the app names edge ``e``'s path: ``"L2.H3"`` (layer 2's head 3, both counted from 1 as the app counts
        them: :func:`model.records.components.head_part`) or ``"L2 residual/FFN"``."""
        layer = int(self.nodes[self.edges[e, 1], 0])
        h = int(self.heads[e])
        return head_part(layer, h) if h != RESIDUAL else f"L{layer} residual/FFN"
