"""Switching attention heads off: the head mask of Michel, Levy & Neubig 2019, "Are Sixteen Heads Really Better
than One?" (NeurIPS), section 2.

A head mask M (L, H) multiplies head h of layer l's context vector by M[l, h] before the output projection:
MultiHead(x) = sum_h M[l, h] Att_h(x) W_O^h (their eq. 1 with the mask variables xi_h). 1 keeps a head, 0 removes it.
It is applied with a forward pre-hook on each layer's output projection (the bundled encoder's ``attn.out``, a
Hugging Face family's ``attention.output.dense`` / ``out_lin`` / ...; see
:func:`model.explain.taps.output_projections`), so the model's own forward pass runs unchanged, on the fused SDPA
path as well (``transformers`` 5 no longer takes ``head_mask``). A mask may be a differentiable tensor: the head
importance of Michel et al. (eq. 2, :mod:`model.evaluation.head_importance`) is the gradient of the loss with
respect to it.

Thread safety (issue 41): the pre-hooks are registered once, when a ``model.Predictor`` is built
(:func:`install_head_mask_hooks`), and are inert; the mask itself is per call and per thread: :func:`head_mask_hooks`
puts it in the running thread's context (:class:`contextvars.ContextVar`), so two threads sharing one model, one with
a head mask and one without, each get their own numbers, and no lock is needed for the mask.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np
import torch

from .taps import output_projections


def check_head_mask(mask, n_layers: int, n_heads: int) -> np.ndarray | None:
    """Validate a head mask.

    Args:
        mask: None, or array-like (L, H) of numbers in [0, 1] (bools allowed): 1 keeps head h of layer l, 0
            removes it, a fraction scales its context vector.
        n_layers, n_heads: the model's L and H.

    Returns:
        None when ``mask`` is None or all ones (nothing to do: the forward pass is bit-identical to no mask),
        else a read-only float32 (L, H) copy.

    Raises:
        ValueError: not numeric, the wrong shape (the message gives the expected one), or a value that is not finite
            or outside [0, 1].
    """
    if mask is None:
        return None
    if isinstance(mask, torch.Tensor):
        mask = mask.detach().cpu().numpy()
    try:
        m = np.array(mask, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"head_mask must be an array of numbers of shape ({n_layers}, {n_heads}): {exc}") from exc
    if m.shape != (n_layers, n_heads):
        raise ValueError(f"head_mask has shape {m.shape}; this model has {n_layers} layers x {n_heads} heads, "
                         f"so it must be ({n_layers}, {n_heads})")
    if not np.isfinite(m).all() or (m < 0).any() or (m > 1).any():
        raise ValueError("head_mask values must be in [0, 1] (1 keeps a head, 0 removes it)")
    if (m == 1).all():
        return None
    out = m.astype(np.float32)
    out.setflags(write=False)
    return out


class _Masked:
    """One output projection's part of a head-mask scope: the mask, the layers the module serves (in call order) and
    how many times it was called in the scope (a module shared by several layers, ALBERT's, is called once per layer).
    Lives in one thread's scope only."""

    __slots__ = ("mask", "layers", "n_heads", "calls")

    def __init__(self, mask: torch.Tensor, layers: list[int], n_heads: int) -> None:
        self.mask, self.layers, self.n_heads, self.calls = mask, layers, n_heads, 0


_SCOPE: ContextVar[dict | None] = ContextVar("head_mask_scope", default=None)
"""This thread's head masks: output projection module -> :class:`_Masked` (None: no mask anywhere)."""

_INSTALLING = threading.Lock()


def _pre_hook(module, args):
    """The head-mask pre-hook of an output projection: scales the heads' context vectors by this thread's mask for
    ``module`` (:func:`head_mask_hooks`), and does nothing (returns None) where the thread set none."""
    scope = _SCOPE.get()
    entry = None if scope is None else scope.get(module)
    if entry is None:
        return None
    layer = entry.layers[entry.calls % len(entry.layers)]  # a module shared by several layers is called in layer order
    entry.calls += 1
    ctx = args[0]  # (B, T, H d): the heads' context vectors, concatenated
    B, T, HD = ctx.shape
    H = entry.n_heads
    scale = entry.mask[..., layer, :].to(device=ctx.device, dtype=ctx.dtype)  # (H,) or (B, H)
    if scale.dim() == 2 and scale.shape[0] != B:
        raise ValueError(f"a per-text head mask for {scale.shape[0]} texts used on a batch of {B}")
    scale = scale.reshape(-1, 1, H, 1)  # (1 or B, 1, H, 1)
    return ((ctx.reshape(B, T, H, HD // H) * scale).reshape(B, T, HD),) + tuple(args[1:])


def install_head_mask_hooks(model) -> None:
    """Register the head-mask pre-hook (:func:`_pre_hook`) once on each output projection of ``model``
    (:func:`model.explain.taps.output_projections`); a module that has it keeps one. The hook does nothing unless the
    running thread is inside :func:`head_mask_hooks` for that module, so the numbers of every other forward pass are
    unchanged (bit for bit). Call it before the model is shared between threads (``model.Predictor`` does, when it
    is built): registering a hook while another thread runs the model would change its hook table under it. A
    ``copy.deepcopy`` of the model (the bfloat16 copy) carries the hooks along."""
    with _INSTALLING:
        for module in dict.fromkeys(output_projections(model)):
            if _pre_hook not in module._forward_pre_hooks.values():
                module.register_forward_pre_hook(_pre_hook)


@contextmanager
def head_mask_hooks(model, mask, n_heads: int | None = None) -> Iterator[None]:
    """Apply a head mask to every forward pass of ``model`` that *this thread* runs inside the ``with`` block.

    The mask is per call: it lives in this thread's context (a :class:`contextvars.ContextVar`), read by the
    pre-hooks :func:`install_head_mask_hooks` registered once; another thread running the same model at the same time
    sees its own mask or none. Nothing is registered or removed here (except the first time, for a model that has no
    hooks yet, see :func:`install_head_mask_hooks`). Inside a scope, a nested one for the same model replaces the mask
    (it is never applied twice); the outer one is back at its end.

    Args:
        model: the encoder (a :class:`~model.core.encoder.TransformerClassifier` or a backend with
            ``output_projections()``).
        mask: None (nothing changes), a validated (L, H) array (:func:`check_head_mask`), or a float tensor (L, H) or
            (B, L, H) (one mask per text of the batch, e.g. requiring grad for the head importance).
        n_heads: H (default ``model.config.n_heads``).

    Raises:
        ValueError: at forward time, a (B, L, H) mask whose B differs from the batch.
    """
    if mask is None:
        yield
        return
    install_head_mask_hooks(model)
    H = n_heads or model.config.n_heads
    m = mask if isinstance(mask, torch.Tensor) else torch.tensor(np.asarray(mask, dtype=np.float32))
    layers: dict[torch.nn.Module, list[int]] = {}
    for layer, module in enumerate(output_projections(model)):
        layers.setdefault(module, []).append(layer)
    token = _SCOPE.set({**(_SCOPE.get() or {}), **{mod: _Masked(m, ls, H) for mod, ls in layers.items()}})
    try:
        yield
    finally:
        _SCOPE.reset(token)
