"""The corpus map on the command line (issue 42): ``--embeddings`` rows follow the scored rows of ``--out``,
``--projection`` adds x and y (PCA equal to scikit-learn's on the written vectors), the report draws the map, and the
engine's vectors line up with its rows."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from sklearn.decomposition import PCA

from model.batch import iter_records, score_records
from model.scorer.main import main
from model.records.vectors import VectorSpec
from tests.conftest import BUNDLED_MODEL

pytestmark = pytest.mark.skipif(not (BUNDLED_MODEL / "model.safetensors").is_file(), reason="no bundled weights")

TEXTS = ["A wonderful film, great acting.", "Terrible and boring.", "Loved every minute of it.", "",
         "Worst film of the year.", "Quite good actually.", "A dull plot and wooden actors."]
GOLD = ["positive", "negative", "positive", "positive", "negative", "negative", "negative"]


@pytest.fixture
def reviews(tmp_path):
    path = tmp_path / "r.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["text", "label"])
        w.writerows(zip(TEXTS, GOLD, strict=True))
    return path


def test_embeddings_and_pca_columns(reviews, tmp_path, bundled_predictor):
    out, npy, report = tmp_path / "o.csv", tmp_path / "e.npy", tmp_path / "report.html"
    code = main([str(reviews), "--label-column", "label", "--out", str(out), "--embeddings", str(npy),
                 "--projection", "pca", "--report", str(report), "--no-progress", "--no-token-scores",
                 "--precision", "fp32"])
    assert code == 1  # one empty text failed
    rows = list(csv.DictReader(out.read_text(encoding="utf-8").splitlines()))
    vectors = np.load(npy)
    scored = [r for r in rows if r["status"] == "ok"]
    assert vectors.dtype == np.float32 and vectors.shape == (len(scored), 128) == (6, 128)
    expected = [s.vector for s in bundled_predictor.score_many([r["text"] for r in scored], vectors=VectorSpec(),
                                                               options=bundled_predictor.options(precision="fp32"))]
    np.testing.assert_allclose(vectors, np.stack(expected), atol=1e-5)  # row i = the i-th scored row
    xy = np.array([[float(r["x"]), float(r["y"])] for r in scored])
    np.testing.assert_allclose(xy, PCA(n_components=2, svd_solver="full").fit_transform(vectors.astype(np.float64)),
                               atol=1e-4)
    failed = next(r for r in rows if r["status"] != "ok")
    assert failed["x"] == "" and failed["y"] == ""
    html = report.read_text(encoding="utf-8")
    assert "<h2>Corpus map (PCA)</h2>" in html and html.split('id="PathCollection_1"')[1].split('id="patch_')[0].count("<use") >= 6 and "right / wrong" in html


def test_jsonl_layer_and_mean_pooling(reviews, tmp_path):
    out, npy = tmp_path / "o.jsonl", tmp_path / "e.npy"
    assert main([str(reviews), "--out", str(out), "--embeddings", str(npy), "--embedding-layer", "0",
                 "--embedding-pooling", "mean", "--projection", "pca", "--no-progress"]) == 1
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert all(isinstance(r["x"], float) for r in rows if r["status"] == "ok") and np.load(npy).shape == (6, 128)


def test_usage_errors(reviews, tmp_path, capsys):
    assert main([str(reviews), "--embeddings", str(tmp_path / "missing" / "e.npy")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main([str(reviews), "--projection", "pca", "--engine", "ray", "--out", f"{tmp_path}/shards/"]) == 2
    assert "not a folder of shards" in capsys.readouterr().err
    assert main([str(reviews), "--embedding-layer", "1"]) == 2


def test_engine_vectors_follow_rows(reviews, bundled_predictor):
    got: list = []
    rows = [r for chunk in score_records(bundled_predictor, iter_records([str(reviews)]), chunk=3,
                                         vectors=VectorSpec(), on_vectors=got.extend) for r in chunk]
    assert len(got) == len(rows) == len(TEXTS)
    assert [v is not None for v in got] == [r.ok for r in rows]


def test_umap_of_three_texts_is_pca_with_a_note(tmp_path, capsys):
    """Issue 56: ``--projection umap`` with 3 texts ended in a SciPy traceback and exit 1."""
    pytest.importorskip("umap")
    src, out = tmp_path / "three.jsonl", tmp_path / "o.csv"
    src.write_text("".join(json.dumps({"text": t}) + "\n" for t in TEXTS[:3]), encoding="utf-8")
    assert main([str(src), "--projection", "umap", "--out", str(out), "--no-progress"]) == 0
    rows = list(csv.DictReader(out.read_text(encoding="utf-8").splitlines()))
    assert len(rows) == 3 and all(r["x"] and r["y"] for r in rows)
    err = capsys.readouterr().err
    assert "PCA of 3 vectors" in err and "UMAP needs at least 4 texts" in err and "Traceback" not in err
