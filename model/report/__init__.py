"""The shareable outputs of a batch job (issue 23, section 5): ``metrics.json`` and a self-contained ``report.html``.

:mod:`.report` writes both from the scored rows and their :mod:`model.corpus` analysis; its sections are
:mod:`.corpus_map` (the map), :mod:`.comparison` (two models), :mod:`.counterfactuals` (What if) and
:mod:`.components` (which heads and FFNs the corpus leans on); :mod:`.charts` draws every chart with matplotlib's SVG
backend. Used by the scorer's command line (:mod:`model.scorer`) and the app's Corpus dock.
"""
