"""The registry of the explorer's docked views: one record per view, from which the main window builds
its docks, the View > Panels entries, the export menu and
:meth:`desktop_app.window.file_actions.FileActions.view_widgets`.

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
        title: the view's name: in the View menu, the export menu,
            :meth:`~desktop_app.window.file_actions.FileActions.view_widgets`, sessions, and the dock's ``objectName``
            (saved layouts find the dock by it).
        tab: the short name on its tab and dock title bar, so that all the right-hand tabs show their whole name in
            the default 1400 x 860 window (Qt elides the tab texts that do not fit).
        attr: the main window's attribute for the view widget.
        dock_attr: the main window's attribute for its dock.
        factory: ``factory(state) -> QWidget``.
        scroll: dock the view in a scroll area: a view whose height is fixed by its content (the attention steps'
            table shows every row) must not set the minimum height of the whole right-hand dock area, which would
            keep the batch results at the bottom from getting their room.
    """

    title: str
    tab: str
    attr: str
    dock_attr: str
    factory: Callable[..., QWidget]
    scroll: bool = False


DOCKED_VIEWS: tuple[ViewSpec, ...] = (
    ViewSpec("Attention heatmap", "Heatmap", "heatmap", "heatmap_dock", AttentionHeatmap),
    ViewSpec("Token links", "Links", "links_view", "links_dock", AttentionLinksView),
    ViewSpec("Model view", "Model", "model_view", "model_dock", ModelView),
    ViewSpec("Positional encoding", "Positions", "pe_view", "pe_dock", PositionalEncodingView, scroll=True),
    ViewSpec("Neuron view", "Neurons", "neuron_view", "neuron_dock", NeuronView),
    ViewSpec("Attention steps", "Steps", "steps_view", "steps_dock", AttentionStepsView, scroll=True),
    ViewSpec("Compare", "Compare", "compare_view", "compare_dock", CompareView, scroll=True),
)
"""The right-hand views, tabbed in this order (the first is raised)."""

CENTRAL_VIEW_TITLE = "Token view"
WHOLE_WINDOW_TITLE = "Whole window"
