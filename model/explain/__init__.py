"""Token-importance explanations of one prediction and their faithfulness.

Modules:

* :mod:`.methods`: the registry of methods (:data:`METHODS`, one :class:`Method` record each) and
  the entry point :func:`explain`;
* :mod:`.rollout`: pure-NumPy attention rollout and the random baseline;
* :mod:`.gradients`: gradient x input, gradient-weighted rollout, integrated gradients (torch, captum);
* :mod:`.erasure`: ERASER comprehensiveness / sufficiency of one explanation (faithfulness by erasure);
* :mod:`model.records.explanation`: the immutable result record :class:`~model.records.explanation.Explanation`;
* attention flow (``Predictor.attention_flow``, the registry's ``value_norm``, ``alti`` and ``decompx``):
  :mod:`.taps` (the modules read, one recorded forward pass), :mod:`.value_flow` (value-weighted norms, ALTI, the
  logit lens), :mod:`.decompx` (DecompX), :mod:`.heads` (head masks).

The dataset-level faithfulness table is the CLI :mod:`model.evaluation.faithfulness`. This package imports
:mod:`model.core` only, never :mod:`model.predictor.predictor`.
"""

from .gradients import (
    DEFAULT_IG_STEPS,
    IG_TOKEN_BUDGET,
    class_log_odds,
    forward_with_attention,
    gradient_weighted_rollout,
    gradient_x_input,
    ig_baseline_ids,
    ig_internal_batch_size,
    integrated_gradients,
    target_score,
)
from .methods import (
    CHEAP_METHODS,
    EXPLANATION_METHODS,
    METHOD_TITLES,
    METHODS,
    SIGNED_METHODS,
    ExplainablePredictor,
    Method,
    explain,
)
from model.records.explanation import Explanation, ExplanationCancelled, ExplanationResult, Faithfulness
from .rollout import attention_rollout, random_importance, readout_row, rollout_importance

__all__ = [
    "CHEAP_METHODS", "DEFAULT_IG_STEPS", "EXPLANATION_METHODS", "IG_TOKEN_BUDGET", "METHODS", "METHOD_TITLES",
    "SIGNED_METHODS", "ExplainablePredictor", "Explanation", "ExplanationCancelled", "ExplanationResult", "Faithfulness",
    "Method", "attention_rollout",
    "class_log_odds", "explain", "forward_with_attention", "gradient_weighted_rollout", "gradient_x_input",
    "ig_baseline_ids", "ig_internal_batch_size", "integrated_gradients", "random_importance", "readout_row",
    "rollout_importance", "target_score",
]
