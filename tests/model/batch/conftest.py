"""Tiny real models for the batch tests, built offline once per session (no stand-ins): the five emotions as a
single-label model of our own encoder (single texts), and, with the ``hf`` extra, a multi-label and a regression
model that read sentence pairs (tiny random BERTs, :func:`tests.fixtures.tiny_hf.make_tiny_hf_dir`)."""

from __future__ import annotations

import pytest

EMOTIONS = ("anger", "fear", "joy", "love", "sadness")


@pytest.fixture(scope="session")
def emotions_single(tmp_path_factory):
    """A :class:`model.Predictor` of a random tiny encoder of ours whose five classes are :data:`EMOTIONS`."""
    from model import Predictor
    from model.core.config import EncoderConfig
    from tests.fixtures.tiny_models import make_random_model_dir

    config = EncoderConfig(max_len=64, d_model=16, n_heads=2, n_layers=2, d_ff=32, labels=EMOTIONS)
    return Predictor.from_pretrained(make_random_model_dir(tmp_path_factory.mktemp("emotions"), config), device="cpu")


def _hf_predictor(tmp_path_factory, name: str, **kw):
    pytest.importorskip("transformers")
    from model import Predictor
    from tests.fixtures.tiny_hf import make_tiny_hf_dir

    return Predictor.from_pretrained(make_tiny_hf_dir(tmp_path_factory.mktemp(name) / "m", init_std=0.5, **kw),
                                     device="cpu")


@pytest.fixture(scope="session")
def emotions_multi(tmp_path_factory):
    """A multi-label :class:`model.Predictor` over :data:`EMOTIONS` that reads sentence pairs (a tiny random BERT)."""
    return _hf_predictor(tmp_path_factory, "emotions_multi", task="multi_label", labels=EMOTIONS)


@pytest.fixture(scope="session")
def similarity(tmp_path_factory):
    """A regression :class:`model.Predictor` (one output, ``score``) that reads sentence pairs (a tiny random BERT)."""
    return _hf_predictor(tmp_path_factory, "similarity", task="regression")
