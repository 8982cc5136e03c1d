"""Behavioural tests of a sentiment classifier in the spirit of CheckList (Ribeiro et al. 2020): the pass rate of
each capability of :mod:`model.datasets.behaviour` (plain, negated positive and negative, contrast).

Usage::

    python -m model.evaluation.checklist [--model DIR] [--json] [--dev]

Prints one JSON line (``--json``) or a table; ``--dev`` runs the development set the training pipeline chooses on.
"""

from __future__ import annotations

import argparse
import json
import sys

from model.datasets.behaviour import build_cases, run_checklist


def main(argv: list[str] | None = None) -> int:
    """Print the pass rates of a model folder; returns the exit code."""
    p = argparse.ArgumentParser(prog="python -m model.evaluation.checklist",
                                description="CheckList-style behavioural tests of a sentiment model.")
    p.add_argument("--model", default=None, help="model folder (default: the bundled model)")
    p.add_argument("--json", action="store_true", help="print one JSON line")
    p.add_argument("--dev", action="store_true", help="the development set (for choosing between models)")
    args = p.parse_args(argv)
    from model.predictor.predictor import Predictor

    result = run_checklist(Predictor.from_pretrained(args.model, device="cpu"), build_cases(dev=args.dev))
    if args.json:
        print(json.dumps({k: {"pass_rate": v["pass_rate"], "n": v["n"]} for k, v in result.items()}))
    else:
        for name, entry in result.items():
            print(f"{name:18s} {entry['pass_rate'] * 100:6.1f}%  (n={entry['n']})  e.g. failing: {entry['failures'][:2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
