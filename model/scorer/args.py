"""The options of ``attention-explorer-score`` (run by :mod:`model.scorer.main`): the argument parser
(:func:`build_parser`, its epilog :data:`EXIT_STATUS`), the options' value types (argparse ``type=`` callables that
turn a bad value into one usage line) and the check of the Ray options that do not fit together (:func:`ray_usage`).
The optional outputs add their own options (:mod:`model.scorer.report`, :mod:`model.scorer.compare`,
:mod:`model.scorer.counterfactuals`, :mod:`model.scorer.corpus_map`).
"""

from __future__ import annotations

import argparse
import os

from model.batch.export import FORMATS
from model.batch.readers import DEFAULT_MAX_FILE_BYTES
from model.batch.shards import is_shard_folder
from model.predictor.precision import PRECISIONS
from model.scorer.compare import add_compare_argument
from model.scorer.corpus_map import add_map_arguments
from model.scorer.counterfactuals import add_counterfactual_arguments
from model.scorer.report import add_report_arguments
from model.tasks.task import TASKS


def positive_int(value: str) -> int:
    """``value`` as a whole number >= 1. Raises argparse.ArgumentTypeError saying what is wrong."""
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {n}")
    return n


def positive_float(value: str) -> float:
    """``value`` as a number > 0. Raises argparse.ArgumentTypeError saying what is wrong."""
    try:
        x = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {value!r}") from None
    if not x > 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0, got {value}")
    return x


def unit_interval(value: str) -> float:
    """``value`` as a number in (0, 1). Raises argparse.ArgumentTypeError saying what is wrong."""
    x = positive_float(value)
    if not x < 1:
        raise argparse.ArgumentTypeError(f"must be below 1, got {value}")
    return x


EXIT_STATUS = (
    "Exit status: 0 every input was scored; 1 some input could not be scored (each listed on stderr; its row says "
    "why in the status column), the model could not be loaded (or has no classification head), or an output could "
    "not be written; 2 usage error, found before anything is scored (a bad option, a --text-column, --pair-column "
    "or --label-column that a named file lacks, --pair-column with a model that reads single texts, a --report or "
    "--metrics path that cannot be written); 130 interrupted with Ctrl+C (the rows scored so far are written first).")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests); ``--help`` ends with :data:`EXIT_STATUS`."""
    p = argparse.ArgumentParser(
        prog="attention-explorer-score", epilog=EXIT_STATUS,
        description="Score texts (or sentence pairs) with the bundled sentiment model or a Hugging Face classifier. "
        "Inputs: .txt (one text), .csv/.tsv (a text/review/content column), .jsonl/.json (a 'text' field), "
        "each also compressed (.gz, .xz, .bz2: reviews.jsonl.gz), or folders of them (recursive; pos/ and neg/ "
        "folders, or folders named after the model's classes, give gold labels).",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="files and/or folders of reviews")
    p.add_argument("--out", "-o", metavar="FILE", help="write results here (atomically) instead of stdout")
    p.add_argument("--format", "-f", choices=FORMATS, help="output format (default: from --out's extension, else csv)")
    p.add_argument("--batch-size", type=positive_int, default=64, metavar="N", help="reviews per forward pass (64)")
    p.add_argument("--text-column", metavar="NAME", help="CSV/TSV column or JSON field holding the text")
    p.add_argument("--pair-column", metavar="NAME", help="CSV/TSV column or JSON field holding a sentence pair's "
                   "second text (default: a 'text_pair' column when there is one)")
    p.add_argument("--label-column", metavar="NAME", help="CSV/TSV column or JSON field holding the gold label: a "
                   "class name or id, ';'-separated labels (multi-label), a number (regression); default: "
                   "label/labels/sentiment/gold")
    p.add_argument("--model", metavar="DIR", help="model folder: ours or a Hugging Face classifier folder "
                   "(safetensors, tokenizer.json); default: the bundled resources/model")
    p.add_argument("--device", metavar="DEV", help="cpu, cuda, cuda:1, ... (default: CUDA when available)")
    p.add_argument("--precision", choices=PRECISIONS, default="auto",
                   help="fp32, bf16 (the weights converted once) or auto: bf16 only on a CPU class where bf16 was measured "
                   "at least 1.5 times float32's speed end to end (none so far: fp32), never for a regression head; "
                   "decided from the CPU's reported features, never timed (model/predictor/precision.py; default auto). "
                   "The summary line and each row's precision column say what ran")
    p.add_argument("--max-file-mb", type=positive_float, default=DEFAULT_MAX_FILE_BYTES / 2**20, metavar="M",
                   help="refuse one-review files larger than M MiB (default %(default)g)")
    p.add_argument("--task", choices=TASKS, help="read the model's outputs as this task instead of what its "
                   "config.json says (single_label: softmax; multi_label: a sigmoid per label; regression: the raw "
                   "value); docs/task_types.md")
    p.add_argument("--threshold", type=unit_interval, metavar="T", help="multi-label decision threshold in (0, 1): "
                   "a label is predicted when its sigmoid is at least T (default 0.5)")
    p.add_argument("--long-text", choices=("windows", "head_tail"), default="windows",
                   help="reviews longer than the model's maximum length: read in side-by-side windows (default; the "
                        "num_windows column) or cut to their head and tail (docs/long_documents.md)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--components", action="store_true", help="a top_components column: the five largest parts of each "
                   "row's predicted logit (heads, FFNs, ...; docs/components.md); --metrics/--report gain them")
    # --- Ray engine (issue 13, model/batch/ray_engine.py) ---
    g = p.add_argument_group("Ray engine (needs the 'cluster' extra)")
    g.add_argument("--engine", choices=ENGINES, default="local",
                   help="local: this process (default); ray: an actor pool on a Ray cluster")
    g.add_argument("--ray-address", metavar="ADDR",
                   help="join a running cluster: auto or ray://host:port (default: start a local Ray instance)")
    g.add_argument("--num-workers", type=positive_int, metavar="N",
                   help="scoring actors (default: from the cluster's CPUs/GPUs)")
    g.add_argument("--gpus-per-worker", type=positive_float, metavar="G", help="GPUs per actor (default: 0, CPU)")
    add_report_arguments(p, positive_int)  # --report, --metrics, --top-tokens, --min-count, --no-token-scores
    add_compare_argument(p)  # --compare-model (issue 44, model/scorer/compare.py)
    add_counterfactual_arguments(p, positive_int)  # --counterfactuals, --counterfactuals-out, --cf-* (issue 43)
    add_map_arguments(p)  # --embeddings, --embedding-layer, --embedding-pooling, --projection (issue 42)
    return p


ENGINES = ("local", "ray")


def ray_usage(args: argparse.Namespace) -> str | None:
    """Why the Ray options do not fit together (a usage error), or None."""
    ray_only = [f for f, v in (("--ray-address", args.ray_address), ("--num-workers", args.num_workers),
                               ("--gpus-per-worker", args.gpus_per_worker)) if v is not None]
    if args.engine != "ray" and ray_only:
        return f"{', '.join(ray_only)} need(s) --engine ray"
    if args.engine == "ray" and args.long_text != "windows":
        return "the Ray engine reads long reviews in windows; --long-text head_tail needs --engine local"
    if args.out and args.out.endswith(("/", os.sep)) and args.engine != "ray":
        return "a folder of Parquet shards (--out DIR/) needs --engine ray"
    if writes_shards(args) and args.format not in (None, "parquet"):
        return "a shard folder (--out DIR/) holds Parquet files; drop --format or use --format parquet"
    return None


def writes_shards(args: argparse.Namespace) -> bool:
    """``--engine ray --out DIR/`` (or an existing folder): write a folder of Parquet shards."""
    return args.engine == "ray" and bool(args.out) and is_shard_folder(args.out)


__all__ = ["ENGINES", "EXIT_STATUS", "build_parser", "positive_float", "positive_int", "ray_usage", "unit_interval",
           "writes_shards"]
