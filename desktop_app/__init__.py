"""Attention Explorer's desktop GUI (PySide6 + pyqtgraph).

Start it with ``python -m desktop_app`` or the ``attention-explorer`` script;
the entry point is :func:`desktop_app.app.main`. Importing this package is
cheap: Qt, pyqtgraph and torch are imported only by the submodules that need
them.

Layout:
    app.py          command line, panel wiring, self-test
    main_window.py  :class:`MainWindow` (menus, docks, settings, drops)
    worker.py       model loading and inference on a background QThread
    views/          the read-only views (NumPy results in, pixels out)
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
