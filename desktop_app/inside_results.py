"""What the Inside and Learn workspaces' views of the block show (issue 53): the explorer state's ``state.inside``.

:class:`InsideResults` is the one owner of the current text's component attribution (the Components view), its
contribution graph (the Contribution graph view), the activation patching between the pinned text and the current
one (the Patching view) and the trace of one token through one encoder layer (the Block view). Like
:class:`desktop_app.state.ExplorerState` it is an evented dataclass (:mod:`psygnal`): each field announces its change
on ``inside.events.<field>`` with (new, old), every setting (a result computed again is news). Each result comes
with a note (``<field>_note``: "Computing…", or why it cannot be computed; "" with a result), announced with it.

The controllers that compute them (on workers, only while their view is shown) set them through :meth:`set`; the
views read them and listen. A new prediction (another text, model or head mask) drops the results of the text it
replaces: :meth:`InsideResults.follow` keeps the results whose tokens are still the prediction's. NumPy records only;
no torch, no Qt.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from psygnal import SignalGroupDescriptor

from .state_events import CarryOnGroup

RESULT_FIELDS = ("components", "graph", "patching", "block_trace")
"""The results :class:`InsideResults` holds, each with its ``<name>_note``."""


def _never_equal(_a, _b) -> bool:
    """Every setting is announced: a result computed again may come with another note."""
    return False


@dataclass(eq=False)
class InsideResults:
    """The current text's results of the block's views (module docstring).

    Fields (each announced on ``events.<name>`` with (new, old); the notes are announced with their result):
        components: the :class:`model.records.components.ComponentAttribution` of the current text, or None.
        graph: the :class:`model.records.graph.ContributionGraph` of the current text, or None.
        patching: the :class:`model.records.patching.PatchingResult` between the pinned (clean) text and the current
            (corrupted) one, or None.
        block_trace: the trace of one token through one encoder layer (the Block view's record), or None.
        components_note, graph_note, patching_note, block_trace_note: why its result is None ("" when there is one).
    """

    events: ClassVar[SignalGroupDescriptor] = SignalGroupDescriptor(
        signal_group_class=CarryOnGroup, equality_operators={name: _never_equal for name in RESULT_FIELDS},
        signal_aliases={f"{name}_note": None for name in RESULT_FIELDS})

    components: object | None = None
    graph: object | None = None
    patching: object | None = None
    block_trace: object | None = None
    components_note: str = ""
    graph_note: str = ""
    patching_note: str = ""
    block_trace_note: str = ""

    def set(self, name: str, result, note: str = "") -> None:
        """Adopt ``result`` (or None with ``note``: "Computing…" or why there is none) for the view ``name``, one of
        :data:`RESULT_FIELDS`, and announce it on ``events.<name>``.

        Raises:
            ValueError: ``name`` is not one of :data:`RESULT_FIELDS`.
        """
        if name not in RESULT_FIELDS:
            raise ValueError(f"unknown Inside result {name!r}: one of {', '.join(RESULT_FIELDS)}")
        setattr(self, f"{name}_note", "" if result is not None else str(note))
        setattr(self, name, result)

    def note(self, name: str) -> str:
        """The note of the result ``name`` ("" when it has a result)."""
        return getattr(self, f"{name}_note")

    def follow(self, tokens) -> None:
        """The prediction shown changed to one of ``tokens`` (a sequence of str; None: no prediction): each result
        whose ``tokens`` differ is dropped (set to None with no note) and announced. A result without ``tokens`` is
        dropped too."""
        tokens = None if tokens is None else tuple(tokens)
        for name in RESULT_FIELDS:
            result = getattr(self, name)
            if result is not None and (tokens is None or tuple(getattr(result, "tokens", ()) or ()) != tokens):
                self.set(name, None)
