"""Where the app keeps its settings (window layout, zoom, layer/head, last folder): one QSettings.

``$ATTENTION_EXPLORER_SETTINGS`` (:data:`SETTINGS_ENV`) names an .ini file to use instead of the
user's settings (tests and benchmarks set it, so they never touch the user's layout).
"""

from __future__ import annotations

import os

from PySide6.QtCore import QSettings

APP_NAME = "Attention Explorer"
SETTINGS_ENV = "ATTENTION_EXPLORER_SETTINGS"  # path of an .ini file to use instead of the user's settings


def app_settings() -> QSettings:
    """The app's QSettings; an .ini file at ``$ATTENTION_EXPLORER_SETTINGS`` when set (tests use this)."""
    path = os.environ.get(SETTINGS_ENV)
    if path:
        return QSettings(path, QSettings.IniFormat)
    return QSettings("AttentionExplorer", APP_NAME)
