"""Command line batch scoring: ``attention-explorer-score`` (also ``python -m model.scorer.main``).

Scores every review found in the given files and folders (see
:mod:`model.batch.readers` for the formats and folder rules) and writes one row per
review with the columns of :data:`model.batch.EXPORT_COLUMNS`::

    attention-explorer-score aclImdb/test --out results.csv
    attention-explorer-score reviews.jsonl --format jsonl > results.jsonl
    attention-explorer-score data.csv --text-column body --batch-size 128 --out scored.parquet
    attention-explorer-score nli.csv --model my-nli --text-column premise --pair-column hypothesis --label-column gold
    attention-explorer-score aclImdb/test --out rows.csv --report report.html --metrics metrics.json

The columns follow the model (:class:`model.batch.rows.RowSchema`, docs/batch_schema.md): one ``p_<label>`` per
class, ``value`` for regression, ``text_pair`` for sentence pairs. Gold labels the model does not know are left
empty, counted and listed on stderr.

Rows are written as they are scored (stdout for CSV/JSON Lines, or ``--out`` atomically), so memory does not grow
with the number of reviews (``--projection`` holds them for the map: :mod:`model.scorer.corpus_map`). A tqdm progress
bar and a summary line (count, positive share, accuracy when gold, reviews/s, peak RSS) go to stderr. ``--report``/``--metrics`` add a self-contained HTML report and ``metrics.json`` computed from the
same rows, with corpus-level token scores from a second pass over the scored texts (:mod:`model.scorer.report`).

The options and their parser are :mod:`model.scorer.args`'s; this module runs them.

Exit status: :data:`model.scorer.args.EXIT_STATUS` (also the end of ``--help``).
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Sequence

from model.scorer.args import build_parser, ray_usage, writes_shards
from model.scorer.compare import CompareRun, ray_compared
from model.scorer.counterfactuals import corpus_outputs, counterfactual_usage, keeps_rows
from model.scorer.report import report_path_error
from model.scorer.corpus_map import map_error, map_kwargs, map_schema, map_sections, map_writer
from model.batch.columns import Columns, check_columns
from model.batch.engine import Summary, Timer, components_refusal, score_records
from model.batch.export import RowWriter, format_for_path
from model.batch.gold import GoldReader
from model.batch.rows import RowSchema
from model.batch.shards import ShardWriter
from model.batch.walk import estimate_count, iter_records
from model.tasks.task import task_of
from model.text.inputs import InputSpec

MAX_LISTED_FAILURES = 50


def peak_rss_bytes() -> int | None:
    """Peak resident set size of this process in bytes (``resource.getrusage``), None where unavailable."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss if sys.platform == "darwin" else rss * 1024  # macOS reports bytes, Linux kilobytes



def _ray_chunks(args: argparse.Namespace, max_bytes: int, progress, gold=None, **map_kw):
    """The Ray engine's row chunks for the parsed ``args`` (see :func:`model.batch.ray_engine.score_paths_ray`);
    ``gold``: ``(GoldReader, on_gold_problem)`` for the driver's count of unknown gold labels; ``map_kw``: vectors."""
    from model.core.paths import default_model_dir
    from model.batch import ray_engine

    def on_plan(plan) -> None:
        print(f"ray: {plan.num_workers} worker(s) x {plan.cpus_per_worker:g} CPU"
              + (f" x {plan.gpus_per_worker:g} GPU" if plan.gpus_per_worker else "")
              + f", {plan.torch_threads} torch thread(s) each", file=sys.stderr)

    return ray_engine.score_paths_ray(
        args.paths, args.model or default_model_dir(), text_column=args.text_column, max_file_bytes=max_bytes,
        pair_column=args.pair_column, label_column=args.label_column,
        batch_size=args.batch_size, address=args.ray_address, num_workers=args.num_workers,
        gpus_per_worker=args.gpus_per_worker or 0.0, device=args.device, progress=progress, on_plan=on_plan, gold=gold,
        task=(args.task, args.threshold), precision=args.precision, components=args.components, **map_kw)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 failures, 2 usage, 130 interrupted).

    Args:
        argv: arguments without the program name; None reads ``sys.argv[1:]``.
    """
    try:
        return _main(argv)
    except KeyboardInterrupt:  # before scoring started (model loading, counting): nothing to write
        print("interrupted", file=sys.stderr)
        return 130


class _Stop(Exception):
    """Ends the run early with an exit status (the message is already on stderr)."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def _usage_error(parser: argparse.ArgumentParser, message: str) -> _Stop:
    parser.print_usage(sys.stderr)
    print(f"{parser.prog}: error: {message}", file=sys.stderr)
    return _Stop(2)


def _output_format(parser: argparse.ArgumentParser, args: argparse.Namespace, shards: bool) -> str:
    """The output format of the parsed ``args``; raises :class:`_Stop` (2) on a usage error."""
    try:
        fmt = "parquet" if shards else format_for_path(args.out, args.format) if args.out else (args.format or "csv")
    except ValueError as exc:
        raise _usage_error(parser, f"{exc}; or pass --format") from None
    if fmt == "parquet" and not args.out:
        raise _usage_error(parser, "Parquet is binary; give --out FILE.parquet")
    return fmt


def _load_predictor(prog: str, args: argparse.Namespace):
    """The :class:`model.Predictor` of ``--model``; raises :class:`_Stop` (1) when it cannot load or has no head."""
    from model.predictor.predictor import Predictor  # imported late: --help and usage errors stay fast

    try:
        predictor = Predictor.from_pretrained(args.model, device="cpu" if args.engine == "ray" else args.device)
    except (FileNotFoundError, ValueError, OSError, ImportError) as exc:
        print(f"{prog}: cannot load the model: {exc}", file=sys.stderr)
        raise _Stop(1) from None
    if not predictor.has_head:
        print(f"{prog}: the model in {args.model} has no classification head (a bare encoder): it can show "
              "attention in the app but cannot score reviews; fine-tune it first (python -m model.training.finetune_hf)",
              file=sys.stderr)
        raise _Stop(1)
    if args.task is not None or args.threshold is not None:
        try:
            predictor.set_task(args.task, args.threshold)
        except ValueError as exc:
            print(f"{prog}: --task/--threshold: {exc}", file=sys.stderr)
            raise _Stop(2) from None
    if args.engine != "ray":
        predictor.use_precision(args.precision)
    return predictor


def _open_writer(prog: str, args: argparse.Namespace, fmt: str, shards: bool, predictor,
                 compare: CompareRun | None = None) -> RowWriter | ShardWriter:
    """The writer of ``--out`` (a file, a shard folder) or stdout, with the model's columns
    (:meth:`RowSchema.of_predictor`; ``text_pair`` with ``--pair-column``, else when the first rows have second
    texts; model B's too with ``compare``); raises :class:`_Stop` (1) when it cannot open."""
    schema = map_schema(args, RowSchema.of_predictor(predictor, pairs=True if args.pair_column else None,
                                                     components=args.components))
    schema = compare.schema(schema) if compare is not None else schema
    try:
        if shards:
            return ShardWriter(args.out, schema=schema)
        return map_writer(args, RowWriter(args.out, fmt, stream=None if args.out else sys.stdout, schema=schema))
    except (ValueError, RuntimeError, OSError) as exc:
        print(f"{prog}: cannot write {args.out or 'stdout'}: {exc}", file=sys.stderr)
        raise _Stop(1) from None


def _progress_bar(args: argparse.Namespace, max_bytes: int):
    """``(bar or None, progress(done))``: a tqdm bar on stderr sized by a quick count, unless ``--no-progress``."""
    bar = None
    if not args.no_progress:
        from tqdm import tqdm

        bar = tqdm(total=estimate_count(args.paths, max_bytes), unit="review", file=sys.stderr, dynamic_ncols=True,
                   desc="scoring")

    def progress(done: int) -> None:
        if bar is not None:
            bar.total = max(bar.total, done)
            bar.update(done - bar.n)

    return bar, progress


def _score_into(prog: str, args: argparse.Namespace, predictor, writer, max_bytes: int,
                kept: list | None = None, compare: CompareRun | None = None) -> tuple[Summary, bool]:
    """Score every input into ``writer`` (not committed yet); returns ``(summary, interrupted)``.

    ``kept``: when given, every row written is appended to it too (for ``--report``/``--metrics``). ``compare``:
    model B scores every input too (:mod:`model.scorer.compare`).

    Raises :class:`_Stop`: 0 on a broken pipe (e.g. piped into ``head``), 1 when scoring failed (the writer aborted).
    """
    bar, progress = _progress_bar(args, max_bytes)
    summary = Summary()
    timer = Timer()
    interrupted = False
    chunks = None
    try:
        if args.engine == "ray":
            chunks = _ray_chunks(args, max_bytes, progress, (GoldReader(tuple(predictor.labels), task_of(predictor).kind),
                                                             summary.gold_problem), **map_kwargs(writer))
            if compare is not None:
                b_args = argparse.Namespace(**{**vars(args), "model": args.compare_model})
                chunks = ray_compared(chunks, _ray_chunks(b_args, max_bytes, None))
        else:
            records = iter_records(args.paths, text_column=args.text_column, max_file_bytes=max_bytes,
                                   pair_column=args.pair_column, label_column=args.label_column)
            score = functools.partial(score_records, predictor) if compare is None else compare.scorer(predictor)
            chunks = score(records, batch_size=args.batch_size, progress=progress, long_text=args.long_text,
                           on_gold_problem=summary.gold_problem, components=args.components, **map_kwargs(writer))
        for rows in (chunks if compare is None else compare.count(chunks)):
            writer.write(rows)
            summary.add(rows)
            if kept is not None:
                kept.extend(rows)
    except KeyboardInterrupt:
        interrupted = True
    except BrokenPipeError:  # e.g. piped into `head`
        raise _Stop(0) from None
    except Exception as exc:  # noqa: BLE001 - a bug or an unexpected runtime error: no traceback for the user, no temp file left
        writer.abort()
        print(f"{prog}: scoring failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        raise _Stop(1) from None
    finally:
        summary.elapsed_s = timer.elapsed_s
        if chunks is not None and hasattr(chunks, "close"):
            chunks.close()  # the Ray engine shuts down the Ray instance it started
        if bar is not None:
            bar.close()
    return summary, interrupted


def _report(args: argparse.Namespace, summary: Summary, writer, shards: bool, interrupted: bool) -> int:
    """The summary and failures on stderr; returns the exit status (0 ok, 1 failures, 130 interrupted)."""
    rss = peak_rss_bytes()
    line = summary.line() + (f" · peak RSS {rss / 2**20:,.0f} MiB" if rss else "")
    print(line, file=sys.stderr)
    if summary.failed:
        print(f"{summary.failed:,} input(s) could not be scored:", file=sys.stderr)
        for source, status in summary.failures[:MAX_LISTED_FAILURES]:
            print(f"  {source}: {status}", file=sys.stderr)
        if summary.failed > MAX_LISTED_FAILURES:
            print(f"  ... and {summary.failed - MAX_LISTED_FAILURES:,} more (see the status column)", file=sys.stderr)
    if summary.gold_problems:
        print(f"{summary.gold_problems:,} gold label(s) not understood (their rows are scored, without gold):",
              file=sys.stderr)
        for source, problem in summary.gold_examples[:MAX_LISTED_FAILURES]:
            print(f"  {source}: {problem}", file=sys.stderr)
    if interrupted:
        where = f" to {args.out}" if args.out else ""
        print(f"interrupted: wrote the {writer.rows_written:,} rows scored so far{where}", file=sys.stderr)
        return 130
    if args.out:
        shard_note = f" ({len(writer.shards)} Parquet shard(s))" if shards else ""
        print(f"wrote {writer.rows_written:,} rows to {args.out}{shard_note}", file=sys.stderr)
    return 1 if summary.failed else 0


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    try:
        return _run(parser, args)
    except _Stop as stop:
        return stop.code


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """Check the options, load the model, score, commit the output and report; :class:`_Stop` ends it early."""
    if (usage := ray_usage(args) or counterfactual_usage(args)) is not None:
        raise _usage_error(parser, usage)
    if (bad := report_path_error(args) or map_error(args)) is not None:
        print(f"{parser.prog}: error: {bad}", file=sys.stderr)  # one line, before the model loads
        return 2
    shards = writes_shards(args)
    fmt = _output_format(parser, args, shards)
    if (bad := check_columns(args.paths, Columns(args.text_column, args.pair_column, args.label_column))) is not None:
        raise _usage_error(parser, bad)
    predictor = _load_predictor(parser.prog, args)
    compare, problem = CompareRun.load(args, predictor, lambda b_args: _load_predictor(parser.prog, b_args))
    if problem is not None:
        raise _usage_error(parser, problem)
    refused = InputSpec.of(predictor, f"the model in {args.model or 'resources/model'}").refusal(args.pair_column or None)
    if refused is not None:
        raise _usage_error(parser, f"--pair-column {args.pair_column}: {refused}")
    if args.components and (refused := components_refusal(predictor)) is not None:
        raise _usage_error(parser, f"--components: {refused}")
    if args.token_class is not None and args.token_class not in predictor.labels:
        raise _usage_error(parser, f"--token-class {args.token_class}: not one of the model's classes "
                           f"({', '.join(predictor.labels)})")
    max_bytes = int(args.max_file_mb * 2**20)
    writer = _open_writer(parser.prog, args, fmt, shards, predictor, compare)
    kept: list | None = [] if keeps_rows(args) else None
    summary, interrupted = _score_into(parser.prog, args, predictor, writer, max_bytes, kept, compare)
    try:
        writer.commit()
    except OSError as exc:
        writer.abort()
        print(f"{parser.prog}: cannot write {args.out}: {exc}", file=sys.stderr)
        return 1
    status = _report(args, summary, writer, shards, interrupted)
    comparison = compare.report() if compare is not None else None  # the paired metrics, also on stderr
    if kept is not None:  # --report/--metrics (scorer.report), --counterfactuals (scorer.counterfactuals)
        status = corpus_outputs(parser.prog, args, predictor, kept, interrupted, summary.elapsed_s, status,
                                comparison, map_sections(writer))
    return status


if __name__ == "__main__":
    sys.exit(main())
