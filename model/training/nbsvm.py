"""NBSVM-style logistic regression on binarized 1-3-grams (Wang & Manning 2012, "Baselines and Bigrams").

Usage::

    python -m model.training.nbsvm --data ../shared/data/imdb [--soft-labels nbsvm_logits.npz]

The strongest bag-of-n-grams peer we measure, and the second teacher of :mod:`model.training.distill`:
features are binarized word 1-3-gram counts scaled by the naive-Bayes log-count ratio
r = log((p / |p|_1) / (q / |q|_1)) with add-``alpha`` smoothing (Wang & Manning 2012, section 2.1);
a logistic regression is fitted on them. Prints one JSON line with validation and test accuracy.

``--soft-labels FILE`` writes float32 [N, 2] logits for the train split (file order; each fitting review is
scored by a model fitted on the other folds, ``--folds`` cross-fitting, so that its logit is an honest
out-of-sample guess; validation reviews by the model fitted on all fitting reviews), the unsup and the
test split. Training-side code (scikit-learn); not used by the product.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Sequence

import numpy as np

from .common import read_split, train_split

_TOKEN = re.compile(r"[a-z0-9']+|[!?.,;:()\"-]")


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.replace("<br />", " ").lower())


class NBSVM:
    """Naive-Bayes-scaled binarized n-gram logistic regression for two classes.

    Args:
        ngram_max: longest n-gram (words).
        C: inverse L2 regularisation strength of the logistic regression.
        alpha: smoothing of the naive-Bayes counts.
    """

    def __init__(self, ngram_max: int = 3, C: float = 0.1, alpha: float = 1.0) -> None:
        self.ngram_max, self.C, self.alpha = ngram_max, C, alpha

    def fit(self, texts: Sequence[str], labels: np.ndarray) -> NBSVM:
        """Fit on N texts with int [N] labels in {0, 1}; returns self."""
        from sklearn.feature_extraction.text import CountVectorizer
        from sklearn.linear_model import LogisticRegression

        self.vec = CountVectorizer(tokenizer=_tokens, token_pattern=None, lowercase=False, binary=True,
                                   ngram_range=(1, self.ngram_max), min_df=2, dtype=np.float32)
        X = self.vec.fit_transform(texts)
        y = np.asarray(labels)
        p = self.alpha + np.asarray(X[y == 1].sum(0)).ravel()
        q = self.alpha + np.asarray(X[y == 0].sum(0)).ravel()
        self.r = np.log((p / p.sum()) / (q / q.sum())).astype(np.float32)
        self.lr = LogisticRegression(C=self.C, max_iter=1000, solver="liblinear")
        self.lr.fit(X.multiply(self.r).tocsr(), y)
        return self

    def logits(self, texts: Sequence[str]) -> np.ndarray:
        """float32 [M, 2] logits (class 0 fixed at 0; class 1 the decision function)."""
        z = self.lr.decision_function(self.vec.transform(texts).multiply(self.r).tocsr()).astype(np.float32)
        return np.stack([np.zeros_like(z), z], axis=1)


def _fit_and_score(train_texts, train_labels, fit_rows, score_rows, C):
    model = NBSVM(C=C).fit([train_texts[i] for i in fit_rows], train_labels[fit_rows])
    return model.logits([train_texts[i] for i in score_rows])


def main(argv: list[str] | None = None) -> int:
    """Fit, print validation/test accuracy as one JSON line, optionally write soft labels; returns the exit code."""
    p = argparse.ArgumentParser(description="NBSVM-style 1-3-gram logistic regression on IMDB.")
    p.add_argument("--data", required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--C", type=float, default=0.1)
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--jobs", type=int, default=1, help="parallel cross-fitting processes")
    p.add_argument("--soft-labels", default="")
    args = p.parse_args(argv)
    t0 = time.time()
    train_texts, train_labels, val_idx, fit_idx = train_split(args.data, args.seed)
    test_texts, test_labels = read_split(args.data, "test")
    full = NBSVM(C=args.C).fit([train_texts[i] for i in fit_idx], train_labels[fit_idx])
    val_logits = full.logits([train_texts[i] for i in val_idx])
    test_logits = full.logits(test_texts)
    result = {
        "model": f"NBSVM 1-3-gram logistic regression (C={args.C})",
        "validation_accuracy": float((val_logits.argmax(1) == train_labels[val_idx]).mean()),
        "test_accuracy": float((test_logits.argmax(1) == test_labels).mean()),
        "test_count": len(test_labels),
    }
    if args.soft_labels:
        from joblib import Parallel, delayed

        train = np.zeros((len(train_texts), 2), np.float32)
        train[val_idx] = val_logits
        folds = np.array_split(np.random.default_rng(args.seed + 1).permutation(fit_idx), args.folds)
        parts = Parallel(n_jobs=args.jobs)(
            delayed(_fit_and_score)(train_texts, train_labels, np.setdiff1d(fit_idx, f), f, args.C) for f in folds
        )
        for f, z in zip(folds, parts):
            train[f] = z
        unsup_texts, _ = read_split(args.data, "unsup")
        np.savez_compressed(args.soft_labels, train=train, unsup=full.logits(unsup_texts), test=test_logits)
        result["cross_fit_train_accuracy"] = float((train[fit_idx].argmax(1) == train_labels[fit_idx]).mean())
    result["wall_s"] = time.time() - t0
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
