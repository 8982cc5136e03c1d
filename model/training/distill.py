"""Our encoder's training: in-domain masked-language-model pretraining and knowledge distillation.

1. :func:`pretrain`, the ``mlm`` stage: masked-language modelling (Devlin et al. 2019, section 3.1) of our encoder
   (:class:`model.core.encoder.TransformerClassifier`) on the fitting and unlabeled reviews: 15% of the word pieces
   chosen, 80% of those replaced by [MASK], 10% by a random piece, 10% kept; a tied-embedding layer predicts them.
2. :func:`distill`, the ``distill`` stage (Hinton et al. 2015; Tang et al. 2019): from the ``init`` folder onto the
   reviews and the ``augmented`` transfer sets (:func:`.transfer.transfer_set`); loss T^2 times the cross-entropy of
   softmax(student / T) against the targets; AdamW, linear warm-up and decay, an exponential moving average of the
   weights; the best raw or averaged weights on the validation split (never trained on) are kept; the test split is
   scored at the end.
"""

from __future__ import annotations

import json
import math
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from tqdm import tqdm

from model.datasets.splits import read_split

from ..core.config import EncoderConfig
from ..core.encoder import TransformerClassifier
from ..core.tokenizer import MASK, TextEncoder, load_tokenizer
from ..core.weights import TOKENIZER_FILE, load_state, save_model
from . import common as c
from .transfer import ReviewOptions, review_split, transfer_set


@dataclass
class MLMOptions(ReviewOptions):
    """Options of the ``mlm`` stage: the WordPiece ``tokenizer`` file, the architecture (:class:`EncoderConfig`),
    ``steps`` of ``batch_size`` reviews, peak ``lr``, masking ``prob``."""

    tokenizer: str = str(c.ROOT / "resources" / "model" / TOKENIZER_FILE)
    max_len: int = EncoderConfig.max_len  # the architecture's defaults have one home: EncoderConfig
    d_model: int = EncoderConfig.d_model
    n_heads: int = EncoderConfig.n_heads
    n_layers: int = EncoderConfig.n_layers
    d_ff: int = EncoderConfig.d_ff
    dropout: float = EncoderConfig.dropout
    steps: int = 12000
    batch_size: int = 128
    lr: float = 1e-3
    prob: float = 0.15


@dataclass
class DistillOptions(ReviewOptions):
    """Options of the ``distill`` stage: ``init`` (folder or stage to start from), ``teacher`` (``logits.npz``, teacher
    folder or stage), ``augmented`` sets (``SET``, ``SET:K`` K times, ``SET%N`` N sampled rows), temperature T,
    ``gold_weight`` (one-hot share of the gold reviews' targets), ``lr`` peak, ``warmup_frac``, ``ema_decay``."""

    init: str = ""
    teacher: str = ""
    augmented: tuple = ()
    temperature: float = 2.0
    gold_weight: float = 0.3
    epochs: int = 8
    batch_size: int = 64
    lr: float = 5e-4
    warmup_frac: float = 0.05
    ema_decay: float = 0.999


class MaskedLMHead(nn.Module):
    """Dense + GELU + LayerNorm, then logits over the vocabulary with the token embedding as output weights:
    ``forward(h)`` maps (N, D) hidden states to (N, V) logits."""

    def __init__(self, embedding: nn.Embedding) -> None:
        super().__init__()
        d = embedding.embedding_dim
        self.dense, self.norm, self.embedding = nn.Linear(d, d), nn.LayerNorm(d), embedding
        self.bias = nn.Parameter(torch.zeros(embedding.num_embeddings))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return F.linear(self.norm(F.gelu(self.dense(h))), self.embedding.weight, self.bias)


def mask_tokens(ids: torch.Tensor, mask: torch.Tensor, prob: float, mask_id: int, n_special: int,
                vocab: int, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT's masking: ``(inputs (B, T), chosen bool (B, T))``; position 0 (the class token) is never chosen."""
    chosen = (torch.rand(ids.shape, generator=gen) < prob) & mask
    chosen[:, 0] = False
    roll = torch.rand(ids.shape, generator=gen)
    inputs = ids.clone()
    inputs[chosen & (roll < 0.8)] = mask_id
    rand = chosen & (roll >= 0.8) & (roll < 0.9)
    inputs[rand] = torch.randint(n_special, vocab, ids.shape, generator=gen)[rand]
    return inputs, chosen


def pretrain(data: Path, out: Path, opts: MLMOptions, device: torch.device) -> dict:
    """The ``mlm`` stage: MLM pretraining on the reviews; writes the model folder ``out`` (``model.safetensors``,
    ``config.json``, ``tokenizer.json``, ``mlm.json``) and returns the log. Raises FileNotFoundError for a missing
    split or tokenizer."""
    tokenizer = load_tokenizer(opts.tokenizer)
    config = EncoderConfig(vocab_size=tokenizer.get_vocab_size(), max_len=opts.max_len, d_model=opts.d_model,
                           n_heads=opts.n_heads, n_layers=opts.n_layers, d_ff=opts.d_ff, dropout=opts.dropout)
    seqs = review_split(data, opts, TextEncoder(tokenizer, config.max_len)).seqs
    precision = c.resolve_precision(opts.precision, device)
    torch.manual_seed(opts.seed)
    model = TransformerClassifier(config).to(device)
    head = MaskedLMHead(model.token_embedding).to(device)
    params = list(model.parameters()) + [p for n, p in head.named_parameters() if not n.startswith("embedding")]
    opt = torch.optim.AdamW(params, lr=opts.lr, betas=(0.9, 0.98), eps=1e-6, weight_decay=opts.weight_decay)
    lengths = np.array([len(s) for s in seqs])
    gen = torch.Generator().manual_seed(opts.seed)
    total, warmup, mask_id = opts.steps, max(1, opts.steps // 20), tokenizer.token_to_id(MASK)
    t0, step, losses, log, epoch = time.time(), 0, [], [], 0
    bar = tqdm(total=total, desc="mlm", file=sys.stderr, mininterval=15)
    while step < total:
        for idx in c.length_bucketed_batches(lengths, opts.batch_size, np.random.default_rng(opts.seed * 7 + epoch)):
            if step >= total:
                break
            ids, mask = c.pad_batch([seqs[i] for i in idx], config.pad_id)
            inputs, chosen = mask_tokens(ids, mask, opts.prob, mask_id, 4, config.vocab_size, gen)
            inputs, chosen, ids, mask = inputs.to(device), chosen.to(device), ids.to(device), mask.to(device)
            for g in opt.param_groups:
                g["lr"] = c.lr_at(step, total, warmup, opts.lr)
            with c.autocast(device, precision):
                h = model.hidden_states(model.embed(inputs), mask)[0][chosen]  # (N, D)
                loss = F.cross_entropy(head(h).float(), ids[chosen])
            losses.append(c.optimizer_step(loss, opt, params))
            step += 1
            bar.update(1)
            if step % 500 == 0:
                log.append({"step": step, "loss": float(np.mean(losses[-500:])), "s": time.time() - t0})
                print(json.dumps({"mlm": log[-1]}), file=sys.stderr, flush=True)
        epoch += 1
    bar.close()
    save_model(model, out)  # model.safetensors and config.json
    (out / TOKENIZER_FILE).write_bytes(Path(opts.tokenizer).read_bytes())
    info = {"steps": step, "planned_steps": opts.steps, "epochs_started": epoch, "wall_s": time.time() - t0,
            "final_loss": float(np.mean(losses[-200:])), "log": log}
    (out / "mlm.json").write_text(json.dumps(info, indent=1))
    return info


@torch.inference_mode()
def predict(model: TransformerClassifier, seqs: list[np.ndarray], device: torch.device, batch: int = 256) -> np.ndarray:
    """float32 [N, C] logits of our encoder for N id sequences, in input order."""
    model.eval()
    order = np.argsort([len(s) for s in seqs], kind="stable")
    out = np.zeros((len(seqs), model.config.num_classes), np.float32)
    for s in range(0, len(order), batch):
        idx = order[s : s + batch]
        ids, mask = c.pad_batch([seqs[i] for i in idx], model.config.pad_id)
        logits, _ = model(ids.to(device), mask.to(device))
        out[idx] = logits.float().cpu().numpy()
    return out


def _train(opts: DistillOptions, config, seqs, targets, val_seqs, val_y, device, init: Path) -> tuple[dict, dict]:
    """The distillation epochs from ``init``'s weights: ``(best weights on the CPU, log)``; the best of the raw and
    EMA weights after each epoch on the validation split wins (earliest on ties)."""
    torch.manual_seed(opts.seed + 1)
    model = TransformerClassifier(config)
    model.load_state_dict(load_state(init / "model.safetensors"))
    model.to(device)
    precision = c.resolve_precision(opts.precision, device)
    opt = c.adamw(model, opts.lr, opts.weight_decay)
    ema = {k: v.detach().clone() for k, v in model.state_dict().items()}
    y = torch.from_numpy(targets)  # (N, C) target distributions at temperature T
    lengths = np.array([len(s) for s in seqs])
    steps_per_epoch = math.ceil(len(seqs) / opts.batch_size)
    total = steps_per_epoch * opts.epochs
    warmup, T = max(1, int(total * opts.warmup_frac)), opts.temperature
    history, best, best_w, t0 = [], (-1.0, ""), None, time.time()
    for epoch in range(opts.epochs):
        model.train()
        losses = []
        batches = c.length_bucketed_batches(lengths, opts.batch_size, np.random.default_rng(opts.seed * 1000 + epoch))
        for b, idx in enumerate(tqdm(batches, desc=f"distill {epoch + 1}", file=sys.stderr, mininterval=15)):
            step = epoch * steps_per_epoch + b
            for g in opt.param_groups:
                g["lr"] = c.lr_at(step, total, warmup, opts.lr)
            ids, mask = c.pad_batch([seqs[i] for i in idx], config.pad_id)
            with c.autocast(device, precision):
                logits, _ = model(ids.to(device), mask.to(device))
            loss = F.cross_entropy(logits.float() / T, y[idx].to(device)) * T * T
            losses.append(c.optimizer_step(loss, opt, model.parameters()))
            c.ema_update(ema, model, step, opts.ema_decay)
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
                best_w = {k: v.detach().cpu().clone() for k, v in weights.items()}
    return best_w, {"epochs": history, "best_validation_accuracy": best[0], "chosen": best[1],
                    "train_wall_s": time.time() - t0}


def distill(data: Path, out: Path, opts: DistillOptions, device: torch.device) -> dict:
    """The ``distill`` stage: writes the model folder ``out`` (``model.safetensors``, ``config.json``,
    ``tokenizer.json``, ``metrics.json`` with the validation log and the test scores) and returns the metrics.
    Raises ValueError without ``init`` or a teacher, FileNotFoundError for a missing file."""
    from sklearn.metrics import f1_score

    if not opts.init:
        raise ValueError("the distillation stage needs init (the MLM stage or a model folder)")
    t_start, init = time.time(), Path(opts.init)
    config = EncoderConfig.from_json(init / "config.json")
    encoder = TextEncoder(load_tokenizer(init / TOKENIZER_FILE), config.max_len)
    reviews = review_split(data, opts, encoder)
    seqs, targets, teacher_info = transfer_set(opts, encoder, config.num_classes, reviews, data)
    weights, log = _train(opts, config, seqs, targets, reviews.val_seqs, reviews.val_y, device, init)
    model = TransformerClassifier(config)
    model.load_state_dict(weights)
    save_model(model.eval(), out)
    (out / TOKENIZER_FILE).write_bytes((init / TOKENIZER_FILE).read_bytes())
    try:  # the official test split, scored once at the end (a run on a machine without it skips this)
        test_texts, test_labels = read_split(data, "test")
    except FileNotFoundError:
        test_texts, test_labels = [], np.zeros(0, np.int64)
    test_seqs = [ids for ids, _ in encoder.encode_ids_batch(test_texts)]
    pred = predict(model.to(device), test_seqs, device).argmax(1) if test_seqs else np.zeros(0, np.int64)
    mlm = json.loads((init / "mlm.json").read_text()) if (init / "mlm.json").is_file() else None
    metrics = {"test_accuracy": float((pred == test_labels).mean()) if len(pred) else None,
               "test_f1": float(f1_score(test_labels, pred, zero_division=0)) if len(pred) else None,
               "test_count": len(test_labels),
               "validation": {"size": len(reviews.val_idx), "best_accuracy": log["best_validation_accuracy"],
                              "chosen": log["chosen"]},
               "teacher": teacher_info, "init": str(init), "mlm": mlm, "epochs": log["epochs"],
               "train_wall_s": log["train_wall_s"] + (mlm or {}).get("wall_s", 0.0),
               "total_wall_s_this_run": time.time() - t_start, "hardware": c.hardware(),
               "hyperparameters": {**asdict(opts), "config": asdict(config)},
               "num_parameters": sum(p.numel() for p in model.parameters())}
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    return metrics
