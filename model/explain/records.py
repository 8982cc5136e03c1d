"""The result records of :mod:`model.explain`: immutable NumPy-only values that may cross threads.

:class:`Explanation` holds one method's token scores (float32 [T], aligned with the
prediction's tokens); :class:`ExplanationCancelled` is raised when a caller's
``should_stop()`` returns True mid-computation. Neither imports torch, so views may
hold them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


class ExplanationCancelled(Exception):
    """Raised by :func:`explain` when ``should_stop()`` returned True mid-computation."""


@dataclass(frozen=True)
class Explanation:
    """One token-importance explanation; immutable, NumPy only (``scores`` is read-only).

    Attributes:
        method: one of :data:`EXPLANATION_METHODS`.
        scores: float32 [T], one score per token (``[CLS]`` first), aligned with
            ``tokens``. Higher means more important for ``target``; for signed
            methods negative scores are evidence against it.
        signed: whether ``scores`` are signed (:data:`SIGNED_METHODS`).
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
