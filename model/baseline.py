"""The reference bar: TF-IDF (unigrams + bigrams) logistic regression on IMDB.

Usage::

    python -m model.baseline --data ../shared/data/imdb

Trains on the official train split only and prints one JSON line with test
accuracy and F1 on the official 25,000-review test split. Training-side code
(scikit-learn); not used by the product.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns 0."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
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
    clean = lambda texts: [t.replace("<br />", " ") for t in texts]  # noqa: E731
    vec = TfidfVectorizer(ngram_range=(1, 2), min_df=2, max_df=0.9, sublinear_tf=True)
    Xtr = vec.fit_transform(clean(x_train))
    Xte = vec.transform(clean(x_test))
    clf = LogisticRegression(C=args.C, max_iter=2000)
    clf.fit(Xtr, y_train)
    pred = clf.predict(Xte)
    print(json.dumps({
        "model": "tfidf-1-2gram-logreg", "C": args.C, "features": Xtr.shape[1],
        "test_accuracy": float(accuracy_score(y_test, pred)), "test_f1": float(f1_score(y_test, pred)),
        "test_count": len(y_test), "wall_s": time.time() - t0,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
