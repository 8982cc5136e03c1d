"""Where bundled resources live, from source and in a PyInstaller bundle."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def resources_dir() -> Path:
    """The ``resources/`` folder.

    Order: the ``ATTENTION_EXPLORER_RESOURCES`` environment variable; inside a
    PyInstaller bundle, ``sys._MEIPASS/resources``; otherwise ``resources/``
    beside the ``model`` package (the source checkout; this file is ``model/core/paths.py``).
    """
    env = os.environ.get("ATTENTION_EXPLORER_RESOURCES")
    if env:
        return Path(env)
    frozen_root = getattr(sys, "_MEIPASS", None)
    if frozen_root:
        return Path(frozen_root) / "resources"
    return Path(__file__).resolve().parent.parent.parent / "resources"


def default_model_dir() -> Path:
    """The bundled model folder, ``resources/model``."""
    return resources_dir() / "model"


def samples_dir() -> Path:
    """The bundled sample reviews, ``resources/samples``."""
    return resources_dir() / "samples"
