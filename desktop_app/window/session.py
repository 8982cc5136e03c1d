"""Sessions: File > Save session / Open session.

A session is versioned JSON (``{"format": "attention-explorer-session", "version": 2, ...}``) holding the
review text, the model folder ("" for the bundled model, so the session works from any checkout or bundle),
the selected layer, head and tokens, the active view, the explanation results (token scores and
faithfulness), what the attention views show (``show``), the heads switched off (``head_mask``, (L, H) of 0/1, or
null) and the pinned texts (``pins``: text and head mask each), written atomically
(:func:`model.atomic.atomic_write_bytes`). Opening one analyses the pinned texts and pins them, then analyses the
text again with the model in use (the status bar says so when the session names another) and, once its
prediction arrives, restores the selection, the layer/head, the active view and the explanations (when the tokens
are unchanged). Version 1 files (without show, head mask and pins) still open.

:func:`read_session` raises :class:`SessionError` with a message for the user for a damaged file, a file
that is not a session, or one written by a newer version of the app.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from model.atomic import atomic_write_bytes

from .model_menu import folder_key

FORMAT = "attention-explorer-session"
VERSION = 2
SUFFIX = ".aesession.json"


class SessionError(ValueError):
    """A session file that cannot be opened; ``str()`` is a message for the user."""


@dataclass(frozen=True)
class Session:
    """What a session file holds (version :data:`VERSION`).

    Attributes:
        text: the review text.
        model_dir: the model folder it was analysed with ("" = the bundled model).
        layer: 0-based layer; head: 0-based head or MEAN_HEADS / MAX_HEADS.
        selection: selected query token indices.
        active_view: title of the raised view (a :data:`desktop_app.views.registry.DOCKED_VIEWS` title) or "".
        explanations: JSON dicts ``{"explanation": ..., "faithfulness": ...}`` per method.
        show: what the attention views show (:data:`desktop_app.state.SHOW_CHOICES`).
        head_mask: (L, H) nested lists of 0/1 (0: head off), or None (every head on).
        pins: ``{"text": str, "head_mask": (L, H) lists or None}`` per pinned analysis, oldest first.
    """

    text: str
    model_dir: str = ""
    layer: int = 0
    head: int = -1
    selection: tuple[int, ...] = ()
    active_view: str = ""
    explanations: dict = field(default_factory=dict)
    show: str = "attention"
    head_mask: list | None = None
    pins: tuple[dict, ...] = ()

    def to_json_dict(self) -> dict:
        """The file's JSON object."""
        return {
            "format": FORMAT, "version": VERSION, "text": self.text, "model_dir": self.model_dir,
            "layer": self.layer, "head": self.head, "selection": list(self.selection),
            "active_view": self.active_view, "explanations": self.explanations, "show": self.show,
            "head_mask": self.head_mask, "pins": list(self.pins),
        }


def write_session(session: Session, path: str | Path) -> None:
    """Write ``session`` to ``path`` atomically (UTF-8 JSON). Raises OSError when it cannot be written."""
    atomic_write_bytes(path, json.dumps(session.to_json_dict(), ensure_ascii=False, indent=1).encode("utf-8"))


def read_session(path: str | Path) -> Session:
    """Read a session file.

    Raises:
        SessionError: unreadable, damaged (not JSON, wrong fields), not a session, or a newer version.
    """
    name = Path(path).name
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise SessionError(f"Cannot read {name}: {exc.strerror or exc}") from exc
    except (UnicodeDecodeError, ValueError) as exc:
        raise SessionError(f"{name} is damaged: it is not valid JSON ({exc}).") from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise SessionError(f"{name} is not an Attention Explorer session.")
    version = data.get("version")
    if not isinstance(version, int) or version < 1:
        raise SessionError(f"{name} is damaged: its version {version!r} is not a positive whole number.")
    if version > VERSION:
        raise SessionError(
            f"{name} was saved by a newer version of Attention Explorer (session version {version}; this one reads "
            f"up to {VERSION}). Update the app to open it."
        )
    try:
        text = data["text"]
        if not isinstance(text, str):
            raise TypeError("text is not a string")
        explanations = data.get("explanations") or {}
        if not isinstance(explanations, dict):
            raise TypeError("explanations is not an object")
        return Session(
            text=text, model_dir=str(data.get("model_dir") or ""), layer=int(data.get("layer", 0)),
            head=int(data.get("head", -1)), selection=tuple(int(i) for i in data.get("selection") or ()),
            active_view=str(data.get("active_view") or ""), explanations=explanations,
            show=_show_of(data.get("show")), head_mask=_mask_of(data.get("head_mask")),
            pins=tuple(_pin_of(p) for p in data.get("pins") or ()),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise SessionError(f"{name} is damaged: {exc}.") from exc


def _show_of(value) -> str:
    from ..records import SHOW_CHOICES

    if value is None:
        return "attention"
    if value not in SHOW_CHOICES:
        raise ValueError(f"show is {value!r}, not one of {', '.join(SHOW_CHOICES)}")
    return str(value)


def _mask_of(value) -> list | None:
    """A head mask as nested lists of floats in [0, 1] (rows of equal length), or None."""
    if value is None:
        return None
    rows = [[float(x) for x in row] for row in value]
    if not rows or len({len(r) for r in rows}) != 1 or any(not 0.0 <= x <= 1.0 for r in rows for x in r):
        raise ValueError("head_mask is not a table of numbers in [0, 1]")
    return rows


def _pin_of(value) -> dict:
    if not isinstance(value, dict) or not isinstance(value.get("text"), str) or not value["text"].strip():
        raise TypeError("a pin is not {text, head_mask}")
    return {"text": value["text"], "head_mask": _mask_of(value.get("head_mask"))}


def _mask_json(mask) -> list | None:
    return None if mask is None else [[float(x) for x in row] for row in mask.tolist()]


def explanation_to_json(result) -> dict:
    """An :class:`model.explain.ExplanationResult` as a JSON dict."""
    return {"explanation": result.explanation.to_json_dict(), "faithfulness": result.faithfulness.to_json_dict()}


def explanation_from_json(data: dict):
    """The :class:`model.explain.ExplanationResult` of :func:`explanation_to_json`. Raises KeyError/TypeError/ValueError."""
    import numpy as np

    from model.explain.records import Explanation, ExplanationResult, Faithfulness

    e, f = data["explanation"], data["faithfulness"]
    explanation = Explanation(
        method=str(e["method"]), scores=np.asarray(e["scores"], dtype=np.float32), signed=bool(e["signed"]),
        target=int(e["target"]), elapsed_s=float(e["elapsed_s"]),
        convergence_delta=None if e.get("convergence_delta") is None else float(e["convergence_delta"]),
        tokens=[str(t) for t in e["tokens"]],
    )
    faith = Faithfulness(
        method=str(f["method"]), comprehensiveness_aopc=float(f["comprehensiveness_aopc"]),
        sufficiency_aopc=float(f["sufficiency_aopc"]), per_k={int(k): v for k, v in (f.get("per_k") or {}).items()},
        elapsed_s=float(f.get("elapsed_s", 0.0)), target=int(f.get("target", 0)), p_full=float(f.get("p_full", 0.0)),
    )
    return ExplanationResult(explanation.method, explanation, faith)


# -- the main window side -------------------------------------------------------------------------------------
def capture(window) -> Session:
    """The window's current session (text, model folder, layer/head, selection, active view, explanations)."""
    state, info = window.state, window.model_info
    folder = info.model_dir if info is not None else window.model_dir
    return Session(
        text=window.editor.toPlainText(), model_dir=folder_key(folder),
        layer=state.layer, head=state.head, selection=tuple(state.selection),
        active_view=window.current_view_name(),
        explanations={m: explanation_to_json(r) for m, r in state.explanations.items()},
        show=state.show, head_mask=_mask_json(state.head_mask),
        pins=tuple({"text": p.text, "head_mask": _mask_json(p.head_mask)} for p in state.pins),
    )


def restore(window, session: Session, done=None) -> None:
    """Analyse and pin ``session.pins``, then analyse ``session.text`` and, when its prediction arrives, restore the
    rest of ``session``.

    The explanations go into the explorer state (the explanation panel shows what the state holds). A head mask
    that does not fit the model in use is left out (the status bar says so). ``done(session)`` is called once
    everything is restored (optional).
    """
    state = window.state
    notes: list[str] = []
    info = window.model_info
    if info is not None and folder_key(session.model_dir) != folder_key(info.model_dir):
        notes.append(f"This session was saved with {model_name(session.model_dir)}; it is shown with "
                     f"{model_name(info.model_dir)}.")
        window.statusBar().showMessage(notes[0], 10000)
    n_model_notes = len(notes)
    state.clear_pins()
    state.set_show(session.show)
    pending = list(session.pins)

    def set_mask(mask) -> None:
        try:
            state.set_head_mask(mask)
        except ValueError as exc:
            notes.append(f"The session's heads switched off were left out: {exc}.")
            state.set_head_mask(None)

    def on_prediction(pred) -> None:
        if pred is None:  # cleared on the way (e.g. a model switch): wait for the analysis
            return
        if pending:  # a pinned text's analysis
            if pred.whole.text != pending[0]["text"]:  # whole: a long review arrives as one of its windows
                return
            pending.pop(0)
            state.pin_current()
            next_step()
            return
        if pred.whole.text != session.text:
            return
        state.prediction_changed.disconnect(on_prediction)
        _restore_view(window, session, pred)
        if len(notes) > n_model_notes:  # the model note was shown at once; the mask notes come now, with it
            window.statusBar().showMessage(" ".join(notes), 10000)
        if done is not None:
            done(session)

    def next_step() -> None:
        if pending:
            set_mask(pending[0]["head_mask"])
            window.controller.analyze(pending[0]["text"], state.head_mask)
        else:
            set_mask(session.head_mask)
            window.analyze_text(session.text)

    state.prediction_changed.connect(on_prediction)
    next_step()


def _restore_view(window, session: Session, pred) -> None:
    """The layer/head, selection, active view and explanations of ``session`` for its prediction ``pred``."""
    state = window.state
    state.set_layer_head(session.layer, session.head)
    state.set_selection(i for i in session.selection if 0 <= i < pred.num_tokens)
    window.raise_view(session.active_view)
    for data in session.explanations.values():
        try:
            result = explanation_from_json(data)
        except (KeyError, TypeError, ValueError):
            continue
        if list(result.explanation.tokens) == list(pred.whole.tokens):  # a long review: its whole tokens
            state.add_explanation(result)


def model_name(folder: str | Path | None) -> str:
    """A model folder as a message names it: "the bundled model" ("" or ``resources/model``), else "the model in
    FOLDER"."""
    key = folder_key(folder)
    return f"the model in {key}" if key else "the bundled model"


def save_session_dialog(window) -> None:
    """File > Save session: ask for a file name and write the session (errors as a message box)."""
    from PySide6.QtWidgets import QFileDialog

    default = str(Path(window.last_folder()) / f"session{SUFFIX}")
    path, _ = QFileDialog.getSaveFileName(window, "Save session", default, f"Sessions (*{SUFFIX} *.json)")
    if not path:
        return
    window.remember_folder(path)
    try:
        write_session(capture(window), path)
        window.statusBar().showMessage(f"Saved session {path}", 5000)
    except OSError as exc:
        window.show_error(f"Cannot save the session: {exc}")


def open_session_dialog(window) -> None:
    """File > Open session: ask for a file and restore it (a damaged or newer file: a clear message box)."""
    from PySide6.QtWidgets import QFileDialog

    path, _ = QFileDialog.getOpenFileName(window, "Open session", window.last_folder(),
                                          f"Sessions (*{SUFFIX} *.json);;All files (*)")
    if path:
        window.remember_folder(path)
        open_session(window, path)


def open_session(window, path: str | Path, done=None) -> bool:
    """Read ``path`` and restore it into ``window`` (``done`` as in :func:`restore`); a bad file is shown as a
    message box. Returns True when the file was read."""
    try:
        session = read_session(path)
    except SessionError as exc:
        window.show_error(str(exc))
        return False
    restore(window, session, done)
    return True
