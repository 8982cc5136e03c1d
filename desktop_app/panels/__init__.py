"""The panels: widgets that take input and start work, as opposed to the read-only views.

``editor.py``         the review editor and the drag-and-drop helpers; ``review_box.py`` the Review dock
``explain_panel.py``  the Explanations panel (methods, faithfulness, integrated gradients)
``method_compare.py`` its side-by-side comparison of two methods; ``on_demand.py`` its Run row (IG, DecompX)
``whatif_panel.py``   the What if dock (counterfactual edits of the current text), with ``whatif_widgets.py``
``batch/``            the Batch scoring dock (its jobs, table, filters, export)
``corpus/``           the Corpus dock (metrics and plots of the table's rows, the words, the map, A vs B, What if)
``inside/``           the docks of the encoder block's views (issue 53)
``on_screen.py``      whether a panel is on screen (for the panels that compute only while someone can see them)
"""
