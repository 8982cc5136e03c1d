"""Training-only code: the pipeline that makes the bundled model (the peers it is measured against are
:mod:`model.evaluation.peers`).

``python -m model.training.pipeline bundled --data ../shared/data/imdb --work runs/bundled [--device cpu|cuda]`` runs
a recipe of ``model/training/recipes/`` (``docs/retraining.md``). Modules:

* :mod:`.pipeline`: the driver; reads a recipe, runs its named stages in order or side by side, skips done ones.
* :mod:`.finetune_hf`: the ``teacher`` stage, fine-tuning a Hugging Face encoder into a classifier.
* :mod:`.transfer`: teacher-labelled transfer sets (``augment``, ``sentences``, ``subset``), read back as targets.
* :mod:`.distill`: MLM pretraining and knowledge distillation of our encoder (``mlm``, ``distill``).
* :mod:`.counterfactual`: counterfactual negations of real sentences (``negations``).
* :mod:`.interpolate`: WiSE-FT weight interpolation (``interpolate``) and model folders from git (``git``).
* :mod:`.select`: the choice between model folders, behavioural bars then validation (``select``).
* :mod:`.common`: transfer-set files, batching, schedules, precision, options, the stage command.

The data folders, the validation split, any task's data and the behavioural sentences are :mod:`model.datasets`,
which ``model.evaluation`` reads too; training and evaluation never import each other.

Never imported by the app, the scorer or the bundle (import-linter contract in pyproject.toml); needs the ``train``
extra. The routes that did not ship (the supervised word2vec recipe, layer growing, Fisher merging, relabelling,
contrast pairs, soups, task arithmetic, two-teacher distillation) are in git at commit ba0b6d3.
"""
