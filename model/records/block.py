"""One token followed through one encoder layer, step by step (issue 53, section 4: the whole layer, taught):
:class:`BlockTrace` (what ``Predictor.block_trace`` returns), its :class:`BlockStep` s, and
:class:`BlockNotSupported`, the typed refusal of a family whose layer does not fit the steps.

The steps are those of Vaswani et al. 2017, section 3 (multi-head attention, the position-wise feed-forward network,
the residual connections and LayerNorm, Ba et al. 2016) in the order the model computes them: post-LN (BERT, the
paper) x -> attention -> add -> LayerNorm -> FFN -> add -> LayerNorm; pre-LN (Xiong et al. 2020) x -> LayerNorm ->
attention -> add -> LayerNorm -> FFN -> add. After the last layer: the read-out ([CLS] or mean pooling, the pooler,
the classifier, softmax / sigmoid / the regression value). Immutable and NumPy only (no torch); the algorithm is
:mod:`model.explain.block`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .prediction import freeze_arrays

BRANCHES = ("stream", "attention", "ffn", "readout")
"""Where a step lies in the Sankey-like drawing: on the residual stream, on the attention or the feed-forward branch
(which split off the stream and are added back at a residual add), or in the read-out after the last layer."""


class BlockNotSupported(NotImplementedError):
    """Raised by ``Predictor.block_trace`` for an encoder whose layer does not fit the steps (its modules are not
    mapped, or a step recomputed from its weights differs from what its own forward pass computed); the message says
    which and why, and the Block view shows it instead of numbers."""


@dataclass(frozen=True)
class LayerNormStats:
    """What one LayerNorm did to one token's vector z (D): LN(z) = gamma * (z - mean) / sqrt(variance + eps) + beta
    (Ba et al. 2016), mean and variance over the D features of this token (the biased variance, as torch computes it).

    Attributes:
        mean, variance: of z over its D features. eps: the module's epsilon.
        gamma, beta: float32 [D], the module's scale and shift.
    """

    mean: float
    variance: float
    eps: float
    gamma: np.ndarray
    beta: np.ndarray

    def __post_init__(self) -> None:
        freeze_arrays(self)


@dataclass(frozen=True)
class TopNeurons:
    """The feed-forward neurons that write most into the stream for this token: by |a_k| x ||W2[k]|| (a_k the
    activation of hidden unit k, W2[k] the row of W2 it multiplies: the norm of what unit k adds), largest first.

    Attributes:
        index: int64 [k] hidden units (0-based). activation: float32 [k] a_k. w2_norm: float32 [k] ||W2[k]||.
        score: float32 [k] |a_k| x ||W2[k]||.
    """

    index: np.ndarray
    activation: np.ndarray
    w2_norm: np.ndarray
    score: np.ndarray

    def __post_init__(self) -> None:
        freeze_arrays(self)


@dataclass(frozen=True)
class BlockStep:
    """One step of the trace: its output vector and how it was computed.

    Attributes:
        key: a stable identifier (``"input"``, ``"ln1"``, ``"q"``, ``"k"``, ``"v"``, ``"attention"``, ``"w_o"``,
            ``"add1"``, ``"w1"``, ``"act"``, ``"w2"``, ``"add2"``, ``"ln2"``, ``"output"``; read-out: ``"final_ln"``,
            ``"pool"``, ``"linear1"``, ``"act1"``, ``"linear2"``..., ``"probabilities"``).
        title: the name shown to students ("LayerNorm 1", "FFN: W1").
        formula: a short formula of the step ("LN(z) = γ (z − μ) / √(σ² + ε) + β").
        output: float32 [n]: [D] on the stream, [H d] for Q, K, V and the joined heads' context, [d_ff] inside the
            FFN, [C] for the logits and the probabilities.
        branch: one of :data:`BRANCHES`.
        layer_norm: the LayerNorm's statistics (LayerNorm steps only).
        neurons: the top neurons (the FFN's W2 step only).
        weights: float32 [H, T] the attention of this token to every token, per head (the attention step only).
    """

    key: str
    title: str
    formula: str
    output: np.ndarray
    branch: str = "stream"
    layer_norm: LayerNormStats | None = None
    neurons: TopNeurons | None = None
    weights: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.branch not in BRANCHES:
            raise ValueError(f"unknown branch {self.branch!r}: one of {', '.join(BRANCHES)}")
        if self.output.ndim != 1:
            raise ValueError(f"step {self.key!r}: output must be a vector, got shape {self.output.shape}")
        freeze_arrays(self)

    @property
    def norm(self) -> float:
        """||output||, the L2 norm (the width of the step's band in the Block view)."""
        return float(np.linalg.norm(self.output.astype(np.float64)))


@dataclass(frozen=True)
class BlockTrace:
    """One token (``position``) through one encoder layer (``layer``, 0-based; shown 1-based), and after the last
    layer the read-out (issue 53, section 4).

    Attributes:
        tokens: the T token strings of the text (``predict(text).tokens`` for a text that fits).
        layer: 0-based layer index. position: the token followed (0..T-1).
        n_layers: L. n_heads: H. family: the model's family ("Attention Explorer encoder", "BERT", ...).
        post_ln: True when the LayerNorms follow the residual adds (BERT, the paper), False for pre-LN.
        steps: the layer's steps in the order the model computes them (module docstring).
        readout: the read-out's steps after the last layer (empty unless ``layer`` is the last): their last is the
            output the app shows (softmax probabilities, sigmoids, or the regression value).
        pooling: "cls" (the first token's state is read) or "mean" (the mean over the real tokens).
        task: the task kind the read-out was read as ("single_label", "multi_label", "regression").
        labels: the C output names. logits: float32 [C] or None (no read-out): the read-out's logits.
        elapsed_s: wall time of the passes, seconds.
    """

    tokens: tuple[str, ...]
    layer: int
    position: int
    n_layers: int
    n_heads: int
    family: str
    post_ln: bool
    steps: tuple[BlockStep, ...]
    readout: tuple[BlockStep, ...] = ()
    pooling: str = "cls"
    task: str = "single_label"
    labels: tuple[str, ...] = ()
    logits: np.ndarray | None = None
    elapsed_s: float = 0.0

    def __post_init__(self) -> None:
        if not 0 <= self.position < len(self.tokens):
            raise ValueError(f"position {self.position} outside the {len(self.tokens)} tokens")
        if not 0 <= self.layer < self.n_layers:
            raise ValueError(f"layer {self.layer} outside 0..{self.n_layers - 1}")
        keys = [s.key for s in self.all_steps]
        if len(set(keys)) != len(keys):
            raise ValueError(f"step keys repeat: {keys}")
        freeze_arrays(self)

    @property
    def all_steps(self) -> tuple[BlockStep, ...]:
        """The layer's steps, then the read-out's."""
        return self.steps + self.readout

    def step(self, key: str) -> BlockStep:
        """The step ``key``. Raises KeyError: no such step."""
        for s in self.all_steps:
            if s.key == key:
                return s
        raise KeyError(f"no step {key!r} in this trace: {', '.join(s.key for s in self.all_steps)}")

    @property
    def token(self) -> str:
        """The token followed."""
        return self.tokens[self.position]
