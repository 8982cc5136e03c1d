"""Fixtures of the Corpus dock tests: the batch and corpus panels, and a small CSV of labelled reviews."""

from __future__ import annotations

import csv

import pytest

GOOD = ["a wonderful film", "great acting and a moving story", "I loved it", "superb, funny and warm"]
BAD = ["a dreadful film", "boring and far too long", "I hated it", "dull, flat and lifeless"]


@pytest.fixture
def panels(qtbot):
    """A shown batch panel and its Corpus dock (1000 x 700): ``(batch, corpus)``."""
    from gui_helpers import corpus_panels

    yield from corpus_panels(qtbot, size=(1000, 700))


@pytest.fixture
def reviews(tmp_path):
    """``reviews.csv``: 30 labelled reviews (the even ones from :data:`GOOD`, the odd ones from :data:`BAD`) and one
    empty text (a failed row: no vector, no point on the map)."""
    path = tmp_path / "reviews.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["text", "label"])
        for i in range(30):
            good = i % 2 == 0
            w.writerow([f"{(GOOD if good else BAD)[i % 4]}, review {i}.", "positive" if (i % 5) else "negative"])
        w.writerow(["", "positive"])
    return path
