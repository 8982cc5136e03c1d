"""The bag-of-n-grams peers (``python -m model.evaluation.peers``): TF-IDF logistic regression and NBSVM on a small
synthetic IMDB-shaped folder."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from model.datasets.splits import VAL_SIZE, read_split

POS = ["a", "wonderful", "moving", "film", "with", "great", "acting", "and", "a", "superb", "story"]
NEG = ["a", "boring", "awful", "film", "with", "terrible", "acting", "and", "a", "dull", "stupid", "story"]


def _write(path: Path, labels) -> None:
    rng = np.random.default_rng(len(labels))
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for y in labels:
            words = rng.choice(POS if y else NEG, size=int(rng.integers(8, 30)))
            fh.write(json.dumps({"text": " ".join(words) + ".", "label": int(y)}) + "\n")


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    """``train`` (the validation split carved from it, and 150 more) and 60 ``test`` reviews of polar words."""
    rng = np.random.default_rng(0)
    d = tmp_path_factory.mktemp("imdb")
    _write(d / "train.jsonl.gz", rng.integers(0, 2, VAL_SIZE + 150))
    _write(d / "test.jsonl.gz", rng.integers(0, 2, 60))
    return d


def test_peers_score_the_test_split(data_dir, capsys):
    pytest.importorskip("sklearn")
    from model.evaluation import peers

    assert peers.main(["--data", str(data_dir)]) == 0
    tfidf, nbsvm = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    assert tfidf["model"].startswith("tfidf") and nbsvm["model"].startswith("NBSVM")
    assert tfidf["test_count"] == nbsvm["test_count"] == len(read_split(data_dir, "test")[0]) == 60
    assert 0.9 <= nbsvm["test_accuracy"] <= 1.0  # the synthetic reviews are easy for a bag of n-grams
    assert peers.main(["--data", str(data_dir / "missing")]) == 2
