"""The Corpus dock (Corpus workspace): what the batch rows say, for the rows the table's filters keep.

:mod:`.panel` (the dock: metrics and plots), :mod:`.words` (What drives it), :mod:`.map_panel` (the corpus map;
:mod:`.map_slices` its named selections), :mod:`.a_vs_b` (two models), :mod:`.whatif` (counterfactual edits over the
corpus) and :mod:`.report` (Export > Report / Metrics).
"""
