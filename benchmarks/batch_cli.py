"""Benchmark of batch scoring through the command line: reviews/s and peak RSS (prints numbers, asserts nothing).

    python -m benchmarks.batch_cli --n 2000                      # IMDB test reviews, JSON Lines + aclImdb folder
    python -m benchmarks.batch_cli --n 25000 --model resources/model

It samples ``n`` reviews (every k-th line, so both labels appear) from the IMDB
test split (``test.jsonl.gz``), writes them as one JSON Lines file and, with
``--folder``, as an aclImdb-style ``pos/``/``neg/`` folder of ``.txt`` files,
then runs the command line (``attention-explorer-score``, as ``python -m model.scorer.main``) on each
in a subprocess and reports the wall time, reviews/s and the CLI's own peak RSS (``resource.getrusage``,
printed in its summary line). Running two sizes (``--n`` and ``--n // 4``)
shows whether memory grows with the number of reviews.

Without ``--model`` it builds a random model with the trained model's cost:
``EncoderConfig(max_len=512, d_model=128, n_heads=4, n_layers=2, d_ff=512)``
and a 16,000-piece WordPiece vocabulary trained on the sample (so reviews
tokenize to realistic lengths).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from model.core.paths import resources_dir

DEFAULT_DATA = resources_dir().parent.parent / "shared" / "data" / "imdb" / "test.jsonl.gz"


def sample_reviews(path: Path, n: int) -> list[dict]:
    """Every k-th row of a ``.jsonl(.gz)`` file so that ``n`` rows come out (both labels when sorted by label)."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    step = max(1, len(rows) // n)
    return rows[::step][:n]


def build_random_model(out: Path, texts: list[str]) -> Path:
    """A random model with the trained model's architecture and a vocabulary trained on ``texts``."""
    import torch

    from model.core.config import EncoderConfig
    from model.core.encoder import TransformerClassifier
    from model.core.tokenizer import train_tokenizer
    from model.core.weights import TOKENIZER_FILE, save_model

    out.mkdir(parents=True, exist_ok=True)
    tok = train_tokenizer(texts, vocab_size=16000, min_frequency=2)
    tok.save(str(out / TOKENIZER_FILE))
    cfg = EncoderConfig(vocab_size=tok.get_vocab_size(), max_len=512, d_model=128, n_heads=4, n_layers=2, d_ff=512)
    torch.manual_seed(0)
    save_model(TransformerClassifier(cfg), out)
    return out


def run_cli(inputs: list[str], model_dir: Path, out: Path, batch_size: int) -> dict:
    """Run the CLI in a subprocess; returns wall_s, exit code and the numbers parsed from its summary line."""
    cmd = [sys.executable, "-m", "model.scorer.main", *inputs, "--model", str(model_dir), "--out", str(out),
           "--batch-size", str(batch_size), "--no-progress"]
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root)}
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=root, check=False)
    wall = time.perf_counter() - t0
    summary = next((ln for ln in proc.stderr.splitlines() if "reviews/s" in ln), proc.stderr.strip()[-300:])
    rate = re.search(r"([\d,.]+) reviews/s", summary)
    rss = re.search(r"peak RSS ([\d,.]+) MiB", summary)
    return {
        "rc": proc.returncode,
        "wall_s": wall,
        "reviews_per_s": float(rate.group(1).replace(",", "")) if rate else None,
        "peak_rss_mib": float(rss.group(1).replace(",", "")) if rss else None,
        "summary": summary,
    }


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print a table; returns 0 (1 when the data file is missing)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=2000, help="reviews (default 2000)")
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help="IMDB test.jsonl.gz")
    p.add_argument("--model", type=Path, help="model folder (default: a random 512-token model)")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--folder", action="store_true", help="also score an aclImdb-style folder of .txt files")
    args = p.parse_args(argv)
    if not args.data.is_file():
        print(f"IMDB data not found: {args.data} (pass --data)", file=sys.stderr)
        return 1
    import torch

    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, cpus {os.cpu_count()}, "
          f"cuda {torch.cuda.is_available()}")
    with tempfile.TemporaryDirectory(prefix="bench_batch_") as tmp:
        tmp = Path(tmp)
        rows = sample_reviews(args.data, args.n)
        model_dir = args.model or build_random_model(tmp / "model", [r["text"] for r in rows])
        print(f"model: {model_dir}")
        results = []
        for n in sorted({max(1, args.n // 4), args.n}):
            sub = rows[:: max(1, len(rows) // n)][:n]
            jl = tmp / f"reviews_{n}.jsonl"
            with open(jl, "w", encoding="utf-8") as fh:
                fh.writelines(json.dumps({"text": r["text"], "label": r.get("label")}) + "\n" for r in sub)
            results.append((f"jsonl   n={n}", run_cli([str(jl)], model_dir, tmp / "out.csv", args.batch_size)))
            if args.folder:
                folder = tmp / f"acl_{n}"
                for i, r in enumerate(sub):
                    d = folder / ("pos" if r.get("label") == 1 else "neg")
                    d.mkdir(parents=True, exist_ok=True)
                    (d / f"{i}_0.txt").write_text(r["text"], encoding="utf-8")
                results.append((f"folder  n={n}", run_cli([str(folder)], model_dir, tmp / "out.csv", args.batch_size)))
        print(f"{'input':<16} {'rc':>3} {'wall s':>8} {'reviews/s':>10} {'peak RSS MiB':>13}")
        for name, r in results:
            rate = f"{r['reviews_per_s']:.1f}" if r["reviews_per_s"] else "?"
            rss = f"{r['peak_rss_mib']:.0f}" if r["peak_rss_mib"] else "?"
            print(f"{name:<16} {r['rc']:>3} {r['wall_s']:>8.1f} {rate:>10} {rss:>13}")
            print(f"    {r['summary']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
