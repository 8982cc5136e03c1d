"""One text, one number (issue 55): how far the probabilities of the same reviews lie apart when they come from
``Predictor.predict`` (the explorer), ``score_many`` (the batch table), the scorer's command line (local) and
``--engine ray``, per precision. Prints JSON lines and a table.

Usage::

    python -m benchmarks.one_number [--data ../shared/data/imdb/test.jsonl.gz] [--n 200] [--precisions auto,fp32,bf16]
        [--no-ray]

For each precision: the largest absolute difference of any probability between each route and ``predict``, and how
many of the ``--n`` reviews differ by more than 1e-5 and by more than 0.001 (the 0.1 % the window shows). The
reviews are the first ``--n`` of ``--data``; Ray runs a local 2-CPU instance with two actors.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

from model.scorer.main import main as score_main
from model.batch.export import read_results
from model.files.textio import read_labelled
from model.predictor.predictor import Predictor


def scorer(src: Path, out: Path, prec: str, ray: bool) -> np.ndarray:
    """[N, C] probabilities of the scorer's rows for ``src`` (local or ``--engine ray``)."""
    argv = [str(src), "--no-progress", "--precision", prec, "-o", str(out)]
    argv += ["--engine", "ray", "--num-workers", "2"] if ray else []
    with contextlib.redirect_stderr(io.StringIO()):
        code = score_main(argv)
    if code != 0:
        raise SystemExit(f"the scorer exited {code} on {argv}")
    return np.array([r.probabilities for r in read_results(out)], np.float64)


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns 0."""
    ap = argparse.ArgumentParser(description="predict / score_many / CLI / Ray: the same reviews' differences.")
    ap.add_argument("--data", default="../shared/data/imdb/test.jsonl.gz")
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--precisions", default="auto,fp32,bf16")
    ap.add_argument("--no-ray", action="store_true")
    args = ap.parse_args(argv)
    texts = read_labelled(args.data)[0][: args.n]
    p = Predictor.from_pretrained(device="cpu")
    ray = None
    if not args.no_ray:
        import ray

        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    table = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "reviews.jsonl"
            src.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), encoding="utf-8")
            for prec in args.precisions.split(","):
                ran = p.use_precision(prec)
                routes = {"predict": np.stack([p.predict(t).probabilities for t in texts]).astype(np.float64),
                          "score_many": np.array([s.probabilities for s in p.score_many(texts)], np.float64),
                          "cli": scorer(src, Path(tmp) / "local.jsonl", prec, ray=False)}
                if ray is not None:
                    routes["ray"] = scorer(src, Path(tmp) / "ray.jsonl", prec, ray=True)
                ref = routes["predict"]
                for name, probs in routes.items():
                    if name == "predict":
                        continue
                    d = np.abs(probs - ref).max(axis=1)
                    row = {"precision": prec, "ran": ran, "route": name, "max_diff": float(d.max()),
                           "over_1e-5": int((d > 1e-5).sum()), "over_0.001": int((d > 1e-3).sum()), "n": len(texts)}
                    table.append(row)
                    print(json.dumps(row), flush=True)
                if "ray" in routes:
                    d = np.abs(routes["ray"] - routes["cli"]).max(axis=1)
                    row = {"precision": prec, "ran": ran, "route": "ray vs cli", "max_diff": float(d.max()),
                           "over_1e-5": int((d > 1e-5).sum()), "over_0.001": int((d > 1e-3).sum()), "n": len(texts)}
                    table.append(row)
                    print(json.dumps(row), flush=True)
    finally:
        if ray is not None:
            ray.shutdown()
        p.use_precision("fp32")
    print("\n| precision (ran) | route | against | largest difference | reviews > 1e-5 | reviews > 0.001 |\n"
          "|---|---|---|---|---|---|")
    for r in table:
        against = "cli" if r["route"] == "ray vs cli" else "predict"
        print(f"| {r['precision']} ({r['ran']}) | {r['route'].split(' vs ')[0]} | {against} | {r['max_diff']:.2g} | "
              f"{r['over_1e-5']} of {r['n']} | {r['over_0.001']} of {r['n']} |")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
