"""The bag-of-n-grams peers the student is measured against: TF-IDF logistic regression and NBSVM.

``python -m model.evaluation.peers --data ../shared/data/imdb [--peer tfidf|nbsvm|both]`` prints one JSON line per
peer with its accuracy on the official test split (scikit-learn, the ``train`` extra):

* ``tfidf`` (:func:`run_tfidf`): TF-IDF word 1-2-gram logistic regression on the whole train split; the reference bar.
* ``nbsvm`` (:class:`NBSVM`, :func:`run_nbsvm`): logistic regression on binarized word 1-3-grams scaled by the
  naive-Bayes log-count ratio (Wang & Manning 2012, "Baselines and Bigrams", section 2.1), fitted on the fitting
  reviews; the strongest peer. (As a second distillation teacher it lost: git ba0b6d3, ``nbsvm.py --soft-labels``.)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Sequence

import numpy as np

from model.datasets.splits import UsageError, check_data, read_split, train_split

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

    def predict(self, texts: Sequence[str]) -> np.ndarray:
        """int64 [M] predicted labels (1 where the decision function is positive)."""
        return (self.lr.decision_function(self.vec.transform(texts).multiply(self.r).tocsr()) > 0).astype(np.int64)


def run_tfidf(data, C: float = 10.0) -> dict:
    """The TF-IDF peer: word 1-2-grams (sublinear tf, ``<br />`` as whitespace) and an L2 logistic regression (inverse
    strength ``C``) on the whole train split; ``{"model", "C", "test_accuracy", "test_f1", "test_count", "wall_s"}``."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import accuracy_score, f1_score

    t0 = time.time()
    (x_train, y_train), (x_test, y_test) = read_split(data, "train"), read_split(data, "test")
    vec = TfidfVectorizer(ngram_range=(1, 2), min_df=2, max_df=0.9, sublinear_tf=True)
    clean = [t.replace("<br />", " ") for t in x_train + x_test]
    clf = LogisticRegression(C=C, max_iter=2000).fit(vec.fit_transform(clean[: len(x_train)]), y_train)
    pred = clf.predict_proba(vec.transform(clean[len(x_train) :])).astype(np.float32).argmax(-1)
    return {"model": "tfidf-1-2gram-logreg", "C": C, "test_accuracy": float(accuracy_score(y_test, pred)),
            "test_f1": float(f1_score(y_test, pred)), "test_count": len(y_test), "wall_s": time.time() - t0}


def run_nbsvm(data, C: float = 0.1, seed: int = 0) -> dict:
    """The NBSVM peer fitted on the fitting reviews: ``{"model", "validation_accuracy", "test_accuracy",
    "test_count", "wall_s"}``."""
    t0 = time.time()
    train_texts, train_labels, val_idx, fit_idx = train_split(data, seed)
    test_texts, test_labels = read_split(data, "test")
    full = NBSVM(C=C).fit([train_texts[i] for i in fit_idx], train_labels[fit_idx])
    val_pred = full.predict([train_texts[i] for i in val_idx])
    return {"model": f"NBSVM 1-3-gram logistic regression (C={C})",
            "validation_accuracy": float((val_pred == train_labels[val_idx]).mean()),
            "test_accuracy": float((full.predict(test_texts) == test_labels).mean()), "test_count": len(test_labels),
            "wall_s": time.time() - t0}


def main(argv: list[str] | None = None) -> int:
    """Fit the peers and print one JSON line each; returns the exit code (2: bad input)."""
    p = argparse.ArgumentParser(description="Bag-of-n-grams peers on IMDB: TF-IDF logistic regression and NBSVM.")
    p.add_argument("--data", required=True)
    p.add_argument("--peer", choices=["tfidf", "nbsvm", "both"], default="both")
    args = p.parse_args(argv)
    try:
        data = check_data(args.data)
        for name, run in (("tfidf", run_tfidf), ("nbsvm", run_nbsvm)):
            if args.peer in (name, "both"):
                print(json.dumps(run(data)), flush=True)
    except (UsageError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
