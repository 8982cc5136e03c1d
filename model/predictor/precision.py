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
* ``auto`` (default): decided by :func:`auto_precision` from what the hardware *reports*, the model and its task,
  never from a timing, so the same machine, model and settings give the same numbers in every run. bf16 is picked
  only on a CPU class (:func:`cpu_class`: ``amx``, ``avx512_bf16``, ``none``) whose *end-to-end* speed-up is written
  in :data:`BF16_END_TO_END` and is at least :data:`BF16_PAYS` (1.5): the scorer's reviews/s with bf16 against
  float32's on 3,000 IMDB reviews, tokenization and read-out included, measured in one run by
  ``python -m benchmarks.precision`` (docs/performance.md, issue 55). A class without a figure keeps ``fp32``:

  - ``avx512_bf16`` (bfloat16 dot products, no AMX: this project's 2-core AMD EPYC): 1.41 times float32's
    reviews/s end to end on a quiet machine (290.7 against 409.3, best of 3, load 2), 0.75 and 0.92 at load 8-23,
    1.09 and 1.18 in the issue's runs (an Intel Xeon of this class: 0.6-0.9 times, issue 34): ``fp32``;
  - ``amx`` (Intel AMX: Sapphire Rapids and later): no end-to-end figure yet (a forward pass alone ran 2.85 times
    float32's speed with bf16 weights, which leaves out tokenization and read-out): ``fp32``;
  - ``none`` (bf16 emulated), and a system without ``/proc/cpuinfo`` (macOS, Windows): ``fp32``;
  - a model without a classification head (attention-only mode), or a regression head (its value is a number users
    compare, not a label: a SICK-relatedness value read -0.00748 in bf16 against -0.00739 in float32): ``fp32``;
  - CUDA: ``fp32`` (bf16 measured 0.7-0.9 times float32's speed for these small encoders on an H100);
  - any other device: ``fp32``.

  ``bf16`` asked for by name runs bf16 on any device and task.

One text, one number (issue 55): in bf16 every forward pass that gives logits pads each text to its own bucket
(:func:`bucket_of`: the next multiple of :data:`BF16_BUCKET` tokens, at most the model's maximum), and a batch
holds texts of one bucket only, so a text's bfloat16 logits depend on its own length, never on its batch mates (the
matrix shapes and the attention kernel's blocks follow the padded length; the rows of a batch are computed alike);
``predict`` reads its logits from such a pass too (its attention still comes from the pass with weights). float32
pads to the batch's longest text: there the batch mates move a probability by at most about 4e-7.

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
AMX_FLAG = "amx_bf16"  # the /proc/cpuinfo flag of the class ``amx`` ...
AVX512_BF16_FLAG = "avx512_bf16"  # ... and of ``avx512_bf16`` (bfloat16 dot products without AMX)
CPU_CLASSES: tuple[str, ...] = ("amx", "avx512_bf16", "none")
BF16_PAYS = 1.5  # auto picks bf16 on a CPU class whose end-to-end bf16 speed-up is at least this
BF16_END_TO_END: dict[str, float | None] = {
    "amx": None,  # not measured end to end yet (a forward pass alone: 2.85x)
    "avx512_bf16": 1.41,  # the highest of issue 55's runs on a 2-core AMD EPYC (0.75, 0.92, 1.09, 1.18, 1.41 quiet)
    "none": None,
}
"""The scorer's reviews/s with bf16 / with fp32, end to end on 3,000 IMDB reviews, per CPU class (:func:`cpu_class`),
as ``python -m benchmarks.precision`` measured it; None where no such measurement exists."""
BF16_BUCKET = 32  # tokens: bf16 passes pad every text to a multiple of this (:func:`bucket_of`)
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


def cpu_class() -> str:
    """This CPU's class for the bf16 rule (:data:`CPU_CLASSES`): ``amx`` where ``/proc/cpuinfo`` lists ``amx_bf16``,
    ``avx512_bf16`` where it lists that flag without AMX, else ``none`` (also where it cannot be read)."""
    flags = cpu_flags()
    return "amx" if AMX_FLAG in flags else "avx512_bf16" if AVX512_BF16_FLAG in flags else "none"


def bf16_pays(cls: str) -> bool:
    """True when the CPU class ``cls`` has an end-to-end bf16 speed-up (:data:`BF16_END_TO_END`) of at least
    :data:`BF16_PAYS`."""
    speedup = BF16_END_TO_END.get(cls)
    return speedup is not None and speedup >= BF16_PAYS


def auto_precision(device: torch.device, has_head: bool = True, reads_probabilities: bool = True) -> str:
    """``"bf16"`` or ``"fp32"``: what ``auto`` means on ``device`` for a model with (``has_head``) or without a
    classification head, read as probabilities (``reads_probabilities``) or as a regression value (the rule of the
    module docstring; reads only the CPU's flags and :data:`BF16_END_TO_END`, never a clock)."""
    if not has_head or not reads_probabilities or device.type != "cpu":
        return "fp32"
    return "bf16" if bf16_pays(cpu_class()) else "fp32"


def resolve(requested: str, predictor) -> str:
    """The precision ``requested`` (:data:`PRECISIONS`) means for ``predictor`` (a :class:`model.Predictor`):
    ``fp32``/``bf16`` as given, ``auto`` by :func:`auto_precision` (with the predictor's current task). Raises
    ValueError: an unknown name."""
    check_precision(requested)
    if requested != "auto":
        return requested
    return auto_precision(predictor.device, predictor.has_head, predictor.task.type.reads_probabilities)


def bucket_of(length: int, precision: str, max_len: int) -> int | None:
    """The positions a bf16 forward pass pads a text of ``length`` tokens to: the next multiple of
    :data:`BF16_BUCKET`, at most ``max(length, max_len)`` (its bucket: every text of a pass is padded to the bucket of
    each, so its logits never depend on its batch mates; see the module docstring); None in float32, where a pass pads
    to its longest text."""
    if precision != "bf16":
        return None
    return min(-(-int(length) // BF16_BUCKET) * BF16_BUCKET, max(int(length), max_len))


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


class PrecisionWeights:
    """A predictor's precision (issue 45): the one chosen for ``predict`` and ``score_many``, and the module each
    precision runs: the float32 model, and its bfloat16 copy (:func:`bf16_copy`), made once when first needed and let
    go when the predictor returns to float32.

    Args:
        model: the float32 module (never changed); lock: the predictor's ``forward_lock`` (the copy is made and let go
            under it).

    Attributes:
        precision: the one chosen, "fp32" (the start) or "bf16" (:meth:`use`).
    """

    def __init__(self, model: torch.nn.Module, lock) -> None:
        self.model, self.lock, self.precision = model, lock, "fp32"
        self._bf16: torch.nn.Module | None = None

    def get(self, precision: str) -> torch.nn.Module:
        """The module that runs ``precision`` ("fp32" or "bf16"): the model, or its bfloat16 copy (made now if there is
        none); a call keeps the module it took even when the copy is let go meanwhile."""
        if precision == "fp32" or (low := self._bf16) is not None:  # one read: a call keeps what it took
            return self.model if precision == "fp32" else low
        with self.lock:
            self._bf16 = self._bf16 if self._bf16 is not None else bf16_copy(self.model)
            return self._bf16

    def use(self, precision: str) -> str:
        """Choose ``precision`` ("fp32" or "bf16", already resolved) and keep what it runs ready: "bf16" makes the copy
        now (once); "fp32" lets it go (a call running in bf16 keeps its own). Returns ``precision``."""
        with self.lock:
            self._bf16 = self.get("bf16") if precision == "bf16" else None
            self.precision = precision
        return precision
