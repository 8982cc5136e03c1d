"""Sessions: File > Save session / Open session.

A session is versioned JSON (``{"format": "attention-explorer-session", "version": 7, ...}``) holding the
review text, the model folder ("" for the bundled model, so the session works from any checkout or bundle),
the selected layer, head and tokens, the active view, the explanation results (token scores and
faithfulness), what the attention views show (``show``), the heads switched off (``head_mask``, (L, H) of 0/1, or
null) and the pinned texts (``pins``: text and head mask each), written atomically
(:func:`model.files.atomic.atomic_write_bytes`). Opening one analyses the pinned texts and pins them, then analyses the
text again with the model in use (the status bar says so when the session names another) and, once its
prediction arrives, restores the selection, the layer/head, the active view and the explanations (when the tokens
are unchanged). A session saved with another model first offers to switch to it when its folder exists
(:mod:`desktop_app.window.session.model_a`). Version 3 (issue 30) adds a sentence pair's second text (``text_pair``,
also per pin), the class chosen to explain (``target``, null: the predicted one) and the multi-label ``threshold``.
Version 1 and 2 files (without show, head mask and pins; without the version 3 fields) still open. An optional
``corpus_map`` object (issue 42: the Map view's settings and slices, :mod:`desktop_app.map_settings`) is restored
before the text is analysed; files without it open as before. Version 5 (issue 44, two models side by side) adds
model B: its folder (``model_b_dir``, the same convention as ``model_dir``: "" for the bundled model; null when no
model B was open) and its pins, kept in ``pins`` in their order and marked ``"model": "B"``; opening the session loads
model B the way the Model menu does and restores its pins, and a model B that cannot be loaded is named in the note
while the rest is restored (:mod:`desktop_app.window.session.model_b`). A session without model B leaves the model B
open now as it is. Version 1 to 4 files open as before (no model B). Version 6 (issue 54) adds the workspace on
screen (``workspace``: a key of :data:`desktop_app.window.workspaces.WORKSPACES`); opening the session switches to it
at once. Version 1 to 5 files show the workspace of their active view (raising a view switches to its workspace).
Version 7 (issue 53) adds the settings of the encoder block's views (``inside``: view key -> its settings, e.g.
``{"components": {"top_neurons": 10, "part": "L2.ffn"}, "patching": {...}}``), adopted once the text's prediction is
back (:mod:`desktop_app.panels.inside.docks`); a view that refuses its settings keeps its own and is named in the note.

:func:`read_session` raises :class:`SessionError` with a message for the user for a damaged file, a file
that is not a session, or one written by a newer version of the app.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from model.files.atomic import atomic_write_bytes
from model.tasks.types import task_type

from desktop_app.map_settings import MapSettings
from desktop_app.records import MODEL_A, MODEL_B
from desktop_app.window.session import fields as session_fields
from desktop_app.window.model_menu import folder_key
from desktop_app.window.session.fields import (
    SessionError, explanation_from_json, explanation_to_json, load_session_json
)
from desktop_app.window.session.model_a import model_name

FORMAT = "attention-explorer-session"
VERSION = 7
SUFFIX = ".aesession.json"


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
        pins: ``{"text": str, "head_mask": (L, H) lists or None, "text_pair": str or None, "model": "" or "B"}`` per
            pinned analysis, oldest first; ``model`` is :data:`~desktop_app.records.MODEL_B` ("B") for a pin of model B
            (its text read with model B; head_mask None), :data:`~desktop_app.records.MODEL_A` ("") otherwise.
        dropped: method ids of explanations left out when reading (unknown to this app); not written.
        text_pair: the second text of a sentence pair, or None (a single text).
        target: the class the user chose to explain (0-based), or None (the predicted class).
        threshold: the multi-label decision threshold in (0, 1), or None (the model's).
        window: the window of a long review shown (0-based; :mod:`desktop_app.document`); ``selection`` indexes its
            tokens. 0 for a review that fits, and in sessions before version 4.
        corpus_map: the corpus map's settings and slices (:class:`desktop_app.map_settings.MapSettings`), or None.
        model_b_dir: model B's folder (version 5, issue 44; "" = the bundled model), or None: no model B (and in
            sessions before version 5).
        workspace: the workspace on screen (version 6, issue 54: "read", ...), or "" (sessions before version 6).
        inside: the encoder block's views' settings (version 7, issue 53): view key -> its settings dict, or {}.
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
    dropped: tuple[str, ...] = ()
    text_pair: str | None = None
    target: int | None = None
    threshold: float | None = None
    window: int = 0
    corpus_map: MapSettings | None = None
    model_b_dir: str | None = None
    workspace: str = ""
    inside: dict = field(default_factory=dict)

    def to_json_dict(self) -> dict:
        """The file's JSON object."""
        return {
            "format": FORMAT, "version": VERSION, "text": self.text, "model_dir": self.model_dir,
            "layer": self.layer, "head": self.head, "selection": list(self.selection),
            "active_view": self.active_view, "explanations": self.explanations, "show": self.show,
            "head_mask": self.head_mask, "pins": list(self.pins), "text_pair": self.text_pair,
            "target": self.target, "threshold": self.threshold, "window": self.window,
            "corpus_map": None if self.corpus_map is None else self.corpus_map.to_json(),
            "model_b_dir": self.model_b_dir, "workspace": self.workspace, "inside": self.inside,
        }


def write_session(session: Session, path: str | Path) -> None:
    """Write ``session`` to ``path`` atomically (UTF-8 JSON). Raises OSError when it cannot be written."""
    atomic_write_bytes(path, json.dumps(session.to_json_dict(), ensure_ascii=False, indent=1).encode("utf-8"))


def read_session(path: str | Path) -> Session:
    """Read a session file: only a regular file within the size limit, every field checked (see
    :mod:`.fields`), the texts normalised as the editor normalises them.

    Raises:
        SessionError: unreadable, not a regular file, too large, damaged (not JSON, nested too deeply, a field
            missing, mistyped, out of range or not finite: the message names it), not a session, or a newer version.
    """
    from model.explain.methods import METHODS

    name = Path(path).name
    data = load_session_json(path)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise SessionError(f"{name} is not an Attention Explorer session.")
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise SessionError(f"{name} is damaged: its version {version!r} is not a positive whole number.")
    if version > VERSION:
        raise SessionError(
            f"{name} was saved by a newer version of Attention Explorer (session version {version}; this one reads "
            f"up to {VERSION}). Update the app to open it."
        )
    try:
        if "text" not in data:
            raise SessionError("it has no text")
        kept, dropped = session_fields.explanations(data.get("explanations"), tuple(METHODS))
        return Session(
            text=session_fields.session_text(data["text"]), **session_fields.view_fields(data),
            explanations=kept, show=_show_of(data.get("show")),
            head_mask=session_fields.head_mask(data.get("head_mask")),
            pins=session_fields.pins(data.get("pins")), dropped=tuple(dropped), **session_fields.task_fields(data),
            corpus_map=session_fields.corpus_map(data.get("corpus_map")),
            inside=session_fields.inside(data.get("inside")),
        )
    except SessionError as exc:
        raise SessionError(f"{name} is damaged: {exc}.") from exc


def _show_of(value) -> str:
    from desktop_app.records import SHOW_CHOICES

    if value is None:
        return "attention"
    if not isinstance(value, str) or value not in SHOW_CHOICES:
        raise SessionError(f"show is {value!r}, not one of {', '.join(SHOW_CHOICES)}")
    return value


def _mask_json(mask) -> list | None:
    return None if mask is None else [[float(x) for x in row] for row in mask.tolist()]


# -- the main window side -------------------------------------------------------------------------------------
def capture(window) -> Session:
    """The window's current session (text, model folder, layer/head, selection, active view, explanations, model B's
    folder and every pin, model B's too, the workspace, the block views' settings)."""
    from desktop_app.panels.inside.docks import inside_settings

    state, info, second = window.state, window.model_info, window.model_menu.second
    folder = info.model_dir if info is not None else window.model_dir
    return Session(
        text=window.editor.toPlainText(), model_dir=folder_key(folder),
        layer=state.layer, head=state.head, selection=tuple(state.selection),
        active_view=window.file_actions.current_view_name(),
        explanations={m: explanation_to_json(r) for m, r in state.explanations.items()},
        show=state.show, head_mask=_mask_json(state.head_mask),
        pins=tuple({"text": p.text, "head_mask": _mask_json(p.head_mask), "text_pair": p.text_pair,
                    "model": MODEL_B if p.of_model_b else MODEL_A} for p in state.pins),
        text_pair=window.review_box.text_pair(), target=None if state.task.following else state.task.target,
        threshold=state.task.threshold if info is not None and task_type(info.task).label_set else None,
        window=state.windows.current,
        corpus_map=None if getattr(window, "corpus_map", None) is None else window.corpus_map.settings(),
        model_b_dir=None if second.predictor is None else folder_key(second.folder),
        workspace="" if window.workspaces.current is None else window.workspaces.current.key,
        inside=inside_settings(window),
    )


def restore(window, session: Session, done=None, offer_switch: bool = True) -> None:
    """Bring back the session's model B, analyse and pin ``session.pins``, then analyse ``session.text`` and, when its
    prediction arrives, restore the rest of ``session``.

    The explanations go into the explorer state (the explanation panel shows what the state holds). What cannot be
    restored (a head mask that does not fit the model in use, a layer, head or tokens beyond it, explanations of
    other tokens or of unknown methods, a model B that cannot be loaded and its pins) is left out and listed in one
    status-bar note. The restore always ends: when an analysis fails, a message box says so and the window stays as
    it is. ``done(session)`` is called once the restore has ended (optional). When the session names another model
    whose folder exists here (and ``offer_switch``), the user is first offered to switch to it
    (:mod:`desktop_app.window.session.model_a`). Model B is loaded first, as Model > Compare with a second model...
    loads it, when the session names one other than the model B open (:mod:`desktop_app.window.session.model_b`).
    """
    from desktop_app.window.session.model_b import merged_pins, restore_model_b

    notes = _model_notes(window, session, done, offer_switch)
    if notes is None:  # the user is asked first; restore() again once answered
        return
    if session.workspace and window.workspaces.current is not None:
        window.workspaces.switch(session.workspace)
    state = window.state
    state.clear_pins()
    state.set_show(session.show)
    pending = [p for p in session.pins if p["model"] != MODEL_B]  # model A's pins, analysed one by one
    expected = {"text": None}  # the text being analysed, exactly as the editor or the predictor holds it
    with_b = [False]  # whether model B's pins are restored (model B is the session's)

    def set_mask(mask) -> None:
        try:
            state.set_head_mask(mask)
        except ValueError as exc:
            notes.append(f"The session's heads switched off were left out: {exc}.")
            state.set_head_mask(None)

    def finish() -> None:
        state.events.prediction.disconnect(on_prediction)
        window.analysis_failed.disconnect(on_failed)
        if done is not None:
            done(session)

    def on_failed(message: str) -> None:
        finish()
        window.show_error(f"The session could not be restored: the analysis failed ({message}).")

    def on_prediction(pred) -> None:
        if pred is None or pred.document.text != expected["text"]:  # cleared, an older analysis (a long review: whole)
            return
        if pending:  # a pinned text's analysis
            pending.pop(0)
            state.pin_current()
            next_step()
            return
        if _awaits_window(state, session, pred, notes):
            return
        finish()
        notes.extend(_restore_view(window, session, pred))
        if notes:  # the model note was shown at once; all of them again now (the analysis' own status replaced it)
            window.statusBar().showMessage(" ".join(notes), 15000)

    def next_step() -> None:
        if pending:
            set_mask(pending[0]["head_mask"])
            expected["text"] = pending[0]["text"]
            window.controller.analyze(pending[0]["text"], state.head_mask, text_pair=pending[0].get("text_pair"))
        else:
            state.set_pins(merged_pins(session.pins, state.pins, with_b[0]))
            set_mask(session.head_mask)
            notes.extend(_restore_task(window, session))
            window.analyze_text(session.text)
            expected["text"] = window.editor.toPlainText()
            if not expected["text"].strip():  # nothing the editor analyses (e.g. a byte-order mark only)
                on_failed("the text is empty in the editor")

    def start(b_restored: bool) -> None:
        with_b[0] = b_restored
        state.events.prediction.connect(on_prediction)
        window.analysis_failed.connect(on_failed)
        next_step()

    restore_model_b(window, session.model_b_dir, session.pins, notes, start)


def _model_notes(window, session: Session, done, offer_switch: bool) -> list[str] | None:
    """The restore's first notes (the session's model is not the one in use, explanations of unknown methods), or
    None when the user is first offered to switch to the session's model (:func:`restore` follows once answered)."""
    from desktop_app.window.session.model_a import offer_model_switch, session_model_key

    notes: list[str] = []
    info = window.model_info
    key, problem = session_model_key(session.model_dir)
    if info is not None and key is not None and key != folder_key(info.model_dir) and offer_switch:
        if offer_model_switch(window, session.model_dir, lambda: restore(window, session, done, offer_switch=False)):
            return None
    if info is not None and (key is None or key != folder_key(info.model_dir)):
        saved = f"names no model here: its {problem}" if key is None else f"was saved with {model_name(key)}"
        notes.append(f"This session {saved}; it is shown with {model_name(info.model_dir)}.")
        window.statusBar().showMessage(notes[0], 10000)
    if session.dropped:
        notes.append(f"Left out the explanations of methods this version does not know: {', '.join(session.dropped)}.")
    return notes


def _awaits_window(state, session: Session, pred, notes: list[str]) -> bool:
    """True when ``session`` shows another window of the long review of ``pred`` (then requested: its prediction comes
    next); a window beyond the review adds a note."""
    if session.window != pred.window and session.window < pred.num_windows:
        state.windows.request(session.window)
        return True
    if session.window >= pred.num_windows:
        notes.append(f"Window {session.window + 1} is beyond this review's {pred.num_windows}: showing "
                     f"window {pred.window + 1}.")
    return False


def _restore_view(window, session: Session, pred) -> list[str]:
    """The layer/head, selection, active view and explanations of ``session`` for its prediction ``pred``; returns
    notes on what could not be restored."""
    from desktop_app.panels.inside.docks import apply_inside_settings

    state, notes = window.state, []
    state.set_layer_head(session.layer, session.head)
    if (state.layer, state.head) != (session.layer, session.head):
        notes.append(f"Layer {session.layer + 1}, head {session.head + 1} is beyond this model: showing "
                     f"layer {state.layer + 1}.")
    kept = [i for i in session.selection if 0 <= i < pred.num_tokens]
    if len(kept) < len(session.selection):
        notes.append(f"{len(session.selection) - len(kept)} selected token(s) beyond the text were left out.")
    state.set_selection(kept)
    window.docks.raise_view(session.active_view)
    if session.target is not None:
        try:
            state.task.pick(session.target)
        except ValueError as exc:
            notes.append(f"The session's class to explain was left out: {exc}.")
    other = []
    for method, data in session.explanations.items():
        result = explanation_from_json(data)
        if list(result.explanation.tokens) == list(pred.document.tokens):  # a long review: its whole tokens
            state.add_explanation(result)
        else:
            other.append(method)
    if other:
        notes.append(f"The explanations of {', '.join(other)} were for other tokens (another model or text): "
                     "left out.")
    return notes + apply_inside_settings(window, session.inside)


def _restore_task(window, session: Session) -> list[str]:
    """The second text, the threshold and the corpus map's settings and slices of ``session`` (before its text is
    analysed); notes on what was left out."""
    notes = []
    if (settings := session.corpus_map) is not None and getattr(window, "corpus_map", None) is not None:
        window.corpus_map.apply_settings(settings)
    box = window.review_box
    if session.text_pair is not None and not box.pair_action.isEnabled():
        notes.append("The session's second text was left out: this model reads single texts.")
    box.set_text_pair(session.text_pair if box.pair_action.isEnabled() else None)
    if session.threshold is not None:
        window.state.task.set_threshold(session.threshold)
    return notes


def save_session_dialog(window) -> None:
    """File > Save session: ask for a file name and write the session (errors as a message box)."""
    from PySide6.QtWidgets import QFileDialog

    default = str(Path(window.file_actions.last_folder()) / f"session{SUFFIX}")
    path, _ = QFileDialog.getSaveFileName(window, "Save session", default, f"Sessions (*{SUFFIX} *.json)")
    if not path:
        return
    window.file_actions.remember_folder(path)
    try:
        write_session(capture(window), path)
        window.statusBar().showMessage(f"Saved session {path}", 5000)
    except OSError as exc:
        window.show_error(f"Cannot save the session: {exc}")


def open_session_dialog(window) -> None:
    """File > Open session: ask for a file and restore it (a damaged or newer file: a clear message box)."""
    from PySide6.QtWidgets import QFileDialog

    path, _ = QFileDialog.getOpenFileName(window, "Open session", window.file_actions.last_folder(),
                                          f"Sessions (*{SUFFIX} *.json);;All files (*)")
    if path:
        window.file_actions.remember_folder(path)
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
