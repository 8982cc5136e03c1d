"""The results working area: the "Batch scoring" and "Corpus" docks side by side at the bottom of the main window.

:func:`attach_results` adds and wires them (called by :func:`desktop_app.app.attach_panels`):

* files dropped on the window (or opened with File > Open files / folder) are scored in the batch panel: the window
  switches to the Corpus workspace (:mod:`desktop_app.window.workspaces`), and the panel is shown (even if the user
  closed it) when a job starts;
* a double-clicked row, or F8 / Shift+F8 (Analysis > Next error / Previous error), opens a review in the explorer;
* the corpus dock follows the batch table (its rows and filters); its plots are exportable views
  (:meth:`~desktop_app.window.file_actions.FileActions.register_view`);
* the word the table is filtered by (clicked in the corpus dock) is the explorer state's highlighted word
  (:meth:`desktop_app.state.ExplorerState.set_highlighted_words`), so the token view underlines it.

Room for results: when the first job starts, the bottom area grows to about half of the window and at least
enough for the table to show :data:`RESULT_ROWS` rows (in a 1400 x 860 window). This happens once: the main window
remembers it (``window/results_area`` in QSettings, with the dock layout), so from then on the user's own layout,
restored by ``restoreState``, is left alone.
"""

from __future__ import annotations

from PySide6.QtCore import Qt

RESULT_ROWS = 12  # the table shows at least this many rows once the working area is given
TABLE_SHARE = 0.55  # of the bottom area's width, for the table (the corpus dock gets the rest)
DEFAULT_HEIGHT = 220  # pixels of the bottom area in the default layout, before any job


def rows_height(dock, view, rows: int = RESULT_ROWS) -> int:
    """The dock height at which ``view`` (the results table inside ``dock``) shows ``rows`` whole rows."""
    row_h = view.verticalHeader().defaultSectionSize()
    chrome = dock.height() - view.viewport().height()
    return chrome + rows * row_h + row_h // 2


def give_results_room(window, dock, view) -> bool:
    """Give the results the working area once (module docstring); returns True when it resized the docks.

    Nothing happens when the window already gave it (this run, or a saved layout that has it), or when the dock is
    floating or not in the bottom area (the user moved it).
    """
    if window.window_layout.results_area_known or window.window_layout.results_area_given:
        return False
    if dock.isFloating() or window.dockWidgetArea(dock) != Qt.BottomDockWidgetArea:
        return False
    window.window_layout.results_area_given = True
    central = window.centralWidget()
    half = (central.height() + dock.height()) // 2 if central is not None else window.height() // 2
    want = max(rows_height(dock, view), half)
    if dock.height() < want:
        window.resizeDocks([dock], [want], Qt.Vertical)
    return True


def _actions(window, batch) -> None:
    """Analysis > Errors first, Next error (F8), Previous error (Shift+F8): window-wide shortcuts."""
    menus, nav = window.menus, batch.navigation
    menu = menus.analysis_menu
    menu.addSeparator()
    menus.add_action(menu, "Batch: &errors first", nav.show_errors_first)
    window.next_error_action = menus.add_action(menu, "Batch: &next error", lambda: nav.next_error(1), "F8")
    menus.add_action(menu, "Batch: &previous error", lambda: nav.next_error(-1), "Shift+F8")


def attach_results(window):
    """Add the batch and corpus docks to ``window`` and wire them (module docstring).

    Returns:
        ``(BatchPanel, CorpusPanel)``.
    """
    from desktop_app.panels.batch.panel import BatchPanel
    from desktop_app.panels.corpus.panel import CorpusPanel

    batch = BatchPanel()
    dock = window.docks.add_panel(batch, "Batch scoring", Qt.BottomDockWidgetArea)
    corpus = CorpusPanel(batch)
    corpus_dock = window.docks.add_panel(corpus, "Corpus", Qt.BottomDockWidgetArea, beside=dock)
    if not window.has_saved_layout:
        window.resizeDocks([dock], [DEFAULT_HEIGHT], Qt.Vertical)
        width = max(window.width(), 800)
        window.resizeDocks([dock, corpus_dock], [int(TABLE_SHARE * width), int((1 - TABLE_SHARE) * width)],
                           Qt.Horizontal)

    def on_started(_job: int) -> None:
        window.docks.raise_view("Batch scoring")  # in the Corpus workspace
        give_results_room(window, dock, batch.ui.view)

    batch.scoring_started.connect(on_started)
    window.paths_dropped.connect(lambda _paths: window.docks.raise_view("Batch scoring"))  # a drop switches to Corpus
    window.paths_dropped.connect(batch.add_paths)
    batch.review_activated.connect(window.open_review)
    batch.proxy.filter_changed.connect(lambda f: window.state.set_highlighted_words([f.word] if f.word else []))
    for panel in (batch, corpus):
        window.predictor_loaded.connect(panel.set_predictor)
        if window.predictor is not None:
            panel.set_predictor(window.predictor)
    window.model_switch_started.connect(lambda _folder: (batch.cancel_if_running(), corpus.words.cancel()))
    window.state.events.info.connect(corpus.whatif.follow_task)  # Model > Task: the regression threshold, ...
    for name, plot in corpus.plots().items():
        window.file_actions.register_view(name, plot)
    corpus.export_requested.connect(window.file_actions.export_view_dialog)
    corpus.report.message.connect(lambda text: window.statusBar().showMessage(text, 10000))
    corpus.report.failed.connect(window.show_error)
    window.corpus_map = corpus.map  # sessions keep the map's settings and slices (issue 42)
    window.state.events.prediction.connect(lambda pred: corpus.map.set_explored(
        None if pred is None else window.editor.toPlainText(), window.review_box.text_pair()))
    _actions(window, batch)
    window.model_menu.second.attach_batch(batch)  # model B scores every row too (issue 44)
    return batch, corpus
