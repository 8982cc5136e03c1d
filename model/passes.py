"""The forward passes of :meth:`model.Predictor.score_many`, kept busy on an accelerator.

A CUDA forward pass is queued, not waited for. So on a GPU, ``score_many`` overlaps three things that a plain loop
runs one after another (profile and numbers: docs/performance.md, "GPU batch scoring"):

* the next window of texts is tokenized on a background thread (:func:`prefetched`; the Rust tokenizer releases the
  GIL while it works) while the current window's passes run;
* each pass's inputs travel through page-locked (pinned) host memory with non-blocking copies, and its float32 logits
  and probabilities come back the same way (:func:`launch`), recorded by a CUDA event;
* a pass is read (:meth:`Pass.read`) only after the next :data:`GPU_PASSES_IN_FLIGHT` passes have been queued, so the
  GPU always has work while the host turns finished passes into Scores.

On a CPU the forward pass itself is synchronous and uses every core, so none of this pays: ``launch`` returns a
finished pass and ``prefetched`` tokenizes inline (the CPU path measured beside the old loop: same speed). The
numbers are the same either way: the same passes, in the same order, with the same arithmetic.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import torch

from .precision import autocast
from .readout import probabilities
from .segments import pad_segments, types_kw

Predictor = Any  # a model.Predictor (not imported: model.predictor imports this module)
T = TypeVar("T")
R = TypeVar("R")

GPU_PASSES_IN_FLIGHT = 2  # passes queued on a GPU before the oldest one is read


@dataclass
class Pass:
    """One forward pass of ``score_many``: which items it scored and where its outputs land.

    Attributes:
        idx: int64 [B] the items (indices into the window's :class:`model.long_text.WindowCollector`) in batch order.
        out: float32 (B, C + C') host tensor: the logits (C columns), then the task's probabilities (C' = C, or
            0 for regression), both computed in float32 from float32 logits; pinned and filled asynchronously on
            a GPU.
        ready: the CUDA event recorded after the copy back (None on a CPU: ``out`` is already filled).
        classes: C, the number of logits.
    """

    idx: np.ndarray
    out: torch.Tensor
    ready: torch.cuda.Event | None
    classes: int

    def read(self) -> tuple[np.ndarray, np.ndarray]:
        """``(logits float32 (B, C), probabilities float32 (B, C'))``, waiting for the pass if it is still running."""
        arr = self.out.numpy()
        if self.ready is not None:  # wait for the pass; copy out of the page-locked buffer, which goes back
            self.ready.synchronize()
            arr = arr.copy()
        return arr[:, : self.classes], arr[:, self.classes :]


def to_device(array: np.ndarray, device: torch.device) -> torch.Tensor:
    """A NumPy array as a tensor on ``device``: on a GPU copied through pinned memory without waiting (the copy is
    ordered before the kernels that read it on the current stream)."""
    t = torch.from_numpy(array)
    if device.type != "cuda":
        return t.to(device)
    return t.pin_memory().to(device, non_blocking=True)


def launch(predictor: Predictor, items, idx: np.ndarray, head_mask) -> Pass:
    """Queue the forward pass of ``items.items[i] for i in idx`` (right-padded, with their segment ids).

    Args:
        predictor: the :class:`model.Predictor` (its model, encoder, device, precision and task).
        items: the window's :class:`model.long_text.WindowCollector`.
        idx: int64 [B] item indices, of similar lengths (:func:`model.inputs.token_budget_batches`).
        head_mask: None or the checked (L, H) head mask.

    Returns:
        The :class:`Pass` (finished on a CPU; in flight on a GPU).
    """
    device = predictor.device
    ids, mask = predictor.encoder.pad_ids([items.items[i] for i in idx])  # (B, T) each
    types = types_kw(predictor.model, pad_segments([items.segments[i] for i in idx], ids.shape[1]), device)
    with predictor.masked(head_mask), autocast(predictor.precision, device):
        logits, _ = predictor.model(to_device(ids, device), to_device(mask, device), **types)  # (B, C)
    z = logits.float()  # (B, C): the read-out runs in float32 whatever the precision
    both = torch.cat([z, probabilities(z, predictor.task.kind)], dim=1)  # (B, C + C')
    if device.type != "cuda":
        return Pass(idx, both.cpu(), None, z.shape[1])
    host = torch.empty(both.shape, dtype=torch.float32, pin_memory=True)
    host.copy_(both, non_blocking=True)
    ready = torch.cuda.Event()
    ready.record()
    return Pass(idx, host, ready, z.shape[1])


def passes_in_flight(device: torch.device) -> int:
    """How many passes may be queued before the oldest is read: :data:`GPU_PASSES_IN_FLIGHT` on a GPU, 0 on a CPU
    (read each pass at once, as its forward pass already finished)."""
    return GPU_PASSES_IN_FLIGHT if device.type == "cuda" else 0


def run_passes(predictor: Predictor, items, batches: Iterable[np.ndarray], head_mask, take: Callable[[Pass], None],
               should_stop: Callable[[], bool] | None = None) -> bool:
    """Run one window's passes in order, each handed to ``take`` once finished, at most
    :func:`passes_in_flight` passes behind the newest queued one.

    Args:
        predictor: the :class:`model.Predictor`.
        items: the window's :class:`model.long_text.WindowCollector`.
        batches: int64 [B] item-index arrays (:func:`model.inputs.token_budget_batches`).
        head_mask: None or the checked (L, H) head mask.
        take: called with each finished :class:`Pass`, in batch order.
        should_stop: checked before each batch is queued; the passes already queued are still taken.

    Returns:
        False when ``should_stop`` stopped the window early, else True.
    """
    depth = passes_in_flight(predictor.device)
    queued: deque[Pass] = deque()
    finished = True
    for idx in batches:
        if should_stop is not None and should_stop():
            finished = False
            break
        queued.append(launch(predictor, items, idx, head_mask))
        while len(queued) > depth:
            take(queued.popleft())
    while queued:
        take(queued.popleft())
    return finished


def prefetched(fn: Callable[[T], R], items: Iterable[T], ahead: bool) -> Iterator[R]:
    """``fn(item)`` for each item in order; with ``ahead``, the next item's call runs on a background thread while
    the caller works on the current result (one call ahead: bounded memory). An exception raised by ``fn`` reaches
    the caller when that item's result is taken. Closing the iterator early waits for the call in progress."""
    if not ahead:
        for item in items:
            yield fn(item)
        return
    pool = ThreadPoolExecutor(1, thread_name_prefix="score-tokenize")
    try:
        pending = None
        for item in items:
            nxt = pool.submit(fn, item)
            if pending is not None:
                yield pending.result()
            pending = nxt
        if pending is not None:
            yield pending.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
