"""The encoder block's docks (issue 53), attached to the main window in one place, and their settings in a session.

:func:`attach_inside` builds each dock's controller, keyed as its result in the explorer state
(:data:`desktop_app.inside_results.RESULT_FIELDS`: "components", "graph", "patching", "block_trace"), and keeps them
as ``window.inside_panels``. Each controller gives its settings as a JSON-able dict (``settings()``) and adopts one
(``apply_settings(d)``, raising ValueError naming a bad key); :func:`inside_settings` and
:func:`apply_inside_settings` are what a session saves and restores of them (:mod:`desktop_app.window.session`).
"""

from __future__ import annotations

from PySide6.QtCore import Qt

from .block import BlockPanel
from .block import TITLE as BLOCK_TITLE
from .components import TITLE as COMPONENTS_TITLE
from .components import ComponentsPanel
from .contribution_graph import TITLE as GRAPH_TITLE
from .contribution_graph import ContributionGraphPanel
from .patching import TITLE as PATCHING_TITLE
from .patching import PatchingPanel

TITLES = {"components": COMPONENTS_TITLE, "graph": GRAPH_TITLE, "patching": PATCHING_TITLE, "block_trace": BLOCK_TITLE}
"""Each dock's title (its tab, View > Panels, the workspaces' table), by its key."""


def attach_inside(window, whatif_source=None) -> dict:
    """Build the encoder block's docks on ``window`` (a :class:`~desktop_app.window.main_window.MainWindow`); the
    workspaces' table (:mod:`desktop_app.window.workspaces`) says where each shows. ``whatif_source``: a callable
    giving the What if panel's source text and pair (the Patching dock offers to pin it). Returns and keeps
    ``window.inside_panels``: key -> the dock's controller."""
    components = ComponentsPanel(window)
    components.dock = window.docks.add_panel(components, COMPONENTS_TITLE, Qt.RightDockWidgetArea)
    window.inside_panels = {
        "components": components,  # the verdict's parts: heads, FFNs, embeddings
        "graph": ContributionGraphPanel(window),  # the routes the read-out is built from
        "patching": PatchingPanel(window, whatif_source),  # the pinned text patched into the one on display
        "block_trace": BlockPanel(window),  # one token through one layer, in Learn
    }
    return window.inside_panels


def inside_settings(window) -> dict:
    """Each block dock's settings (key -> its ``settings()`` dict), for a session; {} without the docks."""
    return {key: panel.settings() for key, panel in getattr(window, "inside_panels", {}).items()}


def apply_inside_settings(window, settings: dict) -> list[str]:
    """Adopt a session's block-dock settings (key -> dict, as :func:`inside_settings` gives them); a dock that refuses
    its settings keeps its own and is named in the returned notes (one line each)."""
    notes = []
    for key, values in settings.items():
        panel = getattr(window, "inside_panels", {}).get(key)
        if panel is None:
            continue
        try:
            panel.apply_settings(values)
        except ValueError as exc:
            notes.append(f"The {TITLES[key]} view's settings were left out: {exc}.")
    return notes
