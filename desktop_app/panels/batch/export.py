"""The batch panel's Export menu: formats, the spreadsheet-safe CSV, and the save dialog.

Spreadsheet programs (Excel, LibreOffice Calc) cut a cell at
:data:`model.batch.export.SPREADSHEET_CELL_LIMIT` characters without a word, so a CSV of whole
reviews can lose text when opened there: the menu offers a CSV of review excerpts
(:func:`model.batch.export.excerpt_rows`) and the whole-review CSV's dialog says so.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QMenu, QWidget

from model.batch import FORMATS
from model.batch.export import DEFAULT_EXCERPT_CHARS, SPREADSHEET_CELL_LIMIT

FORMAT_FILTERS = {"csv": "CSV (*.csv)", "jsonl": "JSON Lines (*.jsonl)", "parquet": "Parquet (*.parquet)"}
FORMAT_NAMES = {"csv": "CSV…", "jsonl": "JSON Lines…", "parquet": "Parquet…"}


def export_hint(fmt: str, excerpt_chars: int | None = None) -> str:
    """The save dialog's title for ``fmt``: says when spreadsheets would cut whole reviews (CSV)."""
    if fmt != "csv":
        return "Export results"
    if excerpt_chars:
        return f"Export results as CSV with the first {excerpt_chars:,} characters of each review"
    return (f"Export results as CSV with whole reviews (spreadsheets cut cells at {SPREADSHEET_CELL_LIMIT:,} "
            "characters: use the excerpts-only CSV for them)")


def export_menu(parent: QWidget, choose: Callable[[str, int | None], None]) -> QMenu:
    """The Export menu: one entry per format plus the excerpts-only CSV; ``choose(fmt, excerpt_chars)`` runs one."""
    menu = QMenu(parent)
    for fmt in FORMATS:
        act = QAction(FORMAT_NAMES[fmt], menu)
        act.triggered.connect(lambda _checked=False, f=fmt: choose(f, None))
        menu.addAction(act)
        if fmt == "csv":
            act.setToolTip(export_hint("csv"))
            short = QAction(f"CSV, review excerpts only ({DEFAULT_EXCERPT_CHARS:,} characters; for spreadsheets)…", menu)
            short.triggered.connect(lambda _checked=False: choose("csv", DEFAULT_EXCERPT_CHARS))
            menu.addAction(short)
    menu.setToolTipsVisible(True)
    return menu


def ask_export_path(parent: QWidget, fmt: str, excerpt_chars: int | None = None) -> str:
    """Ask where to export (the dialog title from :func:`export_hint`); returns a path ending in ``.fmt``, or ""."""
    path, _ = QFileDialog.getSaveFileName(parent, export_hint(fmt, excerpt_chars), f"results.{fmt}", FORMAT_FILTERS[fmt])
    if path and not path.lower().endswith(f".{fmt}"):
        path += f".{fmt}"
    return path
