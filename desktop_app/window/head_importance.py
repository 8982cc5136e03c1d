"""Load a head-importance table for the model view's overlay (GUI side; reads JSON, imports no evaluation code).

``python -m model.evaluation.head_importance --data FILE --n 500 --out heads.json`` writes a JSON object whose
``"importance"`` is the (layers x heads) table of Michel, Levy & Neubig 2019 (eq. 2: the expected absolute gradient
of the loss with respect to each head's mask variable), l2-normalised per layer; ``"n_layers"``, ``"n_heads"``,
``"n"`` (reviews), ``"source"`` and ``"model"`` describe it. :func:`read_head_importance` reads and checks such a
file; :func:`load_head_importance_dialog` asks for one and puts it on the explorer state
(:meth:`desktop_app.state.ExplorerState.set_head_importance`), which the model view overlays.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
from PySide6.QtWidgets import QFileDialog

MAX_BYTES = 20_000_000  # a head-importance JSON is a few kB (the pruning masks included); refuse anything huge
SETTINGS_KEY = "files/head_importance_folder"


class HeadImportanceError(ValueError):
    """A file that is not a usable head-importance JSON; the message is one line naming the file and the problem."""


def _table(data: dict, name: str) -> np.ndarray:
    """``data["importance"]`` as float64 (L, H), checked: a non-empty rectangular table of finite numbers."""
    rows = data["importance"]
    if not isinstance(rows, list) or not rows or not all(isinstance(r, list) and r for r in rows):
        raise HeadImportanceError(f"{name}: \"importance\" is not a (layers x heads) table of numbers")
    if len({len(r) for r in rows}) != 1:
        raise HeadImportanceError(f"{name}: the rows of \"importance\" have different lengths")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for r in rows for v in r):
        raise HeadImportanceError(f"{name}: \"importance\" holds a value that is not a finite number")
    return np.array(rows, dtype=np.float64)


def read_head_importance(path: str | Path, shape: tuple[int, int] | None = None) -> tuple[np.ndarray, str]:
    """Read a head-importance JSON (see the module docstring).

    Args:
        path: the ``.json`` file.
        shape: (layers, heads) of the loaded model, or None to accept any shape.

    Returns:
        ``(importance, name)``: float32 (L, H) (the file's ``"importance"``, higher = more important; read-only) and
        a short description for captions and tooltips, e.g. "head importance (Michel et al. 2019, eq. 2; 500
        reviews; heads.json)".

    Raises:
        HeadImportanceError (a ValueError): the file cannot be read, is not JSON, is not a head-importance file (no
            ``"importance"`` table), its table is damaged (ragged, not numbers, not finite) or disagrees with its own
            ``"n_layers"``/``"n_heads"``, or it is for another shape of model than ``shape``.
    """
    p = Path(path)
    name = p.name or str(p)
    try:
        if p.stat().st_size > MAX_BYTES:
            raise HeadImportanceError(f"{name}: {p.stat().st_size:,} bytes is far too large for a head-importance file")
        data = json.loads(p.read_bytes().decode("utf-8"))
    except HeadImportanceError:
        raise
    except OSError as e:
        raise HeadImportanceError(f"cannot read {name}: {e.strerror or e}") from e
    except UnicodeDecodeError as e:
        raise HeadImportanceError(f"{name} is not a text (UTF-8 JSON) file") from e
    except json.JSONDecodeError as e:
        raise HeadImportanceError(f"{name} is not valid JSON (line {e.lineno}: {e.msg})") from e
    if not isinstance(data, dict) or "importance" not in data:
        raise HeadImportanceError(f"{name} is not a head-importance file (no \"importance\" table; write one with "
                                  "python -m model.evaluation.head_importance)")
    table = _table(data, name)
    L, H = table.shape
    own = (data.get("n_layers", L), data.get("n_heads", H))
    if own != (L, H):
        raise HeadImportanceError(f"{name}: the table is {L} x {H} but the file says {own[0]} layers x {own[1]} heads")
    if shape is not None and (L, H) != tuple(shape):
        raise HeadImportanceError(f"{name} is for a model of {L} layers x {H} heads; the loaded model has "
                                  f"{shape[0]} layers x {shape[1]} heads")
    arr = table.astype(np.float32)
    arr.setflags(write=False)
    return arr, _describe(data, name)


def _describe(data: dict, name: str) -> str:
    """e.g. "head importance (Michel, Levy & Neubig 2019, eq. 2; 500 reviews; heads.json)"."""
    parts = [str(data["source"])] if isinstance(data.get("source"), str) and data["source"] else []
    if isinstance(data.get("n"), int) and not isinstance(data.get("n"), bool):
        parts.append(f"{data['n']:,} review{'s' if data['n'] != 1 else ''}")
    parts.append(name)
    return f"head importance ({'; '.join(parts)})"


def load_head_importance_dialog(window, path: str | Path | None = None) -> np.ndarray | None:
    """Ask for a head-importance JSON (a file dialog, unless ``path`` is given) and overlay it in the model view.

    Args:
        window: the :class:`~desktop_app.window.main_window.MainWindow` (its ``state``, ``settings``,
            ``show_error`` and status bar are used).
        path: the file to load without asking (tests, scripts); None opens the dialog.

    Returns:
        The float32 (L, H) table now on ``window.state``, or None (cancelled, or the file was refused: the reason
        is shown with ``window.show_error``, one line; nothing changes).
    """
    settings = getattr(window, "settings", None)
    if path is None:
        start = str(settings.value(SETTINGS_KEY, str(Path.home()))) if settings is not None else str(Path.home())
        path, _ = QFileDialog.getOpenFileName(window, "Load head importance", start,
                                              "Head importance (*.json);;All files (*)")
        if not path:
            return None
    state = window.state
    shape = (state.n_layers, state.n_heads) if state.info is not None else None
    try:
        table, name = read_head_importance(path, shape)
        state.set_head_importance(table, name)
    except ValueError as e:  # HeadImportanceError, or the state refusing it (a model switched in between)
        window.show_error(f"Could not load head importance: {e}")
        return None
    if settings is not None:
        settings.setValue(SETTINGS_KEY, str(Path(path).parent))
    window.statusBar().showMessage(f"Loaded {name}", 5000)
    return state.head_importance
