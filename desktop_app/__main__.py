"""``python -m desktop_app`` and the ``attention-explorer`` gui-script.

The app's start time is recorded here, before any heavy import, so that ``--quit-after-show`` can report the
cold-start time to the first painted window (from the app's own start, not the process's: a launcher may have
``exec``-ed into it after running for minutes).
"""

from __future__ import annotations

import time

PROCESS_START = time.perf_counter()  # seconds (perf_counter clock), as early as possible


def main(argv: list[str] | None = None) -> int:
    """Run the app; see :func:`desktop_app.app.main`. Returns the process exit code.

    In a frozen bundle, a ``multiprocessing`` child (the corpus dock's word scores,
    :mod:`desktop_app.workers.corpus.words_process`) re-runs this executable: ``freeze_support`` runs the child there
    and exits; elsewhere it does nothing.
    """
    import multiprocessing

    multiprocessing.freeze_support()
    from desktop_app.app import main as app_main

    return app_main(argv, process_start=PROCESS_START)


if __name__ == "__main__":
    raise SystemExit(main())
