"""Attention Explorer's desktop GUI (PySide6 + pyqtgraph).

Start it with ``python -m desktop_app`` or the ``attention-explorer`` script;
the entry point is :func:`desktop_app.app.main`. Importing this package is
cheap: Qt, pyqtgraph and torch are imported only by the submodules that need
them.

Layout:
    app.py       command line, panel wiring, self-test
    state.py     :class:`~desktop_app.state.ExplorerState`: the one owner of what is shown (model, prediction,
                 results, selection, token colours)
    window/      :class:`~desktop_app.window.main_window.MainWindow` (docks, menus, settings, drops), the Model menu,
                 sessions, export, About
    words.py     whole-word matching (the batch table's word filter, the token view's highlighted words)
    panels/      the review editor, the Explanations panel, the Batch scoring panel, the Corpus dock
    workers/     background jobs: functions run by one worker class, :class:`~desktop_app.workers.jobs.Jobs`
    views/       the read-only views (the state's NumPy results in, pixels out)
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
