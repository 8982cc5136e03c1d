"""Opening a session saved with another model: offer to switch to it, then restore the session (issue 33).

:func:`desktop_app.window.session.save_open.restore` asks :func:`offer_model_switch` first when the session names a model
other than the one in use. When the session's model folder exists (or it is the bundled model), a question box
(non-modal, kept as ``window.session_model_box``) offers to switch: Yes loads that model through the Model menu
(:meth:`~desktop_app.window.model_menu.ModelMenu.open_model`: it joins the recent folders) and restores the
session once it has loaded (model loading is asynchronous); No, or a model that fails to load, restores it with
the model in use, with the note that says so. A session whose folder is gone is restored with the model in use.
A ``model_dir`` that cannot name a model here (:func:`session_model_key`: a relative path, a path too long for the
system, a folder without ``config.json``) is never offered: the session is restored with the model in use and a
note naming ``model_dir`` (issue 46: such a session used to end in an ``OSError`` or a switch that never came).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QMessageBox

from desktop_app.window.model_menu import folder_key
from desktop_app.window.settings import APP_NAME


MAX_PATH_CHARS = 4096
"""The longest ``model_dir`` read as a path (Linux's PATH_MAX); a longer one is no folder anywhere."""


def session_model_key(model_dir: str, field: str = "model_dir") -> tuple[str | None, str]:
    """``(key, problem)`` of a session's ``model_dir``: its :func:`folder_key` ("" for the bundled model) and "",
    or None and why it names no model here (a relative path, over :data:`MAX_PATH_CHARS` characters, unreadable,
    or an existing folder without ``config.json``). A folder that does not exist keeps its key (the session was
    saved with a model this machine lacks). ``field``: the session field the problem names (``model_b_dir`` for model
    B's folder). Never raises."""
    if not model_dir:
        return "", ""
    shown = model_dir if len(model_dir) <= 80 else model_dir[:77] + "..."
    if len(model_dir) > MAX_PATH_CHARS:
        return None, f"{field} is {len(model_dir):,} characters long, not a folder path"
    if not Path(model_dir).is_absolute():
        return None, f"{field} {shown!r} is a relative path (a session names its model folder in full)"
    try:
        key = folder_key(model_dir)
        if key and Path(key).is_dir() and not (Path(key) / "config.json").is_file():
            return None, f"{field} {shown!r} is not a model folder (no config.json)"
    except (OSError, ValueError) as exc:
        return None, f"{field} {shown!r} cannot be read ({getattr(exc, 'strerror', None) or exc})"
    return key, ""


def model_name(folder: str | Path | None) -> str:
    """A model folder as a message names it: "the bundled model" ("" or ``resources/model``), else "the model in
    FOLDER"."""
    key = folder_key(folder)
    return f"the model in {key}" if key else "the bundled model"


def model_available(key: str) -> bool:
    """True when the model a session names can be loaded here: the bundled model ("") or an existing folder (``key``
    from :func:`session_model_key`)."""
    return not key or Path(key).is_dir()


def offer_model_switch(window, session_model_dir: str, then: Callable[[], None]) -> bool:
    """Offer to switch ``window`` to ``session_model_dir`` (a session's ``model_dir``); ``then()`` restores the
    session once answered (after the switch when accepted, with the model in use otherwise).

    Args:
        window: the main window.
        session_model_dir: the session's model folder ("" for the bundled model).
        then: called once, on the GUI thread, when the session can be restored.

    Returns:
        True when the question was asked (``then`` follows later); False when the folder does not exist here
        (nothing is asked; the caller restores with the model in use).
    """
    key, _problem = session_model_key(session_model_dir)
    if key is None or not model_available(key):
        return False
    current = window.model_info.model_dir if window.model_info is not None else window.model_dir
    box = QMessageBox(
        QMessageBox.Question, APP_NAME,
        f"This session was saved with {model_name(key)}; {model_name(current)} is loaded.\n\n"
        f"Switch to {model_name(key)} and restore the session with it?",
        QMessageBox.Yes | QMessageBox.No, window)
    box.setDefaultButton(QMessageBox.Yes)
    box.button(QMessageBox.Yes).setText("Switch model")
    box.button(QMessageBox.No).setText("Keep the current model")
    window.session_model_box = box

    def answered(_result: int) -> None:
        window.session_model_box = None
        if box.clickedButton() is box.button(QMessageBox.Yes):
            _switch_then(window, key, then)
        else:
            then()

    box.finished.connect(answered)
    box.open()
    return True


def _switch_then(window, key: str, then: Callable[[], None]) -> None:
    """Load the model ``key`` and call ``then`` once it has loaded or failed to (the window's one message says
    why); ``then`` runs after the window has finished handling the load (its re-analysis of the old text is then
    superseded by the session's)."""

    def finish(*_args) -> None:
        window.predictor_loaded.disconnect(finish)
        window.model_load_failed.disconnect(finish)
        QTimer.singleShot(0, then)

    window.predictor_loaded.connect(finish)
    window.model_load_failed.connect(finish)
    window.model_menu.open_model(key or None)
