"""``attention-explorer-score --report/--metrics``: corpus metrics, token scores and the report (issue 23, section 5).

The command line (:mod:`model.scorer.main`) keeps the rows it writes when ``--report`` or ``--metrics`` is given
(the scored texts included: memory grows with the corpus, about the size of the texts), and after scoring:

1. computes :func:`model.corpus.metrics.corpus_metrics` from exactly those rows (local or Ray engine alike);
2. unless ``--no-token-scores``, runs the second pass of :func:`model.corpus.tokens.corpus_token_scores`
   over the scored texts in this process (with ``--engine ray`` too: Ray returns the rows, the token pass runs
   locally, on the CPU), with its own progress bar; Ctrl+C stops it and the outputs are
   written from the reviews explained so far (exit 130);
3. writes ``--metrics`` (:func:`model.report.report.write_metrics_json`) and ``--report``
   (:func:`model.report.report.write_report_html`), atomically.

When scoring itself was interrupted, the outputs are written from the rows scored so far, without token scores.
Bad ``--report``/``--metrics`` paths (missing folder, a folder, not writable, the same file twice) are refused
with one line before anything is scored (exit 2).
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from model.records.comparison import ComparisonMetrics
from model.records.components import mean_abs

from model.corpus.comparison import comparison_dict
from model.report.comparison import comparison_section
from model.corpus.metrics import corpus_metrics
from model.corpus.tokens import CorpusTokens, corpus_token_scores
from model.batch.engine import ResultRow
from model.report.components import components_section
from model.report.report import DEFAULT_TOP, MAX_FAILURES, write_metrics_json, write_report_html
from model.batch.rows import precision_of


def add_report_arguments(parser: argparse.ArgumentParser, positive_int) -> None:
    """Add the ``--report``, ``--metrics``, ``--top-tokens``, ``--min-count``, ``--no-token-scores``, ``--token-class``
    options."""
    g = parser.add_argument_group(
        "corpus report",
        "Metrics and plots of the scored rows. Token scores are a second pass (gradient x input) over the scored "
        "texts, run in this process after scoring, also with --engine ray (from the rows Ray returns).")
    g.add_argument("--report", metavar="FILE.html", help="write a self-contained HTML report (plots inline as SVG)")
    g.add_argument("--metrics", metavar="FILE.json", help="write metrics.json: counts, accuracy, F1, confusion "
                   "matrix, ECE, top tokens (gold-dependent keys null without gold labels)")
    g.add_argument("--top-tokens", type=positive_int, default=DEFAULT_TOP, metavar="N",
                   help="tokens per ranked list (default %(default)s)")
    g.add_argument("--min-count", type=positive_int, metavar="N",
                   help="leave out words and bigrams found in fewer than N reviews (default: 0.2%% of the scored "
                   "reviews, at least 5: 50 for 25,000)")
    g.add_argument("--no-token-scores", action="store_true", help="skip the token pass (top_tokens: null)")
    g.add_argument("--token-class", metavar="CLASS", help="rank the tokens toward this class (a name of the model's; "
                   "default: positive, else the last class)")


def wants_report(args: argparse.Namespace) -> bool:
    """True when ``--report`` or ``--metrics`` was given (the rows must be kept)."""
    return bool(args.report or args.metrics)


def report_path_error(args: argparse.Namespace) -> str | None:
    """Why ``--report``/``--metrics`` cannot be written (one line), or None; checked before scoring."""
    targets = [(flag, value) for flag, value in (("--report", args.report), ("--metrics", args.metrics)) if value]
    seen: dict[str, str] = {}
    if args.out:
        seen[os.path.abspath(args.out)] = "--out"
    for flag, value in targets:
        path = Path(value)
        parent = path.parent if str(path.parent) else Path(".")
        key = os.path.abspath(value)
        if key in seen:
            return f"{flag} {value}: the same file as {seen[key]}"
        seen[key] = flag
        if path.is_dir() or value.endswith(("/", os.sep)):
            return f"{flag} {value}: is a folder; give a file name"
        if not parent.is_dir():
            return f"{flag} {value}: folder {parent} does not exist"
        if not os.access(parent, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
            return f"{flag} {value}: not writable"
    return None


def auto_min_count(n_reviews: int) -> int:
    """The default ``--min-count``: 0.2 % of the reviews, at least 5 (a mean over fewer reviews is mostly noise)."""
    return max(5, math.ceil(0.002 * n_reviews))


def _token_pass(prog: str, args: argparse.Namespace, predictor, texts: list[str]) -> tuple[CorpusTokens, bool]:
    """The corpus token scores of ``texts`` with a progress bar; Ctrl+C stops between batches.

    Returns ``(tokens, interrupted)``; ``tokens.complete`` is False when interrupted.
    """
    stop = {"now": False}

    def on_sigint(_signum, _frame) -> None:
        stop["now"] = True

    bar = None
    if not args.no_progress:
        from tqdm import tqdm

        bar = tqdm(total=len(texts), unit="review", file=sys.stderr, dynamic_ncols=True, desc="token scores")

    def progress(done: int, _total: int) -> None:
        if bar is not None:
            bar.update(done - bar.n)

    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, on_sigint) if in_main else None
    try:
        tokens = corpus_token_scores(predictor, texts, min_count=args.min_count or auto_min_count(len(texts)),
                                     batch_size=args.batch_size,
                                     should_stop=lambda: stop["now"], progress=progress, target=args.token_class)
    finally:
        if in_main:
            signal.signal(signal.SIGINT, previous)
        if bar is not None:
            bar.close()
    if stop["now"]:
        print(f"{prog}: token scores interrupted after {tokens.n_explained:,} of {len(texts):,} reviews; "
              "the report uses those", file=sys.stderr)
    return tokens, stop["now"]


def write_corpus_outputs(prog: str, args: argparse.Namespace, predictor, rows: list[ResultRow],
                         interrupted: bool, elapsed_s: float, comparison: ComparisonMetrics | None = None,
                         counterfactuals: dict | None = None, sections: Sequence[str] = ()
                         ) -> tuple[int | None, bool]:
    """Metrics, token scores and the ``--metrics``/``--report`` files of the scored ``rows``.

    Args:
        prog: the program name for messages.
        args: the parsed command line.
        predictor: the loaded :class:`model.Predictor` (runs the token pass).
        rows: every row written (same order).
        interrupted: scoring was interrupted (no token pass).
        elapsed_s: scoring wall time, for the report.
        comparison: ``--compare-model``'s paired metrics (issue 44): ``metrics.json`` gains ``"comparison"``
            (:func:`model.corpus.comparison.comparison_dict`), the report a "Two models" section; None: neither.
        counterfactuals: the counterfactual edits' metrics by generator (:mod:`model.scorer.counterfactuals`), or
            None.
        sections: more report sections (HTML), e.g. the corpus map (:func:`model.scorer.corpus_map.map_sections`).

    With ``--components`` (issue 53) ``metrics.json`` gains ``"components"``: ``{part name: mean |value|}`` over the
    scored rows (:func:`model.records.components.mean_abs`), and the report its heatmap
    (:func:`model.report.components.components_section`).

    Returns:
        ``(status, interrupted)``: status 1 when an output could not be written (message on stderr), else None;
        ``interrupted`` True when Ctrl+C stopped the token pass.
    """
    metrics = corpus_metrics(rows, labels=tuple(predictor.labels))  # the model's label order (issue 30)
    components = mean_abs(r.components for r in rows if r.ok) if getattr(args, "components", False) else None
    precision = precision_of(rows)  # what the rows ran in (the Ray engine's too)
    tokens, stopped = None, False
    if not args.no_token_scores and not interrupted:
        texts = [r.text for r in rows if r.ok]
        tokens, stopped = _token_pass(prog, args, predictor, texts)
    try:
        if args.metrics:
            extra = {**({} if comparison is None else {"comparison": comparison_dict(comparison)}),
                     **({} if counterfactuals is None else {"counterfactuals": counterfactuals}),
                     **({} if components is None else {"components": components})}
            write_metrics_json(args.metrics, metrics, tokens, args.top_tokens, precision, extra=extra or None)
            print(f"wrote metrics to {args.metrics}", file=sys.stderr)
        if args.report:
            write_report_html(args.report, metrics, tokens, model_name=model_name(predictor),
                              date=datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
                              source=", ".join(args.paths), top=args.top_tokens, elapsed_s=elapsed_s,
                              failures=[(r.source, r.status) for r in rows if not r.ok][:MAX_FAILURES],
                              precision=precision,
                              sections=(*([] if comparison is None else [comparison_section(comparison)]),
                                        components_section(components), *sections),
                              counterfactuals=counterfactuals)
            print(f"wrote the report to {args.report}", file=sys.stderr)
    except OSError as exc:
        print(f"{prog}: cannot write the report/metrics: {exc}", file=sys.stderr)
        return 1, stopped
    return None, stopped


def model_name(predictor) -> str:
    """A name for the report: the model folder's name (``bundled model`` for the bundled one) and its size; the
    scorer's ``--report`` and the Corpus dock's Export > Report (HTML) share it."""
    from model.core.paths import default_model_dir

    cfg = predictor.config
    folder = Path(predictor.model_dir).resolve() if predictor.model_dir else default_model_dir().resolve()
    where = "bundled model" if folder == default_model_dir().resolve() else folder.name
    shape = f"{getattr(cfg, 'n_layers', '?')} layers, d_model {getattr(cfg, 'd_model', '?')}"
    return f"{where} ({shape}, labels {', '.join(predictor.labels)})"


__all__ = ["add_report_arguments", "auto_min_count", "model_name", "report_path_error", "wants_report", "write_corpus_outputs"]
