"""What a classification head's logits mean, on torch tensors: the task's read-out (:mod:`model.tasks.task` is the NumPy
side, which the GUI imports).

* :func:`probabilities`: softmax (single-label), sigmoid per label (multi-label), none (regression), as
  ``transformers``' text-classification pipeline applies its ``function_to_apply``;
* :func:`outputs`: what the prediction by layer and the faithfulness metrics measure: those probabilities, or the
  raw output for regression.

The scalar an explanation explains is :func:`model.explain.gradients.target_score`.
"""

from __future__ import annotations

import torch

from model.tasks.task import MULTI_LABEL, REGRESSION


def probabilities(logits: torch.Tensor, kind: str) -> torch.Tensor:
    """(B, C) logits -> (B, C) softmax or sigmoid probabilities; (B, 0) for regression."""
    if kind == REGRESSION:
        return logits[..., :0]
    return logits.sigmoid() if kind == MULTI_LABEL else logits.softmax(-1)


def outputs(logits: torch.Tensor, kind: str) -> torch.Tensor:
    """(B, C) logits -> (B, C) what the task reads: :func:`probabilities`, or the logits themselves (the predicted
    value) for regression."""
    return logits if kind == REGRESSION else probabilities(logits, kind)
