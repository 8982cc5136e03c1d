"""Attention Explorer's model package: the Transformer-encoder classifier, tokenizer and inference API.

Public API::

    from model import Predictor, Prediction, Score, EncoderConfig, ModelInfo

This package never imports Qt, pyqtgraph or ``desktop_app``.
"""

from .core.config import EncoderConfig
from .info import ModelInfo
from .predictor import Prediction, Predictor, Score

__all__ = ["EncoderConfig", "ModelInfo", "Prediction", "Predictor", "Score"]
