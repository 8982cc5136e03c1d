"""``attention-explorer-score ... --compare-model DIR`` (issue 44): every input scored by two models.

The command line (:mod:`model.scorer.main`) loads model B with the same options as model A (device, precision,
``--task``/``--threshold``), refuses a pair that cannot be compared row by row before anything is scored (a usage
error naming both folders and what differs: :func:`model.corpus.comparison.comparison_problem`), and then

* writes A's columns followed by B's (:class:`model.corpus.comparison.CompareSchema`: ``b_label``, ``b_p_<class>`` or
  ``b_value``, ``b_status``, ``agree``);
* scores with the local engine chunk by chunk (:func:`model.corpus.comparison.score_compared`), or with
  ``--engine ray`` runs B's Ray pass first (its rows are kept in memory, the texts included) and then A's, joining
  the rows in input order (:func:`ray_compared`);
* counts the paired metrics as the rows stream (:class:`CompareRun`), prints them on stderr and adds them to
  ``--metrics`` (``"comparison"``) and ``--report`` (a "Two models" section).
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from model.records.batch import ResultRow
from model.records.comparison import ComparedRow, ComparisonMetrics
from model.tasks.task import task_of

from model.corpus.comparison import CompareSchema, ComparisonTally, comparison_problem, pair_rows, score_compared
from model.batch.engine import model_id
from model.report.comparison import comparison_line
from model.batch.rows import RowSchema


def add_compare_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--compare-model DIR``."""
    parser.add_argument("--compare-model", metavar="DIR", help="score every input with this second model too (model "
                        "B: same task and labels as --model): rows gain b_label, b_p_<class> (or b_value), b_status "
                        "and agree; --metrics gains 'comparison' (both accuracies, agreement, McNemar's exact test); "
                        "--report a 'Two models' section")


def ray_compared(a_chunks: Iterable[list[ResultRow]], b_chunks: Iterable[list[ResultRow]]
                 ) -> Iterator[list[ComparedRow]]:
    """A's row chunks joined with B's rows, in input order: B's pass runs to its end first (two Ray passes at once
    would wait on each other's CPUs), then each chunk of A's gets B's rows of the same inputs.

    Raises:
        ValueError: the two passes did not read the same inputs in the same order (:func:`pair_rows`).
    """
    try:
        b_rows = [r for chunk in b_chunks for r in chunk]
    finally:
        if hasattr(b_chunks, "close"):
            b_chunks.close()  # shuts down the Ray instance B's pass started
    done = 0
    try:
        for chunk in a_chunks:
            yield pair_rows(chunk, b_rows[done:done + len(chunk)])
            done += len(chunk)
    finally:
        if hasattr(a_chunks, "close"):
            a_chunks.close()


class CompareRun:
    """Model B of one command-line run and the paired counts of its rows.

    Attributes:
        predictor: model B (a :class:`model.Predictor`). tally: :class:`ComparisonTally` of the rows so far.
    """

    def __init__(self, a: Any, b: Any) -> None:
        self.predictor = b
        self.tally = ComparisonTally(tuple(a.labels), task_of(a).type, model_id(a), model_id(b), by_length=True)

    @classmethod
    def load(cls, args: argparse.Namespace, a: Any, load: Callable[[argparse.Namespace], Any]
             ) -> tuple[CompareRun | None, str | None]:
        """``(run, None)`` for ``--compare-model`` (``(None, None)`` without it), or ``(None, problem)`` when the
        two models cannot be compared. ``load(args)`` loads a model as ``--model`` does (with B's folder)."""
        if not args.compare_model:
            return None, None
        b = load(argparse.Namespace(**{**vars(args), "model": args.compare_model}))
        problem = comparison_problem(a, b)
        return (None, f"--compare-model {args.compare_model}: {problem}") if problem else (cls(a, b), None)

    def schema(self, schema: RowSchema) -> CompareSchema:
        """A's ``schema`` with B's columns."""
        return CompareSchema.of(schema)

    def scorer(self, a: Any) -> Callable[..., Iterator[list[ComparedRow]]]:
        """``score_records``' stand-in for the local engine: ``scorer(records, **options)`` scores with both."""
        return functools.partial(score_compared, a, self.predictor)

    def report(self) -> ComparisonMetrics:
        """The paired metrics of the rows counted, also printed on stderr (one line)."""
        metrics = self.tally.metrics()
        print(comparison_line(metrics), file=sys.stderr)
        return metrics

    def count(self, chunks: Iterable[list[ComparedRow]]) -> Iterator[list[ComparedRow]]:
        """``chunks`` unchanged, counted into :attr:`tally` on the way."""
        for rows in chunks:
            self.tally.add(rows)
            yield rows


__all__ = ["CompareRun", "add_compare_argument", "ray_compared"]
