"""Choose between model folders without the test split: the ``select`` stage, whose output is the recipe's model.

Each candidate (a model folder, or a folder of them such as an ``interpolate`` stage's) is scored on the seeded
1,250-review validation split and on the *development* behavioural set of :mod:`model.datasets.behaviour`.
Rule (:func:`choose`): the candidates whose development pass rate is at least ``bars`` (0.8) on each negation and
contrast capability and 0.95 on the plain ones, then the best validation accuracy; when none qualifies, among those
within ``tolerance`` (0.5 points) of the best validation accuracy the best mean negation/contrast pass rate. The test
split chooses nothing. Folders of your own: ``pipeline cpu_distill --stage model --set 'model.candidates=["a", "b"]' ...``.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from model.datasets.behaviour import TARGET_CAPABILITIES, build_cases, run_checklist
from model.datasets.splits import UsageError, read_split, train_split

from ..core.weights import CONFIG_FILE, METRICS_FILE, TOKENIZER_FILE, WEIGHTS_FILE, read_metrics


@dataclass
class SelectOptions:
    """Options of the ``select`` stage: the ``candidates`` (folders or stages), ``bars`` and ``tolerance``."""

    candidates: tuple = ()
    bars: float = 0.8
    tolerance: float = 0.005


def candidate_folders(paths) -> list[Path]:
    """The model folders among ``paths``: each path with a ``model.safetensors``, else its subfolders that have one
    (sorted by name). Raises UsageError for a path that is neither."""
    out = []
    for p in map(Path, paths):
        inner = [p] if (p / WEIGHTS_FILE).is_file() else sorted(q for q in p.glob("*") if (q / WEIGHTS_FILE).is_file())
        if not inner:
            raise UsageError(f"candidate {p}: no model folder (model.safetensors) there")
        out += inner
    return out


def score(folder: Path, val_texts: list[str], val_y: np.ndarray, dev_cases) -> dict:
    """One candidate's row: ``{"model", "validation_accuracy", "dev_behaviour": {capability: pass rate},
    "dev_target_mean"}`` (scored on the CPU with :class:`model.Predictor`)."""
    from .. import Predictor

    predictor = Predictor.from_pretrained(folder, device="cpu")
    pred = _predicted(predictor, val_texts)
    behaviour = run_checklist(predictor, dev_cases)
    return {"model": str(folder), "validation_accuracy": float((pred == val_y).mean()),
            "dev_behaviour": {k: round(v["pass_rate"], 4) for k, v in behaviour.items()},
            "dev_target_mean": float(np.mean([behaviour[k]["pass_rate"] for k in TARGET_CAPABILITIES]))}


def choose(rows: list[dict], tolerance: float = 0.005, bars: float = 0.0) -> dict:
    """The choice among :func:`score` rows: ``{"chosen": model, "rule": str}`` (the rules: module docstring)."""
    if bars:
        passing = [r for r in rows if all(r["dev_behaviour"][k] >= bars for k in TARGET_CAPABILITIES)
                   and all(v >= 0.95 for k, v in r["dev_behaviour"].items() if k.startswith("plain"))]
        if passing:
            best = max(passing, key=lambda r: (r["validation_accuracy"], r["dev_target_mean"]))
            return {"chosen": best["model"], "rule": f"dev pass rate >= {bars:.2f} on {', '.join(TARGET_CAPABILITIES)} "
                    "and >= 0.95 on the plain capabilities, then the best validation accuracy"}
    best_val = max(r["validation_accuracy"] for r in rows)
    eligible = [r for r in rows if r["validation_accuracy"] >= best_val - tolerance]
    chosen = max(eligible, key=lambda r: (r["dev_target_mean"], r["validation_accuracy"]))
    return {"chosen": chosen["model"], "rule": f"validation within {tolerance:.3f} of the best ({best_val:.4f}), "
            f"then the best mean dev pass rate on {', '.join(TARGET_CAPABILITIES)}"}


def _predicted(predictor, texts: list[str]) -> np.ndarray:
    return np.array([predictor.labels.index(s.label) for s in predictor.score_many(texts)])


def select_model(data: Path, out: Path, opts: SelectOptions, device=None) -> dict:
    """Score the candidates, choose (:func:`choose`), copy the chosen folder's weights, config and tokenizer to
    ``out`` with a ``metrics.json``: its own metrics, ``selection`` (rows, choice, rule) and its test scores when
    there is a test split. Returns ``{"rows", "chosen", "rule"}``."""
    from sklearn.metrics import f1_score

    from .. import Predictor

    texts, labels, val_idx, _ = train_split(data)
    val_texts, val_y, dev_cases, rows = [texts[i] for i in val_idx], labels[val_idx], build_cases(dev=True), []
    for folder in candidate_folders(opts.candidates):
        rows.append(score(folder, val_texts, val_y, dev_cases))
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    selection = {"rows": rows, **choose(rows, opts.tolerance, opts.bars)}
    chosen = Path(selection["chosen"])
    out.mkdir(parents=True, exist_ok=True)
    for name in (WEIGHTS_FILE, CONFIG_FILE, TOKENIZER_FILE):
        shutil.copyfile(chosen / name, out / name)
    metrics = {**read_metrics(chosen), "selection": selection}
    with contextlib.suppress(FileNotFoundError):
        test_texts, test_y = read_split(data, "test")
        pred = _predicted(Predictor.from_pretrained(out, device="cpu"), test_texts)
        metrics.update(test_accuracy=float((pred == test_y).mean()),
                       test_f1=float(f1_score(test_y, pred, zero_division=0)), test_count=len(test_y))
    (out / METRICS_FILE).write_text(json.dumps(metrics, indent=2) + "\n")
    return selection
