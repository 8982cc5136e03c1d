"""Grow a trained student by one encoder layer on top of its frozen layers, trained by distillation.

Usage::

    python -m model.training.grow --data ../shared/data/imdb --base runs/step4 --out runs/grow4 \\
        --teacher model/training/artifacts/teacher_minilm_logits.npz \\
        --augmented model/training/artifacts/negations.jsonl.gz:6 --augmented runs/sent_step7.jsonl.gz \\
        [--unsup-limit 20000] [--epochs 4] [--init identity|stack]

Why: fine-tuning every weight of the 2-layer student on negations and short sentences costs it accuracy on
whole reviews (the negation stage and its merges in ``resources/model/README.md``). Here the base student's
layers, embedding and positional encoding stay exactly as they are; a new layer L (same width, heads and
feed-forward size) is stacked on top and trained, with the classification head, on the transfer set of
:func:`model.training.transfer.transfer_set` (soft targets at temperature T, Hinton et al. 2015). The new
layer's attention can relate a word to a negation or a contrast word before it, with the base's contextual
states as input. Stacking a copy of the top layer follows progressive stacking (Gong et al. 2019, "Efficient
Training of BERT by Progressively Stacking"); ``--init identity`` zeroes the copy's two residual branches
(attention output and second feed-forward projection), so the new layer starts close to the identity.

Because the base is frozen, its output for every training text is computed once (``run_layers``, float16,
about 256 bytes per token) and only the new layer and the head run in the training loop: an epoch over
about 100,000 texts takes minutes on two CPU cores. The result is an ordinary model folder with
``n_layers + 1`` layers (safetensors + config.json + tokenizer.json), which the app, ``model.evaluate`` and
``model.training.select`` read as they read any other. ``--work`` keeps the trained top (``top.safetensors``,
``top.json``); a rerun with it in place skips training and only writes the folder. The official test split is
not read.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

from ..core.encoder import TransformerClassifier
from ..core.tokenizer import TextEncoder, load_tokenizer
from ..core.weights import TOKENIZER_FILE, load_model, load_state, save_model, save_state
from .common import (
    adamw,
    add_data_args,
    add_optimizer_args,
    ema_update,
    hardware,
    length_bucketed_batches,
    lr_at,
    optimizer_step,
    pad_batch,
    setup_run,
)
from .transfer import add_transfer_args, review_split, transfer_set


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options; see ``--help``."""
    p = argparse.ArgumentParser(description="Stack one trained encoder layer on a frozen student.")
    add_data_args(p, work="runs/grow")
    add_transfer_args(p)
    p.add_argument("--base", required=True, help="model folder of the student to grow (kept frozen)")
    p.add_argument("--init", choices=["identity", "stack"], default="identity",
                   help="new layer: a copy of the top layer (stack), with its residual branches zeroed (identity)")
    add_optimizer_args(p, epochs=4)
    return p.parse_args(argv)


def grown_model(base: TransformerClassifier, init: str = "identity") -> TransformerClassifier:
    """A model with ``base``'s weights and one more encoder layer on top (``n_layers + 1``).

    The new layer is a copy of ``base``'s top layer; with ``init="identity"`` its attention output projection
    and second feed-forward projection are zeroed, so it adds nothing to either residual stream at first. The
    head (and the final norm of a pre-LN model) are ``base``'s. Raises ValueError for an unknown ``init``.
    """
    if init not in ("identity", "stack"):
        raise ValueError(f"init must be 'identity' or 'stack', got {init!r}")
    L = base.config.n_layers
    model = TransformerClassifier(replace(base.config, n_layers=L + 1))
    state = dict(base.state_dict())
    for name, value in base.layers[L - 1].state_dict().items():
        zero = init == "identity" and name.startswith(("attn.out.", "ff.fc2."))
        state[f"layers.{L}.{name}"] = torch.zeros_like(value) if zero else value.clone()
    model.load_state_dict(state)
    return model


class StateCache:
    """Per-text hidden states kept in one float16 buffer: ``data`` (sum of T_i, D) and ``offsets`` int64 [N + 1];
    text i's states are ``data[offsets[i]:offsets[i + 1]]`` (T_i, D). One buffer, not one tensor per text,
    keeps the memory at 2 bytes per number (3.0 GB for the 43,750 reviews of a 12.7 M-token transfer set at d_model 128)."""

    def __init__(self, lengths: np.ndarray, d_model: int) -> None:
        self.lengths = np.asarray(lengths, np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(self.lengths)])
        self.data = torch.empty(int(self.offsets[-1]), d_model, dtype=torch.float16)

    def __len__(self) -> int:
        return len(self.lengths)

    def batch(self, idx: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        """Right-padded ``(x float32 (B, T, D), mask bool (B, T))`` of texts ``idx``."""
        T = int(self.lengths[idx].max())
        x = torch.zeros(len(idx), T, self.data.shape[1])
        mask = torch.zeros(len(idx), T, dtype=torch.bool)
        for row, i in enumerate(idx):
            n = int(self.lengths[i])
            x[row, :n] = self.data[self.offsets[i] : self.offsets[i] + n]
            mask[row, :n] = True
        return x, mask


@torch.inference_mode()
def base_states(base: TransformerClassifier, seqs: list[np.ndarray], device: torch.device,
                batch: int = 128) -> StateCache:
    """The output of ``base``'s last layer (before any final norm) for each sequence, as a :class:`StateCache`.
    ``base`` runs in eval mode (no dropout)."""
    base.eval()
    cache = StateCache(np.array([len(s) for s in seqs]), base.config.d_model)
    order = np.argsort(cache.lengths, kind="stable")
    for s in tqdm(range(0, len(order), batch), desc="base states", file=sys.stderr, mininterval=15):
        idx = order[s : s + batch]
        ids, mask = pad_batch([seqs[i] for i in idx], base.config.pad_id)
        x, _ = base.run_layers(base.embed(ids.to(device)), mask.to(device))  # (B, T, D)
        x = x.to(torch.float16).cpu()
        for row, i in enumerate(idx):
            n = int(cache.lengths[i])
            cache.data[cache.offsets[i] : cache.offsets[i] + n] = x[row, :n]
    return cache


def top_logits(model: TransformerClassifier, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Logits (B, C) of the grown model's top layer and head on the base's last-layer output ``x`` (B, T, D)."""
    h, _ = model.run_layers(x, mask, start=model.config.n_layers - 1)  # (B, T, D)
    return model.read_out(model.final_norm(h), mask)


@torch.inference_mode()
def top_predict(model: TransformerClassifier, states: StateCache, device: torch.device,
                batch: int = 256) -> np.ndarray:
    """float32 [N, C] logits of :func:`top_logits` for cached base states, in input order."""
    model.eval()
    out = np.zeros((len(states), model.config.num_classes), np.float32)
    order = np.argsort(states.lengths, kind="stable")
    for s in range(0, len(order), batch):
        idx = order[s : s + batch]
        x, mask = states.batch(idx)
        out[idx] = top_logits(model, x.to(device), mask.to(device)).float().cpu().numpy()
    return out


def trainable_names(model: TransformerClassifier) -> list[str]:
    """Names of the weights the growth trains: the top layer, the final norm and the head."""
    top = f"layers.{model.config.n_layers - 1}."
    return [n for n, _ in model.named_parameters() if n.startswith((top, "final_norm.", "head."))]


def train_top(args, model: TransformerClassifier, states: StateCache, targets: np.ndarray,
              val_states: StateCache, val_y: np.ndarray, device: torch.device) -> tuple[dict, dict]:
    """Train the top layer and head on cached base states; ``(best trainable weights, log)``.

    Loss: T^2 times the cross-entropy of softmax(logits / T) against ``targets`` (N, C). AdamW with linear
    warm-up and decay, an exponential moving average (EMA) of the weights; the best of the raw and EMA weights
    on the validation states (by accuracy on ``val_y``) is kept.
    """
    torch.manual_seed(args.seed + 2)
    names = trainable_names(model)
    for n, p in model.named_parameters():
        p.requires_grad_(n in names)
    params = [p for n, p in model.named_parameters() if n in names]
    opt = adamw(model, args.lr, args.weight_decay)
    y = torch.from_numpy(targets)
    lengths = states.lengths
    steps_per_epoch = math.ceil(len(states) / args.batch_size)
    total = steps_per_epoch * args.epochs
    warmup, T = max(1, int(total * args.warmup_frac)), args.temperature
    ema = {k: v.detach().clone() for k, v in model.state_dict().items()}
    history, best, best_weights, t0 = [], (-1.0, ""), {}, time.time()
    for epoch in range(args.epochs):
        model.train()
        losses = []
        batches = length_bucketed_batches(lengths, args.batch_size, np.random.default_rng(args.seed * 1000 + epoch))
        for b, idx in enumerate(tqdm(batches, desc=f"grow {epoch + 1}/{args.epochs}", file=sys.stderr, mininterval=15)):
            step = epoch * steps_per_epoch + b
            for g in opt.param_groups:
                g["lr"] = lr_at(step, total, warmup, args.lr)
            x, mask = states.batch(idx)
            logits = top_logits(model, x.to(device), mask.to(device))
            loss = F.cross_entropy(logits.float() / T, y[idx].to(device)) * T * T
            losses.append(optimizer_step(loss, opt, params))
            ema_update(ema, model, step, args.ema_decay)
        raw = {k: v.detach().clone() for k, v in model.state_dict().items()}
        raw_acc = float((top_predict(model, val_states, device).argmax(1) == val_y).mean())
        model.load_state_dict(ema)
        ema_acc = float((top_predict(model, val_states, device).argmax(1) == val_y).mean())
        model.load_state_dict(raw)
        history.append({"epoch": epoch + 1, "train_loss": float(np.mean(losses)), "val_accuracy": raw_acc,
                        "val_accuracy_ema": ema_acc, "s": time.time() - t0})
        print(json.dumps(history[-1]), file=sys.stderr, flush=True)
        for name, acc, weights in (("raw", raw_acc, raw), ("ema", ema_acc, ema)):
            if acc > best[0]:
                best = (acc, f"epoch {epoch + 1} {name}")
                best_weights = {k: weights[k].detach().cpu().clone() for k in names}
    log = {"epochs": history, "best_validation_accuracy": best[0], "chosen": best[1], "train_wall_s": time.time() - t0}
    return best_weights, log


def main(argv: list[str] | None = None) -> int:
    """Grow, train and write the model folder; returns the exit code."""
    args = parse_args(argv)
    t_start = time.time()
    device = setup_run(args)
    base_dir, work, out = Path(args.base), Path(args.work), Path(args.out)
    try:
        base = load_model(base_dir, device)
    except (FileNotFoundError, ValueError) as exc:
        print(f"grow: cannot load the base model: {exc}", file=sys.stderr)
        return 2
    for p in base.parameters():
        p.requires_grad_(False)
    work.mkdir(parents=True, exist_ok=True)
    encoder = TextEncoder(load_tokenizer(base_dir / TOKENIZER_FILE), base.config.max_len)
    model = grown_model(base.cpu(), args.init).to(device)
    reviews = review_split(args, encoder)
    if (work / "top.json").is_file() and (work / "top.safetensors").is_file():
        log = json.loads((work / "top.json").read_text())
        print(f"grow: {work / 'top.json'} exists; training skipped", file=sys.stderr)
    else:
        seqs, targets, teacher_info = transfer_set(args, encoder, base.config.num_classes, reviews)
        base.to(device)
        t_cache = time.time()
        states = base_states(base, seqs, device)
        val_states = base_states(base, reviews.val_seqs, device)
        cache_s = time.time() - t_cache
        init_acc = float((top_predict(model, val_states, device).argmax(1) == reviews.val_y).mean())
        weights, log = train_top(args, model, states, targets, val_states, reviews.val_y, device)
        log.update(texts=len(seqs), base_states_s=cache_s, validation_accuracy_at_init=init_acc, teachers=teacher_info)
        save_state(weights, work / "top.safetensors")
        (work / "top.json").write_text(json.dumps(log, indent=1))
    state = model.state_dict()
    state.update(load_state(work / "top.safetensors"))
    model.load_state_dict(state)
    model.eval()
    save_model(model.cpu(), out)
    shutil.copyfile(base_dir / TOKENIZER_FILE, out / TOKENIZER_FILE)
    metrics = {
        "validation": {"size": len(reviews.val_idx), "best_accuracy": log["best_validation_accuracy"],
                       "chosen": log["chosen"]},
        "grow": log, "base": str(base_dir), "train_wall_s": log["train_wall_s"],
        "total_wall_s_this_run": time.time() - t_start, "hardware": hardware(),
        "hyperparameters": {**vars(args), "config": asdict(model.config)},
        "num_parameters": sum(p.numel() for p in model.parameters()),
    }
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    print(json.dumps({"validation_accuracy": log["best_validation_accuracy"], "chosen": log["chosen"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
