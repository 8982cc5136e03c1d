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


def corpus_panels(qtbot, size=(700, 500)):
    """A batch panel and its corpus dock (throttled 50 ms), shown: yields ``(batch, corpus)``, then shuts both down.
    Use as ``yield from corpus_panels(qtbot)`` in a fixture."""
    from desktop_app.panels.batch.panel import BatchPanel
    from desktop_app.panels.corpus.panel import CorpusPanel

    batch = BatchPanel()
    qtbot.addWidget(batch)
    corpus = CorpusPanel(batch, throttle_ms=50)
    qtbot.addWidget(corpus)
    corpus.resize(*size)
    corpus.show()
    yield batch, corpus
    corpus.shutdown()
    batch.shutdown()


def wait_metrics(qtbot, corpus, n_rows: int, timeout_ms: int = LOAD_TIMEOUT_MS):
    """Wait until the corpus dock shows the metrics of ``n_rows`` rows; returns them."""
    def shown() -> bool:
        m = corpus.metrics
        return m is not None and m.n_rows == n_rows and not corpus.timer.isActive() and not corpus._in_flight

    qtbot.waitUntil(shown, timeout=timeout_ms)
    return corpus.metrics


def wait_slices(qtbot, corpus, timeout_ms: int = LOAD_TIMEOUT_MS) -> list:
    """Raise the Corpus dock's Map tab and wait until its slices table shows the numbers of its current rows and
    slices (computed on their worker); returns its rows ``(name, texts, numbers)``."""
    corpus.tabs.setCurrentIndex(corpus.tabs.indexOf(corpus.map.parentWidget().parentWidget()))
    box = corpus.map.slices
    qtbot.waitUntil(lambda: not box.updating, timeout=timeout_ms)
    return box.metrics_rows()


def dock_tab_bars(win) -> list:
    """The tab bars QMainWindow made for its tabbed docks (visible ones)."""
    from PySide6.QtWidgets import QTabBar

    return [b for b in win.findChildren(QTabBar) if b.isVisible() and b.count() > 1]


def cut_tabs(bar) -> list[str]:
    """The tab texts that do not fit their tab (Qt elides them with "…"), and those scrolled out of the bar."""
    from PySide6.QtWidgets import QStyle

    margin = bar.style().pixelMetric(QStyle.PixelMetric.PM_TabBarTabHSpace, None, bar)
    fm = bar.fontMetrics()
    cut = []
    for i in range(bar.count()):
        rect, text = bar.tabRect(i), bar.tabText(i)
        if rect.width() < fm.horizontalAdvance(text) + margin or rect.right() > bar.width():
            cut.append(text)
    return cut
