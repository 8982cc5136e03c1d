"""Benchmark of the explanation methods (prints numbers, asserts nothing).

``python -m benchmarks.explain [--tokens 256] [--repeats 5] [--ig-steps 32] [--model DIR]``

Without ``--model`` it builds a randomly initialised model with the shipped
architecture (``EncoderConfig(max_len=512, d_model=128, n_heads=4,
n_layers=2, d_ff=512)``; the cost does not depend on the weights). Reports,
for a review of ``--tokens`` tokens: milliseconds per review for each cheap
method (including the forward pass it needs), for the ERASER erasure pass,
and for integrated gradients with ``--ig-steps`` steps. Targets: cheap
methods <= 30 ms, IG (32 steps, 256 tokens) <= 2 s on the CPU.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time

import numpy as np
import torch

from model.explain import CHEAP_METHODS, explain


def _text_with_tokens(predictor, n_tokens: int) -> str:
    words = [
        "the",
        "film",
        "was",
        "a",
        "wonderful",
        "surprise",
        "but",
        "the",
        "ending",
        "felt",
        "rushed",
        "and",
        "the",
        "acting",
        "uneven",
    ]
    out: list[str] = []
    while len(predictor.encode(" ".join(out or ["x"])).ids) < n_tokens:
        out.append(words[len(out) % len(words)])
    while len(out) > 1 and len(predictor.encode(" ".join(out)).ids) > n_tokens:
        out.pop()
    return " ".join(out)


def main(argv=None) -> int:
    """Run the benchmark and print a table plus a JSON line; returns 0."""
    ap = argparse.ArgumentParser(prog="python -m benchmarks.explain", description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokens", type=int, default=256, help="review length in tokens, [CLS] included")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--ig-steps", type=int, default=32)
    ap.add_argument("--model", default=None, help="a model folder (default: random model of the shipped size)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=None, help="torch intra-op threads (default: torch's choice)")
    args = ap.parse_args(argv)

    from model.core.config import EncoderConfig
    from model.predictor.predictor import Predictor
    from tests.fixtures.tiny_models import make_random_model_dir

    if args.model is None:
        tmp = tempfile.mkdtemp(prefix="bench_explain_")
        cfg = EncoderConfig(max_len=512, d_model=128, n_heads=4, n_layers=2, d_ff=512)
        model_dir = make_random_model_dir(tmp, config=cfg, vocab_size=2000)
    else:
        model_dir = args.model
    if args.threads:
        torch.set_num_threads(args.threads)
    predictor = Predictor.from_pretrained(model_dir, device=args.device)
    tokens = min(args.tokens, predictor.config.max_len)
    text = _text_with_tokens(predictor, tokens)
    T = len(predictor.encode(text).ids)
    print(f"device={predictor.device_name} torch_threads={torch.get_num_threads()} tokens={T}")

    res: dict[str, float] = {}
    predictor.predict(text)  # warm-up
    times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        pred = predictor.predict(text)
        times.append(time.perf_counter() - t0)
    res["predict"] = 1000 * float(np.median(times))
    for m in CHEAP_METHODS:
        explain(predictor, text, m, prediction=pred)  # warm-up
        times = []
        for _ in range(args.repeats):
            # the method's own cost, given the prediction the GUI already has
            t0 = time.perf_counter()
            explain(predictor, text, m, prediction=pred)
            times.append(time.perf_counter() - t0)
        res[m] = 1000 * float(np.median(times))
    t0 = time.perf_counter()
    for _ in range(args.repeats):
        p = predictor.predict(text)
        for m in CHEAP_METHODS:
            explain(predictor, text, m, prediction=p)
    res["predict + all cheap methods"] = 1000 * (time.perf_counter() - t0) / args.repeats
    e = explain(predictor, text, "grad_x_input", prediction=pred)
    times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        predictor.faithfulness(text, e)
        times.append(time.perf_counter() - t0)
    res["erasure (11 inputs)"] = 1000 * float(np.median(times))
    ig_times = []
    for _ in range(max(1, min(3, args.repeats))):
        t0 = time.perf_counter()
        ig = explain(predictor, text, "integrated_gradients", prediction=pred, n_steps=args.ig_steps)
        ig_times.append(time.perf_counter() - t0)
    res[f"integrated_gradients ({args.ig_steps} steps)"] = 1000 * float(np.median(ig_times))

    print("| method | ms per review (median) |\n|---|---|")
    for k, v in res.items():
        print(f"| {k} | {v:.1f} |")
    print(f"IG convergence delta: {ig.convergence_delta:.3g}")
    print(json.dumps({"tokens": T, "ms": res, "ig_delta": ig.convergence_delta, "device": str(predictor.device)}))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
