"""The Corpus dock's plots (pyqtgraph): :mod:`.corpus_plot` (their base, :class:`~.corpus_plot.CorpusPlot`),
:mod:`.plots` (confusion matrix, scores, calibration, lengths), :mod:`.task_plots` (per-class and regression plots)
and :mod:`.map_plot` (the corpus map's scatter)."""
