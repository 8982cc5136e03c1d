"""A fresh clone, as a newcomer has it (issue 46): no ``../shared`` beside it, no virtualenv activated.

The tests that need real reviews read the IMDB sample committed in ``tests/data`` (never ``../shared``).
"""

from __future__ import annotations

import re
from pathlib import Path

from imdb_data import IMDB_SAMPLE, imdb_sample

ROOT = Path(__file__).resolve().parent.parent
OUTSIDE = re.compile(r"ROOT\.parent\b|/\s*\"shared\"|\.\./shared")


def test_no_test_reads_data_beside_the_clone():
    """No test module (nor conftest) builds a path outside the clone such as ``ROOT.parent / "shared"``."""
    here = Path(__file__).resolve()
    offenders = [f"{f.relative_to(ROOT)}:{n}" for f in sorted((ROOT / "tests").glob("*.py")) if f != here
                 for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1) if OUTSIDE.search(line)]
    assert not offenders, f"tests reading data beside the clone (use tests/imdb_data.py): {offenders}"


def test_the_committed_imdb_sample_is_small_and_complete():
    assert IMDB_SAMPLE.stat().st_size < 200_000
    first, short, clear = imdb_sample("first80"), imdb_sample("short50"), imdb_sample("clear40")
    assert [r["row"] for r in first] == list(range(80))
    assert len(short) == 50 and all(len(r["text"]) <= 700 for r in short)
    assert len(clear) == 40 and all(r["rating"] in (1, 10) and len(r["text"]) < 600 for r in clear)
    assert {r["label"] for r in clear} == {0, 1} and all(r["label"] == (r["rating"] >= 7) for r in clear)
