"""``attention-explorer-score``, batch scoring on the command line (:mod:`.main`; ``python -m model.scorer.main``).

:mod:`.main` parses the options (their value types in :mod:`.args`) and runs :mod:`model.batch`'s engine; the
optional outputs each have a module: :mod:`.report` (``--report``/``--metrics``), :mod:`.corpus_map`
(``--embeddings``/``--projection``), :mod:`.compare` (``--compare-model``) and :mod:`.counterfactuals`
(``--counterfactuals``).
"""
