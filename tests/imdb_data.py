"""The committed IMDB test rows the tests use (imported as ``imdb_data``; pytest puts tests/ on sys.path).

No test reads the data folder beside the clone: a fresh clone has none. ``tests/data/README.md`` says which rows of which split
``tests/data/imdb_test_sample.jsonl.gz`` holds; ``tests/data/make_imdb_sample.py`` rebuilds it.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

IMDB_SAMPLE = Path(__file__).resolve().parent / "data" / "imdb_test_sample.jsonl.gz"


def imdb_sample(tag: str) -> list[dict]:
    """The committed IMDB test rows picked for ``tag`` ("first80", "short50" or "clear40"), in split order.

    Each row is a dict with ``text``, ``label`` (0 negative, 1 positive), ``row`` (its number in the test split),
    ``rating`` (1-10) and ``tags``. Raises ValueError for a tag no row has."""
    with gzip.open(IMDB_SAMPLE, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    picked = [r for r in rows if tag in r["tags"]]
    if not picked:
        raise ValueError(f"no rows tagged {tag!r} in {IMDB_SAMPLE}")
    return picked
