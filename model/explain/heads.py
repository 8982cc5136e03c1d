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

Thread safety: the hooks live only inside :func:`head_mask_hooks`; callers hold the predictor's ``forward_lock``
around it (the Predictor's concurrency policy), so no other thread's forward pass sees them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

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


@contextmanager
def head_mask_hooks(model, mask, n_heads: int | None = None) -> Iterator[None]:
    """Apply a head mask to every forward pass of ``model`` inside the ``with`` block.

    Args:
        model: the encoder (a :class:`~model.core.encoder.TransformerClassifier` or a backend with
            ``output_projections()``).
        mask: None (no hooks at all), a validated (L, H) array (:func:`check_head_mask`), or a float tensor (L, H) or
            (B, L, H) (one mask per text of the batch, e.g. requiring grad for the head importance).
        n_heads: H (default ``model.config.n_heads``).

    Raises:
        ValueError: at forward time, a (B, L, H) mask whose B differs from the batch.
    """
    if mask is None:
        yield
        return
    H = n_heads or model.config.n_heads
    mods = output_projections(model)
    m = mask if isinstance(mask, torch.Tensor) else torch.tensor(np.asarray(mask, dtype=np.float32))
    rows: dict[int, list[int]] = {}
    for layer, module in enumerate(mods):
        rows.setdefault(id(module), []).append(layer)

    def make_hook(layers: list[int]):
        calls = [0]

        def hook(_module, args):
            layer = layers[calls[0] % len(layers)]  # a module shared by several layers is called in layer order
            calls[0] += 1
            ctx = args[0]  # (B, T, H d): the heads' context vectors, concatenated
            B, T, HD = ctx.shape
            scale = m[..., layer, :].to(device=ctx.device, dtype=ctx.dtype)  # (H,) or (B, H)
            if scale.dim() == 2 and scale.shape[0] != B:
                raise ValueError(f"a per-text head mask for {scale.shape[0]} texts used on a batch of {B}")
            scale = scale.reshape(-1, 1, H, 1)  # (1 or B, 1, H, 1)
            return ((ctx.reshape(B, T, H, HD // H) * scale).reshape(B, T, HD),) + tuple(args[1:])

        return hook

    handles = [mods[ls[0]].register_forward_pre_hook(make_hook(ls)) for ls in rows.values()]
    try:
        yield
    finally:
        for h in handles:
            h.remove()
