"""Dataset-level evaluation of a model folder: the command-line tools that report the model's numbers.

Modules (each a ``python -m`` command that prints one JSON line or a table):

* :mod:`.accuracy`: accuracy and positive-class F1 on a labelled ``.jsonl(.gz)`` file
  (``python -m model.evaluation.accuracy --data ../shared/data/imdb/test.jsonl.gz``);
* :mod:`.faithfulness`: ERASER comprehensiveness / sufficiency AOPC of every explanation method over a sample of
  reviews, with bootstrap intervals (``python -m model.evaluation.faithfulness --data ... --n 500``); the per-review
  erasure metric itself is :mod:`model.explain.erasure`;
* :mod:`.head_importance`: each head's importance (Michel et al. 2019, eq. 2) and accuracy as heads are pruned
  (``python -m model.evaluation.head_importance --data ... --n 500 --out heads.json``);
* :mod:`.loading`: opening the model and the labelled reviews for these commands, with one-line errors;
* :mod:`.checklist`: CheckList-style behavioural tests (``python -m model.evaluation.checklist``); the sentences live in
  :mod:`model.datasets.behaviour`, which the training pipeline also chooses on;
* :mod:`.threshold`: a multi-label model's decision threshold chosen on dev, reported on test;
* :mod:`.window_variants`: the long-text windows and their aggregation on the validation split;
* :mod:`.peers`: the bag-of-n-grams peers the bundled model is measured against, TF-IDF logistic regression and NBSVM
  (``python -m model.evaluation.peers --data ../shared/data/imdb``).

The labelled-data reader they share is :func:`model.files.textio.read_labelled`; the data folders, the validation
split and the behavioural sentences they share with the training pipeline are :mod:`model.datasets` (neither
package imports the other). This package sits above the runtime:
``model.core``, ``model.predictor.predictor``, ``model.explain``, ``model.batch``, ... never import it, nor does the GUI
(import-linter contracts in ``pyproject.toml``); it is left out of the desktop bundle.
"""
