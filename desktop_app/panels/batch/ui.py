"""The batch panel's widgets: :class:`BatchWidgets` (``BatchPanel.ui``) makes them and lays them out in the panel
(:class:`desktop_app.panels.batch.panel.BatchPanel`, which connects their signals).

Five rows, each one line high whatever it says, so the panel's minimum height never changes while a job runs
(a word-wrapped message label that went from empty to one line grew the dock, and the window, by 6 px):

* the actions and filters: Add files, Add folder, the category, Errors first, the corpus dock's word / cell
  filter (a button that clears it; hidden when there is none; its text elided, so it never widens the dock), the
  search box (room kept for the start of its hint), Export, Clear;
* the results table, which takes the remaining height;
* the progress bar (its text on one line), Cancel and Columns (a popup: the text, second-text and gold-label
  columns, each box wide enough for its "auto (...)" hint, and the largest one-review file);
* the summary of the shown rows (it names the model that scored them) and Re-score (shown when that is not the
  model in use);
* the last message. The summary and the message each have a row's whole width: one-line labels that end a cut
  text at a whole word and show the whole text as their tooltip (issue 46: they were cut at 1400 x 860).
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QMenu,
    QProgressBar,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
    QWidgetAction,
)

from model.batch import DEFAULT_MAX_FILE_BYTES, SUPPORTED_EXTENSIONS
from model.files.compression import COMPRESSIONS

from desktop_app.views.widgets import ElidedLabel, ElidedToolButton, fitting_width
from desktop_app.panels.batch.export import export_menu
from desktop_app.panels.batch.proxy import results_view
from desktop_app.panels.batch.row_filter import FILTERS

DROP_HINT = (f"Drop files or folders of reviews here ({', '.join(SUPPORTED_EXTENSIONS)}; "
             f"also compressed: {', '.join(COMPRESSIONS)}).")
PROGRESS_TEXT_SAMPLE = "Cancelled: 100,000 reviews in 10:00:00"
"""The longest progress text the bar is sized for (a finished job's)."""
SEARCH_WIDTH_SAMPLE = "Filter by file"
"""The search box keeps room for this much of its hint (it shrank to "Fi…" beside a corpus filter)."""


class BatchWidgets:
    """The batch panel's widgets, laid out in the panel (see the module docstring); the slots are the panel's.

    Args:
        panel: the widget they are laid out in.
        proxy: the filter/sort proxy the results table shows (the search box sets its search).
        choose_export: the Export menu's callback, ``choose_export(fmt, excerpt_chars)``
            (:func:`desktop_app.panels.batch.export.export_menu`).

    Attributes:
        view: the results table; summary_label, message_label: the summary of the shown rows and the last message;
        rescore_button: Re-score (shown when another model scored the rows); add_files_button, add_folder_button,
        category_combo, errors_button, corpus_filter_button, search_edit, export_button, clear_button: the top row;
        progress_bar, cancel_button, columns_button: the progress row; text_column_edit, pair_column_edit,
        label_column_edit, max_mb_spin: the Columns popup.
    """

    def __init__(self, panel: QWidget, proxy, choose_export) -> None:
        self.view = results_view(proxy)
        self.summary_label = ElidedLabel(DROP_HINT)
        self.message_label = ElidedLabel("")
        layout = QVBoxLayout(panel)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(4)
        layout.addLayout(self._build_top_row(proxy, choose_export))
        layout.addWidget(self.view, 1)
        layout.addLayout(self._build_progress_row())
        self.rescore_button = QPushButton("Re-score")
        self.rescore_button.setToolTip("These rows were scored by another model: score them again with the model "
                                       "in use")
        self.rescore_button.setVisible(False)
        status = QHBoxLayout()  # the summary and the last message: each has a row's whole width
        status.addWidget(self.summary_label, 1)
        status.addWidget(self.rescore_button)
        layout.addLayout(status)
        layout.addWidget(self.message_label)

    def _build_top_row(self, proxy, choose_export) -> QHBoxLayout:
        """Add files, Add folder, the category filter, Errors first, the corpus filter, search, Export, Clear."""
        self.add_files_button = QPushButton("Add files…")
        self.add_files_button.setToolTip("Score .txt, .csv, .tsv, .jsonl or .json files of reviews")
        self.add_folder_button = QPushButton("Add folder…")
        self.add_folder_button.setToolTip("Score every review file in a folder (recursive; pos/ and neg/, or folders "
                                          "named after the model's classes, give gold labels)")
        self.category_combo = QComboBox()
        self.category_combo.addItems(FILTERS)
        self.category_combo.setToolTip("Show only some rows (Misclassified: the most confident errors first)")
        self.errors_button = QPushButton("Errors first")
        self.errors_button.setToolTip("Show the misclassified rows, the most confident errors first (F8: next error)")
        # its text elided: a long cell ("× gold negative → predicted positive") never widens the dock (issue 56)
        self.corpus_filter_button = ElidedToolButton("A filter chosen in the Corpus dock; click to remove it")
        self.corpus_filter_button.setVisible(False)
        self.search_edit = QLineEdit()
        self.search_edit.setPlaceholderText("Filter by file, text or status…")
        self.search_edit.setClearButtonEnabled(True)
        self.search_edit.setMinimumWidth(fitting_width(self.search_edit, SEARCH_WIDTH_SAMPLE))
        self.search_edit.textChanged.connect(proxy.set_search)
        self.export_button = QToolButton()
        self.export_button.setText("Export")
        self.export_button.setToolTip("Save all rows (not only the filtered ones) with the command line's columns")
        self.export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.export_button.setMenu(export_menu(self.export_button, choose_export))
        self.clear_button = QPushButton("Clear")
        self.clear_button.setToolTip("Cancel scoring and remove all rows")
        top = QHBoxLayout()
        for w in (self.add_files_button, self.add_folder_button, self.category_combo, self.errors_button,
                  self.corpus_filter_button):
            top.addWidget(w)
        top.addWidget(self.search_edit, 1)
        top.addWidget(self.export_button)
        top.addWidget(self.clear_button)
        return top

    def _build_progress_row(self) -> QHBoxLayout:
        """The progress bar (wide enough for "Cancelled: 100,000 reviews in 10:00:00" on one line), Cancel and the
        Columns button (the reading options, in a popup: each box wide enough for its "auto (...)" hint)."""
        self.progress_bar = QProgressBar()
        self.progress_bar.setTextVisible(True)
        self.idle_progress()
        self.progress_bar.setMinimumWidth(fitting_width(self.progress_bar, PROGRESS_TEXT_SAMPLE))
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.setToolTip("Stop after the current batch; rows scored so far are kept")
        self.columns_button = QToolButton()
        self.columns_button.setText("Columns")
        self.columns_button.setToolTip("Which CSV/TSV columns or JSON fields hold the text, the second text and the "
                                       "gold label (empty: found by name), and the largest one-review file")
        self.columns_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.columns_button)
        form = QWidgetAction(menu)
        form.setDefaultWidget(self._build_columns_form())
        menu.addAction(form)
        self.columns_button.setMenu(menu)
        row = QHBoxLayout()
        row.addWidget(self.progress_bar, 1)
        row.addWidget(self.cancel_button)
        row.addWidget(self.columns_button)
        return row

    def idle_progress(self) -> None:
        """The progress bar as before any job: empty, "idle" (the first look, and after Clear)."""
        self.progress_bar.setRange(0, 1)
        self.progress_bar.setValue(0)
        self.progress_bar.setFormat("idle")

    def _build_columns_form(self) -> QWidget:
        """The text, second-text and gold-label columns and the largest one-review file (the Columns popup)."""
        self.text_column_edit = QLineEdit()
        self.text_column_edit.setPlaceholderText("auto (text / review / content)")
        self.text_column_edit.setToolTip("CSV/TSV column or JSON field with the text; empty detects it")
        self.pair_column_edit = QLineEdit()
        self.pair_column_edit.setPlaceholderText("auto (text_pair)")
        self.pair_column_edit.setToolTip("CSV/TSV column or JSON field with a sentence pair's second text (a pair "
                                         "model, e.g. NLI); empty: a 'text_pair' column when there is one")
        self.label_column_edit = QLineEdit()
        self.label_column_edit.setPlaceholderText("auto (label / labels)")
        self.label_column_edit.setToolTip("CSV/TSV column or JSON field with the gold label: a class name or id, "
                                          "';'-separated labels (multi-label) or a number (regression); empty: "
                                          "label / labels / sentiment / gold")
        self.max_mb_spin = QDoubleSpinBox()
        self.max_mb_spin.setRange(0.1, 1024.0)
        self.max_mb_spin.setDecimals(1)
        self.max_mb_spin.setSuffix(" MB")
        self.max_mb_spin.setValue(DEFAULT_MAX_FILE_BYTES / 2**20)
        self.max_mb_spin.setToolTip("One-review files larger than this are reported, not read")
        widget = QWidget()
        form = QFormLayout(widget)
        form.setContentsMargins(8, 6, 8, 6)
        width = max(fitting_width(e, e.placeholderText())
                    for e in (self.text_column_edit, self.pair_column_edit, self.label_column_edit))
        for name, edit in (("Text column:", self.text_column_edit), ("Second text:", self.pair_column_edit),
                           ("Gold label:", self.label_column_edit)):
            edit.setMinimumWidth(width)
            form.addRow(name, edit)
        form.addRow("Max file size:", self.max_mb_spin)
        return widget
