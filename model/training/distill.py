"""Train the bundled encoder by in-domain masked-language-model pretraining and knowledge distillation.

Usage::

    python -m model.training.distill --data ../shared/data/imdb --out resources/model \
        --teacher runs/teacher_logits.npz [--teacher runs/nbsvm_logits.npz] [--stage all|mlm|distill]

Recipe (``resources/model/README.md`` documents the shipped run):

1. **Masked-language-model pretraining** (Devlin et al. 2019, section 3.1) of our encoder (sinusoidal
   positional encoding, post-LN layers; :class:`model.encoder.TransformerClassifier`) on the fitting part of
   the train split and the 50,000 unlabeled reviews: 15% of the word pieces are chosen, 80% of those replaced
   by [MASK], 10% by a random piece, 10% kept; a tied-embedding output layer predicts them.
2. **Knowledge distillation** (Hinton et al. 2015; Tang et al. 2019) onto the same reviews: the targets are
   softmax(z / T) of the teachers' combined logits z = w z_1 + (1 - w) z_2 (``--teacher`` files from
   ``python -m model.training.finetune_hf --soft-labels`` and ``python -m model.training.nbsvm
   --soft-labels``; w is chosen on the validation split), and for the gold training reviews a
   ``--gold-weight`` share of the one-hot label. Loss: T^2 times the cross-entropy of softmax(student / T)
   against the targets. AdamW, linear warm-up and decay, an exponential moving average of the weights;
   the best of the raw and averaged weights on the validation split is kept.

The validation reviews (the seeded split of :mod:`model.training.common`) are never trained on, nor are
the teachers' labels of them; the official test split is scored once, at the end. Each stage writes its
result to ``--work`` (safetensors + JSON) and is skipped when rerun, so an interrupted run resumes at the
stage it was in. CUDA is used when present, otherwise the CPU; bf16 autocast where the hardware has bf16
(``--precision``).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from tqdm import tqdm

from ..core.config import EncoderConfig
from ..core.encoder import TransformerClassifier
from ..core.tokenizer import MASK, TextEncoder, load_tokenizer
from ..core.weights import TOKENIZER_FILE, load_state, save_model, save_state
from .common import (
    adamw,
    add_architecture_args,
    add_data_args,
    add_optimizer_args,
    autocast,
    binary_f1,
    ema_update,
    hardware,
    length_bucketed_batches,
    lr_at,
    optimizer_step,
    pad_batch,
    read_split,
    setup_run,
)
from .transfer import add_transfer_args, review_split, transfer_set


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options; see ``--help``."""
    p = argparse.ArgumentParser(description="MLM pretraining + knowledge distillation of the bundled encoder.")
    add_data_args(p, work="runs/distill")
    p.add_argument("--tokenizer", default="resources/model/tokenizer.json", help="WordPiece tokenizer to use")
    add_transfer_args(p)
    p.add_argument("--stage", choices=["all", "mlm", "distill"], default="all")
    add_architecture_args(p)
    p.add_argument("--mlm-steps", type=int, default=12000)
    p.add_argument("--mlm-minutes", type=float, default=0.0, help="stop MLM after this long (0: no limit)")
    p.add_argument("--mlm-batch-size", type=int, default=128)
    p.add_argument("--mlm-lr", type=float, default=1e-3)
    p.add_argument("--mlm-prob", type=float, default=0.15)
    add_optimizer_args(p, epochs=8)
    p.add_argument("--init-from", default="", help="start distillation from this model folder (not from MLM)")
    return p.parse_args(argv)


class MaskedLMHead(nn.Module):
    """Dense + GELU + LayerNorm, then logits over the vocabulary with the token embedding as output weights.

    ``forward(h)``: (N, D) hidden states -> (N, V) logits.
    """

    def __init__(self, embedding: nn.Embedding) -> None:
        super().__init__()
        d = embedding.embedding_dim
        self.dense, self.norm, self.embedding = nn.Linear(d, d), nn.LayerNorm(d), embedding
        self.bias = nn.Parameter(torch.zeros(embedding.num_embeddings))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return F.linear(self.norm(F.gelu(self.dense(h))), self.embedding.weight, self.bias)


def hidden_states(model: TransformerClassifier, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The encoder's final hidden states (B, T, D) for token ids (B, T) and a bool mask (B, T)."""
    return model.hidden_states(model.embed(ids), mask)[0]


def mask_tokens(ids: torch.Tensor, mask: torch.Tensor, prob: float, mask_id: int, n_special: int,
                vocab: int, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT's masking: ``(inputs (B, T), chosen bool (B, T))``; position 0 (the classification token) is never chosen."""
    chosen = (torch.rand(ids.shape, generator=gen) < prob) & mask
    chosen[:, 0] = False
    roll = torch.rand(ids.shape, generator=gen)
    inputs = ids.clone()
    inputs[chosen & (roll < 0.8)] = mask_id
    rand = chosen & (roll >= 0.8) & (roll < 0.9)
    inputs[rand] = torch.randint(n_special, vocab, ids.shape, generator=gen)[rand]
    return inputs, chosen


def run_mlm(args, config: EncoderConfig, seqs: list[np.ndarray], mask_id: int, device: torch.device, work: Path) -> dict:
    """Stage 1: MLM pretraining; writes ``work/mlm.safetensors`` and returns its log."""
    torch.manual_seed(args.seed)
    model = TransformerClassifier(config).to(device)
    head = MaskedLMHead(model.token_embedding).to(device)
    params = list(model.parameters()) + [p for n, p in head.named_parameters() if not n.startswith("embedding")]
    opt = torch.optim.AdamW(params, lr=args.mlm_lr, betas=(0.9, 0.98), eps=1e-6, weight_decay=args.weight_decay)
    lengths = np.array([len(s) for s in seqs])
    gen = torch.Generator().manual_seed(args.seed)
    total, warmup = args.mlm_steps, max(1, args.mlm_steps // 20)
    t0, step, losses, log = time.time(), 0, [], []
    bar = tqdm(total=total, desc="mlm", file=sys.stderr, mininterval=15)
    epoch = 0
    while step < total:
        for idx in length_bucketed_batches(lengths, args.mlm_batch_size, np.random.default_rng(args.seed * 7 + epoch)):
            if step >= total:
                break
            ids, mask = pad_batch([seqs[i] for i in idx], config.pad_id)
            inputs, chosen = mask_tokens(ids, mask, args.mlm_prob, mask_id, 4, config.vocab_size, gen)
            inputs, chosen, ids, mask = inputs.to(device), chosen.to(device), ids.to(device), mask.to(device)
            for g in opt.param_groups:
                g["lr"] = lr_at(step, total, warmup, args.mlm_lr)
            with autocast(device, args.precision):
                h = hidden_states(model, inputs, mask)[chosen]  # (N, D)
                loss = F.cross_entropy(head(h).float(), ids[chosen])
            losses.append(optimizer_step(loss, opt, params))
            step += 1
            bar.update(1)
            if step % 500 == 0:
                log.append({"step": step, "loss": float(np.mean(losses[-500:])), "s": time.time() - t0})
                print(json.dumps({"mlm": log[-1]}), file=sys.stderr, flush=True)
            if args.mlm_minutes and time.time() - t0 > args.mlm_minutes * 60:
                total = step  # time budget spent: stop here (the schedule had not decayed to 0)
        epoch += 1
    bar.close()
    save_state({k: v.detach().cpu() for k, v in model.state_dict().items()}, work / "mlm.safetensors")
    info = {"steps": step, "planned_steps": args.mlm_steps, "epochs_started": epoch, "wall_s": time.time() - t0,
            "final_loss": float(np.mean(losses[-200:])), "log": log}
    (work / "mlm.json").write_text(json.dumps(info, indent=1))
    return info


@torch.inference_mode()
def predict(model: TransformerClassifier, seqs: list[np.ndarray], device: torch.device, batch: int = 256) -> np.ndarray:
    """float32 [N, C] logits in input order."""
    model.eval()
    order = np.argsort([len(s) for s in seqs], kind="stable")
    out = np.zeros((len(seqs), model.config.num_classes), np.float32)
    for s in range(0, len(order), batch):
        idx = order[s : s + batch]
        ids, mask = pad_batch([seqs[i] for i in idx], model.config.pad_id)
        logits, _ = model(ids.to(device), mask.to(device))
        out[idx] = logits.float().cpu().numpy()
    return out


def run_distill(args, config, seqs, targets, val_seqs, val_y, device, work: Path) -> dict:
    """Stage 2: distillation from ``work/mlm.safetensors`` (when present); writes ``work/student.safetensors``."""
    torch.manual_seed(args.seed + 1)
    model = TransformerClassifier(config)
    if args.init_from:
        model.load_state_dict(load_state(Path(args.init_from) / "model.safetensors"))
    elif (work / "mlm.safetensors").is_file():
        model.load_state_dict(load_state(work / "mlm.safetensors"))
    model.to(device)
    opt = adamw(model, args.lr, args.weight_decay)
    ema = {k: v.detach().clone() for k, v in model.state_dict().items()}
    y = torch.from_numpy(targets)  # (N, C) target distributions at temperature T
    lengths = np.array([len(s) for s in seqs])
    steps_per_epoch = math.ceil(len(seqs) / args.batch_size)
    total = steps_per_epoch * args.epochs
    warmup, T = max(1, int(total * args.warmup_frac)), args.temperature
    history, best, t0 = [], (-1.0, ""), time.time()
    for epoch in range(args.epochs):
        model.train()
        losses = []
        batches = length_bucketed_batches(lengths, args.batch_size, np.random.default_rng(args.seed * 1000 + epoch))
        for b, idx in enumerate(tqdm(batches, desc=f"distill {epoch + 1}/{args.epochs}", file=sys.stderr, mininterval=15)):
            step = epoch * steps_per_epoch + b
            for g in opt.param_groups:
                g["lr"] = lr_at(step, total, warmup, args.lr)
            ids, mask = pad_batch([seqs[i] for i in idx], config.pad_id)
            with autocast(device, args.precision):
                logits, _ = model(ids.to(device), mask.to(device))
            loss = F.cross_entropy(logits.float() / T, y[idx].to(device)) * T * T
            losses.append(optimizer_step(loss, opt, model.parameters()))
            ema_update(ema, model, step, args.ema_decay)
        raw_acc = float((predict(model, val_seqs, device).argmax(1) == val_y).mean())
        snap = TransformerClassifier(config).to(device)
        snap.load_state_dict(ema)
        ema_acc = float((predict(snap, val_seqs, device).argmax(1) == val_y).mean())
        history.append({"epoch": epoch + 1, "train_loss": float(np.mean(losses)), "val_accuracy": raw_acc,
                        "val_accuracy_ema": ema_acc, "s": time.time() - t0})
        print(json.dumps(history[-1]), file=sys.stderr, flush=True)
        for name, acc, weights in (("raw", raw_acc, model.state_dict()), ("ema", ema_acc, ema)):
            if acc > best[0]:
                best = (acc, f"epoch {epoch + 1} {name}")
                save_state({k: v.detach().cpu() for k, v in weights.items()}, work / "student.safetensors")
    info = {"epochs": history, "best_validation_accuracy": best[0], "chosen": best[1], "train_wall_s": time.time() - t0}
    (work / "student.json").write_text(json.dumps(info, indent=1))
    return info


def main(argv: list[str] | None = None) -> int:
    """Run the stages; returns the exit code."""
    args = parse_args(argv)
    t_start = time.time()
    device = setup_run(args)
    work, out = Path(args.work), Path(args.out)
    work.mkdir(parents=True, exist_ok=True)
    tokenizer = load_tokenizer(args.tokenizer)
    config = EncoderConfig(vocab_size=tokenizer.get_vocab_size(), max_len=args.max_len, d_model=args.d_model,
                           n_heads=args.n_heads, n_layers=args.n_layers, d_ff=args.d_ff, dropout=args.dropout)
    encoder = TextEncoder(tokenizer, config.max_len)
    reviews = review_split(args, encoder)
    seqs, val_seqs, val_y = reviews.seqs, reviews.val_seqs, reviews.val_y
    report = {}
    if args.stage in ("all", "mlm"):
        report["mlm"] = (json.loads((work / "mlm.json").read_text()) if (work / "mlm.json").is_file()
                         else run_mlm(args, config, seqs, tokenizer.token_to_id(MASK), device, work))
        if args.stage == "mlm":
            return 0
    if (work / "mlm.json").is_file():
        report.setdefault("mlm", json.loads((work / "mlm.json").read_text()))
    seqs, targets, teacher_info = transfer_set(args, encoder, config.num_classes, reviews)
    report["distill"] = run_distill(args, config, seqs, targets, val_seqs, val_y, device, work)

    model = TransformerClassifier(config)
    model.load_state_dict(load_state(work / "student.safetensors"))
    model.eval()
    save_model(model, out)
    (out / TOKENIZER_FILE).write_bytes(Path(args.tokenizer).read_bytes())
    try:  # the official test split, scored once at the end (a run on a machine without it skips this)
        test_texts, test_labels = read_split(args.data, "test")
    except FileNotFoundError:
        test_texts, test_labels = [], np.zeros(0, np.int64)
    test_seqs = [ids for ids, _ in encoder.encode_ids_batch(test_texts)]
    pred = predict(model.to(device), test_seqs, device).argmax(1) if test_seqs else np.zeros(0, np.int64)
    metrics = {
        "test_accuracy": float((pred == test_labels).mean()) if len(pred) else None,
        "test_f1": binary_f1(test_labels, pred) if len(pred) else None, "test_count": len(test_labels),
        "validation": {"size": len(reviews.val_idx), "best_accuracy": report["distill"]["best_validation_accuracy"],
                       "chosen": report["distill"]["chosen"]},
        "teachers": teacher_info, "mlm": report.get("mlm"), "epochs": report["distill"]["epochs"],
        "train_wall_s": report["distill"]["train_wall_s"] + (report.get("mlm") or {}).get("wall_s", 0.0),
        "total_wall_s_this_run": time.time() - t_start, "hardware": hardware(),
        "hyperparameters": {**vars(args), "config": asdict(config)},
        "num_parameters": sum(p.numel() for p in model.parameters()),
    }
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    print(json.dumps({k: metrics[k] for k in ("test_accuracy", "test_f1", "test_count")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
