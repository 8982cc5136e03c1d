"""The batch panel's widgets: :class:`BatchPanelUI`, mixed into :class:`desktop_app.panels.batch_panel.BatchPanel`.

Four rows, each one line high whatever it says, so the panel's minimum height never changes while a job runs
(a word-wrapped message label that went from empty to one line grew the dock, and the window, by 6 px):

* the actions and filters: Add files, Add folder, the category, Errors first, the corpus dock's word / cell
  filter (a button that clears it; hidden when there is none), the search box, Export, Clear;
* the results table, which takes the remaining height;
* the progress bar, Cancel, the text column and the largest one-review file;
* the summary of the shown rows (it names the model that scored them), Re-score (shown when that is not the
  model in use) and the last message (one-line labels: the whole text is their tooltip).
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QToolButton,
    QVBoxLayout,
)

from model.batch import DEFAULT_MAX_FILE_BYTES

from ..views.widgets import ElidedLabel
from .batch_export import export_menu
from .batch_proxy import results_view
from .row_filter import FILTERS

DROP_HINT = "Drop files or folders of reviews here (.txt, .csv, .tsv, .jsonl, .json)."


class BatchPanelUI:
    """Builds the batch panel's widgets (see the module docstring); the slots are the panel's."""

    def _build_ui(self) -> None:
        self.view = results_view(self.proxy)
        self.view.doubleClicked.connect(self._on_double_clicked)
        self.summary_label = ElidedLabel(DROP_HINT)
        self.message_label = ElidedLabel("")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(4)
        layout.addLayout(self._build_top_row())
        layout.addWidget(self.view, 1)
        layout.addLayout(self._build_progress_row())
        self.rescore_button = QPushButton("Re-score")
        self.rescore_button.setToolTip("These rows were scored by another model: score them again with the model "
                                       "in use")
        self.rescore_button.clicked.connect(self.rescore)
        self.rescore_button.setVisible(False)
        status = QHBoxLayout()
        status.addWidget(self.summary_label, 3)
        status.addWidget(self.rescore_button)
        status.addWidget(self.message_label, 2)
        layout.addLayout(status)

    def _build_top_row(self) -> QHBoxLayout:
        """Add files, Add folder, the category filter, Errors first, the corpus filter, search, Export, Clear."""
        self.add_files_button = QPushButton("Add files…")
        self.add_files_button.setToolTip("Score .txt, .csv, .tsv, .jsonl or .json files of reviews")
        self.add_files_button.clicked.connect(self._choose_files)
        self.add_folder_button = QPushButton("Add folder…")
        self.add_folder_button.setToolTip("Score every review file in a folder (recursive; pos/ and neg/, or folders "
                                          "named after the model's classes, give gold labels)")
        self.add_folder_button.clicked.connect(self._choose_folder)
        self.category_combo = QComboBox()
        self.category_combo.addItems(FILTERS)
        self.category_combo.setToolTip("Show only some rows (Misclassified: the most confident errors first)")
        self.category_combo.currentTextChanged.connect(self._on_category)
        self.errors_button = QPushButton("Errors first")
        self.errors_button.setToolTip("Show the misclassified rows, the most confident errors first (F8: next error)")
        self.errors_button.clicked.connect(self.show_errors_first)
        self.corpus_filter_button = QToolButton()
        self.corpus_filter_button.setToolTip("A filter chosen in the Corpus dock; click to remove it")
        self.corpus_filter_button.clicked.connect(self.clear_corpus_filters)
        self.corpus_filter_button.setVisible(False)
        self.search_edit = QLineEdit()
        self.search_edit.setPlaceholderText("Filter by file, text or status…")
        self.search_edit.setClearButtonEnabled(True)
        self.search_edit.textChanged.connect(self.proxy.set_search)
        self.export_button = QToolButton()
        self.export_button.setText("Export")
        self.export_button.setToolTip("Save all rows (not only the filtered ones) with the command line's columns")
        self.export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.export_button.setMenu(export_menu(self.export_button, self._choose_export))
        self.clear_button = QPushButton("Clear")
        self.clear_button.setToolTip("Cancel scoring and remove all rows")
        self.clear_button.clicked.connect(self.clear)
        top = QHBoxLayout()
        for w in (self.add_files_button, self.add_folder_button, self.category_combo, self.errors_button,
                  self.corpus_filter_button):
            top.addWidget(w)
        top.addWidget(self.search_edit, 1)
        top.addWidget(self.export_button)
        top.addWidget(self.clear_button)
        return top

    def set_categories(self, names: tuple[str, ...]) -> None:
        """The filter box's categories (:func:`~desktop_app.panels.row_filter.categories` of the model); the current
        one stays when the new model has it, else the box goes back to All."""
        current = self.category_combo.currentText()
        if tuple(self.category_combo.itemText(i) for i in range(self.category_combo.count())) == names:
            return
        self.category_combo.blockSignals(True)
        self.category_combo.clear()
        self.category_combo.addItems(names)
        self.category_combo.setCurrentText(current if current in names else names[0])
        self.category_combo.blockSignals(False)
        if current not in names:
            self._on_category(names[0])

    def _build_progress_row(self) -> QHBoxLayout:
        """The progress bar, Cancel, the text, second-text and gold-label columns and the largest one-review file."""
        self.progress_bar = QProgressBar()
        self.progress_bar.setRange(0, 1)
        self.progress_bar.setValue(0)
        self.progress_bar.setTextVisible(True)
        self.progress_bar.setFormat("idle")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.setToolTip("Stop after the current batch; rows scored so far are kept")
        self.cancel_button.clicked.connect(self.cancel)
        self.text_column_edit = QLineEdit()
        self.text_column_edit.setPlaceholderText("auto (text / review / content)")
        self.text_column_edit.setToolTip("CSV/TSV column or JSON field with the text; empty detects it")
        self.text_column_edit.setMaximumWidth(190)
        self.pair_column_edit = QLineEdit()
        self.pair_column_edit.setPlaceholderText("auto (text_pair)")
        self.pair_column_edit.setToolTip("CSV/TSV column or JSON field with a sentence pair's second text (a pair "
                                         "model, e.g. NLI); empty: a 'text_pair' column when there is one")
        self.pair_column_edit.setMaximumWidth(130)
        self.label_column_edit = QLineEdit()
        self.label_column_edit.setPlaceholderText("auto (label / labels)")
        self.label_column_edit.setToolTip("CSV/TSV column or JSON field with the gold label: a class name or id, "
                                          "';'-separated labels (multi-label) or a number (regression); empty: "
                                          "label / labels / sentiment / gold")
        self.label_column_edit.setMaximumWidth(130)
        self.max_mb_spin = QDoubleSpinBox()
        self.max_mb_spin.setRange(0.1, 1024.0)
        self.max_mb_spin.setDecimals(1)
        self.max_mb_spin.setSuffix(" MB")
        self.max_mb_spin.setValue(DEFAULT_MAX_FILE_BYTES / 2**20)
        self.max_mb_spin.setToolTip("One-review files larger than this are reported, not read")
        row = QHBoxLayout()
        row.addWidget(self.progress_bar, 1)
        row.addWidget(self.cancel_button)
        for name, edit in (("Text column:", self.text_column_edit), ("Second text:", self.pair_column_edit),
                           ("Gold label:", self.label_column_edit)):
            row.addWidget(QLabel(name))
            row.addWidget(edit)
        row.addWidget(QLabel("Max file size:"))
        row.addWidget(self.max_mb_spin)
        return row
