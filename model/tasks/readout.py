"""What a classification head's logits mean, on torch tensors: the task's read-out (:mod:`model.tasks.types` is the
NumPy side, which the GUI imports, and owns both: :meth:`~model.tasks.types.TaskType.torch_scores`).

* :func:`probabilities`: softmax (single-label), sigmoid per label (multi-label), none (regression), as
  ``transformers``' text-classification pipeline applies its ``function_to_apply``;
* :func:`outputs`: what the prediction by layer and the faithfulness metrics measure: those probabilities, or the
  raw output for regression.

The scalar an explanation explains is :func:`model.explain.gradients.target_score`.
"""

from __future__ import annotations

import torch

from model.tasks.types import TaskType, task_type


def probabilities(logits: torch.Tensor, kind: str | TaskType) -> torch.Tensor:
    """(B, C) logits -> (B, C) softmax or sigmoid probabilities; (B, 0) for regression. Raises ValueError for an
    unknown task id."""
    return task_type(kind).torch_scores(logits)


def outputs(logits: torch.Tensor, kind: str | TaskType) -> torch.Tensor:
    """(B, C) logits -> (B, C) what the task reads: :func:`probabilities`, or the logits themselves (the predicted
    value) for regression. Raises ValueError for an unknown task id."""
    return task_type(kind).torch_outputs(logits)
