"""Helpers shared by the training stages: transfer-set files, batching, schedules, precision, options, the stage
command. The data folders and the validation split are in :mod:`model.datasets.splits`."""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import platform
import sys
from pathlib import Path

import numpy as np
import torch

from model.datasets.splits import JSONL_SUFFIXES, UsageError, check_data
from model.predictor import precision

from ..core.tokenizer import pad_sequences

ROOT = Path(__file__).resolve().parents[2]  # the repository root


def write_rows(rows, path: str | Path) -> None:
    """Write dicts as gzipped JSON lines to ``path`` (folders created). The gzip header holds no file name and
    no time, so the same rows always give the same bytes."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz:
        for row in rows:
            gz.write((json.dumps(row) + "\n").encode("utf-8"))


def length_bucketed_batches(lengths: np.ndarray, batch_size: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Batches of indices into int [N] token counts ``lengths``: shuffle, sort within windows of 50 batches by
    length, cut into int64 arrays of at most ``batch_size``, shuffle the batches."""
    order = rng.permutation(len(lengths))
    window = batch_size * 50
    batches = []
    for s in range(0, len(order), window):
        chunk = order[s : s + window]
        chunk = chunk[np.argsort(lengths[chunk], kind="stable")]
        batches.extend(chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size))
    return [batches[i] for i in rng.permutation(len(batches))]


def pad_batch(seqs: list[np.ndarray], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad int sequences into ``(ids int64 (B, T), mask bool (B, T))`` tensors (:func:`pad_sequences`)."""
    ids, mask = pad_sequences(seqs, pad_id)
    return torch.from_numpy(ids), torch.from_numpy(mask)


def lr_at(step: int, total: int, warmup: int, peak: float) -> float:
    """Linear warm-up to ``peak`` over ``warmup`` steps, then linear decay to 0 at ``total``."""
    if step < warmup:
        return peak * (step + 1) / warmup
    return peak * max(0.0, (total - step) / max(1, total - warmup))


def hardware() -> dict:
    """Where this ran: platform, processor, torch version and threads, the CUDA device name or None."""
    return {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
            "torch_threads": torch.get_num_threads(), "torch": torch.__version__,
            "cuda": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}


def pick_device(name: str = "auto") -> torch.device:
    """``cuda`` when available (or asked for), else ``cpu``; raises UsageError for another name."""
    if name not in ("auto", "cpu", "cuda"):
        raise UsageError(f"--device must be auto, cpu or cuda, got {name!r}")
    return torch.device(("cuda" if torch.cuda.is_available() else "cpu") if name == "auto" else name)


def cpu_has_native_bf16() -> bool:
    """Whether this CPU has bf16 matrix instructions (AVX512-BF16 or AMX), read from ``/proc/cpuinfo`` (Linux;
    :func:`model.predictor.precision.cpu_flags`); False when it cannot be read. Without them bf16 autocast *slows* training:
    24 s against 5 s in float32 for a 36,000-token distillation step on this project's 2-core AVX2 EPYC
    (``python -m benchmarks.train_step``)."""
    flags = precision.cpu_flags()
    return precision.AVX512_BF16_FLAG in flags or precision.AMX_FLAG in flags


def resolve_precision(precision: str, device: torch.device) -> str:
    """``"bf16"`` or ``"fp32"`` for a ``precision`` option (``auto``: bf16 on CUDA and on CPUs with native bf16,
    else fp32). Raises ``ValueError`` for another name."""
    if precision == "auto":
        return "bf16" if device.type == "cuda" or cpu_has_native_bf16() else "fp32"
    if precision not in ("bf16", "fp32"):
        raise ValueError(f"precision must be auto, bf16 or fp32, got {precision!r}")
    return precision


def autocast(device: torch.device, precision: str):
    """The forward-pass context for ``precision`` (a :func:`resolve_precision` result): bf16 autocast, or a
    disabled autocast (plain float32)."""
    return torch.autocast(device.type, dtype=torch.bfloat16, enabled=precision == "bf16")


def adamw(model: torch.nn.Module, lr: float, weight_decay: float, betas=(0.9, 0.98), eps: float = 1e-6):
    """AdamW (Loshchilov & Hutter 2019) with weight decay on matrices only (biases, norms, 1-D tensors excluded)."""
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    return torch.optim.AdamW([{"params": [p for _, p in named if p.ndim >= 2], "weight_decay": weight_decay},
                              {"params": [p for _, p in named if p.ndim < 2], "weight_decay": 0.0}],
                             lr=lr, betas=betas, eps=eps)


def optimizer_step(loss: torch.Tensor, opt: torch.optim.Optimizer, params, max_norm: float = 1.0) -> float:
    """Backward pass, gradient-norm clipping to ``max_norm`` and one optimizer step; returns the loss as a float."""
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(params, max_norm)
    opt.step()
    return loss.item()


@torch.no_grad()
def ema_update(ema: dict, model: torch.nn.Module, step: int, decay: float) -> None:
    """Polyak averaging of ``model``'s state into ``ema`` in place, decay min(decay, (1 + step) / (10 + step))."""
    d = min(decay, (1 + step) / (10 + step))
    for k, v in model.state_dict().items():
        ema[k].mul_(d).add_(v.detach(), alpha=1 - d) if v.dtype.is_floating_point else ema[k].copy_(v)


def make_options(cls, values: dict, where: str):
    """``cls(**values)`` for an options dataclass (every field has a default); raises UsageError naming ``where``
    for an unknown option or a value of the wrong type (ints are accepted for floats, one value for a list)."""
    fields, values = {f.name: f for f in dataclasses.fields(cls)}, dict(values)
    for key, value in values.items():
        if key not in fields:
            raise UsageError(f"{where}: unknown option {key!r} (known: {', '.join(fields)})")
        kind = type(fields[key].default)
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            values[key] = float(value)
        elif kind is tuple:  # a list option: one value or a list
            values[key] = tuple(value) if isinstance(value, list | tuple) else (value,)
        elif not isinstance(value, kind):
            raise UsageError(f"{where}: option {key!r} must be {kind.__name__}, got {value!r}")
    return cls(**values)


def stage_cli(run, cls, argv: list[str] | None, description: str, splits: tuple[str, ...] = ("train",),
              suffixes: tuple[str, ...] = JSONL_SUFFIXES) -> int:
    """A command for one stage: ``--data``, ``--out``, ``--device`` and a ``--flag-name`` per scalar field of the
    options dataclass ``cls`` (booleans are switches); runs ``run(data, out, options, device)``, prints the scalar
    items of its result as one JSON line and returns the exit code (2: bad input, one line on stderr). The data
    folder must hold one of ``splits`` (:func:`model.datasets.splits.check_data`)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--data", required=True, help="folder with train/test/unsup .jsonl.gz (.jsonl.xz, .jsonl)")
    p.add_argument("--out", required=True, help="folder to write")
    p.add_argument("--device", default="auto", help="auto, cpu or cuda")
    for f in dataclasses.fields(cls):
        kw = {"action": "store_true"} if f.default is False else {"type": type(f.default), "default": f.default}
        p.add_argument("--" + f.name.replace("_", "-"), dest=f.name, **kw)
    args = vars(p.parse_args(argv))
    try:
        data, out = check_data(args.pop("data"), splits, suffixes), Path(args.pop("out"))
        device = pick_device(args.pop("device"))
        out.mkdir(parents=True, exist_ok=True)
        result = run(data, out, cls(**args), device)
    except (UsageError, FileNotFoundError, ValueError) as exc:  # ValueError: a malformed row, a folder the app refuses
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps({k: v for k, v in result.items() if isinstance(v, int | float | str)}))
    return 0
