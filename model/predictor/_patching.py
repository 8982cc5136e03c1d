"""The work behind ``Predictor.activation_patching``: the two texts' positions matched, their activations read, the
patched passes batched (many patches per forward pass) with progress and cancel, and attribution patching.

The hooks are :mod:`model.explain.patching`, the position matching :func:`model.text.alignment.align_tokens`, the
record :class:`model.records.patching.PatchingResult` (its docstring defines the sites, the directions and the
restored share). Private to :mod:`model.predictor`.

Cost (exact patching): 2 unpatched passes, then per layer l a pass of B copies that runs the layers from l on
(the layers before l once per pass, :func:`model.explain.patching.patched_logits`); ``resid`` patches one position
per copy (L x T cells, in passes of at most ``batch_tokens`` tokens), ``head`` one head per copy (H copies per layer),
``ffn`` one layer per pass. A cell whose source activation equals the receiving one (the same token at the same
position before any layer has mixed the texts: most of layer 1's input when the texts differ by a word) is not run:
patching it changes nothing, its score is the receiving text's. Attribution patching: 2 forward passes and 1
backward pass.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np
import torch

from model.core.tokenizer import Encoded
from model.explain.patching import gradient_taps, patched_logits, recording, stop_checks
from model.explain.taps import ModelTaps, taps_of
from model.records.patching import PatchingCancelled, PatchingResult
from model.text.alignment import align_tokens
from model.text.segments import one_text_inputs

from ._reading import Parts, encode

BATCH_TOKENS = 16384
"""At most this many tokens (copies x T) per patched forward pass by default."""


@dataclass(frozen=True)
class Side:
    """One text of the pair: its text and encoding."""

    text: str
    enc: Encoded


@dataclass
class _Run:
    """What the patching of one (source, receiving) pair needs: the model's taps, the receiving text's forward
    pass, both texts' site activations and scores, and the position map."""

    parts: Parts
    taps: ModelTaps
    site: str
    run: Callable[[], torch.Tensor]
    source: list[torch.Tensor]
    receiving: list[torch.Tensor]
    alignment: np.ndarray
    target: int


def _forward(parts: Parts, enc: Encoded) -> Callable[[], torch.Tensor]:
    """One fast (no attention maps) forward pass of ``enc`` (batch 1) returning logits (B, C) in float32."""
    ids, att, types = one_text_inputs(parts, enc)
    return lambda: parts.model(ids, att, need_weights=False, **types)[0].float()


@torch.inference_mode()
def _record(parts: Parts, taps: ModelTaps, site: str, enc: Encoded) -> tuple[list[torch.Tensor], torch.Tensor]:
    """The site's activations (L tensors (T, W)) and the logits (C,) of one text."""
    with parts.pass_lock, recording(taps, site) as acts:
        logits = _forward(parts, enc)()
    return acts, logits[0]


def _cells(run: _Run, layer: int) -> list[np.ndarray]:
    """The copies of one layer's passes, as the receiving positions (and for ``head`` the head) each one patches:
    ``resid``: one aligned position whose source activation differs; ``head``: every aligned position of head h
    (entry h); ``ffn``: every aligned position (one copy)."""
    aligned = np.flatnonzero(run.alignment >= 0)
    if run.site == "resid":
        src, rec = run.source[layer][run.alignment[aligned]], run.receiving[layer][aligned]
        differs = (src != rec).any(dim=-1).cpu().numpy()
        return [aligned[i : i + 1] for i in np.flatnonzero(differs)]
    if run.site == "head":
        return [aligned] * run.parts.n_heads
    return [aligned]


def _mask(run: _Run, cells: list[np.ndarray], T: int) -> torch.Tensor:
    """bool (B, T) or (B, T, H) of one pass's copies (one per cell)."""
    H = run.parts.n_heads
    m = torch.zeros((len(cells), T, H) if run.site == "head" else (len(cells), T), dtype=torch.bool)
    for b, pos in enumerate(cells):
        if run.site == "head":
            m[b, pos, b % H] = True
        else:
            m[b, pos] = True
    return m.to(run.parts.device)


@torch.inference_mode()
def _exact(run: _Run, T: int, base: float, batch_tokens: int, progress, should_stop) -> tuple[np.ndarray, int]:
    """The patched scores (the effects' shape, NaN for unaligned resid positions) and the passes run."""
    L, H = len(run.taps.layers), run.parts.n_heads
    scores = np.full({"resid": (L, T), "head": (L, H), "ffn": (L,)}[run.site], np.nan, dtype=np.float64)
    if run.site == "resid":
        scores[:, run.alignment >= 0] = base  # a cell not run (identical activations) keeps the receiving score
    plan = [(layer, _cells(run, layer)) for layer in range(L)]
    total, done, passes = sum(len(c) for _, c in plan), 0, 0
    per_pass = max(1, batch_tokens // max(T, 1)) if run.site == "resid" else max(H, 1)
    aligned_src = run.alignment.clip(min=0)

    def check() -> None:  # before every pass and, inside one, before every module call (stop_checks)
        if should_stop is not None and should_stop():
            raise PatchingCancelled(f"activation patching stopped after {done} of {total} patches")

    for layer, cells in plan:
        source = run.source[layer][aligned_src]  # (T, W): the source's activation at each receiving position
        for start in range(0, len(cells), per_pass):
            check()
            chunk = cells[start : start + per_pass]
            with run.parts.pass_lock, (stop_checks(run.parts.model, check) if should_stop is not None
                                       else nullcontext()):
                logits = patched_logits(run.taps, run.site, layer, source, _mask(run, chunk, T), run.run,
                                        run.parts.n_heads)
            got = logits[:, run.target].double().cpu().numpy()
            for b, pos in enumerate(chunk):
                index = (layer, int(pos[0])) if run.site == "resid" else (
                    (layer, start + b) if run.site == "head" else (layer,))
                scores[index] = got[b]
            done, passes = done + len(chunk), passes + 1
            if progress is not None:
                progress(done, total)
    return scores, passes


def _attribution(run: _Run, recv: Encoded, T: int, pick: Callable[[torch.Tensor], int],
                 progress) -> tuple[np.ndarray, torch.Tensor]:
    """Attribution patching (Nanda 2023): the receiving run's score plus ``(a_source - a_receiving) . grad`` per
    cell, from one forward and one backward pass of the receiving text. ``pick(logits (C,))`` gives the target once
    the receiving logits are known (it sets ``run.target``). Returns (estimated scores, the receiving logits (C,))."""
    L, H = len(run.taps.layers), run.parts.n_heads
    with torch.enable_grad(), run.parts.pass_lock, gradient_taps(run.taps, run.site) as (values, leaves):
        logits = _forward(run.parts, recv)()[0]
        run.target = pick(logits.detach())
        grads = torch.autograd.grad(logits[run.target], leaves)
    aligned = run.alignment >= 0
    idx = torch.from_numpy(np.flatnonzero(aligned)).to(run.parts.device)
    src_idx = torch.from_numpy(run.alignment[aligned]).to(run.parts.device)
    out = np.full({"resid": (L, T), "head": (L, H), "ffn": (L,)}[run.site], np.nan, dtype=np.float64)
    for layer in range(L):
        delta = run.source[layer][src_idx] - values[layer][idx]  # (A, W) at the aligned positions
        term = delta * grads[layer][0, idx].float()  # (A, W)
        if run.site == "resid":
            out[layer, aligned] = term.sum(-1).double().cpu().numpy()
        elif run.site == "head":
            out[layer] = term.reshape(len(idx), H, -1).sum((0, 2)).double().cpu().numpy()
        else:
            out[layer] = float(term.sum())
    if progress is not None:
        progress(1, 1)
    logits = logits.detach()
    return out + float(logits[run.target]), logits


def activation_patching(parts: Parts, texts: tuple[str, str], site: str, target: int | None, direction: str,
                        method: str, batch_tokens: int | None = None, progress=None,
                        should_stop=None) -> PatchingResult:
    """See ``Predictor.activation_patching`` (``texts``: the clean and the corrupted text; the site, direction,
    method and target checked there). Raises ValueError: a bad text (:func:`model.predictor._reading.encode`)."""
    started = time.perf_counter()
    clean, corrupted = (Side(t, encode(parts.encoder, parts.model_dir, t)) for t in texts)
    taps = taps_of(parts.model)
    src, recv = (clean, corrupted) if direction == "denoise" else (corrupted, clean)
    alignment = align_tokens(src.text, src.enc.offsets, recv.text, recv.enc.offsets)
    src_acts, src_logits = _record(parts, taps, site, src.enc)

    def pick(recv_logits: torch.Tensor) -> int:  # default: the clean text's predicted output
        return int(torch.argmax(src_logits if direction == "denoise" else recv_logits)) if target is None else target

    run = _Run(parts, taps, site, _forward(parts, recv.enc), src_acts, [], alignment, -1)
    T = len(recv.enc.ids)
    if method == "attribution":
        patched, recv_logits = _attribution(run, recv.enc, T, pick, progress)
        passes = 2
    else:
        run.receiving, recv_logits = _record(parts, taps, site, recv.enc)
        run.target = pick(recv_logits)
        patched, n = _exact(run, T, float(recv_logits[run.target]), batch_tokens or BATCH_TOKENS, progress,
                            should_stop)
        passes = 2 + n
    t = run.target
    clean_score, corrupted_score = ((float(src_logits[t]), float(recv_logits[t])) if direction == "denoise"
                                    else (float(recv_logits[t]), float(src_logits[t])))
    gap = clean_score - corrupted_score
    effects = (patched - corrupted_score) / gap if gap != 0 else np.full_like(patched, np.nan)
    tokens = tuple(recv.enc.tokens)
    return PatchingResult(
        site=site, direction=direction, method=method, effects=effects.astype(np.float32),
        patched_scores=patched.astype(np.float32), clean_score=clean_score, corrupted_score=corrupted_score,
        target=t, label=parts.labels[t] if t < len(parts.labels) else "",
        clean_tokens=tuple(clean.enc.tokens), corrupted_tokens=tuple(corrupted.enc.tokens), alignment=alignment,
        unaligned=tuple(f"{i}:{tokens[i]}" for i in np.flatnonzero(alignment < 0)), passes=passes,
        elapsed_s=time.perf_counter() - started)
