"""Helpers shared by the GUI tests of issue 11 (imported as ``gui_helpers``; pytest puts tests/ on sys.path)."""

from __future__ import annotations

LOAD_TIMEOUT_MS = 60_000


def loaded_window(qtbot, model_dir, size=(1400, 860), panels=False):
    """A shown MainWindow over ``model_dir`` with its model loaded; settings never saved; message boxes
    recorded in ``win.errors`` instead of shown. ``panels``: attach the batch and explanation panels
    (``win.panels``)."""
    from desktop_app.window.main_window import MainWindow

    win = MainWindow(model_dir, device="cpu")
    qtbot.addWidget(win)
    win.persist_settings = False
    win.errors = []
    win.show_error = win.errors.append
    if panels:
        from desktop_app.app import attach_panels

        win.panels = attach_panels(win)
    win.resize(*size)
    win.show()
    if win.predictor is None:
        with qtbot.waitSignal(win.predictor_loaded, timeout=LOAD_TIMEOUT_MS):
            pass
    return win


def state_and_view(qtbot, view_class, size=(900, 900)):
    """A fresh ExplorerState and a shown ``view_class(state)`` of ``size``, outside any window."""
    from desktop_app.state import ExplorerState

    state = ExplorerState()
    view = view_class(state)
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    return state, view
