"""Files from the desktop (issue 33, item 5): ``attention-explorer review.txt``, a session, folders and files."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from gui_helpers import LOAD_TIMEOUT_MS, loaded_window

pytestmark = pytest.mark.gui

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def files(tmp_path) -> dict[str, Path]:
    """A review, a session, a CSV of reviews and a folder of reviews."""
    review = tmp_path / "review.txt"
    review.write_text("A wonderful film with a clever plot.", encoding="utf-8")
    session = tmp_path / "saved.aesession.json"
    session.write_text(json.dumps({"format": "attention-explorer-session", "version": 2, "model_dir": "",
                                   "text": "The acting was dull."}), encoding="utf-8")
    plain_json_session = tmp_path / "saved.json"
    plain_json_session.write_text(session.read_text(encoding="utf-8"), encoding="utf-8")
    table = tmp_path / "reviews.csv"
    table.write_text("text\nGreat.\nAwful.\n", encoding="utf-8")
    packed = tmp_path / "reviews.jsonl.gz"
    packed.write_bytes(gzip.compress(b'{"text": "Great.", "label": 1}\n{"text": "Awful.", "label": 0}\n'))
    folder = tmp_path / "folder"
    folder.mkdir()
    for i in range(3):
        (folder / f"{i}.txt").write_text(f"Review number {i} was fine.", encoding="utf-8")
    return {"review": review, "session": session, "json_session": plain_json_session, "table": table,
            "packed": packed, "folder": folder, "missing": tmp_path / "nope.txt"}


def test_the_command_line_takes_paths():
    from desktop_app.app import parse_args

    args = parse_args(["--model", "m", "review.txt", "other.csv"])
    assert args.paths == ["review.txt", "other.csv"] and args.model == "m"
    assert parse_args([]).paths == []


def test_paths_are_sorted_as_a_desktop_app_opens_them(files):
    from desktop_app.window.open_paths import sort_paths

    s = lambda *keys: sort_paths([str(files[k]) for k in keys])  # noqa: E731
    assert s("review").review == str(files["review"]) and not s("review").batch
    assert s("session").session == str(files["session"])
    assert s("json_session").session == str(files["json_session"])
    assert s("table").batch == (str(files["table"]),) and s("table").review is None
    assert s("folder").batch == (str(files["folder"]),)
    assert s("packed").batch == (str(files["packed"]),) and s("packed").review is None  # the readers decompress it
    both = s("review", "folder")
    assert both.batch == (str(files["review"]), str(files["folder"])) and both.review is None
    bad = s("missing", "review")
    assert bad.review == str(files["review"]) and bad.missing == (str(files["missing"]),)
    assert "No such file or folder" in bad.problems() and "nope.txt" in bad.problems()
    mixed = s("session", "folder")
    assert mixed.session is None and mixed.batch == (str(files["folder"]),) and mixed.skipped
    assert s("review").problems() == ""


def test_a_review_file_opens_in_the_editor_and_is_analysed(qtbot, tiny_model_dir, files):
    from desktop_app.app import open_command_line_paths

    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    with qtbot.waitSignal(win.state.events.prediction, timeout=LOAD_TIMEOUT_MS,
                          check_params_cb=lambda p, *_: p is not None and p.text == files["review"].read_text()):
        open_command_line_paths(win, [str(files["review"])])
    assert win.editor.toPlainText() == files["review"].read_text()
    assert win.errors == []


def test_a_session_file_opens_the_session(qtbot, tiny_model_dir, files):
    from desktop_app.app import open_command_line_paths

    data = json.loads(files["session"].read_text(encoding="utf-8"))
    files["session"].write_text(json.dumps({**data, "model_dir": str(tiny_model_dir)}), encoding="utf-8")
    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    open_command_line_paths(win, [str(files["session"])])
    qtbot.waitUntil(lambda: win.state.prediction is not None and win.state.prediction.text == "The acting was dull.",
                    timeout=LOAD_TIMEOUT_MS)
    assert win.editor.toPlainText() == "The acting was dull."


def test_folders_and_several_files_are_scored_and_bad_paths_named(qtbot, tiny_model_dir, files):
    from desktop_app.app import open_command_line_paths

    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    batch = win.panels["batch"]
    open_command_line_paths(win, [str(files["folder"]), str(files["table"]), str(files["missing"])])
    qtbot.waitUntil(lambda: len(batch.rows()) == 5 and not batch.is_running(), timeout=LOAD_TIMEOUT_MS)
    assert all(r.ok for r in batch.rows())
    assert len(win.errors) == 1 and "No such file or folder" in win.errors[0] and "nope.txt" in win.errors[0]
    assert win.editor.toPlainText() != files["review"].read_text()


def test_a_compressed_table_opened_alone_is_scored(qtbot, tiny_model_dir, files):
    from desktop_app.app import open_command_line_paths

    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    batch = win.panels["batch"]
    open_command_line_paths(win, [str(files["packed"])])
    qtbot.waitUntil(lambda: len(batch.rows()) == 2 and not batch.is_running(), timeout=LOAD_TIMEOUT_MS)
    rows = batch.rows()
    assert all(r.ok for r in rows) and [r.text for r in rows] == ["Great.", "Awful."] and not win.errors
    assert win.editor.toPlainText() == ""


def test_the_app_starts_with_a_file_argument(tiny_model_dir, tmp_path, files):
    """``python -m desktop_app review.txt`` starts (it said "unrecognized arguments" before issue 33)."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "ATTENTION_EXPLORER_SETTINGS": str(tmp_path / "s.ini")}
    proc = subprocess.run([sys.executable, "-m", "desktop_app", "--model", str(tiny_model_dir), "--quit-after-show",
                           str(files["review"])], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert "unrecognized" not in proc.stderr


def test_the_desktop_entry_passes_files_and_names_the_types_it_opens():
    """``Exec=... %F`` and the MIME types of reviews, tables and sessions; the session type is defined (glob)."""
    import configparser
    import xml.etree.ElementTree as ET

    from desktop_app.window.session.save_open import SUFFIX

    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str
    entry.read(ROOT / "build_scripts" / "attention-explorer.desktop", encoding="utf-8")
    desktop = entry["Desktop Entry"]
    assert desktop["Exec"].split()[-1] == "%F"
    types = set(filter(None, desktop["MimeType"].split(";")))
    assert {"text/plain", "text/csv", "application/jsonl", "application/x-attention-explorer-session"} <= types
    ns = {"m": "http://www.freedesktop.org/standards/shared-mime-info"}
    root = ET.parse(ROOT / "build_scripts" / "attention-explorer-mime.xml").getroot()
    session = root.find("m:mime-type[@type='application/x-attention-explorer-session']", ns)
    assert session is not None and session.find("m:glob", ns).get("pattern") == f"*{SUFFIX}"


def test_a_file_the_system_opens_while_the_app_runs_is_opened(qtbot, tiny_model_dir, files):
    """macOS: Finder's "open" of a file while the app runs arrives as a QFileOpenEvent on the application."""
    from PySide6.QtGui import QFileOpenEvent
    from PySide6.QtWidgets import QApplication

    from desktop_app.app import open_command_line_paths

    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    open_command_line_paths(win, [])
    try:
        with qtbot.waitSignal(win.state.events.prediction, timeout=LOAD_TIMEOUT_MS,
                              check_params_cb=lambda p, *_: p is not None and p.text == files["review"].read_text()):
            QApplication.sendEvent(QApplication.instance(), QFileOpenEvent(str(files["review"])))
    finally:
        QApplication.instance().removeEventFilter(win.file_open_events)


# -- a drop indicator while files are dragged over the window ---------------------------------------------------
def test_drop_indicator_shows_while_dragging(qtbot, tiny_model_dir, tmp_path):
    from PySide6.QtCore import QMimeData, QPoint, Qt, QUrl
    from PySide6.QtGui import QDragEnterEvent, QDragLeaveEvent
    from PySide6.QtWidgets import QApplication

    win = loaded_window(qtbot, tiny_model_dir)
    (tmp_path / "a.txt").write_text("good")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(tmp_path / "a.txt"))])
    ev = QDragEnterEvent(QPoint(50, 50), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
    QApplication.sendEvent(win, ev)
    assert win.drop_banner.label.isVisible()
    assert "1 file" in win.drop_banner.label.text()
    QApplication.sendEvent(win, QDragLeaveEvent())
    assert not win.drop_banner.label.isVisible()
    # the editor takes drops itself (the window sees no drag events there): it shows the banner too
    QApplication.sendEvent(win.editor, QDragEnterEvent(QPoint(5, 5), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier))
    assert win.drop_banner.label.isVisible()
    QApplication.sendEvent(win.editor, QDragLeaveEvent())
    assert not win.drop_banner.label.isVisible()


# -- File > Open offers only what the readers read -------------------------------------------------------------
def test_open_files_filter_matches_the_readers():
    from desktop_app.window.file_actions import review_file_filter
    from model.batch.readers import READERS
    from model.files.compression import COMPRESSIONS

    filt = review_file_filter()
    first = filt.split(";;")[0]
    patterns = first[first.index("(") + 1 : first.index(")")].split()
    assert sorted(patterns) == sorted(f"*{e}{c}" for e in READERS for c in ("", *COMPRESSIONS))
    assert "parquet" not in first and "*.gz" not in patterns and "*.jsonl.gz" in patterns
