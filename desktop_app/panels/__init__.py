"""The panels: widgets that take input and start work, as opposed to the read-only views.

``editor.py``         the review editor and the drag-and-drop helpers
``explain_panel.py``  the Explanations panel (methods, faithfulness, integrated gradients)
``method_compare.py`` its side-by-side comparison of two methods
``batch_panel.py``    the Batch scoring panel (jobs), with ``batch_ui.py`` (its widgets), ``batch_navigation.py``
                      (errors first, next error, opening rows, the corpus filters), ``batch_model.py`` (its table
                      model and sort keys), ``batch_proxy.py`` (its filter and sort), ``row_filter.py`` (``RowFilter``: what the table keeps; Qt-free) and
                      ``batch_export.py`` (its Export menu)
``corpus_panel.py``   the Corpus dock (metrics and plots of the table's rows), with ``corpus_words.py`` (its
                      "What drives it" tab: the words that push the model, over the rows shown)
"""
