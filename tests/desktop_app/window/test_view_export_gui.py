"""Every file the app writes goes through the one atomic writer (model.files.atomic): the batch table's exports, the
views' PNG/SVG export (desktop_app.window.view_export) and a model config honour the umask, keep an overwritten
file's mode and write through a symlink (a bug a user reported, issue 11, item 7)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

pytestmark = pytest.mark.gui


def _row(source, text="good film", label="positive", p=0.9, gold="", correct=None, status="ok"):
    """A two-class batch row (:func:`model.batch.rows.binary_row`, 5 tokens, not truncated)."""
    from model.batch.rows import binary_row

    return binary_row(source, text, label, p, 5, False, gold, correct, status)


# -- exported files honour the umask; overwriting keeps the mode ----------------------------------------------
@pytest.fixture
def umask_027():
    old = os.umask(0o027)
    yield 0o640
    os.umask(old)


def _mode(p) -> int:
    return stat.S_IMODE(os.stat(p).st_mode)


def test_every_export_path_honours_umask_and_keeps_mode(qtbot, tmp_path, umask_027, tiny_model_dir, tiny_predictor):
    from desktop_app.panels.batch.panel import BatchPanel
    from desktop_app.state import ExplorerState
    from desktop_app.views.heatmap import AttentionHeatmap
    from desktop_app.window.view_export import export_widget
    from model.core.config import EncoderConfig
    from model.files.atomic import atomic_path, atomic_write_bytes

    panel = BatchPanel()
    qtbot.addWidget(panel)
    panel.table_model.append_rows([_row("x.txt")])
    state = ExplorerState()
    heat = AttentionHeatmap(state)
    qtbot.addWidget(heat)
    state.set_prediction(tiny_predictor.predict("good film"))

    def with_atomic_path(p):
        with atomic_path(p) as tmp:
            Path(tmp).write_bytes(b"x")

    writers = {
        "bytes.bin": lambda p: atomic_write_bytes(p, b"x"),
        "path.bin": with_atomic_path,
        "rows.csv": lambda p: panel.export_to(str(p)),
        "rows.jsonl": lambda p: panel.export_to(str(p)),
        "rows.parquet": lambda p: panel.export_to(str(p)),
        "view.png": lambda p: export_widget(heat, p),
        "view.svg": lambda p: export_widget(heat, p),
        "config.json": lambda p: EncoderConfig().to_json(p),
    }
    for name, write in writers.items():
        p = tmp_path / name
        write(p)
        assert _mode(p) == umask_027, f"{name}: {oct(_mode(p))}"
        os.chmod(p, 0o604)
        write(p)
        assert _mode(p) == 0o604, f"{name} after overwrite: {oct(_mode(p))}"
    # a symlink stays a symlink; its target is replaced
    target = tmp_path / "target.bin"
    target.write_bytes(b"old")
    os.chmod(target, 0o600)
    link = tmp_path / "link.bin"
    link.symlink_to(target)
    atomic_write_bytes(link, b"new")
    assert link.is_symlink() and target.read_bytes() == b"new" and _mode(target) == 0o600
