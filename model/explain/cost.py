"""How long an explanation will take, estimated before it runs, from the model's shape and the text's length.

The app uses it to decide what to show while a method runs (progress and Cancel above :data:`SLOW_S`) and which
method the Compare dock starts with (DecompX below :data:`COMPARE_DECOMPX_S`, else gradient x input, and it says
so). The estimate counts multiply-adds and divides them by a rate measured on this project's machines (2 cores):

* forward pass: L (T (4 D^2 + 2 D F) + 2 T^2 D) (the four attention projections, the feed-forward block, the two
  attention products);
* DecompX (:mod:`.decompx`): per layer T D^2 F + T^2 D^2 for the feed-forward block and, after the first layer,
  T^3 D + 2 T^2 D^2 for the attention; an explanation with [CLS] pooling skips most of the last layer;
* integrated gradients: n_steps forward and backward passes (3 forward passes' work each);
* the other methods: a few forward passes.

The rates (:data:`MACS_PER_S`) are set from ``python -m benchmarks.flow --decompx 3`` (docs/flow.md) on 2 busy
cores, on the slow side: a faster machine finishes early. (A forward pass's measured time is no rate: on short
texts it is mostly fixed overhead.) It is an estimate: tens of percent either way.
"""

from __future__ import annotations

SLOW_S = 1.0  # methods estimated above this show progress and can be cancelled
COMPARE_DECOMPX_S = 2.0  # the Compare dock uses DecompX when its estimate is below this
MACS_PER_S = {"decompx": 4e10, "forward": 4e10}  # multiply-adds per second (benchmarks.flow --decompx)


def forward_macs(n_layers: int, d_model: int, d_ff: int, tokens: int) -> float:
    """Multiply-adds of one forward pass of T = ``tokens`` tokens (see the module docstring)."""
    L, D, F, T = n_layers, d_model, d_ff, tokens
    return float(L * (T * (4 * D * D + 2 * D * F) + 2 * T * T * D))


def decompx_macs(n_layers: int, d_model: int, d_ff: int, tokens: int, cls_explanation: bool = False) -> float:
    """Multiply-adds of DecompX on T = ``tokens`` tokens; ``cls_explanation``: an explanation of a [CLS]-pooled model
    (the last layer's [CLS] row only)."""
    L, D, F, T = n_layers, d_model, d_ff, tokens
    ffn = T * D * D * F + T * T * D * D
    attention = T ** 3 * D + 2 * T * T * D * D
    total = L * ffn + (L - 1) * attention
    if cls_explanation and L > 1:
        total -= ffn + attention - T * T * D * D  # the last layer keeps only its W_V projection
    return float(total)


def long_text_views(config, tokens: int) -> int:
    """How many windows an explanation of a ``tokens``-token text runs on: 1 for a text that fits; a longer one is
    explained in side-by-side windows of nearly equal length (:mod:`model.text.document_windows`), about
    ceil((T - 2) / (max_len - 2)) of them (an estimate: the model's special tokens and word starts move it)."""
    max_len = int(getattr(config, "max_len", 0) or 0)
    if max_len <= 2 or tokens <= max_len:
        return 1
    return -(-(tokens - 2) // (max_len - 2))


def estimate_seconds(method: str, config, tokens: int, n_steps: int = 32) -> float:
    """Estimated wall time of ``method`` on a text of ``tokens`` tokens, in seconds (without fixed overheads).

    A text longer than ``config.max_len`` costs :func:`long_text_views` windows of about T / W tokens each (never
    one T x T attention over the whole text).

    Args:
        method: a ``model.explain`` method id. config: the predictor's config (``n_layers``, ``d_model``, ``max_len``
            and, when it has one, ``d_ff``; else 4 d_model). tokens: T. n_steps: integrated-gradients points.
    """
    views = long_text_views(config, tokens)
    if views > 1:
        return views * estimate_seconds(method, config, -(-(tokens - 2) // views) + 2, n_steps)
    L, D = int(config.n_layers), int(config.d_model)
    F = int(getattr(config, "d_ff", 0) or 4 * D)
    fwd = forward_macs(L, D, F, tokens)
    if method == "decompx":
        cls = getattr(config, "pooling", "cls") == "cls"
        return (fwd + decompx_macs(L, D, F, tokens, cls)) / MACS_PER_S["decompx"]
    passes = 1.0 + 3.0 * n_steps if method == "integrated_gradients" else 3.0
    return passes * fwd / MACS_PER_S["forward"]
