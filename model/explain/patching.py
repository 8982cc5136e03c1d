"""The hooks of activation patching (issue 53): read one site of every layer in a forward pass (:func:`recording`),
run many patched copies of one text in one pass (:func:`patched_logits`), and read a site's gradient for
attribution patching (:func:`gradient_taps`). Model-agnostic: the sites are the modules of
:class:`model.explain.taps.ModelTaps` (the bundled encoder's and every Hugging Face family's of
:mod:`model.hf.flow_taps`), hooked with the model's own forward pass running unchanged.

Sites (:data:`model.records.patching.SITES`; B copies, T tokens, D width, H heads, d = D / H):

* ``resid``: the input of layer l's module (the residual stream entering the layer; the embeddings for l = 0),
  (B, T, D), read and replaced by a forward pre-hook;
* ``head``: the input of layer l's attention output projection W_O, the heads' context vectors concatenated
  (B, T, H d): head h's output is its slice h d .. (h + 1) d (the site of :mod:`model.explain.heads`'s head mask);
* ``ffn``: the output of layer l's second feed-forward linear layer (B, T, D), before the residual add.

Many patches per pass: :func:`patched_logits` runs the text once (batch 1) up to layer l, where a pre-hook on the
layer repeats its input B times; each copy is then patched by its own mask, and the layers after l and the read-out
run on the B copies (every other per-batch tensor, the attention mask, has batch 1 and broadcasts). So the layers
before l run once per pass, not B times. A module shared by several layers (ALBERT) acts at the call of layer l
only. Hooks act on the registering thread's pass only and live for one pass (the caller holds the predictor's
``pass_lock``).

Cancel inside a pass: :func:`stop_checks` runs the caller's check before every module call, so a cancelled pass
stops within one module's time.

Source: Meng et al. 2022 (causal tracing), Wang et al. 2023 (IOI path patching), Heimersheim & Nanda 2024 ("How to
use and interpret activation patching"); attribution patching: Nanda 2023.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import torch
from torch import nn

from .taps import ModelTaps


def site_modules(taps: ModelTaps, site: str) -> list[nn.Module]:
    """The L modules whose input (``resid``, ``head``) or output (``ffn``) is the site, in layer order (a shared
    module repeated). Raises ValueError: an unknown site."""
    role = {"resid": "layer", "head": "out_proj", "ffn": "fc2"}.get(site)
    if role is None:
        raise ValueError(f"unknown patching site {site!r}")
    return [getattr(t, role) for t in taps.layers]


def _hidden(args: tuple, kwargs: dict) -> tuple[torch.Tensor, Callable[[torch.Tensor], tuple[tuple, dict]]]:
    """A module call's first tensor (a layer's hidden states, an output projection's input) and how to replace it:
    ``(tensor, replace)``, ``replace(new) -> (args, kwargs)``."""
    if args and isinstance(args[0], torch.Tensor):
        return args[0], lambda new: ((new,) + tuple(args[1:]), kwargs)
    key = "hidden_states" if "hidden_states" in kwargs else next(k for k, v in kwargs.items()
                                                                   if isinstance(v, torch.Tensor))
    return kwargs[key], lambda new: (args, {**kwargs, key: new})


class _Site:
    """One site's hooks for one pass: which call of each module is which layer, and this thread only.

    ``act(layer, value) -> value or None`` is called with the site's value (B, T, W) at every layer's call; a
    returned tensor replaces it. ``pre(layer, value)`` (optional) acts on the *layer module's* input before that,
    for the batch expansion."""

    def __init__(self, taps: ModelTaps, site: str, act: Callable, pre: Callable | None = None) -> None:
        self.site, self.act, self.pre, self.owner = site, act, pre, threading.get_ident()
        self.hooks: list = []
        mods = site_modules(taps, site)
        self._register(mods, site != "ffn", self._site_hook)
        if pre is not None and site != "resid":
            self._register([t.layer for t in taps.layers], True, self._layer_hook)

    def _register(self, mods: list[nn.Module], before: bool, hook: Callable) -> None:
        layers: dict[nn.Module, list[int]] = {}
        for layer, m in enumerate(mods):
            layers.setdefault(m, []).append(layer)
        for m, ls in layers.items():
            calls = [0]

            def fn(_m, args, *rest, ls=ls, calls=calls):
                if threading.get_ident() != self.owner:
                    return None
                layer = ls[calls[0] % len(ls)]
                calls[0] += 1
                return hook(layer, args, *rest)

            self.hooks.append(m.register_forward_pre_hook(fn, with_kwargs=True) if before
                              else m.register_forward_hook(fn))

    def _layer_hook(self, layer: int, args: tuple, kwargs: dict):
        x, replace = _hidden(args, kwargs)
        new = self.pre(layer, x)
        return None if new is None else replace(new)

    def _site_hook(self, layer: int, args: tuple, *rest):
        if self.site == "ffn":  # a forward hook: (args, output)
            out = rest[0]
            return self.act(layer, out)
        x, replace = _hidden(args, rest[0])
        if self.site == "resid" and self.pre is not None and (expanded := self.pre(layer, x)) is not None:
            x = expanded
            new = self.act(layer, x)
            return replace(x if new is None else new)
        new = self.act(layer, x)
        return None if new is None else replace(new)

    def remove(self) -> None:
        for h in self.hooks:
            h.remove()


@contextmanager
def _hooked(taps: ModelTaps, site: str, act: Callable, pre: Callable | None = None) -> Iterator[None]:
    s = _Site(taps, site, act, pre)
    try:
        yield
    finally:
        s.remove()


@contextmanager
def recording(taps: ModelTaps, site: str) -> Iterator[list[torch.Tensor | None]]:
    """Record the site of every layer in the next forward pass of one text (batch 1) run inside the block.

    Yields a list of L entries filled by the pass: float32 (T, W) detached tensors (W: D, or H d for ``head``)."""
    out: list[torch.Tensor | None] = [None] * len(taps.layers)

    def act(layer: int, value: torch.Tensor) -> None:
        out[layer] = value.detach()[0].float()

    with _hooked(taps, site, act):
        yield out


@contextmanager
def gradient_taps(taps: ModelTaps, site: str) -> Iterator[tuple[list, list]]:
    """For attribution patching: inside the block, the next forward pass (batch 1, gradients enabled) adds a zero
    leaf tensor z_l (requires grad) to the site of every layer, so ``d score / d z_l`` is the score's gradient with
    respect to that activation (Nanda 2023), and records the activation.

    Yields ``(values, leaves)``: two lists of L entries filled by the pass: the activations (T, W) detached, and the
    leaves (1, T, W) to pass to :func:`torch.autograd.grad`."""
    values: list[torch.Tensor | None] = [None] * len(taps.layers)
    leaves: list[torch.Tensor | None] = [None] * len(taps.layers)

    def act(layer: int, value: torch.Tensor) -> torch.Tensor:
        values[layer] = value.detach()[0].float()
        leaves[layer] = torch.zeros_like(value, requires_grad=True)
        return value + leaves[layer]

    with _hooked(taps, site, act):
        yield values, leaves


@contextmanager
def stop_checks(model: nn.Module, check: Callable[[], None]) -> Iterator[None]:
    """Inside the block, ``check()`` runs before every call of every module of ``model`` (a forward pre-hook on each)
    in this thread's forward passes; an exception it raises (a cancellation) ends the pass there. So a pass stops
    within one module's time (a patched pass's largest: one linear layer on its B x T tokens, about a third of a
    layer), not at its end, and the batching (so every number) is unchanged. Hooks act on the registering thread
    only (the caller holds the predictor's ``pass_lock``) and are removed on exit."""
    owner = threading.get_ident()

    def hook(_module, _args) -> None:
        if threading.get_ident() == owner:
            check()

    hooks = [m.register_forward_pre_hook(hook) for m in model.modules()]
    try:
        yield
    finally:
        for h in hooks:
            h.remove()


def patched_logits(taps: ModelTaps, site: str, layer: int, source: torch.Tensor, mask: torch.Tensor,
                   run: Callable[[], torch.Tensor], n_heads: int) -> torch.Tensor:
    """Logits of B patched copies of one text in one forward pass (module docstring).

    Args:
        taps: the model's :class:`~model.explain.taps.ModelTaps`. site: ``resid``, ``head`` or ``ffn``.
        layer: 0-based layer l whose site is patched (its input is repeated B times).
        source: (T, W) the source text's activation at that site, already placed at the receiving text's positions
            (rows of positions no copy patches are never read).
        mask: bool (B, T) (``resid``, ``ffn``) or (B, T, H) (``head``): True where copy b takes ``source``.
        run: one forward pass of the receiving text (batch 1) returning its logits; it runs inside the hooks.
        n_heads: H.

    Returns:
        logits (B, C) of the B copies.
    """
    B = mask.shape[0]
    src = source.to(mask.device)

    def expand(at: int, x: torch.Tensor) -> torch.Tensor | None:
        return x.expand(B, *x.shape[1:]) if at == layer else None

    def act(at: int, value: torch.Tensor) -> torch.Tensor | None:
        if at != layer:
            return None
        s = src.to(value.dtype)
        if site == "head":
            Bv, T, W = value.shape
            heads = value.reshape(Bv, T, n_heads, W // n_heads)
            return torch.where(mask[..., None], s.reshape(1, T, n_heads, W // n_heads), heads).reshape(Bv, T, W)
        return torch.where(mask[..., None], s[None], value)

    with _hooked(taps, site, act, expand):
        logits = run()
    if logits.shape[0] != B:
        raise RuntimeError(f"the model's read-out gave {logits.shape[0]} rows for {B} patched copies")
    return logits
