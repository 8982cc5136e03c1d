"""The reference bar: TF-IDF (unigrams + bigrams) logistic regression on IMDB.

Usage::

    python -m model.training.baseline --data ../shared/data/imdb

Trains on the official train split only and prints one JSON line with test
accuracy and F1 on the official 25,000-review test split. Training-side code
(scikit-learn); not used by the product. :func:`fit_tfidf_logreg` is also the
teacher that ``python -m model.training.train --distill-unsup N`` distils from.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np


def fit_tfidf_logreg(texts: Sequence[str], labels: np.ndarray, C: float = 10.0) -> Callable[[Sequence[str]], np.ndarray]:
    """Fit TF-IDF (1-2-grams, sublinear tf) + logistic regression; ``<br />`` counts as whitespace.

    Args:
        texts: N training texts.
        labels: int [N] class indices.
        C: inverse L2 regularisation strength of the logistic regression.

    Returns:
        ``predict_proba(texts) -> float32 [M, C]``, class probabilities.
    """
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    def clean(batch: Sequence[str]) -> list[str]:
        return [t.replace("<br />", " ") for t in batch]

    vec = TfidfVectorizer(ngram_range=(1, 2), min_df=2, max_df=0.9, sublinear_tf=True)
    clf = LogisticRegression(C=C, max_iter=2000)
    clf.fit(vec.fit_transform(clean(texts)), labels)

    def predict_proba(batch: Sequence[str]) -> np.ndarray:
        return clf.predict_proba(vec.transform(clean(batch))).astype(np.float32)

    return predict_proba


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns 0."""
    from sklearn.metrics import accuracy_score, f1_score

    from .data import read_jsonl_gz

    p = argparse.ArgumentParser(description="TF-IDF bigram logistic-regression baseline.")
    p.add_argument("--data", required=True)
    p.add_argument("--C", type=float, default=10.0)
    args = p.parse_args(argv)
    data = Path(args.data)
    t0 = time.time()
    x_train, y_train = read_jsonl_gz(data / "train.jsonl.gz")
    x_test, y_test = read_jsonl_gz(data / "test.jsonl.gz")
    predict_proba = fit_tfidf_logreg(x_train, y_train, args.C)
    pred = predict_proba(x_test).argmax(-1)
    print(json.dumps({
        "model": "tfidf-1-2gram-logreg", "C": args.C,
        "test_accuracy": float(accuracy_score(y_test, pred)), "test_f1": float(f1_score(y_test, pred)),
        "test_count": len(y_test), "wall_s": time.time() - t0,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
