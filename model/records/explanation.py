"""The result records of :mod:`model.explain`: immutable NumPy-only values that may cross threads.

:class:`Explanation` holds one method's token scores (float32 [T], read-only, aligned with the
prediction's tokens); :class:`Faithfulness` its ERASER scores (probability units);
:class:`ExplanationResult` pairs the two for one method (what the GUI's explorer state holds);
:class:`ExplanationCancelled` is raised when a caller's ``should_stop()`` returns True
mid-computation. This module imports no torch, so views may hold its records.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from model.records.prediction import freeze_arrays


class ExplanationCancelled(Exception):
    """Raised by :func:`~model.explain.methods.explain` when ``should_stop()`` returned True mid-computation."""


@dataclass(frozen=True)
class Explanation:
    """One token-importance explanation; immutable, NumPy only (``scores`` is read-only).

    Attributes:
        method: one of :data:`~model.explain.methods.EXPLANATION_METHODS`.
        scores: float32 [T], one score per token (``[CLS]`` first), aligned with
            ``tokens``. Higher means more important for ``target``; for signed
            methods negative scores are evidence against it.
        signed: whether ``scores`` are signed (:data:`~model.explain.methods.SIGNED_METHODS`).
        target: the explained class index (the predicted class unless chosen).
        elapsed_s: wall time in seconds, including the forward pass(es) the
            method needs (for ``attention``/``rollout`` computed from a given
            prediction: that prediction's ``elapsed_s`` plus the post-processing).
        convergence_delta: for integrated gradients, captum's convergence
            delta sum(attributions) - (f(x) - f(baseline)) in log-odds units;
            None for the other methods.
        tokens: the T token strings.
    """

    method: str
    scores: np.ndarray
    signed: bool
    target: int
    elapsed_s: float
    convergence_delta: float | None
    tokens: list[str]

    def __post_init__(self) -> None:
        freeze_arrays(self)

    @property
    def num_tokens(self) -> int:
        """T, the number of scored tokens."""
        return len(self.tokens)

    def to_json_dict(self) -> dict:
        """Everything as JSON-serialisable Python types (for export)."""
        return {
            "method": self.method,
            "scores": self.scores.tolist(),
            "signed": self.signed,
            "target": self.target,
            "elapsed_s": self.elapsed_s,
            "convergence_delta": self.convergence_delta,
            "tokens": list(self.tokens),
        }


@dataclass(frozen=True)
class Faithfulness:
    """ERASER faithfulness of one explanation of one text.

    Attributes:
        method: the explanation method.
        comprehensiveness_aopc: mean over k of comprehensiveness_k (probability
            units, in [-1, 1]; higher is more faithful).
        sufficiency_aopc: mean over k of sufficiency_k (probability units, in
            [-1, 1]; lower is more faithful).
        per_k: ``{k: {"comprehensiveness": float, "sufficiency": float,
            "tokens": m}}`` for every percent k, m = tokens removed/kept.
        elapsed_s: wall time of the erasure forward pass, in seconds.
        target: the class index whose probability is measured.
        p_full: p(target | full text).
    """

    method: str
    comprehensiveness_aopc: float
    sufficiency_aopc: float
    per_k: dict = field(default_factory=dict)
    elapsed_s: float = 0.0
    target: int = 0
    p_full: float = 0.0

    def to_json_dict(self) -> dict:
        """JSON-serialisable dict (``per_k`` keys become strings)."""
        return {
            "method": self.method,
            "comprehensiveness_aopc": self.comprehensiveness_aopc,
            "sufficiency_aopc": self.sufficiency_aopc,
            "per_k": {str(k): v for k, v in self.per_k.items()},
            "elapsed_s": self.elapsed_s,
            "target": self.target,
            "p_full": self.p_full,
        }


@dataclass(frozen=True)
class ExplanationResult:
    """One method's outcome for one text: its explanation and that explanation's faithfulness.

    Attributes:
        method: the method id (a key of :data:`model.explain.METHODS`).
        explanation: the token scores.
        faithfulness: their ERASER comprehensiveness / sufficiency.
    """

    method: str
    explanation: Explanation
    faithfulness: Faithfulness
