"""How the explorer state (:class:`desktop_app.state.ExplorerState`) announces its changes: the events that are no
field's change (:class:`StateEvents`), when a field counts as changed (:data:`EQUALITY`), and that a failing
subscriber leaves the others current (:class:`CarryOnSignalInstance`). psygnal and NumPy only.
"""

from __future__ import annotations

import sys

from psygnal import Signal, SignalGroup, SignalInstance

from .records import same_mask


class CarryOnSignalInstance(SignalInstance):
    """A psygnal signal instance whose emission calls every subscriber even when one raises (issue 56).

    psygnal stops its emission loop at the first subscriber that raises (and raises ``EmitLoopError`` into the code
    that changed the state), so the views connected after it kept showing the old model or text. Here each
    subscriber's exception goes to ``sys.excepthook`` (in the app :mod:`desktop_app.errors`: logged, one short
    message) and the next subscriber runs; the change itself is never undone. A ``RecursionError`` still ends the
    emission. Blocking, pausing and the order of the subscribers are psygnal's.
    """

    def _run_emit_loop_immediate(self) -> None:  # psygnal's per-emission loop (reemission "immediate", the default)
        args = self._emit_queue.popleft()
        for caller in list(self._slots):  # a copy: a subscriber may disconnect itself
            if not caller._is_alive():
                continue
            try:
                caller.cb(args)
            except RecursionError:
                raise
            except Exception:  # noqa: BLE001 - reported; the other subscribers must still see the change
                sys.excepthook(*sys.exc_info())


def _never_equal(_a, _b) -> bool:
    """Equality of a field that announces every assignment (a result set again may come with a new note or name)."""
    return False


class CarryOnGroup(SignalGroup):
    """A psygnal signal group whose every signal is a :class:`CarryOnSignalInstance`: the group of an evented
    dataclass (``SignalGroupDescriptor(signal_group_class=...)``) whose subscriber that raises is reported and the
    others still run."""

    def __init_subclass__(cls, **kwargs) -> None:
        """psygnal builds an evented dataclass's group as a subclass of this one, adding a signal per field: those
        signals emit through :class:`CarryOnSignalInstance` too."""
        super().__init_subclass__(**kwargs)
        for signal in cls._psygnal_signals.values():
            signal._signal_instance_class = CarryOnSignalInstance


class StateEvents(CarryOnGroup):
    """The state's events: one per field (added by psygnal, named as the field, emitting (new, old)), and these two,
    which are no field's change:

    Signals:
        explanation_added(object): an :class:`model.records.explanation.ExplanationResult` for the current text.
        explanations_cleared(): the explanations no longer fit (new text or model).

    Every one is a :class:`CarryOnSignalInstance`: a subscriber that raises is reported and the others still run.
    """

    explanation_added = Signal(object, signal_instance_class=CarryOnSignalInstance)
    explanations_cleared = Signal(signal_instance_class=CarryOnSignalInstance)


# How a field decides that an assignment changed it (announced only then): the user's choices (the layer and head,
# the selection, the highlighted words, the "Show" choice, the causal what-if) by value, the head mask by
# :func:`same_mask`; the model, the prediction and every result announce each setting (a result set again is news).
RESULTS = ("info", "prediction", "internals", "embedding_norms", "importance", "flow", "value_norms",
           "head_importance", "layer_probabilities", "pins")
EQUALITY = {**{name: _never_equal for name in RESULTS}, "head_mask": same_mask}
