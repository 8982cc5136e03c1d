"""The trained model shipped in resources/model: loads and gets clear IMDB test reviews right."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
BUNDLED_MODEL = ROOT / "resources" / "model"

CLEAR_REVIEWS = [
    (("This is one of the best films I have ever seen. The acting is superb, the script is witty and moving, "
      "and the direction is masterful. A wonderful, beautiful movie that I will watch again and again."), "positive"),
    (("What a waste of time. The plot makes no sense, the acting is wooden and the dialogue is laughably bad. "
      "Boring from start to finish; easily the worst movie I have seen this year. Avoid it."), "negative"),
]


def test_bundled_files_present_and_small():
    if not (BUNDLED_MODEL / "model.safetensors").is_file():
        pytest.skip("bundled model not trained yet")
    for name in ("model.safetensors", "config.json", "tokenizer.json", "metrics.json", "README.md"):
        assert (BUNDLED_MODEL / name).is_file(), name
    size_mb = sum(f.stat().st_size for f in BUNDLED_MODEL.iterdir()) / 2**20
    assert size_mb < 50


@pytest.mark.parametrize("text,label", CLEAR_REVIEWS)
def test_clear_reviews(bundled_predictor, text, label):
    assert bundled_predictor.predict(text).label == label


def test_clear_imdb_test_reviews(bundled_predictor):
    """40 short, strongly rated IMDB test reviews (rating 1 or 10; the committed sample's "clear40") are classified
    correctly."""
    from imdb_data import imdb_sample

    sample = [(r["text"], "positive" if r["label"] == 1 else "negative") for r in imdb_sample("clear40")]
    assert len(sample) == 40
    correct = sum(bundled_predictor.predict(t).label == y for t, y in sample)
    assert correct >= 36, f"{correct}/40 clear reviews right"
