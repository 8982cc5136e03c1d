"""The labelled data that the training pipeline and the dataset-level evaluation both read, in one neutral home:
``model.training`` and ``model.evaluation`` import this package and never each other (an import-linter
``independence`` contract in ``pyproject.toml``). NumPy only, no torch.

* :mod:`.splits`: a data folder's split files (``train``, ``dev``, ``test``, ``unsup`` as ``.jsonl.gz``, ...), the
  reviews and 0/1 labels of one split, the seeded validation split carved from ``train``, and the folder check;
* :mod:`.task_data`: the splits of any classifier task (JSON Lines or CSV/TSV columns), its label names and the
  gold labels as training targets;
* :mod:`.behaviour`: the CheckList-style behavioural sentences and their pass rates (reported by
  ``python -m model.evaluation.checklist``, used by the training pipeline's ``select`` stage to choose).
"""
