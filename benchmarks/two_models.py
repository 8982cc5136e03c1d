"""Peak memory of two BERT-base-sized models compared row by row against one model scoring alone (issue 44).
Prints one JSON line per run and a summary line; asserts nothing.

Usage::

    python -m benchmarks.two_models [--work DIR] [--rows 64]

Two BERT-base-sized classifiers with random weights (:func:`benchmarks.memory.bert_base_folder`, seeds 0 and 1: 12
layers x 12 heads, hidden 768, 109 M parameters, the same two labels) are built offline. Each run is a fresh child
process (``--child``) that reads its peak resident set size (:func:`benchmarks.memory.peak_mb`: ``VmHWM``):

* ``one``: model A loaded, then ``rows`` seeded texts of 50 words scored by the batch engine
  (:func:`model.batch.engine.score_records`);
* ``two``: models A and B loaded, then the same texts scored by both
  (:func:`model.corpus.comparison.score_compared`, the path of ``--compare-model`` and of the GUI's batch panel).

``ratio`` = the ``two`` run's peak over the ``one`` run's (the issue's bound: at most about 2; the imports, torch's
own memory and the activations are paid once, so it should stay below 2).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.memory import bert_base_folder, peak_mb, texts


def child(mode: str, folders: list[Path], rows: int) -> dict:
    """Load one or two models in this process, score ``rows`` texts, and return the memory record."""
    import torch

    from model.corpus.comparison import score_compared
    from model.batch.engine import score_records
    from model.batch.readers import Record
    from model.predictor.predictor import Predictor

    imports = peak_mb()
    t0 = time.perf_counter()
    models = [Predictor.from_pretrained(f, device="cpu") for f in (folders if mode == "two" else folders[:1])]
    for m in models:
        m.use_precision("fp32")
    load_s = time.perf_counter() - t0
    loaded = peak_mb()
    records = [Record(f"r{i}", t) for i, t in enumerate(texts(rows))]
    t0 = time.perf_counter()
    chunks = score_compared(*models, records, batch_size=16, chunk=32) if mode == "two" else \
        score_records(models[0], records, batch_size=16, chunk=32)
    n = sum(len(c) for c in chunks)
    return {"run": mode, "models": len(models), "rows": n, "imports_mb": round(imports, 1),
            "peak_after_load_mb": round(loaded, 1), "peak_after_scoring_mb": round(peak_mb(), 1),
            "load_s": round(load_s, 1), "scoring_s": round(time.perf_counter() - t0, 1),
            "torch_threads": torch.get_num_threads()}


def main(argv: list[str] | None = None) -> int:
    """CLI entry point: builds the two folders, runs the ``one`` and ``two`` children, prints JSON lines; returns 0."""
    ap = argparse.ArgumentParser(description="Peak RSS of two BERT-base models compared against one.")
    ap.add_argument("--work", help="where the model folders are built (kept; default a temporary folder)")
    ap.add_argument("--rows", type=int, default=64, help="texts scored (default 64)")
    ap.add_argument("--child", nargs="+", metavar="ARG", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child[0], [Path(f) for f in args.child[1:]], args.rows)), flush=True)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.work) if args.work else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        folders = [str(bert_base_folder(work / f"bert_base_random_{seed}", seed)) for seed in (0, 1)]
        peaks = {}
        for mode in ("one", "two"):
            out = subprocess.run([sys.executable, "-m", "benchmarks.two_models", "--rows", str(args.rows), "--child",
                                  mode, *folders], check=True, capture_output=True, text=True,
                                 env={**os.environ, "PYTHONPATH": os.getcwd()}).stdout
            record = json.loads(out.strip().splitlines()[-1])
            print(json.dumps(record), flush=True)
            peaks[mode] = record["peak_after_scoring_mb"]
        print(json.dumps({"summary": "two models / one model, peak RSS after scoring",
                          "ratio": round(peaks["two"] / peaks["one"], 3)}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
