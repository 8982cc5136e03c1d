"""Robustness fuzz, part 2: hundreds of damaged session files opened in the real main window.

``python -m benchmarks.fuzz_sessions [--n 250] [--seed 0] [--timeout 60] [--show 0]``

Saves a full session (text, pins of model A and of model B, model B's folder, head mask, layer/head, selection,
view, explanations including integrated gradients without a convergence delta) of a tiny random model, then damages copies at random: any field (nested
ones included) set to NaN, ±Infinity, huge, negative, mistyped values, strings with NUL bytes, lone surrogates,
CR/LF variants, U+2028/U+2029, empty or 3-million-character texts, deep nesting, or deleted; whole files truncated,
bit-flipped, not UTF-8, empty, a JSON array, 50 MB, a folder or a named pipe. Each goes through File > Open
session (``open_session``, message boxes recorded) in an offscreen window of a server process (restarted after a
crash or a hang); after each case the window must analyse a new text, or the case counts as a hang.

Outcomes: ``clear error`` (a SessionError message box of one paragraph), ``restored`` (the restore ended and the
prediction is of the editor's text), ``restore ended with a message`` (the analysis failed: a message box),
``crash`` (another exception, from the open or escaping a slot), ``hang`` (no end, or an unusable window, within
``--timeout`` s). Prints one JSON object with the counts. Asserts nothing.
"""

from __future__ import annotations

import json
import math
import os
import random
import sys
import time
from pathlib import Path

from benchmarks.fuzz_common import answer_lines, fuzz_main

VALUES = [math.nan, math.inf, -math.inf, 10**30, -1, -3, 0, 1, 2, 1.5, 1e308, True, None, "", "0", "a\x00b",
          "\ud800", [], {}, [1, 2], [[1]], {"a": 1}, [math.inf], "x" * 1000]
TEXTS = ["Good\r\nfilm.", "Good\rfilm.", "Good\u2028film.", "Good\u2029film.", "Good \ud800film.", "", "   \n ",
         "\ufeffGood.", "\ufffeGood.", "Good\ufdd0film.", "Good\x00film.", "x" * 3_000_000, "\udc00"]


def base_session(model_dir: Path) -> dict:
    """A complete session of ``model_dir`` (a tiny random model, also its model B), as its JSON object."""
    import numpy as np

    from desktop_app.window.session.save_open import FORMAT, VERSION
    from model import Predictor

    p = Predictor.from_pretrained(model_dir, device="cpu")
    text = "A slow start.\nThen a wonderful second half that I would watch again."
    tokens = list(p.predict(text).tokens)
    mask = np.ones((p.config.n_layers, p.config.n_heads)).tolist()
    mask[0][1] = 0.0

    def record(method, delta):
        e = {"method": method, "scores": [0.1] * len(tokens), "signed": True, "target": 1, "elapsed_s": 0.01,
             "convergence_delta": delta, "tokens": tokens}
        f = {"method": method, "comprehensiveness_aopc": 0.2, "sufficiency_aopc": 0.1, "elapsed_s": 0.01,
             "per_k": {"5": {"comprehensiveness": 0.2, "sufficiency": 0.1, "tokens": 1}}, "target": 1, "p_full": 0.7}
        return {"explanation": e, "faithfulness": f}

    return {"format": FORMAT, "version": VERSION, "text": text, "model_dir": str(model_dir), "layer": 1, "head": 0,
            "selection": [1, 2], "active_view": "Neuron view", "show": "alti", "head_mask": mask,
            "pins": [{"text": "Bad plot.", "head_mask": None}, {"text": "Fine plot.", "head_mask": None, "model": "B"}],
            "model_b_dir": str(model_dir),  # version 5: the same tiny model as model B, with a pin of B
            "explanations": {"grad_x_input": record("grad_x_input", None),
                             "integrated_gradients": record("integrated_gradients", None)}}


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value[:4]):
            yield from _paths(v, (*prefix, i))


def mutate_json(data: dict, rng: random.Random) -> str:
    """Damage one field of ``data`` in place; returns what was done."""
    path = rng.choice([p for p in _paths(data) if p])
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    how = rng.choice(["value", "value", "delete", "text", "deep"])
    if how == "delete":
        del parent[path[-1]]
    elif how == "text":
        parent[path[-1]] = rng.choice(TEXTS)
    elif how == "deep":  # spliced in as text by write_case (json.dumps itself recurses)
        parent[path[-1]] = f"__DEEP_{rng.choice([40, 3000])}__"
    else:
        parent[path[-1]] = rng.choice(VALUES)
    return f"{'.'.join(map(str, path))}: {how}"[:80]


def write_case(path: Path, base: dict, rng: random.Random) -> str:
    """Write one damaged session to ``path``; returns what was done."""
    kind = rng.choice(["field"] * 6 + ["text"] * 2 + ["two fields", "file"])
    data = json.loads(json.dumps(base))
    if kind == "text":
        where = rng.choice(["text", "pin"])
        value = rng.choice(TEXTS)
        if where == "text":
            data["text"] = value
        else:
            data["pins"][0]["text"] = value
        what = f"{where} = {value[:20]!r}"
    elif kind in ("field", "two fields"):
        what = "; ".join(mutate_json(data, rng) for _ in range(1 if kind == "field" else 2))
    else:
        return _write_damaged_file(path, json.dumps(base).encode(), rng)
    text = json.dumps(data, allow_nan=True)
    for depth in (40, 3000):
        text = text.replace(f'"__DEEP_{depth}__"', "[" * depth + "]" * depth)
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    return what


def _write_damaged_file(path: Path, raw: bytes, rng: random.Random) -> str:
    how = rng.choice(["truncate", "flip", "latin-1", "empty", "array", "50 MB", "folder", "fifo", "deep"])
    if how == "truncate":
        path.write_bytes(raw[: rng.randrange(len(raw))])
    elif how == "flip":
        buf = bytearray(raw)
        for _ in range(rng.randint(1, 10)):
            buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
        path.write_bytes(bytes(buf))
    elif how == "latin-1":
        path.write_bytes(raw.replace(b"A slow", "\u00c0 slow".encode("latin-1")))
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "array":
        path.write_bytes(b"[" + raw + b"]")
    elif how == "50 MB":
        with open(path, "wb") as f:
            f.truncate(50 * 2**20)
    elif how == "folder":
        path.mkdir()
    elif how == "fifo" and hasattr(os, "mkfifo"):
        os.mkfifo(path)
    else:
        path.write_bytes(b'{"format": "attention-explorer-session", "version": 2, "text": ' + b"[" * 100_000)
    return f"file: {how}"


# -- the server ---------------------------------------------------------------------------------------------------
def _wait(app, until, timeout: float) -> bool:
    from PySide6.QtCore import QEventLoop

    deadline = time.monotonic() + timeout
    while not until():
        if time.monotonic() > deadline:
            return False
        app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 50)
        time.sleep(0.002)
    return True


def _answer_model_question(win) -> bool:
    """A session of another model (e.g. its ``model_dir`` left out: the bundled model) asks whether to switch
    (:mod:`desktop_app.window.session.model_a`); answer as a user keeping the model in use would. True once answered."""
    from PySide6.QtWidgets import QMessageBox

    box = getattr(win, "session_model_box", None)
    if box is None:
        return False
    box.button(QMessageBox.No).click()
    return True


def judge(app, win, path: Path, caught: list, n: int) -> dict:
    """Open ``path`` in ``win`` and classify the outcome (see the module docstring)."""
    from desktop_app.window.session import save_open as session

    errors, done = len(win.errors), []
    try:
        opened = session.open_session(win, path, done.append)
    except Exception as exc:  # noqa: BLE001 - what the fuzz counts
        return {"outcome": "crash", "message": f"open: {type(exc).__name__}: {exc}"}
    if not opened:
        msg = win.errors[-1] if len(win.errors) > errors else ""
        outcome = "clear error" if msg and "\n" not in msg and "Traceback" not in msg else "unclear error"
        result = {"outcome": outcome, "message": msg}
    elif not (_wait(app, lambda: bool(done) or _answer_model_question(win), 30)
              and _wait(app, lambda: bool(done), 30)):
        return {"outcome": "hang", "message": "the restore did not end"}
    elif len(win.errors) > errors:
        result = {"outcome": "restore ended with a message", "message": win.errors[-1]}
    else:
        pred = win.state.prediction
        same = pred is not None and pred.text == win.editor.toPlainText()
        result = {"outcome": "restored" if same else "restored, other text", "message": ""}
    if caught:
        return {"outcome": "crash", "message": caught[-1]}
    check = f"Check number {n}: a usable window."
    win.analyze_text(check)
    if not _wait(app, lambda: win.state.prediction is not None and win.state.prediction.text == check, 30):
        return {"outcome": "hang", "message": "the window did not analyse a new text"}
    return result


def serve() -> None:
    """Answer session paths on stdin with one JSON line each (a window over ``$FUZZ_MODEL_DIR``)."""
    import logging

    logging.disable(logging.WARNING)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from desktop_app.window.main_window import MainWindow

    app = QApplication.instance() or QApplication([])
    win = MainWindow(os.environ["FUZZ_MODEL_DIR"], device="cpu")
    win.persist_settings, win.errors = False, []
    win.show_error = win.errors.append
    win.show()
    caught: list[str] = []
    sys.excepthook = lambda t, e, tb: caught.append(f"{t.__name__}: {e}")
    _wait(app, lambda: win.predictor is not None, 120)

    def judge_line(path: Path, n: int) -> dict:
        caught.clear()
        return judge(app, win, path, caught, n)

    answer_lines(judge_line)


def prepare(root: Path, rng: random.Random):
    """A tiny random model (``$FUZZ_MODEL_DIR`` for the server), its full session, and the case maker."""
    from tests.fixtures.tiny_models import make_random_model_dir

    os.environ["FUZZ_MODEL_DIR"] = str(make_random_model_dir(root / "model"))
    base = base_session(Path(os.environ["FUZZ_MODEL_DIR"]))

    def make_case(i: int):
        path = root / f"case{i}.aesession.json"
        return path, write_case(path, base, rng)

    return make_case


def main(argv=None) -> dict:
    """Run the fuzz; returns (and prints) the counts."""
    return fuzz_main("benchmarks.fuzz_sessions", __doc__, argv, 250, serve, prepare)


if __name__ == "__main__":
    main()
