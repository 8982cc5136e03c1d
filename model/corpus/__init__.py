"""A scored corpus's analysis (issues 23, 30, 42, 44, 55): what the result rows of :mod:`model.batch` say.

:mod:`.metrics` (:func:`corpus_metrics`: accuracy, calibration, lengths, slices; :mod:`.task_metrics` the per-task
metrics by scikit-learn), :mod:`.tokens` (corpus-level token importance: the words that push the decisions),
:mod:`.projection` and :mod:`.map_colours` (the corpus map: PCA/UMAP of the sentence vectors and what colours its
points), :mod:`.comparison` (two models scored row by row). Shared by the app's Corpus dock, the scorer's command
line (:mod:`model.scorer`) and the report (:mod:`model.report`); no torch, no Qt.
"""

from .metrics import CorpusMetrics, CorpusTokens, corpus_metrics, corpus_token_scores

__all__ = ["CorpusMetrics", "CorpusTokens", "corpus_metrics", "corpus_token_scores"]
