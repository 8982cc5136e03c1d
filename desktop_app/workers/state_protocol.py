"""What the controllers of :mod:`desktop_app.workers` read of the explorer state and set on it, as typed protocols.

The workers never import :mod:`desktop_app.state` (an import-linter contract); the controllers that keep a part of
the state current depend on these protocols instead, which :class:`desktop_app.state.ExplorerState` satisfies
(``tests/desktop_app/workers/test_jobs.py`` checks it): :class:`InternalsState` (the neuron and steps views'
internals), :class:`FlowState` (the attention flow) and :class:`CompareState` (read only). Each lists exactly the
fields read, the events followed (psygnal signal instances, emitting (new, old)) and the methods called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:  # pragma: no cover - annotations only
    import numpy as np
    from psygnal import SignalInstance

    from model.records.flow import AttentionFlow
    from model.records.internals import AttentionInternals, EmbeddingNorms
    from model.records.prediction import Prediction


class TextEvents(Protocol):
    """The state's events the controllers follow (``state.events``): each a psygnal ``SignalInstance``."""

    @property
    def prediction(self) -> SignalInstance:
        """A new prediction (or None)."""

    @property
    def head_mask(self) -> SignalInstance:
        """Another head mask."""

    @property
    def layer_head(self) -> SignalInstance:
        """Another (layer, head choice)."""

    @property
    def show(self) -> SignalInstance:
        """Another "Show" choice."""

    @property
    def pins(self) -> SignalInstance:
        """Other pins."""


@runtime_checkable
class InternalsState(Protocol):
    """What :class:`desktop_app.workers.internals.InternalsController` reads and sets."""

    events: TextEvents
    prediction: Prediction | None
    head_mask: np.ndarray | None  # float32 (L, H), 0 = head off; None = every head on
    value_norms: np.ndarray | None  # float32 (L, H, T)
    embedding_norms: EmbeddingNorms | None

    @property
    def layer(self) -> int:
        """The selected layer (0-based)."""

    def set_internals(self, internals: AttentionInternals | None) -> None:
        """Adopt one layer's internals of the current text."""

    def set_embedding_norms(self, norms: EmbeddingNorms | None) -> None:
        """Adopt the current text's embedding norms."""

    def set_value_norms(self, norms: np.ndarray | None) -> None:
        """Adopt float32 (L, H, T) value-vector norms of the current text."""


@runtime_checkable
class FlowState(Protocol):
    """What :class:`desktop_app.workers.attention_flow.FlowController` reads and sets."""

    events: TextEvents
    prediction: Prediction | None
    show: str
    head_mask: np.ndarray | None
    flow: AttentionFlow | None

    def flow_fits(self, flow: AttentionFlow | None) -> bool:
        """True when ``flow`` is of the current text, "Show" choice and head mask."""

    def set_flow(self, flow: AttentionFlow | None, note: str = "") -> None:
        """Adopt the current text's flow, or None with a note saying why there is none."""


@runtime_checkable
class CompareState(Protocol):
    """What :class:`desktop_app.workers.compare.CompareController` reads (it sets nothing); ``task`` is the state's
    :class:`desktop_app.task_choice.TaskChoice` (its ``target`` and ``target_changed``)."""

    events: TextEvents
    prediction: Prediction | None
    head_mask: np.ndarray | None
    pins: tuple
    task: object
