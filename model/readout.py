"""What a classification head's logits mean, on torch tensors: the task's read-out (:mod:`model.task` is the NumPy
side, which the GUI imports) and the scalar an explanation explains.

* :func:`probabilities`: softmax (single-label), sigmoid per label (multi-label), none (regression), as
  ``transformers``' text-classification pipeline applies its ``function_to_apply``;
* :func:`outputs`: what the prediction by layer and the faithfulness metrics measure: those probabilities, or the
  raw output for regression;
* :func:`target_score`: the scalar the gradient methods differentiate: the target class's log-odds (single-label:
  ``logit_c - logsumexp(other logits)``, for two classes the logit difference); multi-label: the label's logit,
  which is the log-odds of its sigmoid; regression: the output value.
"""

from __future__ import annotations

import torch

from .task import MULTI_LABEL, REGRESSION, SINGLE_LABEL


def probabilities(logits: torch.Tensor, kind: str) -> torch.Tensor:
    """(B, C) logits -> (B, C) softmax or sigmoid probabilities; (B, 0) for regression."""
    if kind == REGRESSION:
        return logits[..., :0]
    return logits.sigmoid() if kind == MULTI_LABEL else logits.softmax(-1)


def outputs(logits: torch.Tensor, kind: str) -> torch.Tensor:
    """(B, C) logits -> (B, C) what the task reads: :func:`probabilities`, or the logits themselves (the predicted
    value) for regression."""
    return logits if kind == REGRESSION else probabilities(logits, kind)


def target_score(logits: torch.Tensor, target: int, kind: str = SINGLE_LABEL) -> torch.Tensor:
    """(B, C) logits -> (B,) the explained scalar of class ``target`` (see the module docstring).

    Raises:
        IndexError: ``target`` out of range.
    """
    if kind != SINGLE_LABEL or logits.shape[1] == 1:
        return logits[:, target]
    others = torch.cat([logits[:, :target], logits[:, target + 1 :]], dim=1)  # (B, C-1)
    return logits[:, target] - torch.logsumexp(others, dim=1)
