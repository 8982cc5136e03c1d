"""Component attribution benchmark (issue 53, section 6): ``Predictor.component_attribution`` against one forward pass
with capture, on the CPU. Prints a table and JSON lines.

Usage::

    python -m benchmarks.components [--data ../shared/data/imdb/test.jsonl.gz] [--repeats 20] [--threads 2]
                                    [--no-minilm]

For each model: the best (min) and the median wall time, the four taking turns in every round, of (a) one forward pass with capture, the hooks of
:func:`model.explain.taps.capture` on the model's own modules, exactly the pass component attribution runs;
(b) ``component_attribution(text)`` (tokenisation, that pass and the backward sweep of
:mod:`model.explain.components`); (c) ``predict(text)`` for reference; (d) the backward sweep alone, on the captured
pass (what (b) adds to (a); the figure a busy machine distorts least); (e) ``ffn_neurons(text, L)``, the last FFN
split by neuron (the Components view's FFN click: one pass with capture, the sweep, and the neurons' split). The text: the longest of the first 300 test
reviews cut at a word start to 256 tokens (the bundled model) or 128 (all-MiniLM-L6-v2 with a random 2-class head,
:func:`benchmarks.hf.minilm_folders`). Target of issue 53 (not asserted): (b) <= 1.5 x (a), best of N.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from benchmarks.flow import longest_review
from model.explain.components import component_attribution as split_logit
from model.explain.taps import capture, taps_of
from model.predictor.predictor import Predictor


def capture_pass(predictor: Predictor, text: str) -> tuple[list, object]:
    """One forward pass of ``text`` with every capture hook (what component attribution records): ``(caps, taps)``."""
    ids = torch.from_numpy(predictor.encode(text).ids).unsqueeze(0)
    taps = taps_of(predictor.model)
    with torch.inference_mode(), predictor.forward_lock:
        return capture(predictor.model, ids, torch.ones_like(ids, dtype=torch.bool), taps)[0], taps


def interleaved(fns: list, repeats: int) -> list[list[float]]:
    """Milliseconds of each of ``fns`` over ``repeats`` rounds after one warm-up round, the functions taking turns in
    every round (so a busy machine's load drifts reach them alike)."""
    for fn in fns:
        fn()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for k, fn in enumerate(fns):
            t = time.perf_counter()
            fn()
            times[k].append(1000 * (time.perf_counter() - t))
    return times


def bench(name: str, predictor: Predictor, text: str, tokens: int, repeats: int) -> list[dict]:
    """Rows for the capture pass, component attribution and predict on ``text`` cut to ``tokens`` tokens."""
    from tests.fixtures.tiny_models import cut_at_word_start

    P, S = predictor.encoder.specials
    text = cut_at_word_start(predictor, text, tokens - P - S)[0]
    n = len(predictor.encode(text).ids)
    caps, taps = capture_pass(predictor, text)

    def sweep() -> None:
        with torch.inference_mode():
            split_logit(caps, taps, [None] * len(caps), 0)

    runs = (("forward pass with capture", lambda: capture_pass(predictor, text)),
            ("component_attribution", lambda: predictor.component_attribution(text)),
            ("predict", lambda: predictor.predict(text)), ("the backward sweep alone", sweep),
            ("ffn_neurons (last layer)", lambda: predictor.ffn_neurons(text, len(caps))))
    times = interleaved([fn for _, fn in runs], repeats)
    rows = [{"model": name, "what": what, "tokens": n, "median_ms": float(np.median(t)), "min_ms": float(np.min(t))}
            for (what, _), t in zip(runs, times)]
    rows.append({"model": name, "what": "ratio (b) / (a)", "tokens": n, "ratio": rows[1]["min_ms"] / rows[0]["min_ms"],
                 "ratio_median": rows[1]["median_ms"] / rows[0]["median_ms"]})
    return rows


def both_models(bench_fn, doc: str, argv: list[str] | None) -> tuple[list[dict], argparse.Namespace]:
    """The command line shared with :mod:`benchmarks.block_trace` (``--data``, ``--repeats``, ``--threads``,
    ``--no-minilm``), then ``bench_fn(name, predictor, text, tokens, repeats)``'s rows for the bundled model at 256
    tokens and all-MiniLM-L6-v2 with a random head at 128 (the longest of the first 300 reviews of ``--data``)."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--data", default="../shared/data/imdb/test.jsonl.gz")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--no-minilm", action="store_true")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    text = longest_review(args.data)
    rows = bench_fn("bundled", Predictor.from_pretrained(device="cpu"), text, 256, args.repeats)
    if not args.no_minilm:
        from benchmarks.hf import minilm_folders

        with tempfile.TemporaryDirectory() as tmp:
            _, clf = minilm_folders(Path(tmp))
            rows += bench_fn("all-MiniLM-L6-v2 (random head)", Predictor.from_pretrained(clf, device="cpu"), text,
                             128, args.repeats)
    print(f"torch {torch.__version__}, {args.threads} threads, {platform.processor() or platform.machine()}",
          file=sys.stderr)
    return rows, args


def print_rows(rows: list[dict]) -> None:
    """The table (best and median milliseconds, or a ratio) on stdout, then each row as a JSON line."""
    for r in rows:
        if "ratio" in r:
            print(f"{r['model']:<32} {r['what']:<28} {r['tokens']:>4} tok  {r['ratio']:.2f} x "
                  f"(median {r['ratio_median']:.2f} x)")
        else:
            print(f"{r['model']:<32} {r['what']:<28} {r['tokens']:>4} tok  best {r['min_ms']:8.2f} ms  "
                  f"median {r['median_ms']:8.2f} ms")
    for r in rows:
        print(json.dumps(r))


def main(argv: list[str] | None = None) -> int:
    print_rows(both_models(bench, __doc__, argv)[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
