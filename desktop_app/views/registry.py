"""The registry of the explorer's docked views: one record per view, from which the main window builds
its docks, the View > Panels entries, the export menu and :meth:`MainWindow.view_widgets`.

Every view is built as ``factory(state)`` from the shared :class:`~desktop_app.state.ExplorerState`
and reads NumPy results only. A new view is one more :class:`ViewSpec` here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtWidgets import QWidget

from .compare_view import CompareView
from .heatmap import AttentionHeatmap
from .links_view import AttentionLinksView
from .model_view import ModelView
from .neuron_view import NeuronView
from .pe_view import PositionalEncodingView
from .steps_view import AttentionStepsView


@dataclass(frozen=True)
class ViewSpec:
    """One docked view.

    Attributes:
        title: the dock title, also the view's name in the export menu and :meth:`view_widgets`.
        attr: the main window's attribute for the view widget.
        dock_attr: the main window's attribute for its dock.
        factory: ``factory(state) -> QWidget``.
        scroll: dock the view in a scroll area: a view whose height is fixed by its content (the attention steps'
            table shows every row) must not set the minimum height of the whole right-hand dock area, which would
            keep the batch results at the bottom from getting their room.
    """

    title: str
    attr: str
    dock_attr: str
    factory: Callable[..., QWidget]
    scroll: bool = False


DOCKED_VIEWS: tuple[ViewSpec, ...] = (
    ViewSpec("Attention heatmap", "heatmap", "heatmap_dock", AttentionHeatmap),
    ViewSpec("Token links", "links_view", "links_dock", AttentionLinksView),
    ViewSpec("Model view", "model_view", "model_dock", ModelView),
    ViewSpec("Positional encoding", "pe_view", "pe_dock", PositionalEncodingView),
    ViewSpec("Neuron view", "neuron_view", "neuron_dock", NeuronView),
    ViewSpec("Attention steps", "steps_view", "steps_dock", AttentionStepsView, scroll=True),
    ViewSpec("Compare", "compare_view", "compare_dock", CompareView, scroll=True),
)
"""The right-hand views, tabbed in this order (the first is raised)."""

CENTRAL_VIEW_TITLE = "Token view"
WHOLE_WINDOW_TITLE = "Whole window"
