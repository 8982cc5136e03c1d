"""Which floating-point precision the model runs ``predict`` and ``score_many`` in: float32 or bfloat16 autocast.

bfloat16 (8 exponent bits, 8 significand bits) halves the bytes moved and, on hardware that computes it natively
(CPUs with AVX512-BF16 or AMX, CUDA GPUs), may double the matrix products' speed; on others it is emulated and slow.
The choice (issue 34):

* ``fp32``: float32 everywhere (the reference; explanations, attention flows and training always use it).
* ``bf16``: ``torch.autocast`` to bfloat16 for the forward passes of ``predict`` and ``score_many`` (weights stay
  float32, so the model, its replicas and its explanations are unchanged); logits and probabilities come back float32.
* ``auto`` (default): bf16 only where all four hold, else fp32 -- the device computes bfloat16 natively (CUDA with
  bf16 support, or a CPU reporting ``avx512_bf16`` / ``amx_bf16``); on a CPU, a 512 x 512 x 2048 matrix product
  measured once is at least :data:`MIN_SPEEDUP` times faster in bfloat16 (a CPU can report AVX512-BF16 and still
  compute it no faster than float32: this project's 2-core Xeon does); the model itself scores a probe batch at
  least :data:`MIN_SPEEDUP` times faster in bf16 (:func:`model_bf16_speedup`: on an H100 a small encoder ran
  *slower* under autocast, its casts costing more than its tiny products gained); and the model's labels agree: the
  :data:`PROBE_TEXTS` get the same labels in both precisions and no probability moves by more than
  :data:`MAX_PROBE_DIFF` (:func:`probe_agreement`), checked once per model, when it is first used.

Measurements (label agreement on IMDB, throughput): docs/performance.md.
"""

from __future__ import annotations

import functools
import time
from contextlib import nullcontext
from pathlib import Path

import torch

PRECISIONS: tuple[str, ...] = ("auto", "fp32", "bf16")
MIN_SPEEDUP = 1.3  # auto picks bf16 only where matrix products (CPU) and the model's scoring are this much faster
MAX_PROBE_DIFF = 0.02  # auto keeps fp32 for a model whose probe probabilities move more than this in bf16
PROBE_TEXTS: tuple[str, ...] = (
    "A wonderful film: the acting is superb and the story moving.",
    "Dull, predictable and far too long. I wanted my money back.",
    "Not bad at all, though the ending drags a little.",
    "The worst script I have seen in years, saved only by the music.",
    "I laughed, I cried, and I will watch it again tomorrow.",
    "It was fine. Nothing special, nothing terrible, just fine.",
    "Brilliant photography cannot hide a hollow, confused plot.",
    "An honest, warm and funny portrait of a family falling apart.",
)


def check_precision(name: str) -> str:
    """``name`` if it is one of :data:`PRECISIONS`; raises ValueError naming them otherwise."""
    if name not in PRECISIONS:
        raise ValueError(f"unknown precision {name!r}; choose one of {', '.join(PRECISIONS)}")
    return name


@functools.cache
def cpu_reports_bf16() -> bool:
    """True when the CPU reports native bfloat16 arithmetic (``avx512_bf16`` or ``amx_bf16`` in /proc/cpuinfo; other
    systems: False)."""
    try:
        flags = Path("/proc/cpuinfo").read_text(encoding="ascii", errors="replace").split()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


@functools.cache
def cpu_bf16_speedup() -> float:
    """float32 time / bfloat16 time of a (512 x 2048) @ (2048 x 512) product on the CPU, best of 3 (about 30 ms)."""
    def best(dtype: torch.dtype) -> float:
        a, b = torch.randn(512, 2048, dtype=dtype), torch.randn(2048, 512, dtype=dtype)
        a @ b
        times = []
        for _ in range(3):
            t = time.perf_counter()
            a @ b
            times.append(time.perf_counter() - t)
        return min(times)

    return best(torch.float32) / max(best(torch.bfloat16), 1e-9)


def device_prefers_bf16(device: torch.device) -> bool:
    """Whether ``auto`` may use bf16 on ``device`` (the first two conditions of the module docstring)."""
    if device.type == "cuda":
        return bool(torch.cuda.is_bf16_supported())
    return device.type == "cpu" and cpu_reports_bf16() and cpu_bf16_speedup() >= MIN_SPEEDUP


def autocast(precision: str, device: torch.device):
    """The context a forward pass runs under: ``torch.autocast`` to bfloat16 for ``"bf16"``, else nothing."""
    if precision == "bf16":
        return torch.autocast(device.type, dtype=torch.bfloat16)
    return nullcontext()


def model_bf16_speedup(predictor, batch: int = 16, repeats: int = 2) -> float:
    """float32 time / bf16-autocast time of ``predictor.score_many`` on ``batch`` texts of about 200 tokens (the
    :data:`PROBE_TEXTS` joined), best of ``repeats`` after a warm-up in each precision; the predictor's own precision
    is left as it was. Tokenisation is timed too (the same in both), as a user's scoring run would see it."""
    texts = [" ".join(PROBE_TEXTS[k % len(PROBE_TEXTS):] + PROBE_TEXTS) * 2 for k in range(batch)]
    before, best = predictor.precision, {}
    try:
        for prec in ("fp32", "bf16"):
            predictor.precision = prec
            predictor.score_many(texts[:2])
            times = []
            for _ in range(repeats):
                t = time.perf_counter()
                predictor.score_many(texts)
                times.append(time.perf_counter() - t)
            best[prec] = min(times)
    finally:
        predictor.precision = before
    return best["fp32"] / max(best["bf16"], 1e-9)


def probe_agreement(predictor, texts: tuple[str, ...] = PROBE_TEXTS) -> tuple[bool, float]:
    """``(labels all equal, largest probability difference)`` of ``texts`` scored in float32 and in bf16 autocast by
    ``predictor`` (a :class:`model.Predictor` with a head); the predictor's own precision is left as it was."""
    import numpy as np

    before = predictor.precision
    try:
        predictor.precision = "fp32"
        a = predictor.score_many(list(texts))
        predictor.precision = "bf16"
        b = predictor.score_many(list(texts))
    finally:
        predictor.precision = before
    same = all(x.label == y.label for x, y in zip(a, b))
    return same, float(max(np.abs(x.probabilities - y.probabilities).max() for x, y in zip(a, b)))


def resolve(requested: str, predictor) -> str:
    """The precision ``requested`` means for ``predictor``: ``fp32``/``bf16`` as given; ``auto`` as the module
    docstring says (``fp32`` for a model without a classification head: nothing to probe)."""
    check_precision(requested)
    if requested != "auto":
        return requested
    if not predictor.has_head or not device_prefers_bf16(predictor.device):
        return "fp32"
    if model_bf16_speedup(predictor) < MIN_SPEEDUP:
        return "fp32"
    same, diff = probe_agreement(predictor)
    return "bf16" if same and diff <= MAX_PROBE_DIFF else "fp32"
