"""Which columns of a table (CSV/TSV header) or fields of a JSON object hold the text, the second text of a sentence
pair and the gold label (issue 30): ``--text-column``, ``--pair-column``, ``--label-column`` and the batch panel's
three fields, or the default names below (case-insensitive, first match wins).

:func:`check_columns` looks at the headers of the files a user named before anything is scored, so a column that
is not there is one clear message (the command line's usage error), not a status on every row.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from model.files.compression import READ_ERRORS, open_text, split_compression

TEXT_COLUMNS = ("text", "review", "content")
PAIR_COLUMNS = ("text_pair",)
LABEL_COLUMNS = ("label", "labels", "sentiment", "gold")


@dataclass(frozen=True)
class Columns:
    """The columns (CSV/TSV) or fields (JSON) a user named; None detects them by the module docstring's names.

    Attributes:
        text: the text column. pair: the second text of a sentence pair. label: the gold label column.
    """

    text: str | None = None
    pair: str | None = None
    label: str | None = None


def _pick_column(names: list[str], wanted: str | None, candidates: Iterable[str]) -> int | None:
    lowered = [n.strip().lower() for n in names]
    if wanted is not None:
        w = wanted.strip().lower()
        return lowered.index(w) if w in lowered else None
    for c in candidates:
        if c in lowered:
            return lowered.index(c)
    return None


def _missing(what: str, wanted: str, names: Sequence[str], kind: str = "column") -> str:
    """The status of a file without the ``what`` column the user named ``wanted``."""
    cols = ", ".join(repr(h) for h in list(names)[:12])
    return f"no {kind} named {wanted!r} for the {what} ({kind}s: {cols})"


@dataclass(frozen=True)
class Picked:
    """Column indices of one header (None: absent) or the status of a header that lacks a named column."""

    text: int | None
    pair: int | None
    label: int | None
    problem: str | None


def pick_columns(names: list[str], columns: Columns, kind: str = "column") -> Picked:
    """Find the text, pair and label columns of ``names``; a column the user named but absent is a problem."""
    ti = _pick_column(names, columns.text, TEXT_COLUMNS)
    pi = _pick_column(names, columns.pair, PAIR_COLUMNS)
    li = _pick_column(names, columns.label, LABEL_COLUMNS)
    problem = None
    if ti is None:
        problem = (_missing("text", columns.text, names, kind) if columns.text is not None
                   else f"no text {kind} named text/review/content ({kind}s: {', '.join(map(repr, names[:12]))}); "
                   "choose one")
    elif pi is None and columns.pair is not None:
        problem = _missing("second text (sentence pair)", columns.pair, names, kind)
    elif li is None and columns.label is not None:
        problem = _missing("gold label", columns.label, names, kind)
    return Picked(ti, pi, li, problem)


def _first_names(path: str) -> list[str] | None:
    """The header of a CSV/TSV file or the keys of a JSON Lines file's first object; None when unreadable or not
    a table (the readers then report the file itself)."""
    ext = split_compression(path)[0]
    try:
        with open_text(path, "utf-8-sig", errors="replace") as fh:
            if ext in (".csv", ".tsv"):
                return next(csv.reader(fh, delimiter="\t" if ext == ".tsv" else ","), None)
            if ext in (".jsonl", ".ndjson"):
                for line in fh:
                    if line.strip():
                        obj = json.loads(line)
                        return [str(k) for k in obj] if isinstance(obj, dict) else None
    except (*READ_ERRORS, ValueError, csv.Error):
        return None
    return None


def check_columns(paths: Iterable[str | os.PathLike], columns: Columns) -> str | None:
    """The first problem with the named columns among the table files in ``paths`` (files named directly, not the
    files inside folders), e.g. ``"data.csv: no column named 'hyp' for the second text (sentence pair) (columns:
    ...)"``; None when every named column is there or none was named. Never raises."""
    if columns.pair is None and columns.label is None:
        return None
    for p in paths:
        path = os.fspath(p)
        if not os.path.isfile(path):
            continue
        names = _first_names(path)
        if names is None:
            continue
        kind = "field" if split_compression(path)[0] in (".jsonl", ".ndjson") else "column"
        picked = pick_columns(names, columns, kind)
        problem = picked.problem
        if problem is not None and picked.text is not None:  # a missing text column stays the file's own status
            return f"{path}: {problem}"
    return None


__all__ = ["LABEL_COLUMNS", "PAIR_COLUMNS", "TEXT_COLUMNS", "Columns", "Picked", "check_columns", "pick_columns"]
