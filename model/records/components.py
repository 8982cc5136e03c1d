"""Component attribution (direct logit attribution, issue 53): :class:`ComponentAttribution`, one logit split into the
parts of the encoder that wrote it, and :class:`ComponentsNotSupported`, the typed refusal of an encoder whose parts
cannot be made to add up; :class:`FfnNeurons`, one FFN's part split by neuron.

Immutable and NumPy only (no torch). The algorithm is :mod:`model.explain.components`; docs/components.md says what
is linearised and which families are exact.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .prediction import freeze_arrays

TOP_COMPONENTS = 5
"""How many parts :meth:`ComponentAttribution.top_text` names (the scorer's ``top_components`` column)."""

_LAYER_PART = re.compile(r"^L(\d+)\.(H(\d+)|ffn|attn_bias|ln_beta)$")


def head_part(layer: int, head: int) -> str:
    """The name of a head's part: ``"L2.H3"`` for ``head`` 2 (0-based index) of ``layer`` 2 (1-based). Layers and
    heads are counted from 1 in every name, as the app's Layer and Head boxes count them (its head 3 is "L2.H3")."""
    return f"L{layer}.H{head + 1}"


def head_of(name: str) -> tuple[int, int] | None:
    """``(layer, head)`` of a head's part name (layer 1-based, head the 0-based index: :func:`head_part`'s inverse),
    or None for another part."""
    m = _LAYER_PART.match(name)
    return None if m is None or m.group(3) is None else (int(m.group(1)), int(m.group(3)) - 1)


class ComponentsNotSupported(NotImplementedError):
    """Raised by ``Predictor.component_attribution`` for an encoder whose logit cannot be split exactly into its
    components (DeBERTa v1's fused projections, an ALBERT with several layer groups; the message says what is
    covered): no number that does not add up is shown."""


@dataclass(frozen=True)
class ComponentAttribution:
    """One output of the read-out split into additive parts along the residual stream (issue 53, section 1).

    K parts, T tokens. Read-only arrays.

    Attributes:
        names: the K part names (:func:`model.explain.components.part_names`): ``"embeddings"`` (the first layer's
            input: token + position (+ segment) embeddings and their LayerNorm), per layer l (1-based) each head
            ``"L{l}.H{h}"`` (h 1-based as l is, :func:`head_part`; its output through its slice of W_O), ``"L{l}.attn_bias"`` (W_O b_V + b_O),
            ``"L{l}.ffn"`` (the feed-forward block's output, its biases included), for a post-LN layer
            ``"L{l}.ln_beta"`` (its two LayerNorms' beta), for a pre-LN encoder ``"final_ln_beta"``, and
            ``"head_bias"`` (the pooler's and the classifier's biases).
        values: float32 [K], summing to ``total`` (within 1e-4 x max(1, |total|)).
        total: the logit split: ``predict(text).logits[target]`` (regression: the predicted value).
        by_position: float32 [K, T]; summed over T, ``values``. A head's row: what it moved from token j (its value
            vector at j, through the attention of the rows the read-out reads); every other part's row: what it
            wrote at row j of the stream (``head_bias`` spread by the pooling weights). For a text read in windows,
            the windows' rows merged over the document's tokens as its logits are (the weighted sum).
        target: the output index split (regression: 0). label: its name.
        tokens: the T token strings (the document's, for a text read in windows).
        n_layers, n_heads: L and H of the model.
        num_windows: windows the text was read in (1 for a text that fits).
        elapsed_s: wall time of the forward pass(es) and the sweep, in seconds.
    """

    names: tuple[str, ...]
    values: np.ndarray
    total: float
    by_position: np.ndarray
    target: int
    label: str
    tokens: tuple[str, ...]
    n_layers: int
    n_heads: int
    num_windows: int = 1
    elapsed_s: float = 0.0

    def __post_init__(self) -> None:
        K, T = len(self.names), len(self.tokens)
        if self.values.shape != (K,) or self.by_position.shape != (K, T):
            raise ValueError(f"values {self.values.shape} and by_position {self.by_position.shape} do not match "
                             f"{K} parts and {T} tokens")
        freeze_arrays(self)

    def value(self, name: str) -> float:
        """The value of part ``name``. Raises KeyError: no such part."""
        try:
            return float(self.values[self.names.index(name)])
        except ValueError:
            raise KeyError(f"no part named {name!r}") from None

    def pairs(self) -> tuple[tuple[str, float], ...]:
        """Every part as ``(name, value)``, in :attr:`names` order (what a batch row keeps)."""
        return tuple(zip(self.names, (float(v) for v in self.values)))

    def top(self, n: int = TOP_COMPONENTS) -> list[tuple[str, float]]:
        """The ``n`` parts of largest |value|, largest first (ties: in :attr:`names` order)."""
        return top_parts(self.pairs(), n)

    def top_text(self, n: int = TOP_COMPONENTS) -> str:
        """:meth:`top` as one line: :func:`top_text`."""
        return top_text(self.pairs(), n)

    def grid(self) -> tuple[np.ndarray, tuple[str, ...]]:
        """The layer parts as a grid: ``(float32 [L, H + 3], column names)``, columns the heads ``"H0"..``, then
        ``"ffn"``, ``"attn_bias"``, ``"ln_beta"`` (NaN where the model has no such part: a pre-LN layer's beta)."""
        return layer_grid(dict(zip(self.names, self.values.tolist())), self.n_layers, self.n_heads)


@dataclass(frozen=True)
class FfnNeurons:
    """One feed-forward block's part of a :class:`ComponentAttribution` split by neuron (issue 53, section 1): neuron
    n contributes its activation a_in times its output weight's projection <W_2[:, n], g_i> on the target direction
    at that layer, g_i (carried back through the frozen LayerNorms as the component attribution carries it), summed
    over the rows i the read-out reads; the output bias b_2 gives the rest (:func:`model.explain.components.
    ffn_neuron_parts`).

    F neurons, N shown (the ``top`` of the call), T tokens. Read-only arrays. Units: logit (regression: the value).

    Attributes:
        layer: the layer (1-based, as the part names). name: the part, ``"L{layer}.ffn"``.
        contributions: float32 [F], every neuron's contribution; ``contributions.sum() + bias`` is the FFN's part
            ``value`` (within 1e-4 x max(1, |value|)).
        bias: the output bias's part, <b_2, g_i> summed over the rows read.
        value: the FFN's part as :meth:`~model.predictor.predictor.Predictor.component_attribution` gives it
            (``L{layer}.ffn``).
        total: the logit split (``ComponentAttribution.total``).
        neurons: int64 [N], the N neurons of largest |contribution|, largest first.
        activations: float32 [N, T], those neurons' activations act(W_1 y + b_1) at every token (a text read in
            windows: the largest over the windows that read the token).
        by_position: float32 [N, T], their contributions by row of the stream (0 in rows the read-out does not read:
            [CLS] pooling reads row 0 only); summed over T, ``contributions[neurons]``.
        target, label: the output split and its name. tokens: the T token strings (the document's).
        num_windows: windows the text was read in (1 for a text that fits; more: the windows' parts weighted as the
            document's logits weight them). elapsed_s: wall time, seconds.
    """

    layer: int
    name: str
    contributions: np.ndarray
    bias: float
    value: float
    total: float
    neurons: np.ndarray
    activations: np.ndarray
    by_position: np.ndarray
    target: int
    label: str
    tokens: tuple[str, ...]
    num_windows: int = 1
    elapsed_s: float = 0.0

    def __post_init__(self) -> None:
        N, T = len(self.neurons), len(self.tokens)
        if self.activations.shape != (N, T) or self.by_position.shape != (N, T) or self.contributions.ndim != 1:
            raise ValueError(f"activations {self.activations.shape}, by_position {self.by_position.shape} and "
                             f"contributions {self.contributions.shape} do not match {N} neurons and {T} tokens")
        freeze_arrays(self)

    @property
    def n_neurons(self) -> int:
        """F, the FFN's width."""
        return int(self.contributions.shape[0])

    def top_tokens(self, k: int, n: int = 3) -> list[tuple[int, float]]:
        """The ``n`` tokens that fire shown neuron ``k`` (0..N-1) most: ``(token index, activation)``, largest
        activation first."""
        row = self.activations[k]
        order = np.argsort(-row, kind="stable")[:max(0, n)]
        return [(int(j), float(row[j])) for j in order]


def top_parts(pairs, n: int = TOP_COMPONENTS) -> list[tuple[str, float]]:
    """The ``n`` ``(name, value)`` pairs of largest |value|, largest first (ties: in the given order)."""
    order = sorted(range(len(pairs)), key=lambda k: (-abs(float(pairs[k][1])), k))[:max(0, n)]
    return [(str(pairs[k][0]), float(pairs[k][1])) for k in order]


def top_text(pairs, n: int = TOP_COMPONENTS) -> str:
    """The ``n`` largest parts (:func:`top_parts`) as one line, e.g. ``"L2.H3 +1.24; L1.ffn \u22120.80"`` (two
    decimals, a real minus sign): the scorer's ``top_components`` column; "" for no parts."""
    return "; ".join(f"{name} {value:+.2f}".replace("-", "\u2212") for name, value in top_parts(pairs, n))


def mean_abs(rows_of_pairs) -> dict[str, float]:
    """``{name: mean |value|}`` over several texts' parts (each a sequence of ``(name, value)``; empty ones left
    out), names in first-seen order: what a corpus leans on (``metrics.json``'s ``"components"``)."""
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for pairs in rows_of_pairs:
        for name, value in pairs:
            sums[name] = sums.get(name, 0.0) + abs(float(value))
            counts[name] = counts.get(name, 0) + 1
    return {name: sums[name] / counts[name] for name in sums}


def layer_grid(values: dict[str, float], n_layers: int, n_heads: int) -> tuple[np.ndarray, tuple[str, ...]]:
    """Per-part numbers keyed by part name (e.g. a corpus's mean |value|) as the grid of
    :meth:`ComponentAttribution.grid`: ``(float32 [n_layers, n_heads + 3], column names)``, NaN where absent."""
    cols = tuple(f"H{h + 1}" for h in range(n_heads)) + ("ffn", "attn_bias", "ln_beta")
    out = np.full((n_layers, len(cols)), np.nan, dtype=np.float32)
    for name, v in values.items():
        m = _LAYER_PART.match(name)
        if m is None or not 1 <= int(m.group(1)) <= n_layers:
            continue
        col = f"H{m.group(3)}" if m.group(3) is not None else m.group(2)
        if col in cols:
            out[int(m.group(1)) - 1, cols.index(col)] = v
    return out, cols


def is_layer_part(name: str) -> bool:
    """True for a part of a layer (``L{l}.H{h}``, ``.ffn``, ``.attn_bias``, ``.ln_beta``): one the grid shows."""
    return _LAYER_PART.match(name) is not None


def grid_shape(names) -> tuple[int, int]:
    """``(L, H)`` of a model from its part names (the largest layer and head numbers); (0, 0) for none."""
    L = H = 0
    for name in names:
        m = _LAYER_PART.match(name)
        if m is not None:
            L = max(L, int(m.group(1)))
            H = max(H, int(m.group(3)) if m.group(3) is not None else 0)
    return L, H
