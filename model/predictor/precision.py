"""Which floating-point precision the model runs ``predict`` and ``score_many`` in: float32 or bfloat16 weights.

bfloat16 (8 exponent bits, 8 significand bits) halves the bytes moved and, on CPUs that compute it natively (Intel
AMX; AMD's AVX512-BF16, Zen 4 and later), runs the matrix products several times faster; on an Intel CPU with
AVX512-BF16 but no AMX it measured slower than float32, and elsewhere it is emulated and slow. The choice (issues 34
and 45):

* ``fp32``: float32 everywhere (the reference; explanations, attention flows and training always use it).
* ``bf16``: ``predict`` and ``score_many`` run a copy of the model whose weights were converted to bfloat16 once,
  when the precision was chosen (:func:`bf16_copy`); ``Predictor.model`` itself stays float32, so explanations,
  flows and internals are unchanged. LayerNorm and the softmax inside attention compute in float32 on bfloat16
  tensors (PyTorch's kernels accumulate in float); the logits are converted to float32 before the read-out, so the
  softmax / sigmoid of the probabilities runs in float32 and the probabilities sum to 1 within float32 rounding.
* ``auto`` (default): decided by :func:`auto_precision` from what the hardware *reports* and the model, never
  from a timing, so the same machine, model and settings give the same numbers in every run:

  - a model without a classification head (attention-only mode): ``fp32``;
  - a CPU: ``bf16`` where ``/proc/cpuinfo`` lists ``amx_bf16`` (Intel AMX: Sapphire Rapids and later), or lists
    ``avx512_bf16`` with the vendor ``AuthenticAMD`` (Zen 4 and later: ``python -m benchmarks.precision`` on this
    project's 2-core AMD EPYC, family 25 model 17: ``score_many`` 1.3-2.7 times float32's reviews/s in four runs,
    the bundled model's labels the same); ``avx512_bf16`` on an Intel
    CPU without AMX keeps ``fp32`` (a virtual Xeon: bf16 0.6-0.9 times float32's speed, issue 34); a system without
    ``/proc/cpuinfo`` (macOS, Windows) keeps ``fp32``;
  - CUDA: ``fp32`` (bf16 measured 0.7-0.9 times float32's speed for these small encoders on an H100);
  - any other device: ``fp32``.

The flags are read from ``/proc/cpuinfo``, or from the file the environment variable :data:`CPUINFO_ENV` names (the
tests give every process, Ray actors and pipeline stages included, an empty one, so ``auto`` is float32 there; a
user can point it at another machine's ``/proc/cpuinfo`` to see what ``auto`` would decide there).

Measurements (label agreement on IMDB, throughput, the CPU flags): docs/performance.md. This module imports torch
only inside :func:`bf16_copy`, so the command line and the window can read :data:`PRECISIONS` without it.
"""

from __future__ import annotations

import copy
import functools
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

PRECISIONS: tuple[str, ...] = ("auto", "fp32", "bf16")
AMX_FLAG = "amx_bf16"  # the /proc/cpuinfo flag that makes auto pick bf16 on any CPU ...
AVX512_BF16_FLAG = "avx512_bf16"  # ... and this one on an AMD CPU
AMD_VENDOR = "AuthenticAMD"
CPUINFO_ENV = "ATTENTION_EXPLORER_CPUINFO"  # a file read instead of /proc/cpuinfo (see the module docstring)


def check_precision(name: str) -> str:
    """``name`` if it is one of :data:`PRECISIONS`; raises ValueError naming them otherwise."""
    if name not in PRECISIONS:
        raise ValueError(f"unknown precision {name!r}; choose one of {', '.join(PRECISIONS)}")
    return name


@functools.cache
def _cpuinfo() -> dict[str, str]:
    """The first processor's fields in ``/proc/cpuinfo`` (Linux; or the file :data:`CPUINFO_ENV` names), e.g.
    ``{"vendor_id": "AuthenticAMD", "flags": "fpu ... avx512_bf16"}``; empty where it cannot be read (other
    systems)."""
    try:
        text = Path(os.environ.get(CPUINFO_ENV) or "/proc/cpuinfo").read_text(encoding="ascii", errors="replace")
    except OSError:
        return {}
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if fields:
                break  # the first processor's block is enough: every core reports the same features
            continue
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    return fields


def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags as ``/proc/cpuinfo`` lists them (e.g. ``avx512_bf16``, ``amx_bf16``); empty where it
    cannot be read."""
    return frozenset(_cpuinfo().get("flags", "").split())


def cpu_vendor() -> str:
    """The CPU's ``vendor_id`` in ``/proc/cpuinfo`` (``GenuineIntel``, ``AuthenticAMD``, ...); "" where unknown."""
    return _cpuinfo().get("vendor_id", "")


def auto_precision(device: torch.device, has_head: bool = True) -> str:
    """``"bf16"`` or ``"fp32"``: what ``auto`` means on ``device`` for a model with (``has_head``) or without a
    classification head (the rule of the module docstring; reads only :func:`cpu_flags` and :func:`cpu_vendor`,
    never a clock)."""
    if not has_head or device.type != "cpu":
        return "fp32"
    flags = cpu_flags()
    native = AMX_FLAG in flags or (AVX512_BF16_FLAG in flags and cpu_vendor() == AMD_VENDOR)
    return "bf16" if native else "fp32"


def resolve(requested: str, predictor) -> str:
    """The precision ``requested`` (:data:`PRECISIONS`) means for ``predictor`` (a :class:`model.Predictor`):
    ``fp32``/``bf16`` as given, ``auto`` by :func:`auto_precision`. Raises ValueError: an unknown name."""
    check_precision(requested)
    if requested != "auto":
        return requested
    return auto_precision(predictor.device, predictor.has_head)


def bf16_copy(model: torch.nn.Module) -> torch.nn.Module:
    """A copy of ``model`` with every floating-point weight and buffer converted to bfloat16 once (eval mode); the
    original is not changed, and no float32 copy is made on the way (peak memory: the model plus half of it). Its
    outputs are bfloat16: convert the logits with ``.float()`` before reading them.

    Keeping the LayerNorms in float32 (mixed-dtype LayerNorm) gave the same largest probability difference from
    float32 on IMDB (0.0054 on 300 reviews) and no consistent speed gain, so they are converted too
    (``python -m benchmarks.precision``: docs/performance.md, issue 45)."""
    import torch

    memo: dict = {}  # each float weight copied straight to bfloat16: no float32 copy of the model on the way (issue 41)
    for t in (*model.parameters(), *model.buffers()):
        if t.is_floating_point() and id(t) not in memo:
            low = t.detach().to(torch.bfloat16)
            memo[id(t)] = torch.nn.Parameter(low, requires_grad=t.requires_grad) if isinstance(
                t, torch.nn.Parameter) else low
    return copy.deepcopy(model, memo).to(torch.bfloat16).eval()
