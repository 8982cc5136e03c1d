"""``attention-explorer-score --counterfactuals GEN[,GEN...]``: counterfactual edits of the scored inputs (issue 43).

After scoring, the command line (:mod:`model.scorer.main`) runs the chosen generators of :mod:`model.counterfactuals`
on the rows scored without error (the first ``--cf-sample`` of them when given), in the same model, task and
long-text policy, the edits scored in batches with ``Predictor.score_many``; it writes one JSON line per edit to
``--counterfactuals-out`` (:func:`model.counterfactuals.metrics.edit_line`, atomically) and hands the per-generator
metrics (:func:`model.counterfactuals.metrics.counterfactual_metrics`) to ``--metrics`` (key ``"counterfactuals"``)
and ``--report`` (a section). Ctrl+C stops between inputs; the edits made so far are written.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from pathlib import Path

from model.counterfactuals import Settings, counterfactual_metrics, generate, parse_generators
from model.counterfactuals.lexical import parse_rules
from model.counterfactuals.metrics import write_edits_jsonl
from model.records.counterfactual import SIDES

from model.scorer.report import wants_report, write_corpus_outputs


def add_counterfactual_arguments(parser: argparse.ArgumentParser, positive_int) -> None:
    """Add ``--counterfactuals``, ``--counterfactuals-out``, ``--cf-side``, ``--cf-threshold``, ``--cf-rules``,
    ``--cf-sample``."""
    from model.counterfactuals import GENERATORS

    g = parser.add_argument_group(
        "counterfactual edits (what if)",
        "Edit the scored inputs and score the edits: does the label flip? Generators: " + ", ".join(GENERATORS) + ".")
    g.add_argument("--counterfactuals", metavar="GEN[,GEN...]", help="run these generators on the scored inputs")
    g.add_argument("--counterfactuals-out", metavar="FILE.jsonl", help="write one JSON line per edit here")
    g.add_argument("--cf-side", choices=SIDES, default="first", help="sentence pairs: which text to edit (first)")
    g.add_argument("--cf-threshold", type=float, default=0.0, metavar="T",
                   help="regression: a flip is the value crossing T (default 0)")
    g.add_argument("--cf-rules", metavar="RULES", help="word_replacer's rules, 'good -> bad, great -> awful' "
                   "(default: the built-in antonyms and intensifiers)")
    g.add_argument("--cf-sample", type=positive_int, metavar="N", help="edit only the first N scored inputs")


def wants_counterfactuals(args: argparse.Namespace) -> bool:
    """True when ``--counterfactuals`` was given (the scored rows must be kept)."""
    return bool(args.counterfactuals)


def keeps_rows(args: argparse.Namespace) -> bool:
    """True when the scored rows must be kept: ``--report``/``--metrics`` or ``--counterfactuals``."""
    return wants_report(args) or wants_counterfactuals(args)


def counterfactual_usage(args: argparse.Namespace) -> str | None:
    """Why the counterfactual options do not fit together (one line), or None; checked before the model loads."""
    if args.counterfactuals_out and not args.counterfactuals:
        return "--counterfactuals-out needs --counterfactuals GEN[,GEN...]"
    if not args.counterfactuals:
        return None
    try:
        parse_generators(args.counterfactuals)
        parse_rules(args.cf_rules or "")
    except ValueError as exc:
        return f"--counterfactuals: {exc}" if "generator" in str(exc) else f"--cf-rules: {exc}"
    if not (args.counterfactuals_out or args.metrics or args.report):
        return "--counterfactuals needs --counterfactuals-out, --metrics or --report to write its results to"
    out = args.counterfactuals_out
    if out:
        parent = Path(out).parent if str(Path(out).parent) else Path(".")
        if Path(out).is_dir() or not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
            return f"--counterfactuals-out {out}: not a writable file path"
        if args.out and os.path.abspath(out) == os.path.abspath(args.out):
            return f"--counterfactuals-out {out}: the same file as --out"
    return None


def run_counterfactuals(prog: str, args: argparse.Namespace, predictor, rows: list) -> tuple[dict | None, int | None,
                                                                                                bool]:
    """Run the generators on the ``rows`` scored without error and write ``--counterfactuals-out``.

    Returns ``(metrics by generator or None, status: 1 when the file could not be written else None, interrupted)``.
    """
    ok = [r for r in rows if r.ok][:args.cf_sample]
    settings = Settings(side=args.cf_side, threshold=args.cf_threshold, rules=parse_rules(args.cf_rules or ""))
    stop = {"now": False}
    bar = None
    if not args.no_progress:
        from tqdm import tqdm

        bar = tqdm(total=len(ok) + 1, unit="input", file=sys.stderr, dynamic_ncols=True, desc="counterfactuals")

    def progress(done: int, _total: int) -> None:
        if bar is not None:
            bar.update(done - bar.n)

    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, lambda *_: stop.update(now=True)) if in_main else None
    try:
        edits = generate(predictor, [(r.text, r.text_pair) for r in ok], parse_generators(args.counterfactuals),
                         settings, predictor.options(long_text=args.long_text), [r.source for r in ok], progress,
                         lambda: stop["now"])
    except ValueError as exc:  # e.g. --cf-side second on inputs without a second text
        print(f"{prog}: --counterfactuals: {exc}", file=sys.stderr)
        return None, 1, False
    finally:
        if in_main:
            signal.signal(signal.SIGINT, previous)
        if bar is not None:
            bar.close()
    metrics = counterfactual_metrics(edits)
    for name, m in metrics.items():
        rate = "-" if m["flip_rate"] is None else f"{m['flip_rate'] * 100:.1f} %"
        print(f"counterfactuals {name}: {m['n']:,} edits, flip rate {rate}", file=sys.stderr)
    if args.counterfactuals_out:
        try:
            write_edits_jsonl(args.counterfactuals_out, edits)
        except OSError as exc:
            print(f"{prog}: cannot write {args.counterfactuals_out}: {exc}", file=sys.stderr)
            return metrics, 1, stop["now"]
        print(f"wrote {len(edits):,} edits to {args.counterfactuals_out}", file=sys.stderr)
    return metrics, None, stop["now"]


def corpus_outputs(prog: str, args: argparse.Namespace, predictor, rows: list, interrupted: bool, elapsed_s: float,
                   status: int, comparison=None, sections=()) -> int:
    """After scoring ``rows``: the counterfactual edits (when asked, and scoring was not interrupted), then
    ``--metrics``/``--report`` (:func:`model.scorer.report.write_corpus_outputs`, with the edits' metrics,
    ``comparison``, ``--compare-model``'s paired metrics or None, and ``sections``, more report sections such as the
    corpus map).
    Returns the exit status: ``status``, 1 when an output could not be written, 130 when Ctrl+C stopped a pass."""
    cf, stopped = None, False
    if wants_counterfactuals(args) and not interrupted:
        cf, failed, stopped = run_counterfactuals(prog, args, predictor, rows)
        status = 130 if stopped else failed or status
    if wants_report(args):
        failed, stopped_report = write_corpus_outputs(prog, args, predictor, rows, interrupted, elapsed_s,
                                                      comparison, counterfactuals=cf, sections=sections)
        status = 130 if stopped or stopped_report else failed or status
    return status


__all__ = ["add_counterfactual_arguments", "corpus_outputs", "counterfactual_usage", "keeps_rows", "run_counterfactuals", "wants_counterfactuals"]
