"""The inference facade: :class:`~model.predictor.predictor.Predictor` and its helpers by concern (reading the task
and pairs, analysis, internals, long texts in windows, precision).

Imported lazily (PEP 562): ``import model.predictor.precision`` does not import torch.
"""

from __future__ import annotations

import importlib

__all__ = ["Predictor"]


def __getattr__(name: str):
    """``model.predictor.Predictor``, imported when first asked for."""
    if name == "Predictor":
        value = importlib.import_module(".predictor", __name__).Predictor
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
