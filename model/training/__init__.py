"""Training-only code: the training loop (:mod:`.train`), IMDB data loading (:mod:`.data`), the TF-IDF
baseline (:mod:`.baseline`), and the distillation pipeline of the bundled model: fine-tuning a Hugging Face
teacher (:mod:`.finetune_hf`), the NBSVM peer (:mod:`.nbsvm`), the augmented transfer set (:mod:`.augment`)
and MLM pretraining + distillation of our encoder (:mod:`.distill`). Never imported by the app, the scorer or
the bundle (import-linter contract in pyproject.toml); needs the ``train`` extra (gensim, scikit-learn) and,
for the teacher, ``transformers``.

Run ``python -m model.training.train``, ``python -m model.training.baseline``, ``python -m model.training.distill``.
"""
