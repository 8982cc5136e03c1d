"""The sentence vectors kept while scoring (issue 42): they equal the vector the model's own read-out uses (the
bundled model's pooling on its last hidden states; a Hugging Face model's first-token state, the pooler's input),
the head applied to them gives the logits, any layer and a mean-pooled option, windows, failures, and scores
unchanged by keeping them."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from model.records.vectors import SentenceVectors, VectorSpec, stack_vectors

TEXTS = ["A wonderful film with great acting.", "Terrible, boring and far too long.", "It was fine, I guess."]


def _ids(predictor, texts):
    ids, mask = predictor.encoder.pad_ids([predictor.encoder.encode(t).ids for t in texts])
    return torch.from_numpy(ids), torch.from_numpy(mask)


def _kept(predictor, texts, spec=None):
    return np.stack([s.vector for s in predictor.score_many(texts, vectors=spec or VectorSpec())])


def test_bundled_vectors_are_the_readout_input(bundled_predictor):
    p = bundled_predictor
    ids, mask = _ids(p, TEXTS)
    m = p.model
    with torch.inference_mode():
        hidden, _ = m.hidden_states(m.embed(ids), mask)  # (B, T, D), the read-out's input
        if m.config.pooling == "cls":
            pooled = hidden[:, 0]
        else:
            w = mask.unsqueeze(-1).float()
            pooled = (hidden * w).sum(1) / w.sum(1)
        logits = m.head(pooled)
    kept = _kept(p, TEXTS)
    assert kept.shape == (3, m.config.d_model) and kept.dtype == np.float32
    np.testing.assert_allclose(kept, pooled.numpy(), atol=1e-5)
    with torch.inference_mode():  # the model's own head on the kept vectors gives its logits
        np.testing.assert_allclose(m.head(torch.from_numpy(kept)).numpy(), logits.numpy(), atol=1e-5)


def test_hf_vectors_are_the_first_token_pooler_input(tmp_path):
    pytest.importorskip("transformers")
    from model import Predictor
    from tests.fixtures.tiny_hf import make_tiny_hf_dir

    p = Predictor.from_pretrained(make_tiny_hf_dir(tmp_path / "bert", init_std=0.5), device="cpu")
    ids, mask = _ids(p, TEXTS)
    with torch.inference_mode():
        out = p.model.hf(input_ids=ids, attention_mask=mask.long(), output_hidden_states=True)
        cls = out.hidden_states[-1][:, 0]  # (B, D): what BERT's pooler reads
        from_cls = p.model.hf.classifier(p.model.hf.bert.pooler(out.hidden_states[-1]))
        layer0 = out.hidden_states[1]  # the first layer's output
        w = mask.unsqueeze(-1).float()
        mean0 = (layer0 * w).sum(1) / w.sum(1)
    np.testing.assert_allclose(_kept(p, TEXTS), cls.numpy(), atol=1e-5)
    np.testing.assert_allclose(from_cls.numpy(), out.logits.numpy(), atol=1e-5)  # the head reads that vector
    np.testing.assert_allclose(_kept(p, TEXTS, VectorSpec(layer=0, pooling="mean")), mean0.numpy(), atol=1e-5)
    np.testing.assert_allclose(_kept(p, TEXTS, VectorSpec(layer=0)), layer0[:, 0].numpy(), atol=1e-5)


def test_scores_unchanged_failures_and_windows(bundled_predictor):
    p = bundled_predictor
    long_text = " ".join(["the film was slow but the ending was good"] * 120)  # read in windows
    texts = [TEXTS[0], "", long_text]
    with_v = p.score_many(texts, vectors=VectorSpec())
    without = p.score_many(texts)
    for a, b in zip(with_v, without, strict=True):
        assert np.array_equal(a.probabilities, b.probabilities) and a.label == b.label and b.vector is None
    assert with_v[1].vector is None and with_v[1].error
    assert with_v[2].num_windows > 1
    windows = p.score_many([long_text], long_text="head_tail", vectors=VectorSpec())[0].vector
    assert with_v[2].vector.shape == windows.shape and not np.allclose(with_v[2].vector, windows)
    assert not with_v[0].vector.flags.writeable


def test_spec_checks():
    with pytest.raises(ValueError, match="pooling"):
        VectorSpec(pooling="max")
    with pytest.raises(ValueError, match="out of range"):
        VectorSpec(layer=7).resolve(4)
    assert VectorSpec(layer=-1).resolve(4) == 3 and VectorSpec().resolve(4) == 3
    sv = stack_vectors([np.ones(3, np.float32), None, np.zeros(3, np.float32)], VectorSpec())
    assert isinstance(sv, SentenceVectors) and sv.rows.tolist() == [0, 2] and sv.vectors.shape == (2, 3)
    assert sv.nbytes == 24 and stack_vectors([None], VectorSpec(), dim=5).vectors.shape == (0, 5)


def test_bad_layer_is_refused(bundled_predictor):
    with pytest.raises(ValueError, match="out of range"):
        bundled_predictor.score_many(TEXTS, vectors=VectorSpec(layer=99))
