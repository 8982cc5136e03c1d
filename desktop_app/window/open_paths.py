"""Files and folders given on the command line (``attention-explorer review.txt``), as a desktop app opens them.

The desktop entry passes what the user opened with the app (``Exec=AttentionExplorer %F``; on Windows and macOS
the file associations of ``docs/building.md``). :func:`sort_paths` decides what each path is for (no Qt, no reading
beyond a session file's first bytes); :func:`open_paths` does it in a window whose panels are attached:

* one session file (``*.aesession.json``, or a ``.json`` file that says it is a session) opens the session
  (:func:`desktop_app.window.session.save_open.open_session`) once the model has loaded;
* one other file that is not a table of reviews (``.txt``, or any text file: not ``.csv``/``.tsv``/``.jsonl``/
  ``.ndjson``/``.json``) and not compressed opens in the editor and is analysed
  (:meth:`~desktop_app.window.main_window.MainWindow.open_review_file`: a binary or too large file is a message);
* folders, tables of reviews, compressed files (``reviews.jsonl.gz``, ``review.txt.xz``: the batch readers read them
  decompressed) and several files go to batch scoring (the window's ``paths_dropped``, as a drop);
* paths that do not exist, and sessions among several paths, are named in one message; the rest still opens.

On macOS, Finder sends a file opened while the app runs as a ``QFileOpenEvent`` to the application (the one that
launches it becomes ``sys.argv`` through PyInstaller's argv emulation): :class:`FileOpenEvents` opens those the
same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QEvent, QObject

from model.batch.readers import JSON_EXTENSIONS, JSONL_EXTENSIONS, TABLE_EXTENSIONS
from model.files.compression import split_compression

from desktop_app.window.session.save_open import FORMAT, SUFFIX

SESSION_PEEK_BYTES = 4096  # bytes of a .json file read to tell a session from a file of reviews
BATCH_FILE_EXTENSIONS = TABLE_EXTENSIONS + JSONL_EXTENSIONS + JSON_EXTENSIONS


@dataclass(frozen=True)
class PathRequest:
    """What to do with the command line's paths (:func:`sort_paths`).

    Attributes:
        review: a file to open in the editor and analyse, or None.
        session: a session file to open, or None.
        batch: files and folders to score in the batch panel (may be empty).
        missing: paths that do not exist.
        skipped: session files left out because other paths came with them.
    """

    review: str | None = None
    session: str | None = None
    batch: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()

    def problems(self) -> str:
        """One message for the user naming the missing and skipped paths; "" when there are none."""
        parts = []
        if self.missing:
            parts.append(f"No such file or folder: {', '.join(self.missing)}.")
        if self.skipped:
            parts.append(f"Sessions open one at a time, on their own: {', '.join(self.skipped)} left out.")
        return " ".join(parts)


def is_session_file(path: Path) -> bool:
    """True for ``*.aesession.json``, or a ``.json`` file whose first :data:`SESSION_PEEK_BYTES` name the session
    format; an unreadable file is not a session (it is scored, and the batch table says why it was not)."""
    if path.name.lower().endswith(SUFFIX):
        return True
    if path.suffix.lower() != ".json":
        return False
    try:
        with path.open("rb") as fh:
            head = fh.read(SESSION_PEEK_BYTES)
    except OSError:
        return False
    return FORMAT.encode("ascii") in head


def sort_paths(paths: list[str]) -> PathRequest:
    """Sort command-line paths into what to open (module docstring); never raises."""
    found = [p for p in paths if Path(p).exists()]
    missing = tuple(p for p in paths if p not in found)
    if len(found) == 1 and Path(found[0]).is_file():
        path = Path(found[0])
        if is_session_file(path):
            return PathRequest(session=found[0], missing=missing)
        ext, compression = split_compression(path)
        if ext not in BATCH_FILE_EXTENSIONS and not compression:
            return PathRequest(review=found[0], missing=missing)
        return PathRequest(batch=(found[0],), missing=missing)
    sessions = tuple(p for p in found if Path(p).is_file() and is_session_file(Path(p)))
    return PathRequest(batch=tuple(p for p in found if p not in sessions), missing=missing, skipped=sessions)


def open_paths(window, request: PathRequest) -> None:
    """Open ``request`` in ``window`` (a :class:`~desktop_app.window.main_window.MainWindow` whose batch panel is
    attached: :func:`desktop_app.app.attach_panels`). A session waits for the model (its model is compared with
    the loaded one); a review and batch jobs are queued until the model is ready. Problems are one message box."""
    from desktop_app.window.session.save_open import open_session

    if request.review is not None:
        window.remember_folder(request.review)
        window.open_review_file(request.review)
    if request.batch:
        window.paths_dropped.emit(list(request.batch))
    if request.session is not None:
        window.remember_folder(request.session)
        if window.predictor is not None:
            open_session(window, request.session)
        else:
            def when_loaded(_predictor) -> None:
                window.predictor_loaded.disconnect(when_loaded)
                open_session(window, request.session)

            window.predictor_loaded.connect(when_loaded)
    if request.problems():
        window.show_error(request.problems())


class FileOpenEvents(QObject):
    """An application event filter that opens each ``QFileOpenEvent`` (macOS: a file opened from Finder while the
    app runs) in ``window`` as :func:`open_paths` does. Install with ``QApplication.instance().installEventFilter``
    once the window's panels are attached."""

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        """Open the file of a ``QEvent.FileOpen``; every other event passes."""
        if event.type() == QEvent.Type.FileOpen and event.file():
            open_paths(self.window, sort_paths([event.file()]))
            return True
        return False
