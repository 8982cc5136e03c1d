"""Attention Explorer's model package: the Transformer-encoder classifier, tokenizer and inference API.

Public API::

    from model import Predictor, Prediction, Score, EncoderConfig

This package never imports Qt, pyqtgraph or ``desktop_app``.
"""

from .core.config import EncoderConfig
from .predictor import Prediction, Predictor, Score

__all__ = ["EncoderConfig", "Prediction", "Predictor", "Score"]
