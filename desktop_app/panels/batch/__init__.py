"""The Batch scoring dock (Corpus workspace): drop files or folders, score them on a worker, and sort, filter,
open and export the result rows.

:mod:`.panel` (the dock; its widgets in :mod:`.ui`), :mod:`.table_model` (the Qt table model of the rows),
:mod:`.proxy` (filter and sort; :mod:`.row_filter` the one description of every filter), :mod:`.navigation` (the
next error, opening a row), :mod:`.export` (the Export menu), :mod:`.compare` (model B's columns), :mod:`.scored_by`
(which model scored the rows) and :mod:`.row_vectors` (the rows' sentence vectors for the corpus map).
"""
