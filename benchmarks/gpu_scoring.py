"""``score_many`` on a GPU: where the time goes, and reviews/s of this tree against another one. Prints JSON lines.

Usage (from the root of the tree to measure; ``--tree`` runs the same measurement in another checkout, e.g. the
code before a change, unpacked with ``git archive``)::

    python -m benchmarks.gpu_scoring split [--device cuda] [--n 25000] [--data test.jsonl.gz]
    python -m benchmarks.gpu_scoring rate  [--device cuda] [--n 25000] [--batch-size B] [--max-tokens M]
        [--precision fp32] [--save probs.npy] [--tree OTHER_ROOT] [--token-processes K]
    python -m benchmarks.gpu_scoring tokenize [--n 25000] [--processes 15]

* ``split``: one pass over ``--n`` seeded IMDB test reviews done the plain way, each stage finished (the device
  synchronised) before the next: tokenization (windows of 1,024 texts, the Rust tokenizer's threads), padding and
  copies to the device, forward passes, copies back and the read-out into Scores (64 texts per pass unless
  ``--batch-size``). Seconds per stage: the profile of ``score_many``'s loop, which runs these stages in this order.
* ``rate``: the best of ``--repeats`` timed ``score_many`` runs after a warm-up (the device synchronised around
  each); ``--token-processes K`` tokenizes in K spawned processes instead of the tokenizer's threads (a route
  measured here, not in the product); ``--save`` writes the probabilities, float32 (N, C), to compare labels and
  bits between runs.
* ``tokenize``: the tokenizer alone, the ceiling for any scoring loop: the Rust tokenizer's own threads on windows of
  1,024 texts (as ``score_many``) and, for comparison, ``--processes`` processes each tokenizing a share.

Asserts nothing; a machine's numbers are in docs/performance.md ("GPU batch scoring").
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from .sample import seeded_reviews


def _sync(device) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize()


def split(args) -> dict:
    """Seconds per stage of the plain loop (see the module docstring) on ``args.n`` reviews."""
    import numpy as np
    import torch

    from model.text.inputs import token_budget_batches
    from model.predictor.predictor import MAX_TOKENS_CPU, MAX_TOKENS_GPU, Predictor
    from model.predictor import _scoring

    pred = Predictor.from_pretrained(args.model, args.device)
    texts = seeded_reviews(args.data, args.n)
    pred.score_many(texts[:500])  # warm-up
    dev, took = pred.device, dict.fromkeys(("tokenize", "pad_and_copy", "forward", "back_and_read_out"), 0.0)
    max_tokens = MAX_TOKENS_CPU if dev.type == "cpu" else MAX_TOKENS_GPU
    t_all = time.perf_counter()
    with torch.inference_mode():
        for w0 in range(0, len(texts), 1024):
            t = time.perf_counter()
            chunk = texts[w0 : w0 + 1024]
            slots, good, items = _scoring.score_items(pred._parts(), chunk, [None] * len(chunk), pred.options())
            took["tokenize"] += time.perf_counter() - t
            lengths = [len(x) for x in items.items]
            order = np.argsort(lengths, kind="stable")
            for idx in token_budget_batches([lengths[i] for i in order], order, args.batch_size or 64, max_tokens):
                t = time.perf_counter()
                ids, mask = pred.encoder.pad_ids([items.items[i] for i in idx])
                ids_d, mask_d = torch.from_numpy(ids).to(dev), torch.from_numpy(mask).to(dev)
                _sync(dev)
                t2 = time.perf_counter()
                logits, _ = pred.model(ids_d, mask_d)
                _sync(dev)
                t3 = time.perf_counter()
                probs, z = pred.probabilities(logits), logits.float().cpu().numpy()
                for row, i in enumerate(idx):
                    if (complete := items.add(int(i), z[row], probs[row])) is not None:
                        slots[good[complete[0]]] = complete[1]
                t4 = time.perf_counter()
                took["pad_and_copy"] += t2 - t
                took["forward"] += t3 - t2
                took["back_and_read_out"] += t4 - t3
    total = time.perf_counter() - t_all
    return {"mode": "split", "device": pred.device_name, "reviews": len(texts), "total_s": round(total, 3),
            **{f"{k}_s": round(v, 3) for k, v in took.items()}, "reviews_per_s": round(len(texts) / total)}


_ENCODER = None  # a token process's copy of the predictor's encoder (set by _start_worker)


def _start_worker(encoder) -> None:
    global _ENCODER
    _ENCODER = encoder


def _encode_share(texts: list[str], whole: bool):
    """A token process's share of ``encode_ids_batch``: flat int64 ids, int64 lengths and bool truncated flags
    (three arrays pickle faster than one array per text)."""
    import numpy as np

    out = _ENCODER.encode_ids_batch(texts, whole)
    lengths = np.fromiter((len(ids) for ids, _ in out), np.int64, len(out))
    flat = np.concatenate([ids for ids, _ in out]) if out else np.zeros(0, np.int64)
    return flat, lengths, np.fromiter((t for _, t in out), bool, len(out))


class PooledEncoder:
    """The predictor's encoder with ``encode_ids_batch`` spread over token processes (the route ``rate
    --token-processes K`` measures against the product's threads); everything else is the encoder's own."""

    def __init__(self, encoder, processes: int) -> None:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        self._encoder, self._k = encoder, processes
        self._pool = ProcessPoolExecutor(processes, mp_context=mp.get_context("spawn"), initializer=_start_worker,
                                         initargs=(encoder,))
        list(self._pool.map(_encode_share, [["warm up"]] * processes, [True] * processes))

    def __getattr__(self, name):
        return getattr(self._encoder, name)

    def encode_ids_batch(self, texts, whole: bool = False):
        """As the encoder's, in ``processes`` contiguous shares."""
        import numpy as np

        step = -(-len(texts) // self._k)
        shares = [list(texts[i : i + step]) for i in range(0, len(texts), step)]
        out = []
        for flat, lengths, cut in self._pool.map(_encode_share, shares, [whole] * len(shares)):
            out.extend(zip(np.split(flat, np.cumsum(lengths)[:-1]), cut.tolist(), strict=True))
        return out


def rate(args) -> dict:
    """Best reviews/s of ``score_many`` (see the module docstring)."""
    import numpy as np

    from model.predictor.predictor import Predictor

    pred = Predictor.from_pretrained(args.model, args.device)
    if args.token_processes:
        pred.encoder = PooledEncoder(pred.encoder, args.token_processes)
    if args.precision != "fp32":
        pred.use_precision(args.precision)
    texts = seeded_reviews(args.data, args.n)
    kw = {k: v for k, v in (("batch_size", args.batch_size), ("max_tokens", args.max_tokens)) if v is not None}
    pred.score_many(texts[:2000], **kw)  # warm-up
    best, scores = float("inf"), None
    for _ in range(args.repeats):
        _sync(pred.device)
        t = time.perf_counter()
        scores = pred.score_many(texts, **kw)
        _sync(pred.device)
        best = min(best, time.perf_counter() - t)
    if args.save:
        np.save(args.save, np.stack([s.probabilities for s in scores]).astype(np.float32))
    return {"mode": "rate", "tree": str(Path.cwd()), "device": pred.device_name, "precision": pred.precision,
            "batch_size": args.batch_size or "default", "max_tokens": args.max_tokens or "default",
            "token_processes": args.token_processes, "reviews": len(texts), "best_s": round(best, 3),
            "reviews_per_s": round(len(texts) / best)}


def _tokenize_share(args: tuple[str, list[str]]):
    """A worker's share: the flat int32 ids and the per-text lengths (module level: pickled by name)."""
    import numpy as np
    from tokenizers import Tokenizer

    path, texts = args
    tok = Tokenizer.from_file(path)
    encs = tok.encode_batch_fast(texts, add_special_tokens=False)
    lengths = np.fromiter((len(e.ids) for e in encs), np.int64, len(encs))
    return np.concatenate([np.asarray(e.ids, np.int32) for e in encs]), lengths


def tokenize(args) -> dict:
    """The tokenizer alone: threads (as ``score_many``) and ``args.processes`` processes."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    from model.predictor.predictor import Predictor

    pred = Predictor.from_pretrained(args.model, "cpu")
    texts = seeded_reviews(args.data, args.n)
    out = {"mode": "tokenize", "reviews": len(texts), "cpu_count": os.cpu_count()}
    t = time.perf_counter()
    for w0 in range(0, len(texts), 1024):
        pred.encoder.encode_ids_batch(texts[w0 : w0 + 1024], whole=True)
    out["threads_reviews_per_s"] = round(len(texts) / (time.perf_counter() - t))
    if args.processes:
        path = str(Path(pred.model_dir) / "tokenizer.json")
        k = args.processes
        shares = [(path, texts[i::k]) for i in range(k)]
        with ProcessPoolExecutor(k, mp_context=mp.get_context("spawn")) as pool:
            list(pool.map(_tokenize_share, [(path, ["warm up"])] * k))
            t = time.perf_counter()
            list(pool.map(_tokenize_share, shares))
            out["processes_reviews_per_s"] = round(len(texts) / (time.perf_counter() - t))
    return out


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; prints one JSON line and returns 0."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=("split", "rate", "tokenize"))
    ap.add_argument("--data", default="../shared/data/imdb/test.jsonl.gz")
    ap.add_argument("--model", default=None, help="model folder (default: the bundled model of the tree run)")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--n", type=int, default=25000)
    ap.add_argument("--batch-size", type=int, default=None, help="texts per pass (default: the device's)")
    ap.add_argument("--max-tokens", type=int, default=None, help="rate: padded tokens per pass (default: the device's)")
    ap.add_argument("--precision", default="fp32")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--processes", type=int, default=0)
    ap.add_argument("--token-processes", type=int, default=0, help="rate: tokenize in K processes (spawned)")
    ap.add_argument("--save", default=None)
    ap.add_argument("--tree", default=None, help="import `model` from this checkout's root instead")
    args = ap.parse_args(argv)
    args.data = str(Path(args.data).resolve())
    if args.tree:
        os.chdir(args.tree)
        sys.path.insert(0, str(Path(args.tree).resolve()))
        for name in [m for m in sys.modules if m == "model" or m.startswith("model.")]:
            del sys.modules[name]
    print(json.dumps({"split": split, "rate": rate, "tokenize": tokenize}[args.mode](args)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
