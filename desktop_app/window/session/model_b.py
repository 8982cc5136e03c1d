"""Model B in a session (issue 44, "two models side by side"): the second model and its pins are saved and come back.

Since version 5 a session (:mod:`desktop_app.window.session.save_open`) records model B's folder (``model_b_dir``: its
:func:`~desktop_app.window.model_menu.folder_key`, "" for the bundled model, null when no model B was open) and keeps
model B's pins among ``pins``, in their order, marked ``"model": "B"`` (:data:`desktop_app.records.MODEL_B`; text and
second text as model A's pins; a pin of model B reads its text with all of B's heads on, so its ``head_mask`` is null).

Opening such a session first brings model B back (:func:`restore_model_b`): nothing to load when the model B open now
is the one of that folder; otherwise the folder is loaded by
:meth:`SecondModel.load <desktop_app.window.second_model.SecondModel.load>`, the one way Model > Compare with a
second model... loads it. The restore then analyses model A's pins as before and :func:`merged_pins` puts model B's
pins back among them, in the saved order, before the session's text is analysed (Compare then shows the newest pin's
comparison, A and B side by side when it is of model B). When model B cannot be brought back (``model_b_dir`` names
no model folder here, the folder is gone, it fails to load or cannot be compared with model A, model A is still
loading, or the load was stopped), the rest of the session is restored, model B's pins are left out, and the
restore's one status-bar note names the folder and why. The restore always ends: the load answers exactly once.

A session without model B (older versions, or saved with none open) leaves the model B open now as it is: the session
says nothing about model B and the user opened it on purpose (Stop comparing drops it). Its pins are replaced by the
session's, as every pin is.
"""

from __future__ import annotations

from collections.abc import Callable

from model.core.paths import default_model_dir

from desktop_app.records import MODEL_B, Pin
from desktop_app.window.model_menu import folder_key
from desktop_app.window.session.model_a import model_available, model_name, session_model_key


def restore_model_b(window, model_b_dir: str | None, pins, notes: list[str], then: Callable[[bool], None]) -> None:
    """Bring back the model B of a session, then call ``then(with_b)`` once, on the GUI thread.

    Args:
        window: the main window (its model B: ``window.model_menu.second``).
        model_b_dir: the session's ``model_b_dir`` ("" the bundled model, None: the session has no model B).
        pins: the session's pins (dicts with ``"model"``), to count model B's in a note.
        notes: the restore's status-bar notes; a sentence naming the folder and why is appended when model B of the
            session cannot be brought back (then model B's pins are left out).
        then: ``then(True)`` when model B's pins can be restored (model B is the session's, or the session names
            none and a model B is open), ``then(False)`` otherwise.

    Never raises; ``then`` is called exactly once (immediately, or when the load ends however it ends).
    """
    second = window.model_menu.second
    n_pins = sum(p["model"] == MODEL_B for p in pins)
    if model_b_dir is None:
        if n_pins and second.predictor is None:
            notes.append(f"{n_pins} pin(s) of model B were left out: the session names no model B and none is open.")
        then(second.predictor is not None)
        return
    key, problem = session_model_key(model_b_dir, "model_b_dir")
    left_out = f" ({n_pins} pin(s) of model B were left out)" if n_pins else ""

    def answered(message: str | None) -> None:
        if message is not None:
            notes.append(f"The session's model B, {model_name(key)}, was not opened{left_out}: {message}")
        then(message is None)

    if key is None:
        notes.append(f"The session's model B was left out{left_out}: {problem}.")
        then(False)
    elif second.predictor is not None and second.loading is None and folder_key(second.folder) == key:
        then(True)  # already open: nothing to load
    elif not model_available(key):
        answered("its folder does not exist here.")
    else:
        second.load(key or default_model_dir(), on_done=answered)


def merged_pins(saved, a_pins, with_b: bool) -> tuple[Pin, ...]:
    """The restored pins in the session's order: model A's pins as analysed (``a_pins``, oldest first) in the places
    of the session's pins of model A, and model B's pins (read with model B when compared) in theirs; without
    ``with_b`` model B's pins are left out.

    Args:
        saved: the session's pins (dicts ``{"text", "head_mask", "text_pair", "model"}``, oldest first).
        a_pins: the :class:`~desktop_app.records.Pin` objects the restore made of model A's pins, oldest first (fewer
            when two were the same text and mask: the leftover places are dropped).
        with_b: whether model B's pins are restored.
    """
    a_left = iter(a_pins)
    out = []
    for entry in saved:
        if entry["model"] != MODEL_B:
            out.append(next(a_left, None))
        elif with_b:
            out.append(Pin(entry["text"], None, None, entry["text_pair"], MODEL_B))
    return tuple(p for p in [*out, *a_left] if p is not None)


__all__ = ["merged_pins", "restore_model_b"]
