"""Labelled data of any classifier task: a data folder's splits, the label names, the gold labels as targets, the
metrics of a model's logits against those targets.

Read by the training pipeline's fine-tuning (``model.training.finetune_hf``) and by the dataset-level evaluation
(``model.evaluation.threshold``). The three task types are those of ``transformers``' ``problem_type``:
``single_label`` (one class of N), ``multi_label`` (any subset of N labels) and ``regression`` (one number). A
sentence-pair task is any of them with a second text column.

A data folder holds ``train``, ``dev`` and ``test`` splits as ``.jsonl.gz``, ``.jsonl.xz``, ``.jsonl``, ``.csv`` or
``.tsv`` (see :func:`.splits.split_file`), and optionally ``labels.txt`` (one label name a line, in id order).
Columns: the text (``text``), the second text (``text_pair`` when the first row has one) and the gold label
(``label``, or ``labels`` when the first row's ``labels`` holds a list). Gold labels: a class name (matched
case-insensitively) or an integer id; for multi-label a list of those or a ``;``-separated string; for regression
a number, all read as batch scoring reads them (:class:`model.batch.gold.GoldReader`). Validation: the ``dev`` split,
else a seeded carve of ``train`` as for IMDB (:func:`task_splits`). Metrics are scikit-learn's
and SciPy's (imported when :func:`evaluate` runs).
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from model.batch.gold import GoldReader, gold_text
from model.files.compression import open_text, split_compression
from model.tasks.types import MultiLabel, Regression, SingleLabel, task_type

from .splits import TABLE_SUFFIXES, VAL_SIZE, UsageError, split_file, validation_split

BINARY = ("negative", "positive")  # names of integer golds 0/1 when no names are given (the app's IMDB convention)
NO_TRAIN_NOTE = "no train split in the data folder: trained on the dev split less a seeded validation carve"


@dataclass(frozen=True)
class Split:
    """One split: ``texts`` [N] str, ``pairs`` [N] str second texts or None, ``gold`` [N] raw gold values."""

    texts: list[str]
    pairs: list[str] | None
    gold: list

    def take(self, idx: np.ndarray) -> Split:
        """The rows ``idx`` (int [K]) of this split, in that order."""
        return Split([self.texts[i] for i in idx], None if self.pairs is None else [self.pairs[i] for i in idx],
                     [self.gold[i] for i in idx])


def read_table(path: Path) -> list[dict]:
    """The rows of a JSON Lines (``.jsonl``) or CSV/TSV (header line) file as dicts, plain or compressed (``.gz``,
    ``.xz``, ``.bz2``: :mod:`model.files.compression`); blank lines skipped. Raises ValueError naming file and line for
    a row that is not a JSON object."""
    ext = split_compression(path)[0]
    with open_text(path, "utf-8") as fh:
        if ext in (".csv", ".tsv"):
            return list(csv.DictReader(fh, delimiter="\t" if ext == ".tsv" else ","))
        rows = []
        for lineno, line in enumerate(fh, 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except ValueError as exc:
                    raise ValueError(f"{path}:{lineno}: not JSON: {exc}") from exc
                if not isinstance(rows[-1], dict):
                    raise ValueError(f"{path}:{lineno}: not a JSON object")
    return rows


def columns(first: dict, text: str, pair: str, label: str) -> tuple[str, str | None, str]:
    """``(text, pair or None, label)`` column names for a split whose first row is ``first``: empty ``pair`` is
    ``text_pair`` when present, else none; empty ``label`` is ``labels`` when that holds a list (or there is no
    ``label``), else ``label``.
    Raises UsageError naming a column the row lacks."""
    pair = pair or ("text_pair" if "text_pair" in first else "")
    listed = isinstance(first.get("labels"), list) or ("labels" in first and "label" not in first)
    label = label or ("labels" if listed else "label")
    for kind, col in (("text", text), ("pair", pair), ("label", label)):
        if col and col not in first:
            raise UsageError(f"no {kind} column {col!r} in the data (columns: {', '.join(first)})")
    return text, pair or None, label


def read_task_split(data: Path, name: str, cols: tuple[str, str, str]) -> Split:
    """Split ``name`` of folder ``data`` with columns ``(text, pair, label)`` as given to :func:`columns`.
    Raises FileNotFoundError for a missing split, UsageError for a missing column or an empty text."""
    path = split_file(data, name, TABLE_SUFFIXES)
    rows = read_table(path)
    if not rows:
        raise UsageError(f"{path}: no rows")
    text, pair, label = columns(rows[0], *cols)
    for i, row in enumerate(rows, 1):
        if not str(row.get(text) or "").strip() or (pair and not str(row.get(pair) or "").strip()):
            raise UsageError(f"{path}: row {i} has an empty or missing text{' or second text' if pair else ''}")
        if row.get(label) in (None, ""):
            raise UsageError(f"{path}: row {i} has no gold label in column {label!r}")
    return Split([str(r[text]) for r in rows], [str(r[pair]) for r in rows] if pair else None,
                 [r[label] for r in rows])


def task_splits(data: Path, task: str, cols: tuple[str, str, str], labels: str = "", seed: int = 0
                ) -> tuple[tuple[str, ...], Split, np.ndarray, Split | None, np.ndarray | None, dict]:
    """The rows a model of ``task`` trains and validates on: ``(labels, first, fit_idx, dev, val_idx,
    provenance)``: the label names (:func:`label_names` of ``labels``), the first split (``train``, else ``dev``),
    the int [K] rows of it trained on, the separate dev split (None when validation is carved from ``first``:
    ``val_idx`` rows, seeded by ``seed``, :data:`.splits.VAL_SIZE` or a fifth of a small split) and where each
    came from (``provenance``: ``train``, ``validation`` and, without a train split, :data:`NO_TRAIN_NOTE`).
    ``cols`` as given to :func:`columns`. Raises UsageError for a bad column or label, FileNotFoundError without
    train and dev splits."""
    has = {n: any((data / f"{n}{s}").is_file() for s in TABLE_SUFFIXES) for n in ("train", "dev")}
    first = read_task_split(data, "train" if has["train"] else "dev", cols)
    dev = read_task_split(data, "dev", cols) if has["train"] and has["dev"] else None
    names = label_names(task, labels, data, first.gold)
    if dev is not None:
        return names, first, np.arange(len(first.texts)), dev, None, {"train": "train", "validation": "dev"}
    n = len(first.texts)
    val_idx, fit_idx = validation_split(n, seed, VAL_SIZE if n > VAL_SIZE else max(1, n // 5))
    where = "train" if has["train"] else "dev"
    provenance = {"train": f"{where} less the validation rows", "validation": f"{len(val_idx)} seeded rows of {where}"}
    if not has["train"]:
        provenance["note"] = NO_TRAIN_NOTE
    return names, first, fit_idx, None, val_idx, provenance


def _members(task: str, gold) -> list:
    """The class names/ids one gold value holds: itself, or for multi-label its list / ``;``-separated parts."""
    if not task_type(task).label_set:
        return [gold]
    if isinstance(gold, list):
        return gold
    return [p.strip() for p in str(gold).split(";") if p.strip()]


def label_names(task: str, option: str, data: Path, golds: list) -> tuple[str, ...]:
    """The label names in id order: ``option`` (comma-separated names, or a file of one name a line), else
    ``data/labels.txt``, else the sorted unique gold strings (integer golds 0/1: negative, positive; other integer
    golds: ``LABEL_i``). Regression: one name, ``option`` or ``score``. Raises UsageError for a missing file."""
    if option and not Path(option).is_file() and ("/" in option or option.endswith(".txt")):
        raise UsageError(f"labels file not found: {option}")
    if option:
        text = Path(option).read_text(encoding="utf-8") if Path(option).is_file() else option.replace(",", "\n")
        names = tuple(n.strip() for n in text.splitlines() if n.strip())
    elif not task_type(task).reads_probabilities:  # regression: one output
        names = ("score",)
    elif (data / "labels.txt").is_file():
        names = tuple(n.strip() for n in (data / "labels.txt").read_text(encoding="utf-8").splitlines() if n.strip())
    else:
        found = {m for g in golds for m in _members(task, g)}
        ints = {m for m in found if isinstance(m, int) and not isinstance(m, bool)}
        if ints and ints != found:
            raise UsageError("gold labels mix integer ids and names: give the names with --labels")
        names = (BINARY if ints <= {0, 1} else tuple(f"LABEL_{i}" for i in range(max(ints) + 1))) if ints \
            else tuple(sorted(str(m) for m in found))
    if not task_type(task).reads_probabilities and len(names) != 1:
        raise UsageError(f"a regression model has one output: give one name in --labels, got {len(names)}")
    if len(set(names)) != len(names) or not names:
        raise UsageError(f"label names must be unique and not empty: {names}")
    return names


def targets(task: str, golds: list, names: tuple[str, ...]) -> np.ndarray:
    """The training targets of raw gold values, read as batch scoring reads them (:class:`model.batch.gold.GoldReader`:
    a class name, case-insensitive, or an integer id; multi-label a list or a ``;``-separated string; regression a
    number): int64 [N] class ids (single-label), float32 [N, L] 0/1 indicators (multi-label) or float32 [N] values
    (regression). Raises UsageError naming the first bad row."""
    kind = task_type(task)
    reader, ids = GoldReader(names, task), {n: i for i, n in enumerate(names)}
    if kind.exclusive:  # single-label: class ids
        out = np.zeros(len(golds), dtype=np.int64)
    else:  # multi-label: 0/1 indicators; regression: values
        out = np.zeros((len(golds), len(names)) if kind.label_set else len(golds), dtype=np.float32)
    for row, gold in enumerate(golds):
        text = gold_text(gold)
        value, problem = reader.read(text)
        if problem is not None or value is None:  # multi-label "" is the empty label set, a gold like any other
            why = f"unknown label {text!r} ({problem or 'no gold label'})" if kind.reads_probabilities else \
                problem or "no gold value"
            raise UsageError(f"row {row + 1}: bad {task} gold label: {why}")
        if kind.label_set:
            out[row, [ids[n] for n in value.split(";") if n]] = 1.0
        else:
            out[row] = ids[value] if kind.exclusive else float(value)
    return out


def evaluate(task: str, logits: np.ndarray, y: np.ndarray, names: tuple[str, ...]) -> dict:
    """Metrics of float [N, C] ``logits`` against :func:`targets` ``y``. Single-label: ``accuracy``, ``macro_f1``
    and for two classes ``f1`` of class 1 (``positive_class``); multi-label, sigmoid >= 0.5 (logit >= 0):
    ``micro_f1``, ``macro_f1``, ``subset_accuracy``; regression: ``pearson``, ``spearman`` (SciPy), ``mae``,
    ``rmse`` (scikit-learn). Every result also has ``count``."""
    metrics = task_type(task).pick({SingleLabel: _single_label_metrics, MultiLabel: _multi_label_metrics,
                                     Regression: _regression_metrics})
    return {"count": len(y), **metrics(logits, y, names)}


def _regression_metrics(logits: np.ndarray, y: np.ndarray, names: tuple[str, ...]) -> dict:
    from scipy.stats import pearsonr, spearmanr
    from sklearn.metrics import mean_absolute_error, mean_squared_error

    pred = logits[:, 0].astype(np.float64)
    return dict(pearson=float(pearsonr(pred, y)[0]), spearman=float(spearmanr(pred, y)[0]),
                mae=float(mean_absolute_error(y, pred)), rmse=float(np.sqrt(mean_squared_error(y, pred))))


def _multi_label_metrics(logits: np.ndarray, y: np.ndarray, names: tuple[str, ...]) -> dict:
    from sklearn.metrics import accuracy_score, f1_score

    pred, gold = (logits >= 0).astype(np.int64), y.astype(np.int64)
    return dict(micro_f1=float(f1_score(gold, pred, average="micro", zero_division=0)),
                macro_f1=float(f1_score(gold, pred, average="macro", zero_division=0)),
                subset_accuracy=float(accuracy_score(gold, pred)))


def _single_label_metrics(logits: np.ndarray, y: np.ndarray, names: tuple[str, ...]) -> dict:
    from sklearn.metrics import accuracy_score, f1_score

    pred = logits.argmax(1)
    out = dict(accuracy=float(accuracy_score(y, pred)), macro_f1=float(f1_score(
        y, pred, average="macro", labels=list(range(len(names))), zero_division=0)))
    if len(names) == 2:
        out.update(f1=float(f1_score(y, pred, pos_label=1, zero_division=0)), positive_class=names[1])
    return out
