"""The scoring path's tokenization (issue 55, part 3): ``encode_ids_batch`` / ``encode_pair_ids_batch`` use the
tokenizer's offset-free ``encode_batch_fast`` and give exactly the ids (and truncation, segment ids) of the encoding
with offsets the views read, for the bundled tokenizer and for a Hugging Face fast tokenizer; ``score_many`` never
asks for offsets. Speed: ``python -m benchmarks.tokenize`` (docs/performance.md)."""

from __future__ import annotations

import numpy as np
import pytest
from imdb_data import imdb_sample

EXTRA = ("", " ", "A", "line one\r\nline two\rthree\u2028four", "émoji 🎬 café naïve", "word " * 900)


class NoOffsets:
    """A tokenizer proxy whose offset-computing ``encode_batch`` fails: what is left must be the fast path."""

    def __init__(self, tokenizer) -> None:
        self._tokenizer = tokenizer

    def encode_batch(self, *args, **kwargs):
        raise AssertionError("the scoring path asked for offsets (encode_batch)")

    def __getattr__(self, name):
        return getattr(self._tokenizer, name)


def _texts() -> list[str]:
    return [r["text"] for r in imdb_sample("first80")] + [t for t in EXTRA if t.strip()]


def _same_ids(encoder, texts: list[str]) -> None:
    for whole in (False, True):
        fast = encoder.encode_ids_batch(texts, whole=whole)
        for text, (ids, truncated) in zip(texts, fast, strict=True):
            slow = encoder.encode(text, whole=whole)
            assert ids.dtype == np.int64 and np.array_equal(ids, slow.ids), text[:40]
            assert truncated == slow.truncated
    assert [e.ids.tolist() for e in encoder.encode_batch(texts)] == [i.tolist() for i, _ in encoder.encode_ids_batch(texts)]


def test_bundled_tokenizer_ids_equal_the_encoding_with_offsets(bundled_predictor):
    _same_ids(bundled_predictor.encoder, _texts())


def test_hf_fast_tokenizer_ids_and_pairs_equal_the_encoding_with_offsets(tmp_path):
    pytest.importorskip("transformers")
    from model import Predictor
    from tests.fixtures.tiny_hf import make_tiny_hf_dir

    enc = Predictor.from_pretrained(make_tiny_hf_dir(tmp_path / "pair", task="regression"), device="cpu").encoder
    _same_ids(enc, _texts())
    pairs = [("a man plays the guitar", "someone plays"), ("word " * 80, "a cat"), ("x", "line\r\nbreak " * 50)]
    for (a, b), (ids, segments, cut) in zip(pairs, enc.encode_pair_ids_batch(pairs), strict=True):
        slow = enc.encode_pair(a, b)
        assert np.array_equal(ids, slow.ids) and np.array_equal(segments, slow.segment_ids)
        assert cut == slow.pair_truncated


def test_score_many_never_computes_offsets(bundled_predictor, tmp_path):
    """The bundled model and a Hugging Face pair model score with ``encode_batch`` (offsets) made to fail."""
    pytest.importorskip("transformers")
    from model import Predictor
    from tests.fixtures.tiny_hf import make_tiny_hf_dir

    texts = _texts()[:12]
    p = bundled_predictor
    want = [s.probabilities for s in p.score_many(texts)]
    real = p.encoder.tokenizer
    p.encoder.tokenizer = NoOffsets(real)
    try:
        got = [s.probabilities for s in p.score_many(texts)]
    finally:
        p.encoder.tokenizer = real
    np.testing.assert_array_equal(np.stack(got), np.stack(want))
    hf = Predictor.from_pretrained(make_tiny_hf_dir(tmp_path / "sts", task="regression"), device="cpu")
    hf.encoder.tokenizer = NoOffsets(hf.encoder.tokenizer)
    twin = hf.encoder.pair_tokenizer
    hf.encoder._pair_twin = NoOffsets(twin)
    assert all(s.error is None for s in hf.score_many(["a man plays", "a dog"], text_pairs=["someone plays", "a cat"]))
