"""Rebuild ``imdb_test_sample.jsonl.gz`` from the IMDB test split (see README.md here for what it holds).

    python tests/data/make_imdb_sample.py ../shared/data/imdb

Reads ``test.jsonl.gz`` (``text``, ``label``) and ``test_meta.tsv.gz`` (``row``, ``file``, ``id``, ``rating``,
``label``) and writes the rows below, in split order, each with its ``row`` number, its ``rating`` and the
subsets (``tags``) it was picked for:

- ``first80``: rows 0-79 of the split;
- ``short50``: the first 50 rows whose text has at most 700 characters;
- ``clear40``: 40 rows drawn with ``numpy.random.default_rng(0).choice(len(picked), 40, replace=False)`` from the
  rows rated 1 or 10 with fewer than 600 characters (``picked``, in split order).

The file is written deterministically (gzip mtime 0), so rebuilding it gives the same bytes.
"""

from __future__ import annotations

import gzip
import io
import json
import sys
from pathlib import Path

import numpy as np


def main(imdb: Path) -> None:
    """Write the sample beside this script from the IMDB folder ``imdb``."""
    with gzip.open(imdb / "test_meta.tsv.gz", "rt", encoding="utf-8") as fh:
        next(fh)
        ratings = [int(line.split("\t")[3]) for line in fh]
    with gzip.open(imdb / "test.jsonl.gz", "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    tags: dict[int, list[str]] = {}
    for i in range(80):
        tags.setdefault(i, []).append("first80")
    short = [i for i, r in enumerate(rows) if len(r["text"]) <= 700][:50]
    for i in short:
        tags.setdefault(i, []).append("short50")
    picked = [i for i, (r, rating) in enumerate(zip(rows, ratings)) if rating in (1, 10) and len(r["text"]) < 600]
    for k in np.random.default_rng(0).choice(len(picked), 40, replace=False):
        tags.setdefault(picked[k], []).append("clear40")
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz:
        for i in sorted(tags):
            line = {"text": rows[i]["text"], "label": rows[i]["label"], "row": i, "rating": ratings[i], "tags": tags[i]}
            gz.write((json.dumps(line, ensure_ascii=False) + "\n").encode("utf-8"))
    (Path(__file__).parent / "imdb_test_sample.jsonl.gz").write_bytes(buf.getvalue())


if __name__ == "__main__":
    main(Path(sys.argv[1]))
