"""Reading a session file safely: the file, the JSON and every field checked, the texts normalised as the editor does.

:func:`load_session_json` opens only a regular file (a FIFO, a device or a folder is refused at once, from
``os.stat``, before anything is opened) of at most :data:`MAX_SESSION_BYTES`, and refuses JSON nested deeper than
:data:`MAX_DEPTH`. The field readers (:func:`session_text`, :func:`view_fields`, :func:`task_fields`,
:func:`head_mask`, :func:`pins`, :func:`corpus_map`, :func:`inside`, :func:`explanations`) check every field's type
and range (numbers finite, indices whole, strings without NUL bytes or lone surrogates, the corpus map's too,
explanation scores within float32, explanation records complete) and raise :class:`SessionError` with a message
that names the field. :func:`editor_text` is the
editor's own normalisation of a text (CRLF, a lone CR, U+2028/U+2029 become a newline; lone surrogates are dropped),
so the text a session restores is exactly the text that gets analysed. :func:`explanation_to_json` and
:func:`explanation_from_json` convert the explanation records.
Qt-free; :mod:`.save_open` builds the :class:`~.save_open.Session` from what this returns.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from model.text.inputs import MAX_TEXT_CHARS
from model.files.textio import read_regular_bytes

from desktop_app.map_settings import MapSettings, map_settings_from_json
from desktop_app.records import MODEL_A, MODEL_B

MAX_SESSION_BYTES = 16 * 2**20
"""The largest session file read (a session holds texts of at most ``MAX_TEXT_CHARS`` plus a few scores)."""
MAX_DEPTH = 32
"""The deepest JSON nesting a session may have (a real one is 5 levels deep)."""
MAX_INDEX = 1_000_000
"""The largest layer, head or token index a session may name."""
FLOAT32_MAX = float(np.finfo(np.float32).max)
"""The largest float32 (about 3.4e38): a session's explanation scores must fit."""


class SessionError(ValueError):
    """A session file that cannot be opened; ``str()`` is a message for the user."""


def load_session_json(path: str | Path):
    """The parsed JSON of a session file, checked for kind, size and depth before and while reading.

    Raises:
        SessionError: not a regular file, larger than :data:`MAX_SESSION_BYTES`, unreadable, not UTF-8 JSON, or
            nested deeper than :data:`MAX_DEPTH`.
    """
    name = Path(path).name
    try:
        raw = read_regular_bytes(path, MAX_SESSION_BYTES)
    except ValueError as exc:
        raise SessionError(
            f"Cannot open the session: {exc} (a session is a regular file of at most "
            f"{MAX_SESSION_BYTES // 2**20} MB, its text at most {MAX_TEXT_CHARS:,} characters).") from exc
    try:
        data = json.loads(raw.decode("utf-8"))
    except RecursionError as exc:
        raise SessionError(f"{name} is damaged: its JSON is nested too deeply.") from exc
    except (UnicodeDecodeError, ValueError) as exc:
        raise SessionError(f"{name} is damaged: it is not valid JSON ({exc}).") from exc
    if _depth(data) > MAX_DEPTH:
        raise SessionError(f"{name} is damaged: its JSON is nested more than {MAX_DEPTH} levels deep.")
    return data


def _depth(value) -> int:
    """The nesting depth of a JSON value, without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth <= MAX_DEPTH and isinstance(item, dict | list):
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def editor_text(text: str) -> str:
    """``text`` as the review editor holds it (``QPlainTextEdit.setPlainText`` then ``toPlainText``): CRLF, a lone
    CR, U+2028 and U+2029 become ``\\n``; lone surrogates are dropped (surrogate pairs become their character), and
    so is one leading byte-order mark (U+FEFF)."""
    text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "ignore").removeprefix("\ufeff")
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\u2028", "\n").replace("\u2029", "\n")


def _whole(value, name: str, lo: int, hi: int = MAX_INDEX) -> int:
    """A whole number in [lo, hi] (a float with no fraction counts); SessionError naming ``name`` otherwise."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise SessionError(f"{name} is {_show(value)}, not a whole number from {lo} to {hi:,}")
    return value


def _number(value, name: str) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        raise SessionError(f"{name} is {_show(value)}, not a finite number")
    return float(value)


def _float32(value, name: str) -> float:
    """A finite number that float32 holds (the explanation scores are float32: 1e300 would become inf)."""
    x = _number(value, name)
    if abs(x) > FLOAT32_MAX:
        raise SessionError(f"{name} is {_show(value)}, outside the float32 range (at most {FLOAT32_MAX:.4g} in size)")
    return x


def _string(value, name: str) -> str:
    if not isinstance(value, str):
        raise SessionError(f"{name} is {_show(value)}, not a string")
    if "\x00" in value:
        raise SessionError(f"{name} holds a NUL byte")
    if value != value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "ignore"):
        raise SessionError(f"{name} holds a lone surrogate (not valid Unicode)")
    return value


def _show(value) -> str:
    if value is None:
        return "missing (or null)"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def session_text(value, name: str = "text") -> str:
    """A review text of a session, normalised by :func:`editor_text`; refused when not a string, empty or too long."""
    if not isinstance(value, str):
        raise SessionError(f"{name} is {_show(value)}, not a string")
    if len(value) > MAX_TEXT_CHARS:
        raise SessionError(f"{name} has {len(value):,} characters; the limit is {MAX_TEXT_CHARS:,}")
    text = editor_text(value)
    if not text.strip():
        raise SessionError(f"{name} is empty: there is no review to analyse")
    return text


def head_mask(value, name: str = "head_mask") -> list | None:
    """A head mask: None, or a non-empty table of equal rows of finite numbers in [0, 1]."""
    if value is None:
        return None
    if not isinstance(value, list) or not value or not all(isinstance(r, list) and r for r in value):
        raise SessionError(f"{name} is not a table (a list of rows) of numbers in [0, 1]")
    rows = [[_number(x, name) for x in row] for row in value]
    if len({len(r) for r in rows}) != 1 or any(not 0.0 <= x <= 1.0 for r in rows for x in r):
        raise SessionError(f"{name} is not a table of numbers in [0, 1] with rows of equal length")
    return rows


def pins(value) -> tuple[dict, ...]:
    """``[{"text": str, "head_mask": ..., "text_pair": str or None, "model": MODEL_A or MODEL_B}, ...]`` with each
    text normalised as the editor does; ``model`` (version 5, issue 44: a pin of model B is ``"B"``) is
    :data:`~desktop_app.records.MODEL_A` ("", as the app writes it) when absent, as in every pin of older sessions;
    any other value (false, 0, [], null, another string) is an error naming the pin."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise SessionError(f"pins is {_show(value)}, not a list")
    out = []
    for i, pin in enumerate(value):
        if not isinstance(pin, dict):
            raise SessionError(f"pins[{i}] is {_show(pin)}, not {{text, head_mask}}")
        pair, model = pin.get("text_pair"), pin.get("model", MODEL_A)
        if not isinstance(model, str) or model not in (MODEL_A, MODEL_B):  # false, 0, [], null: no model's name
            raise SessionError(f"pins[{i}].model is {_show(model)}, not \"{MODEL_B}\" (model B), \"{MODEL_A}\" or "
                               "absent (model A)")
        out.append({"text": session_text(pin.get("text"), f"pins[{i}].text"),
                    "head_mask": head_mask(pin.get("head_mask"), f"pins[{i}].head_mask"),
                    "text_pair": None if pair is None else session_text(pair, f"pins[{i}].text_pair"),
                    "model": model})
    return tuple(out)


def task_fields(data: dict) -> dict:
    """Version 3 (issue 30): ``text_pair`` (a sentence pair's second text, normalised as the editor does, or None),
    ``target`` (the class the user chose to explain, or None: the predicted one) and ``threshold`` (the multi-label
    threshold in (0, 1), or None: the model's), checked; all None in older sessions."""
    pair, target, threshold = data.get("text_pair"), data.get("target"), data.get("threshold")
    if threshold is not None:
        threshold = _number(threshold, "threshold")
        if not 0.0 < threshold < 1.0:
            raise SessionError(f"threshold is {threshold!r}, not a number between 0 and 1")
    return {"text_pair": None if pair is None else session_text(pair, "text_pair"),
            "target": None if target is None else _whole(target, "target", 0), "threshold": threshold}


def view_fields(data: dict) -> dict:
    """``model_dir``, ``model_b_dir`` (version 5: model B's folder, "" for the bundled model, None: no model B),
    ``layer``, ``head``, ``selection``, ``active_view``, ``window`` (the window of a long review
    shown, 0 in sessions before version 4) and ``workspace`` (version 6; "" before) of a session object, checked."""
    selection = data.get("selection") or []
    if not isinstance(selection, list):
        raise SessionError(f"selection is {_show(selection)}, not a list of token indices")
    model_dir, model_b_dir = data.get("model_dir") or "", data.get("model_b_dir")
    return {
        "model_dir": _string(model_dir, "model_dir"),
        "model_b_dir": None if model_b_dir is None else _string(model_b_dir, "model_b_dir"),
        "layer": _whole(data.get("layer", 0), "layer", 0),
        "head": _whole(data.get("head", -1), "head", -2),
        "selection": tuple(_whole(i, f"selection[{n}]", 0) for n, i in enumerate(selection[:MAX_INDEX])),
        "active_view": _string(data.get("active_view") or "", "active_view"),
        "window": _whole(data.get("window", 0), "window", 0),
        "workspace": _workspace(data.get("workspace") or ""),
    }


def corpus_map(value) -> MapSettings | None:
    """The session's corpus-map settings and slices (None when it has none), every string checked as the rest of
    the session's (no NUL byte, no lone surrogate: issue 56): the settings, each slice's name and its rows'
    ``sources``.

    Raises:
        SessionError: a bad field, named (e.g. ``corpus_map.slices[0].sources[3]``).
    """
    if value is None:
        return None
    try:
        settings = map_settings_from_json(value)
    except ValueError as exc:
        raise SessionError(str(exc)) from None
    for key in ("projection", "colour", "label", "word", "select"):
        _string(getattr(settings, key), f"corpus_map.{key}")
    for k, piece in enumerate(settings.slices):
        _string(piece.name, f"corpus_map.slices[{k}].name")
        for i, source in enumerate(piece.sources):
            _string(source, f"corpus_map.slices[{k}].sources[{i}]")
    return settings


def inside(value) -> dict[str, dict]:
    """The encoder block's views' settings (version 7, issue 53): ``{view: {key: value}}``, a view one of
    :data:`desktop_app.inside_results.RESULT_FIELDS` (another, a newer app's, is dropped), each value a string checked
    as the session's others, a finite number, true/false or null; {} when the session has none. Each view checks its
    own keys when it adopts them (:func:`desktop_app.panels.inside.docks.apply_inside_settings`).

    Raises:
        SessionError: a bad field, named (e.g. ``inside.components.part``).
    """
    from desktop_app.inside_results import RESULT_FIELDS

    kept = {}
    for view, settings in ({} if value is None else _record(value, "inside")).items():
        if view not in RESULT_FIELDS:
            continue
        kept[view] = {}
        for key, v in _record(settings, f"inside.{view}").items():
            name = f"inside.{view}.{_string(key, f'a key of inside.{view}')}"
            if isinstance(v, str):
                _string(v, name)
            elif not (v is None or isinstance(v, bool)):
                _number(v, name)
            kept[view][key] = v
    return kept


def _workspace(value) -> str:
    """A session's workspace (version 6): a key of :data:`desktop_app.window.workspaces.BY_KEY`, or "" (none saved)."""
    from desktop_app.window.workspaces import BY_KEY

    key = _string(value, "workspace")
    if key and key not in BY_KEY:
        raise SessionError(f"workspace is {key!r}, not one of {', '.join(BY_KEY)}")
    return key


def _record(data, name: str) -> dict:
    if not isinstance(data, dict):
        raise SessionError(f"{name} is {_show(data)}, not an object")
    return data


def _check_explanation(e: dict, name: str) -> None:
    _string(e.get("method"), f"{name}.method")
    for key in ("scores", "tokens"):
        if not isinstance(e.get(key), list):
            raise SessionError(f"{name}.{key} is {_show(e.get(key))}, not a list")
    for i, s in enumerate(e["scores"]):
        _float32(s, f"{name}.scores[{i}]")
    for i, t in enumerate(e["tokens"]):
        _string(t, f"{name}.tokens[{i}]")
    if len(e["scores"]) != len(e["tokens"]):
        raise SessionError(f"{name} has {len(e['scores'])} scores for {len(e['tokens'])} tokens")
    if not isinstance(e.get("signed"), bool):
        raise SessionError(f"{name}.signed is {_show(e.get('signed'))}, not true or false")
    _whole(e.get("target"), f"{name}.target", 0)
    _number(e.get("elapsed_s"), f"{name}.elapsed_s")
    if e.get("convergence_delta") is not None:
        _number(e["convergence_delta"], f"{name}.convergence_delta")


def _check_faithfulness(f: dict, name: str) -> None:
    _string(f.get("method"), f"{name}.method")
    for key in ("comprehensiveness_aopc", "sufficiency_aopc"):
        _number(f.get(key), f"{name}.{key}")
    for key in ("elapsed_s", "p_full"):
        if key in f:
            _number(f[key], f"{name}.{key}")
    if "target" in f:
        _whole(f["target"], f"{name}.target", 0)
    per_k = f.get("per_k") or {}
    if not isinstance(per_k, dict):
        raise SessionError(f"{name}.per_k is {_show(per_k)}, not an object {{k: scores}}")
    for k, scores in per_k.items():
        _whole(int(k) if isinstance(k, str) and k.strip().isdigit() else k, f"{name}.per_k key {k!r}", 0, 100)
        for key, v in _record(scores, f"{name}.per_k[{k}]").items():
            _number(v, f"{name}.per_k[{k}].{key}")


def explanations(value, known: tuple[str, ...]) -> tuple[dict, list[str]]:
    """The explanation records of a session, each checked field by field; records of methods this app does not
    know (``known``: the method ids) are left out and named in the second item (for the restore's note).

    Raises:
        SessionError: a record with a missing or mistyped field (named, e.g. ``explanations["x"].scores[3]``).
    """
    if value is None:
        return {}, []
    if not isinstance(value, dict):
        raise SessionError(f"explanations is {_show(value)}, not an object")
    kept, dropped = {}, []
    for method, data in value.items():
        name = f"explanations[{method!r}]"
        data = _record(data, name)
        e = _record(data.get("explanation"), f"{name}.explanation")
        f = _record(data.get("faithfulness"), f"{name}.faithfulness")
        _check_explanation(e, f"{name}.explanation")
        _check_faithfulness(f, f"{name}.faithfulness")
        if method not in known or e["method"] != method or f["method"] != method:
            dropped.append(str(method)[:40])
            continue
        kept[method] = data
    return kept, dropped



def explanation_to_json(result) -> dict:
    """An :class:`model.explain.ExplanationResult` as a JSON dict."""
    return {"explanation": result.explanation.to_json_dict(), "faithfulness": result.faithfulness.to_json_dict()}


def explanation_from_json(data: dict):
    """The :class:`model.explain.ExplanationResult` of :func:`explanation_to_json`. Raises KeyError/TypeError/ValueError."""
    import numpy as np

    from model.records.explanation import Explanation, ExplanationResult, Faithfulness

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
