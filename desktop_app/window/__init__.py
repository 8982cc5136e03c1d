"""The main window and what hangs off it.

``main_window.py``  :class:`~.main_window.MainWindow`: assembles the views and docks, the public API
                    (open a review, switch models, add panels), the worker results, the one shutdown path
``menus.py``        the menu bar and the layer/head toolbar
``layout.py``       layout persistence (QSettings) and window-wide drops
``workspaces.py``   the workspaces (Read, Learn, Inside, Compare, Corpus): which docks show, each one's layout
``results_area.py`` the Batch scoring and Corpus docks at the bottom: wiring, F8, the working area given once
``file_actions.py`` File menu: open files/folders, load a review, save the analysis, export views
``model_menu.py``   File > Open model folder and the Model menu (recent folders)
``session.py``      File > Save/Open session (versioned JSON)
``view_export.py``  a view as PNG or SVG
``about.py``        the About dialog
``settings.py``     the app's QSettings
"""
