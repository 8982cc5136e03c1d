"""``attention-explorer-score``, batch scoring on the command line (:mod:`.main`; ``python -m model.scorer.main``).

:mod:`.args` holds the options (the parser, their value types); :mod:`.main` runs :mod:`model.batch`'s engine; the
optional outputs each have a module: :mod:`.report` (``--report``/``--metrics``), :mod:`.corpus_map`
(``--embeddings``/``--projection``), :mod:`.compare` (``--compare-model``) and :mod:`.counterfactuals`
(``--counterfactuals``).
"""
