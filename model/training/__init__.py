"""Training-only code: the training loop (:mod:`.train`), IMDB data loading (:mod:`.data`) and the
TF-IDF baseline (:mod:`.baseline`). Never imported by the app, the scorer or the bundle
(import-linter contract in pyproject.toml); needs the ``train`` extra (gensim, scikit-learn).

Run ``python -m model.training.train``, ``python -m model.training.baseline``.
"""
