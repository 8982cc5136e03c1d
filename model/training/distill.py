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
import gzip
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
    autocast,
    binary_f1,
    ema_update,
    hardware,
    length_bucketed_batches,
    lr_at,
    optimizer_step,
    pad_batch,
    read_split,
    seeded_subset,
    setup_run,
    train_split,
)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options; see ``--help``."""
    p = argparse.ArgumentParser(description="MLM pretraining + knowledge distillation of the bundled encoder.")
    add_data_args(p, work="runs/distill")
    p.add_argument("--tokenizer", default="resources/model/tokenizer.json", help="WordPiece tokenizer to use")
    p.add_argument("--teacher", action="append", default=[], help="teacher logits .npz (train, unsup); repeatable")
    p.add_argument("--stage", choices=["all", "mlm", "distill"], default="all")
    add_architecture_args(p)
    p.add_argument("--mlm-steps", type=int, default=12000)
    p.add_argument("--mlm-minutes", type=float, default=0.0, help="stop MLM after this long (0: no limit)")
    p.add_argument("--mlm-batch-size", type=int, default=128)
    p.add_argument("--mlm-lr", type=float, default=1e-3)
    p.add_argument("--mlm-prob", type=float, default=0.15)
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--weight-decay", type=float, default=0.01)
    p.add_argument("--warmup-frac", type=float, default=0.05)
    p.add_argument("--temperature", type=float, default=2.0)
    p.add_argument("--gold-weight", type=float, default=0.3, help="share of the one-hot label in gold targets")
    p.add_argument("--ema-decay", type=float, default=0.999)
    p.add_argument("--augmented", action="append", default=[],
                   help="teacher-labelled texts (model.training.augment / sentences / counterfactual), one teacher; "
                        "repeatable; FILE:K uses every row K times, FILE%%N a seeded sample of N rows")
    p.add_argument("--init-from", default="", help="start distillation from this model folder (not from MLM)")
    p.add_argument("--no-unsup", action="store_true", help="use no unlabeled reviews (no unsup file needed)")
    p.add_argument("--unsup-limit", type=int, default=0, help="use the first N unlabeled reviews (0: all)")
    p.add_argument("--limit", type=int, default=0, help="use the first N fitting reviews (smoke tests)")
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


def combine_teachers(paths: list[str], val_idx: np.ndarray, val_y: np.ndarray) -> tuple[dict, dict]:
    """Teacher logits ``{"train": [N, 2], "unsup": [M, 2]}`` combined as w z_1 + (1 - w) z_2, w picked on validation.

    The logits are first put on one scale (divided by their standard deviation on the train split).
    Returns ``(logits, info)``; info records each teacher's validation accuracy and the chosen w.
    """
    teachers = [np.load(p) for p in paths]
    scaled = []
    info = {"files": paths, "validation_accuracy": [], "scales": []}
    for t in teachers:
        z = {k: t[k] - t[k].mean(1, keepdims=True) for k in ("train", "unsup")}
        s = float(z["train"].std()) or 1.0
        info["scales"].append(s)
        scaled.append({k: v / s for k, v in z.items()})
        info["validation_accuracy"].append(float((t["train"][val_idx].argmax(1) == val_y).mean()))
    if len(scaled) == 1:
        info["weights"] = [1.0]
        return scaled[0], info
    if len(scaled) != 2:
        raise ValueError("give one or two --teacher files")
    grid = np.round(np.linspace(0, 1, 21), 2)
    accs = [float(((w * scaled[0]["train"][val_idx] + (1 - w) * scaled[1]["train"][val_idx]).argmax(1) == val_y).mean())
            for w in grid]
    best = max(range(len(grid)), key=lambda i: (accs[i], grid[i]))  # ties: the larger weight of teacher 1
    w = float(grid[best])
    info.update(weights=[w, 1 - w], combined_validation_accuracy=accs[best], grid={str(g): a for g, a in zip(grid, accs)})
    return {k: w * scaled[0][k] + (1 - w) * scaled[1][k] for k in ("train", "unsup")}, info


def read_augmented(spec: str, seed: int = 0) -> tuple[list[str], list[list[float]], int]:
    """Rows of one ``--augmented`` file: ``(texts, logits rows [negative, positive], rows used)``.

    ``spec`` is a ``.jsonl.gz`` path, optionally ``PATH:K`` (every row K times) or ``PATH%N`` (a sample of N
    rows, seeded by ``seed``). Raises ValueError for a malformed suffix, FileNotFoundError for a missing file.
    """
    repeat, sample = 1, 0
    if ":" in spec and spec.rsplit(":", 1)[1].isdigit():
        spec, k = spec.rsplit(":", 1)
        repeat = int(k)
    elif "%" in spec:
        spec, n = spec.rsplit("%", 1)
        if not n.isdigit():
            raise ValueError(f"--augmented {spec}%{n}: N must be a whole number")
        sample = int(n)
    texts, z = [], []
    with gzip.open(spec, "rt", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            texts.append(row["text"])
            z.append(row["logits"])
    if sample and sample < len(texts):
        keep = seeded_subset(len(texts), sample, seed)
        texts, z = [texts[i] for i in keep], [z[i] for i in keep]
    return texts * repeat, z * repeat, len(texts)


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
    train_texts, train_labels, val_idx, fit_idx = train_split(args.data, args.seed)
    unsup_texts = [] if args.no_unsup else read_split(args.data, "unsup")[0]
    if args.limit:
        fit_idx = fit_idx[: args.limit]
    unsup_idx = np.arange(args.unsup_limit or len(unsup_texts))
    print("tokenizing ...", file=sys.stderr)
    fit_seqs = [ids for ids, _ in encoder.encode_ids_batch([train_texts[i] for i in fit_idx])]
    unsup_seqs = [ids for ids, _ in encoder.encode_ids_batch([unsup_texts[i] for i in unsup_idx])]
    val_seqs = [ids for ids, _ in encoder.encode_ids_batch([train_texts[i] for i in val_idx])]
    val_y = train_labels[val_idx]
    seqs = fit_seqs + unsup_seqs
    report = {}
    if args.stage in ("all", "mlm"):
        report["mlm"] = (json.loads((work / "mlm.json").read_text()) if (work / "mlm.json").is_file()
                         else run_mlm(args, config, seqs, tokenizer.token_to_id(MASK), device, work))
        if args.stage == "mlm":
            return 0
    if (work / "mlm.json").is_file():
        report.setdefault("mlm", json.loads((work / "mlm.json").read_text()))
    if not args.teacher:
        raise SystemExit("--teacher is required for the distillation stage")
    z, teacher_info = combine_teachers(args.teacher, val_idx, val_y)
    T = args.temperature
    p_fit = torch.softmax(torch.from_numpy(z["train"][fit_idx]) / T, -1).numpy()
    onehot = np.eye(config.num_classes, dtype=np.float32)[train_labels[fit_idx]]
    targets = np.concatenate([args.gold_weight * onehot + (1 - args.gold_weight) * p_fit,
                              torch.softmax(torch.from_numpy(z["unsup"][unsup_idx]) / T, -1).numpy()]).astype(np.float32)
    if args.augmented:
        if len(args.teacher) != 1:
            raise SystemExit("--augmented needs exactly one --teacher (the one that labelled the augmented texts)")
        aug_texts, aug_z, files = [], [], []
        for spec in args.augmented:
            texts, z_rows, used = read_augmented(spec, args.seed)
            aug_texts += texts
            aug_z += z_rows
            files.append({"spec": spec, "texts": used})
        z_aug = np.asarray(aug_z, np.float32)
        z_aug = (z_aug - z_aug.mean(1, keepdims=True)) / teacher_info["scales"][0]
        seqs = seqs + [ids for ids, _ in encoder.encode_ids_batch(aug_texts)]
        targets = np.concatenate([targets, torch.softmax(torch.from_numpy(z_aug) / T, -1).numpy()])
        teacher_info["augmented"] = {"files": files, "texts": len(aug_texts)}
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
        "validation": {"size": len(val_idx), "best_accuracy": report["distill"]["best_validation_accuracy"],
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
