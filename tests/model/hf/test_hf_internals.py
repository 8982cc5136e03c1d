"""Attention internals of Hugging Face encoders (model.hf.projections): softmax(scores) is the model's attention."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("transformers")

from model import Predictor
from tests.fixtures.tiny_hf import make_tiny_hf_dir

TEXT = "The film was not good, but the music was lovely."


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


@pytest.mark.parametrize("family", ["bert", "distilbert", "roberta", "albert", "electra"])
def test_softmax_of_scores_is_the_attention_and_scores_are_scaled_dot_products(tmp_path, family):
    predictor = Predictor.from_pretrained(make_tiny_hf_dir(tmp_path / family, family=family), device="cpu")
    pred = predictor.predict(TEXT)
    for layer in range(predictor.config.n_layers):
        it = predictor.attention_internals(TEXT, layer)
        assert it.extra_score_terms is None
        H, T, d = it.queries.shape
        assert it.scores.shape == (H, T, T) and it.keys.shape == it.values.shape == (H, T, d)
        np.testing.assert_allclose(_softmax(it.scores), pred.attention[layer], atol=1e-5)
        np.testing.assert_allclose(it.scores, it.queries @ it.keys.transpose(0, 2, 1) / np.sqrt(d), rtol=1e-4, atol=1e-4)
        assert not it.scores.flags.writeable


def test_deberta_says_what_its_scores_leave_out(tmp_path):
    predictor = Predictor.from_pretrained(make_tiny_hf_dir(tmp_path / "deb", family="deberta-v2"), device="cpu")
    it = predictor.attention_internals(TEXT, 0)
    assert it.extra_score_terms and "position" in it.extra_score_terms
    norms = predictor.embedding_norms(TEXT)
    assert np.all(norms.pe_norm == 0) and np.all(norms.token_norm > 0)  # no position vector is added
