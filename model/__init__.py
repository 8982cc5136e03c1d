"""Attention Explorer's model package: the Transformer-encoder classifier, tokenizer and inference API.

Public API::

    from model import Predictor, Prediction, Score, EncoderConfig, ModelInfo, Task, PairNotSupported

This package never imports Qt, pyqtgraph or ``desktop_app``. The names above are imported on first use (PEP 562
``__getattr__``), so ``import model.core.paths`` (the app's window, before its first paint) does not import torch
(issue 34: the window paints before torch and the model load, on the inference thread).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

__all__ = ["EncoderConfig", "ModelInfo", "PairNotSupported", "Prediction", "Predictor", "Score", "Task"]
_HOMES = {"EncoderConfig": ".core.config", "ModelInfo": ".records.info", "Prediction": ".records.prediction",
          "Predictor": ".predictor.predictor", "Score": ".records.prediction", "Task": ".tasks.task",
          "PairNotSupported": ".records.prediction"}

if TYPE_CHECKING:  # pragma: no cover
    from .core.config import EncoderConfig
    from model.records.info import ModelInfo
    from model.records.prediction import PairNotSupported
    from model.predictor.predictor import Prediction, Predictor, Score
    from model.tasks.task import Task


def __getattr__(name: str):
    """``model.Predictor`` and the other public names, imported when first asked for."""
    if name in _HOMES:
        value = getattr(importlib.import_module(_HOMES[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
