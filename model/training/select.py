"""Choose between trained model folders without the test split: validation accuracy, then behaviour.

Usage::

    python -m model.training.select --data ../shared/data/imdb CANDIDATE_DIR... [--soup A B] [--tolerance 0.005]
        [--bars 0.8]

Every candidate is scored on the seeded 1,250-review validation split of the train reviews
(:func:`model.training.common.validation_split`) and on the *development* behavioural set of
:mod:`model.checklist` (other words and templates than the reported set). Rule: among the candidates whose
validation accuracy is within ``--tolerance`` (default 0.5 points, below one standard error on 1,250 reviews)
of the best, the one with the highest mean development pass rate over the negation and contrast capabilities
wins. With ``--bars B`` (the rule of the negation stage, 2026-11-23) the behavioural aims come first: the
candidates whose development pass rate is at least B on each negation and contrast capability and at least
0.95 on the plain ones are kept, and the best validation accuracy among them wins (the tolerance rule applies
when none qualifies). ``--soup A B`` adds the uniform average of two folders' weights (a "model soup", Wortsman et al. 2022;
both must share an architecture and a lineage) as a candidate, written to ``--soup-out``; ``--wise BASE FINETUNED
--alphas ...`` adds WiSE-FT interpolations, and ``--path BASE STAGE... --coefs ...`` points that scale each
fine-tuning stage's task vector on its own (:func:`make_path_point`). Prints one JSON line
per candidate and the choice. The official test split chooses nothing.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import numpy as np

from ..checklist import TARGET_CAPABILITIES, build_cases, run_checklist
from ..core.weights import WEIGHTS_FILE, load_state, save_state
from .common import train_split


def write_mix(folders: list[Path], out: Path, combine) -> Path:
    """Write ``combine(name, tensors)`` (the weight's name and one float32 tensor per folder, in order) for every
    floating-point weight of the model folders ``folders`` to ``out`` (integer tensors, config and tokenizer from ``folders[0]``).
    Raises ``KeyError`` when the folders' parameter names differ."""
    states = [load_state(f / WEIGHTS_FILE) for f in folders]
    for f, w in zip(folders[1:], states[1:]):
        if set(w) != set(states[0]):
            raise KeyError(f"{folders[0]} and {f} have different parameters: {sorted(set(w) ^ set(states[0]))[:5]}")
    out.mkdir(parents=True, exist_ok=True)
    save_state({k: combine(k, [w[k].float() for w in states]) if v.dtype.is_floating_point else v
                for k, v in states[0].items()}, out / WEIGHTS_FILE)
    for name in ("config.json", "tokenizer.json"):
        shutil.copyfile(folders[0] / name, out / name)
    return out


def make_soup(a: Path, b: Path, out: Path, alpha: float = 0.5) -> Path:
    """Write the weight interpolation ``(1 - alpha) * a + alpha * b`` of model folders ``a`` and ``b``
    (config, tokenizer from ``a``); ``alpha`` 0.5 is the uniform "model soup" (Wortsman et al. 2022, "Model
    soups"), other values the WiSE-FT interpolation (Wortsman et al. 2022, "Robust fine-tuning of zero-shot
    models", eq. 1) between a model and its fine-tuned descendant. Both folders must share an architecture and a
    lineage. Raises ``KeyError`` when their parameter names differ and ``ValueError`` when alpha is outside
    [0, 1]."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must lie in [0, 1], got {alpha}")
    return write_mix([a, b], out, lambda _, w: (1 - alpha) * w[0] + alpha * w[1])


def make_path_point(folders: list[Path], coefs: list[float], out: Path) -> Path:
    """Write the point ``w_0 + sum_i coefs[i-1] * (w_i - w_(i-1))`` on the training path ``folders`` (a model
    and its successive fine-tuned descendants, e.g. step 4 -> step 5 -> step 7) to ``out`` (config, tokenizer
    from ``folders[0]``). Each fine-tuning stage is a task vector (Ilharco et al. 2023, "Editing models with
    task arithmetic") scaled on its own; equal coefficients give the WiSE-FT interpolation between the first
    and the last folder. Raises ``ValueError`` unless there is one coefficient per stage (``len(folders) - 1``)
    and ``KeyError`` when the folders' parameter names differ."""
    if len(folders) < 2 or len(coefs) != len(folders) - 1:
        raise ValueError(f"{len(folders)} folders need {max(1, len(folders) - 1)} coefficients, got {len(coefs)}")
    return write_mix(folders, out, lambda _, w: w[0] + sum(c * (cur - prev) for c, prev, cur in zip(coefs, w, w[1:])))


def choose(rows: list[dict], tolerance: float = 0.005, bars: float = 0.0) -> dict:
    """The chosen candidate among ``rows`` (dicts with "model", "validation_accuracy", "dev_behaviour",
    "dev_target_mean"): ``{"chosen": model, "rule": str}``. See the module docstring for the two rules."""
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


def main(argv: list[str] | None = None) -> int:
    """Score the candidates, print the choice; returns the exit code."""
    p = argparse.ArgumentParser(description="Choose a model folder by validation accuracy, then behaviour.")
    p.add_argument("candidates", nargs="*")
    p.add_argument("--data", required=True)
    p.add_argument("--soup", nargs=2, metavar=("A", "B"))
    p.add_argument("--soup-out", default="runs/soup")
    p.add_argument("--wise", nargs=2, metavar=("BASE", "FINETUNED"),
                   help="add WiSE-FT interpolations (1-a)*BASE + a*FINETUNED for each a in --alphas")
    p.add_argument("--alphas", default="0.25,0.5,0.75", help="comma-separated alphas in [0, 1] for --wise")
    p.add_argument("--path", nargs="+", metavar="DIR", help="a training path BASE STAGE1 STAGE2 ...: adds the points "
                   "of --coefs (task arithmetic, one coefficient per stage)")
    p.add_argument("--coefs", default="", help="for --path: points separated by ';', coefficients by ',' (e.g. 0.6,1;1,0.85)")
    p.add_argument("--tolerance", type=float, default=0.005)
    p.add_argument("--bars", type=float, default=0.0, help="behavioural bars first (e.g. 0.8); 0: tolerance rule")
    args = p.parse_args(argv)
    from .. import Predictor

    candidates = [Path(c) for c in args.candidates]
    if args.soup:
        candidates.append(make_soup(Path(args.soup[0]), Path(args.soup[1]), Path(args.soup_out)))
    if args.wise:
        for alpha in (float(a) for a in args.alphas.split(",")):
            candidates.append(make_soup(Path(args.wise[0]), Path(args.wise[1]),
                                        Path(f"{args.soup_out}_wise{alpha:.2f}"), alpha))
    if args.path:
        if len(args.path) < 2:
            p.error("--path needs a base folder and at least one fine-tuned stage")
        for point in filter(None, args.coefs.split(";")):
            coefs = [float(c) for c in point.split(",")]
            candidates.append(make_path_point([Path(f) for f in args.path], coefs,
                                              Path(f"{args.soup_out}_path{'_'.join(f'{c:.2f}' for c in coefs)}")))
    if not candidates:
        p.error("no candidates: name folders, or use --soup, --wise or --path")
    texts, labels, val_idx, _ = train_split(args.data)
    val_texts, val_y = [texts[i] for i in val_idx], labels[val_idx]
    dev_cases = build_cases(dev=True)
    rows = []
    for folder in candidates:
        predictor = Predictor.from_pretrained(folder, device="cpu")
        pred = np.array([predictor.labels.index(s.label) for s in predictor.score_many(val_texts)])
        behaviour = run_checklist(predictor, dev_cases)
        row = {"model": str(folder), "validation_accuracy": float((pred == val_y).mean()),
               "dev_behaviour": {k: round(v["pass_rate"], 4) for k, v in behaviour.items()},
               "dev_target_mean": float(np.mean([behaviour[k]["pass_rate"] for k in TARGET_CAPABILITIES]))}
        rows.append(row)
        print(json.dumps(row), flush=True)
    print(json.dumps(choose(rows, args.tolerance, args.bars)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
