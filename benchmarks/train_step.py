"""Seconds per distillation step of the bundled architecture in float32 and in bf16 autocast, on this host.

Usage::

    python -m benchmarks.train_step [--model resources/model] [--tokens 36000] [--lengths 128,280,512]
        [--repeats 3] [--threads 0]

One step is what ``model.training.distill`` does per batch: forward pass (``TransformerClassifier`` with the
config of ``--model``, random weights), soft-target cross-entropy, backward pass, AdamW update. Each batch
holds about ``--tokens`` tokens (``tokens // length`` sequences of ``length`` tokens, all real, no padding).
Prints one JSON line per (length, precision) with the median seconds per step and tokens per second, then
which precision ``--precision auto`` picks here (``model.training.common.resolve_precision``). bf16 pays
only on CPUs with bf16 instructions (AVX512-BF16, AMX) or on a GPU; elsewhere PyTorch emulates it. Asserts
nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from model.core.config import EncoderConfig
from model.core.encoder import TransformerClassifier
from model.training.common import adamw, autocast, cpu_has_native_bf16, resolve_precision


def step_seconds(model: TransformerClassifier, opt, ids: torch.Tensor, precision: str, repeats: int) -> float:
    """Median wall seconds of ``repeats`` training steps on ``ids`` (B, T) after one warm-up step."""
    device = ids.device
    mask = torch.ones_like(ids, dtype=torch.bool)
    target = torch.full((ids.shape[0], model.config.num_classes), 1.0 / model.config.num_classes, device=device)
    times = []
    for i in range(repeats + 1):
        t0 = time.perf_counter()
        with autocast(device, precision):
            logits, _ = model(ids, mask)  # (B, C)
        loss = F.cross_entropy(logits.float(), target)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if device.type == "cuda":
            torch.cuda.synchronize()
        if i:  # the first step warms up allocators and kernels
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    """Time the steps and print the JSON lines; returns the exit code."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="resources/model", help="model folder whose config.json is timed")
    p.add_argument("--tokens", type=int, default=36000, help="tokens per batch")
    p.add_argument("--lengths", default="128,280,512", help="comma-separated sequence lengths (tokens)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    p.add_argument("--device", default="cpu")
    args = p.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    config = EncoderConfig.from_dict(json.loads((Path(args.model) / "config.json").read_text()))
    torch.manual_seed(0)
    model = TransformerClassifier(config).to(device).train()
    opt = adamw(model, 1e-5, 0.01)
    for length in (int(x) for x in args.lengths.split(",")):
        ids = torch.randint(5, config.vocab_size, (max(1, args.tokens // length), length), device=device)
        for precision in ("fp32", "bf16"):
            s = step_seconds(model, opt, ids, precision, args.repeats)
            print(json.dumps({"length": length, "batch": ids.shape[0], "precision": precision, "s_per_step": round(s, 3),
                              "tokens_per_s": round(ids.numel() / s), "threads": torch.get_num_threads()}), flush=True)
    print(json.dumps({"native_bf16": cpu_has_native_bf16(), "auto_picks": resolve_precision("auto", device)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
