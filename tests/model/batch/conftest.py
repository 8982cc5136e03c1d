"""Tiny real models for the batch tests (the root conftest's ``predictor_for``, built once per session; no stand-ins):
the five emotions as a single-label model of our own encoder (single texts), and, with the ``hf`` extra, a
multi-label and a regression model that read sentence pairs (tiny random BERTs)."""

from __future__ import annotations

import pytest

EMOTIONS = ("anger", "fear", "joy", "love", "sadness")


@pytest.fixture(scope="session")
def emotions_single(predictor_for):
    """A :class:`model.Predictor` of a random tiny encoder of ours whose five classes are :data:`EMOTIONS`."""
    return predictor_for(EMOTIONS)


@pytest.fixture(scope="session")
def emotions_multi(predictor_for):
    """A multi-label :class:`model.Predictor` over :data:`EMOTIONS` that reads sentence pairs (a tiny random BERT)."""
    return predictor_for(EMOTIONS, "multi_label", pairs=True)


@pytest.fixture(scope="session")
def similarity(predictor_for):
    """A regression :class:`model.Predictor` (one output, ``score``) that reads sentence pairs (a tiny random BERT)."""
    return predictor_for(("score",), "regression", pairs=True)
