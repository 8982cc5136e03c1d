"""How the explorer state (:class:`desktop_app.state.ExplorerState`) announces its changes: the events that are no
field's change (:class:`StateEvents`) and when a field counts as changed (:data:`EQUALITY`). psygnal and NumPy only.
"""

from __future__ import annotations

from psygnal import Signal, SignalGroup

from .records import same_mask


def _never_equal(_a, _b) -> bool:
    """Equality of a field that announces every assignment (a result set again may come with a new note or name)."""
    return False


class StateEvents(SignalGroup):
    """The state's events: one per field (added by psygnal, named as the field, emitting (new, old)), and these two,
    which are no field's change:

    Signals:
        explanation_added(object): an :class:`model.records.explanation.ExplanationResult` for the current text.
        explanations_cleared(): the explanations no longer fit (new text or model).
    """

    explanation_added = Signal(object)
    explanations_cleared = Signal()


# How a field decides that an assignment changed it (announced only then): the user's choices (the layer and head,
# the selection, the highlighted words, the "Show" choice, the causal what-if) by value, the head mask by
# :func:`same_mask`; the model, the prediction and every result announce each setting (a result set again is news).
RESULTS = ("info", "prediction", "internals", "embedding_norms", "importance", "flow", "value_norms",
           "head_importance", "layer_probabilities", "pins")
EQUALITY = {**{name: _never_equal for name in RESULTS}, "head_mask": same_mask}
