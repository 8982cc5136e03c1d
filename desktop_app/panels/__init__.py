"""The panels: widgets that take input and start work, as opposed to the read-only views.

``editor.py``         the review editor and the drag-and-drop helpers
``explain_panel.py``  the Explanations panel (methods, faithfulness, integrated gradients)
``method_compare.py`` its side-by-side comparison of two methods
``batch_panel.py``    the Batch scoring panel, with ``batch_model.py`` (its table model and filter) and
                      ``batch_export.py`` (its Export menu)
"""
