"""Where the app keeps its settings (window layout, zoom, layer/head, last folder): one QSettings.

``$ATTENTION_EXPLORER_SETTINGS`` (:data:`SETTINGS_ENV`) names an .ini file to use instead of the
user's settings (tests and benchmarks set it, so they never touch the user's layout).
"""

from __future__ import annotations

import os

from PySide6.QtCore import QSettings

from model.predictor.precision import PRECISIONS

APP_NAME = "Attention Explorer"
SETTINGS_ENV = "ATTENTION_EXPLORER_SETTINGS"  # path of an .ini file to use instead of the user's settings


PRECISION_KEY = "inference/precision"  # "auto" (default), "fp32" or "bf16": see model/predictor/precision.py


def precision_setting() -> str:
    """The precision the user chose for predict and batch scoring ("auto" unless set; an unknown value: "auto")."""
    value = str(app_settings().value(PRECISION_KEY, "auto"))
    return value if value in PRECISIONS else "auto"


def app_settings() -> QSettings:
    """The app's QSettings; an .ini file at ``$ATTENTION_EXPLORER_SETTINGS`` when set (tests use this)."""
    path = os.environ.get(SETTINGS_ENV)
    if path:
        return QSettings(path, QSettings.IniFormat)
    return QSettings("AttentionExplorer", APP_NAME)
