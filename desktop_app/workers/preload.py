"""Importing the Hugging Face backend ahead, off the GUI thread: :func:`warm_up_job` and :class:`HFPreloader`.

Opening the first Hugging Face folder of a session mostly waits for Python to import ``transformers`` (about 2-4 s
on a 2-core CPU, against ~0.1 s for the weights of a 6 x 12 MiniLM: ``python -m benchmarks.model_switch``). The
model menu starts :meth:`HFPreloader.start` when that is likely to be needed soon: when the folder dialog opens
(the import runs while the user picks a folder) and after start-up when a recently opened folder is a Hugging
Face one. :func:`model.hf.loading.warm_up` lets one thread import at a time, so a load that starts meanwhile
waits for the import in progress instead of racing it.
"""

from __future__ import annotations

import gc
import logging

from PySide6.QtCore import QObject

from .jobs import JobContext, Jobs

log = logging.getLogger(__name__)

PRELOAD_NICE = 0  # not reniced: a model load may be waiting for this import (a +5 thread took 6 s instead of 3 on a
# loaded 2-core machine while the load waited); the GUI keeps its turns through the 1 ms GIL switch interval


def warm_up_job(_ctx: JobContext, folders) -> bool | None:
    """Import the backend (:func:`model.hf.loading.warm_up`); with ``folders`` (a list of paths) only when one of them
    is a Hugging Face folder.

    Returns:
        True once imported, False when ``transformers`` is not installed, None when no folder asked for it.
    """
    from model.hf.loading import is_hf_folder, warm_up

    if folders is not None and not any(_is_hf(is_hf_folder, f) for f in folders):
        return None
    ok = warm_up()
    # the imported modules live as long as the app: keep them out of the collector's full scans (the window
    # collects and freezes once a model has loaded; without this that collection stalled the GUI ~0.25 s)
    gc.freeze()
    return ok


def _is_hf(is_hf_folder, folder: str) -> bool:
    try:
        return is_hf_folder(folder)
    except (OSError, ValueError):
        return False


class HFPreloader(QObject):
    """GUI-thread side of :func:`warm_up_job` (thread "hf-preload"): asks for the import ahead, at most until it is
    done.

    Attributes:
        warm: True once the backend has been imported.
    """

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        # an import cannot be interrupted: shutdown waits for it (wait_ms None) rather than destroy a running thread
        self.handle = Jobs("hf-preload", PRELOAD_NICE, parent=self, wait_ms=None)
        self.warm = False
        self._asked = False

    def start(self, folders: list[str] | None = None) -> bool:
        """Import the Hugging Face backend in the background (``folders``: only if one of them is a Hugging Face
        folder). Returns False when it is already imported or its import already asked for (nothing to do)."""
        if self.warm or self._asked:
            return False
        self._asked = folders is None  # an unconditional import is asked once; a conditional one may be again
        self.handle.run(warm_up_job, list(folders) if folders is not None else None, latest=False,
                        on_result=self._on_ready)
        return True

    def _on_ready(self, ok: bool | None) -> None:
        if ok is None:  # none of the folders is a Hugging Face one: nothing imported
            return
        self.warm = bool(ok)
        if not ok:
            log.debug("transformers is not installed: Hugging Face folders cannot be opened")
