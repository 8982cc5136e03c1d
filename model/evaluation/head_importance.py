"""Attention-head importance over a data set, and accuracy as the least important heads are pruned.

Usage::

    python -m model.evaluation.head_importance --data ../shared/data/imdb/test.jsonl.gz --n 500 --out heads.json

Source: Michel, Levy & Neubig 2019, "Are Sixteen Heads Really Better than One?" (NeurIPS), section 4.1. Each head h
gets a mask variable xi_h (1: kept) that multiplies its context vector before the output projection
(:mod:`model.explain.heads`); its importance is the expected absolute gradient of the loss with respect to it,

    I_h = E_x | dL(x) / d xi_h |                                    (their eq. 2)

with L the cross-entropy of the true label, evaluated at xi = 1 per review (one backward pass per batch: each
review of the batch has its own copy of the mask variables). As in the paper (following Molchanov et al. 2017),
the scores are normalised per layer by their l2 norm: I[l] / ||I[l]||_2 ("importance" in the JSON;
"raw_importance" is I). Heads are then pruned least important first (by the normalised score, across all layers)
at 0, 10, 20, ... 90% of the heads (rounded), and the accuracy on the same reviews is printed for each step.

Exit codes: 0 ok, 2 bad arguments or unreadable data / a model without a classification head.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import torch

from ..explain.heads import head_mask_hooks
from model.attention.pruning import pruning_mask, pruning_order

if TYPE_CHECKING:  # pragma: no cover
    from model.predictor.predictor import Predictor

DEFAULT_PERCENTS: tuple[int, ...] = (0, 10, 20, 30, 40, 50, 60, 70, 80, 90)


def class_targets(predictor: Predictor, labels: np.ndarray) -> np.ndarray:
    """The 0/1 review labels (1 positive) as the model's class indices (its "positive" label, else index 1)."""
    pos = predictor.labels.index("positive") if "positive" in predictor.labels else 1
    return np.where(np.asarray(labels) == 1, pos, 1 - pos).astype(np.int64)


def head_importance(predictor: Predictor, texts: Sequence[str], targets: np.ndarray,
                    batch_size: int = 16) -> np.ndarray:
    """Michel et al. 2019, eq. 2: mean over the texts of |dL/d xi_h| at xi = 1, float64 (L, H) (unnormalised).

    Args:
        predictor: a model with a classification head. texts: the reviews. targets: int64 [N], class indices.
        batch_size: reviews per forward/backward pass.

    Raises:
        ValueError: no texts, or a model without a classification head.
    """
    predictor.require_head("head importance")
    if len(texts) == 0:
        raise ValueError("no texts")
    cfg, model = predictor.config, predictor.model
    total = torch.zeros(cfg.n_layers, cfg.n_heads, dtype=torch.float64)
    encoded = predictor.encoder.encode_ids_batch(list(texts))
    for s in range(0, len(texts), batch_size):
        ids, mask = predictor.encoder.pad_ids([e[0] for e in encoded[s : s + batch_size]])
        ids_t, mask_t = torch.from_numpy(ids).to(predictor.device), torch.from_numpy(mask).to(predictor.device)
        xi = torch.ones(ids.shape[0], cfg.n_layers, cfg.n_heads, device=predictor.device, requires_grad=True)
        y = torch.from_numpy(targets[s : s + batch_size]).to(predictor.device)
        with torch.inference_mode(False), torch.enable_grad(), predictor.forward_lock, \
                head_mask_hooks(model, xi, cfg.n_heads):
            logits, _ = model(ids_t, mask_t)  # (B, C)
            loss = torch.nn.functional.cross_entropy(logits.float(), y, reduction="sum")
            (grad,) = torch.autograd.grad(loss, xi)  # (B, L, H): review b's dL_b / d xi_b
        total += grad.abs().sum(0).double().cpu()
    return (total / len(texts)).numpy()


def normalise_per_layer(importance: np.ndarray) -> np.ndarray:
    """Each layer's scores divided by their l2 norm (Michel et al. 2019, section 4.1); a zero layer stays zero."""
    norms = np.linalg.norm(importance, axis=1, keepdims=True)
    return np.where(norms > 0, importance / np.where(norms > 0, norms, 1.0), 0.0)


def accuracy(predictor: Predictor, texts: Sequence[str], targets: np.ndarray, head_mask=None,
             batch_size: int = 64) -> float:
    """Accuracy of ``predictor`` (with ``head_mask``) on the texts (a text that cannot be scored counts as wrong)."""
    scores = predictor.score_many(list(texts), batch_size=batch_size, head_mask=head_mask)
    pred = np.array([int(np.argmax(s.probabilities)) if s.ok else -1 for s in scores])
    return float((pred == targets).mean())


def prune_curve(predictor: Predictor, texts: Sequence[str], targets: np.ndarray, scores: np.ndarray,
                percents: Sequence[int] = DEFAULT_PERCENTS) -> list[dict]:
    """Accuracy with the ``round(p / 100 * L * H)`` least important heads removed, for every p in ``percents``.

    Returns:
        ``[{"percent": p, "heads_pruned": k, "accuracy": a, "mask": (L, H) list}]``.
    """
    rows = []
    for p in percents:
        k = int(round(p / 100 * scores.size))
        mask = pruning_mask(scores, k)
        rows.append({"percent": int(p), "heads_pruned": k, "accuracy": accuracy(predictor, texts, targets, mask),
                     "mask": mask.astype(int).tolist()})
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """Command line; prints the pruning table and writes the JSON (see the module docstring). Returns the exit code."""
    ap = argparse.ArgumentParser(prog="python -m model.evaluation.head_importance",
                                 description="Head importance (Michel et al. 2019, eq. 2) and accuracy under pruning.")
    ap.add_argument("--data", required=True, help="a .jsonl or .jsonl.gz file of {'text': ..., 'label': 0/1} rows")
    ap.add_argument("--n", type=int, default=500, help="reviews to sample (default 500)")
    ap.add_argument("--out", default="heads.json", help="the JSON to write (default heads.json)")
    ap.add_argument("--model", default=None, help="model folder (default: the bundled resources/model)")
    ap.add_argument("--seed", type=int, default=0, help="sampling seed")
    ap.add_argument("--batch-size", type=int, default=16, help="reviews per backward pass (default 16)")
    ap.add_argument("--percents", type=int, nargs="+", default=list(DEFAULT_PERCENTS),
                    help="percentages of heads to prune (default 0 10 ... 90)")
    ap.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    args = ap.parse_args(argv)

    from model.files.atomic import atomic_write_bytes
    from .loading import load_for_cli

    if args.n < 1 or args.batch_size < 1 or any(not 0 <= p <= 100 for p in args.percents):
        print("error: --n and --batch-size must be >= 1 and --percents within 0..100", file=sys.stderr)
        return 2
    loaded = load_for_cli(args.model, args.device, args.data, need_head="head importance")
    if loaded is None:
        return 2
    predictor, texts, labels = loaded
    pick = np.random.default_rng(args.seed).choice(len(texts), size=min(args.n, len(texts)), replace=False)
    texts, targets = [texts[i] for i in pick], class_targets(predictor, labels[pick])
    t0 = time.perf_counter()
    raw = head_importance(predictor, texts, targets, args.batch_size)
    scores = normalise_per_layer(raw)
    curve = prune_curve(predictor, texts, targets, scores, args.percents)
    result = {
        "importance": scores.tolist(), "raw_importance": raw.tolist(), "normalisation": "l2 per layer",
        "order": [list(t) for t in pruning_order(scores)], "pruning": curve, "n": len(texts),
        "n_layers": int(scores.shape[0]), "n_heads": int(scores.shape[1]), "data": str(args.data),
        "model": str(predictor.model_dir), "seed": args.seed, "device": str(predictor.device),
        "source": "Michel, Levy & Neubig 2019, eq. 2", "wall_s": time.perf_counter() - t0,
    }
    print(f"Head importance on {len(texts)} reviews (Michel et al. 2019, eq. 2; l2-normalised per layer):")
    for layer, row in enumerate(scores):
        print(f"  layer {layer}: " + "  ".join(f"{v:.3f}" for v in row))
    print("\n| heads pruned | % | accuracy |\n|---|---|---|")
    for r in curve:
        print(f"| {r['heads_pruned']} | {r['percent']} | {r['accuracy']:.4f} |")
    atomic_write_bytes(args.out, (json.dumps(result, indent=2) + "\n").encode("utf-8"))
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
