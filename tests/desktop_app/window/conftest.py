"""Fixtures of the window tests: the second models of issue 44 (model B), shared by the model-B and session tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from model.core.config import EncoderConfig
from tests.fixtures.tiny_models import make_random_model_dir


@pytest.fixture(scope="session")
def model_b(tmp_path_factory) -> Path:
    """A second tiny random model with the default labels (another seed: other predictions)."""
    return make_random_model_dir(tmp_path_factory.mktemp("model_b"), seed=11)


@pytest.fixture(scope="session")
def other_labels(tmp_path_factory) -> Path:
    """A tiny random model whose labels (bad, good) differ from the default ones: model B cannot be compared."""
    config = EncoderConfig(max_len=64, d_model=16, n_heads=2, n_layers=2, d_ff=32, labels=("bad", "good"))
    return make_random_model_dir(tmp_path_factory.mktemp("other_labels"), config)
