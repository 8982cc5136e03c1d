"""Token-importance explanations of one prediction, and the pure-NumPy attention rollout.

Attention weights are not by themselves an explanation (Jain & Wallace 2019,
"Attention is not Explanation"; Wiegreffe & Pinter 2019, "Attention is not
not Explanation"), so this module offers several methods side by side; their
faithfulness is measured by :mod:`model.faithfulness`.

Methods (:data:`EXPLANATION_METHODS`), each giving one score per token the
model saw (T tokens, ``[CLS]`` included, aligned with
``Predictor.predict(text).tokens``):

``attention``
    Raw attention paid by the classification read-out in one layer, mean of
    the heads: :meth:`model.Prediction.classification_attention` (row 0 for
    ``cls`` pooling, the mean of all query rows for ``mean`` pooling).
    Unsigned, sums to 1.
``rollout``
    Attention rollout (Abnar & Zuidema 2020, "Quantifying Attention Flow in
    Transformers", section 3): per layer A' = 0.5 * mean_heads(A) + 0.5 * I,
    rows renormalised, R = A'_L ... A'_1; the importance is the read-out row
    of R (row 0 for ``cls`` pooling, the mean of R's rows for ``mean``
    pooling). Unsigned, sums to 1.
``grad_x_input``
    Gradient x input on the embeddings (Shrikumar et al. 2016; Denil et al.
    2014): for the embedded input x = ``model.embed(ids)`` (token embedding
    times sqrt(d_model) plus positional encoding), score_t = sum_d
    x[t, d] * df/dx[t, d]. Signed.
``grad_attention``
    Gradient-weighted attention rollout (Chefer, Gur & Wolf 2021,
    "Transformer Interpretability Beyond Attention Visualization", equations
    (13)-(14) with the attention gradient in place of LRP relevance):
    per layer Abar = mean_heads((dF/dA * A)^+), R <- R + Abar R starting from
    R = I; the importance is the read-out row of R - I. Unsigned.
``integrated_gradients``
    Integrated gradients (Sundararajan, Taly & Yan 2017, "Axiomatic
    Attribution for Deep Networks", equation 1) on the embedding output via
    captum's :class:`~captum.attr.IntegratedGradients`, Gauss-Legendre
    quadrature with ``n_steps`` points. Baseline: the same sequence with
    every real token replaced by ``[PAD]`` (zero token embedding, so only the
    positional encoding remains) and ``[CLS]`` kept; the attention mask
    treats every position as real at both ends of the path. Signed; the
    attributions sum to f(x) - f(baseline) up to the reported convergence
    delta (the completeness axiom).
``random``
    Uniform random scores in [0, 1), seeded by ``seed`` and the text: the
    baseline every faithful method must beat.

The scalar f explained by the gradient methods is the target class's
log-odds, log p_c - log(1 - p_c) = logit_c - logsumexp(logits without c)
(the logit difference for two classes), which, unlike the probability, does
not saturate for confident predictions.

Thread safety: no method registers hooks or changes the model's state, so an
explanation may run on a worker thread while another thread classifies with
the same model.
"""

from __future__ import annotations

import math
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

if TYPE_CHECKING:  # pragma: no cover
    from .encoder import TransformerClassifier
    from .predictor import Prediction, Predictor

EXPLANATION_METHODS: tuple[str, ...] = (
    "attention",
    "rollout",
    "grad_x_input",
    "grad_attention",
    "integrated_gradients",
    "random",
)
"""Names accepted by :func:`explain`, in display order."""

CHEAP_METHODS: tuple[str, ...] = ("attention", "rollout", "grad_x_input", "grad_attention", "random")
"""Methods needing at most one forward + backward pass (fine to compute live)."""

SIGNED_METHODS: frozenset[str] = frozenset({"grad_x_input", "integrated_gradients"})
"""Methods whose scores are signed (positive: evidence for the target class)."""

METHOD_TITLES: dict[str, str] = {
    "attention": "Attention (layer, mean of heads)",
    "rollout": "Attention rollout",
    "grad_x_input": "Gradient \u00d7 input",
    "grad_attention": "Gradient-weighted attention",
    "integrated_gradients": "Integrated gradients",
    "random": "Random baseline",
}
"""Human-readable names for the GUI and the reports."""

DEFAULT_IG_STEPS = 32
IG_TOKEN_BUDGET = 8192  # tokens per internal IG batch (internal_batch_size * T), bounds memory (~150 MB at T=512)


class ExplanationCancelled(Exception):
    """Raised by :func:`explain` when ``should_stop()`` returned True mid-computation."""


@dataclass(frozen=True)
class Explanation:
    """One token-importance explanation; immutable, NumPy only.

    Attributes:
        method: one of :data:`EXPLANATION_METHODS`.
        scores: float32 [T], one score per token (``[CLS]`` first), aligned with
            ``tokens``. Higher means more important for ``target``; for signed
            methods negative scores are evidence against it.
        signed: whether ``scores`` are signed (:data:`SIGNED_METHODS`).
        target: the explained class index (the predicted class unless chosen).
        elapsed_s: wall time in seconds, including the forward pass(es) the
            method needs (for ``attention``/``rollout`` computed from a given
            prediction: that prediction's ``elapsed_s`` plus the post-processing).
        convergence_delta: for integrated gradients, captum's convergence
            delta sum(attributions) - (f(x) - f(baseline)) in log-odds units;
            None for the other methods.
        tokens: the T token strings.
    """

    method: str
    scores: np.ndarray
    signed: bool
    target: int
    elapsed_s: float
    convergence_delta: float | None
    tokens: list[str]

    @property
    def num_tokens(self) -> int:
        """T, the number of scored tokens."""
        return len(self.tokens)

    def to_json_dict(self) -> dict:
        """Everything as JSON-serialisable Python types (for export)."""
        return {
            "method": self.method,
            "scores": self.scores.tolist(),
            "signed": self.signed,
            "target": self.target,
            "elapsed_s": self.elapsed_s,
            "convergence_delta": self.convergence_delta,
            "tokens": list(self.tokens),
        }


# --------------------------------------------------------------------------- pure NumPy attention methods


def attention_rollout(attn: np.ndarray) -> np.ndarray:
    """Attention rollout (Abnar & Zuidema 2020, section 3) of one input's attention maps.

    For each layer l = 1..L: A'_l = 0.5 * mean_heads(A_l) + 0.5 * I with rows
    renormalised to sum to 1 (the residual connection); then
    R = A'_L A'_{L-1} ... A'_1. ``R[i, j]`` is how much of token i's final
    representation flows from input token j.

    Args:
        attn: float [L, H, T, T] attention probabilities (rows sum to 1),
            layers in forward order.

    Returns:
        float64 [T, T]; every row sums to 1.

    Raises:
        ValueError: if ``attn`` is not 4-D with square T x T maps.
    """
    attn = np.asarray(attn, dtype=np.float64)
    if attn.ndim != 4 or attn.shape[-1] != attn.shape[-2]:
        raise ValueError(f"expected attention of shape [L, H, T, T], got {attn.shape}")
    T = attn.shape[-1]
    eye = np.eye(T)
    R = eye.copy()
    for layer in attn:  # (H, T, T)
        a = 0.5 * layer.mean(axis=0) + 0.5 * eye  # (T, T)
        a = a / a.sum(axis=-1, keepdims=True)
        R = a @ R
    return R


def readout_row(matrix: np.ndarray, pooling: str) -> np.ndarray:
    """The row of a [T, T] token-to-token matrix that the classification head reads.

    Args:
        matrix: [T, T], rows = query/output positions, columns = input tokens.
        pooling: ``"cls"`` (row 0, the ``[CLS]`` position) or ``"mean"``
            (the mean of all rows, since the head reads the mean of all
            final hidden states).

    Returns:
        float32 [T].

    Raises:
        ValueError: for an unknown pooling.
    """
    if pooling == "cls":
        row = matrix[0]
    elif pooling == "mean":
        row = matrix.mean(axis=0)
    else:
        raise ValueError(f"pooling must be 'mean' or 'cls', not {pooling!r}")
    return np.asarray(row, dtype=np.float32)


def rollout_importance(attn: np.ndarray, pooling: str) -> np.ndarray:
    """Token importance by attention rollout: ``readout_row(attention_rollout(attn), pooling)``.

    Args:
        attn: float [L, H, T, T].
        pooling: ``"mean"`` or ``"cls"``.

    Returns:
        float32 [T], sums to 1.
    """
    return readout_row(attention_rollout(attn), pooling)


def random_importance(num_tokens: int, text: str = "", seed: int = 0) -> np.ndarray:
    """The random baseline: i.i.d. uniform scores in [0, 1).

    The generator is seeded with ``(seed, crc32(text))``, so the same text
    and seed always give the same scores and different texts differ.

    Returns:
        float32 [num_tokens].
    """
    rng = np.random.default_rng([int(seed) & 0xFFFFFFFF, zlib.crc32(text.encode("utf-8", "replace"))])
    return rng.random(num_tokens).astype(np.float32)


# --------------------------------------------------------------------------- gradient methods


def class_log_odds(logits: torch.Tensor, target: int) -> torch.Tensor:
    """log p_target - log(1 - p_target) from logits, computed stably.

    Equals logit_target - logsumexp(logits of the other classes); for two
    classes, the logit difference.

    Args:
        logits: (B, C), C >= 2.
        target: class index in [0, C).

    Returns:
        (B,) log-odds.
    """
    others = torch.cat([logits[:, :target], logits[:, target + 1 :]], dim=1)  # (B, C-1)
    return logits[:, target] - torch.logsumexp(others, dim=1)


def _grad_context():
    """Autograd on even if the caller is inside ``torch.inference_mode()``/``no_grad``."""

    class _Ctx:
        def __enter__(self):
            self._inf = torch.inference_mode(False)
            self._grad = torch.enable_grad()
            self._inf.__enter__()
            self._grad.__enter__()

        def __exit__(self, *exc):
            self._grad.__exit__(*exc)
            self._inf.__exit__(*exc)

    return _Ctx()


def _check_eval(model: torch.nn.Module) -> None:
    if model.training:
        raise ValueError("explanations need the model in eval mode (dropout off); call model.eval()")


def gradient_x_input(model, input_ids: torch.Tensor, attention_mask: torch.Tensor, target: int) -> np.ndarray:
    """Gradient x input on the embedding output (Shrikumar et al. 2016).

    score_t = sum_d x[t, d] * df/dx[t, d], where x = ``model.embed(input_ids)``
    (B = 1) and f = :func:`class_log_odds` of ``model.encode(x, mask)``.

    Args:
        model: anything with ``embed(ids) -> (1, T, D)`` and
            ``encode(x, mask) -> (logits (1, C), _)`` in eval mode (a
            :class:`~model.encoder.TransformerClassifier`).
        input_ids: int64 (1, T).
        attention_mask: bool (1, T).
        target: the class index explained.

    Returns:
        float32 [T], signed.

    Raises:
        ValueError: if the model is in training mode.
    """
    _check_eval(model)
    with _grad_context():
        x = model.embed(input_ids).detach().requires_grad_(True)  # (1, T, D)
        logits, _ = model.encode(x, attention_mask)  # (1, C)
        f = class_log_odds(logits, target).sum()
        (grad,) = torch.autograd.grad(f, x)  # (1, T, D)
        scores = (grad * x).sum(-1)[0]  # (T,)
    return scores.detach().float().cpu().numpy().astype(np.float32)


def forward_with_attention(
    model: TransformerClassifier, x: torch.Tensor, attention_mask: torch.Tensor
) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """``model.encode`` re-run layer by layer, keeping each layer's attention tensor in the graph.

    ``encode(need_weights=True)`` returns a *stacked copy* of the maps, whose
    gradient is zero; this returns the maps the logits were computed from, so
    ``torch.autograd.grad(f, maps)`` gives dF/dA. No hooks are registered.

    Args:
        model: a :class:`~model.encoder.TransformerClassifier`.
        x: (B, T, D) embedded input.
        attention_mask: bool (B, T).

    Returns:
        ``(logits (B, C), [p_attn (B, H, T, T)] * L)``.
    """
    h = model.embed_dropout(x)
    maps = []
    for layer in model.layers:
        h, p_attn = layer(h, attention_mask, True)  # (B, T, D), (B, H, T, T)
        maps.append(p_attn)
    h = model.final_norm(h)
    if model.config.pooling == "cls":
        pooled = h[:, 0]
    else:
        m = attention_mask.unsqueeze(-1).to(h.dtype)  # (B, T, 1)
        pooled = (h * m).sum(1) / m.sum(1).clamp_min(1.0)  # (B, D)
    return model.head(model.head_dropout(pooled)), maps


def gradient_weighted_rollout(
    model: TransformerClassifier, input_ids: torch.Tensor, attention_mask: torch.Tensor, target: int
) -> np.ndarray:
    """Gradient-weighted attention rollout (Chefer, Gur & Wolf 2021, eqs. 13-14, gradient variant).

    Per layer Abar = mean_heads((dF/dA * A)^+) with F the target's
    :func:`class_log_odds`; R = I, then R <- R + Abar R for layers 1..L.
    The importance is :func:`readout_row` of R - I (the relevance that flowed
    through attention).

    Args:
        model: a :class:`~model.encoder.TransformerClassifier` in eval mode.
        input_ids: int64 (1, T).
        attention_mask: bool (1, T).
        target: the class index explained.

    Returns:
        float32 [T], >= 0.
    """
    _check_eval(model)
    with _grad_context():
        x = model.embed(input_ids).detach()
        logits, maps = forward_with_attention(model, x, attention_mask)
        f = class_log_odds(logits, target).sum()
        grads = torch.autograd.grad(f, maps)
        T = input_ids.shape[1]
        R = torch.eye(T, dtype=torch.float64)
        for a, g in zip(maps, grads):
            abar = (g[0] * a[0]).clamp_min(0).mean(0).detach().to(torch.float64).cpu()  # (T, T)
            R = R + abar @ R
    return readout_row((R - torch.eye(T, dtype=torch.float64)).numpy(), model.config.pooling)


def ig_baseline_ids(input_ids: torch.Tensor, pad_id: int, cls_id: int) -> torch.Tensor:
    """The integrated-gradients baseline: every token replaced by ``[PAD]`` except ``[CLS]``.

    Args:
        input_ids: int64 (B, T).

    Returns:
        int64 (B, T) with ``cls_id`` where ``input_ids == cls_id`` and
        ``pad_id`` elsewhere.
    """
    base = torch.full_like(input_ids, pad_id)
    return torch.where(input_ids == cls_id, input_ids, base)


def ig_internal_batch_size(num_tokens: int, n_steps: int) -> int:
    """Interpolation points per captum internal batch.

    At most ``IG_TOKEN_BUDGET // T`` (bounds memory: about 150 MB at T = 512
    for the default config) and at most ceil(n_steps / 4), so progress is
    reported at least four times.
    """
    return max(1, min(IG_TOKEN_BUDGET // max(1, num_tokens), math.ceil(n_steps / 4)))


def integrated_gradients(
    model: TransformerClassifier,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    target: int,
    n_steps: int = DEFAULT_IG_STEPS,
    internal_batch_size: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> tuple[np.ndarray, float]:
    """Integrated gradients (Sundararajan et al. 2017, eq. 1) on the embedding output, via captum.

    IG_t = sum_d (x - x')[t, d] * integral_0^1 df/dx(x' + a (x - x'))[t, d] da,
    with x = ``model.embed(ids)``, x' = ``model.embed(ig_baseline_ids(ids))``
    and f = :func:`class_log_odds` of the target. Interpolating the embedding
    output is the same as interpolating the token embedding (the positional
    encoding is the same at both ends). captum's
    :class:`~captum.attr.IntegratedGradients` is used instead of
    ``LayerIntegratedGradients`` because the latter hooks the shared model.

    Args:
        model: a :class:`~model.encoder.TransformerClassifier` in eval mode.
        input_ids: int64 (1, T).
        attention_mask: bool (1, T).
        target: the class index explained.
        n_steps: quadrature points (Gauss-Legendre), >= 1.
        internal_batch_size: interpolation points per forward/backward pass;
            default :func:`ig_internal_batch_size`.
        progress: called as ``progress(done, total)`` after every forward
            pass (``total`` = internal batches + 2 for the convergence delta).
        should_stop: checked before every forward pass.

    Returns:
        ``(scores float32 [T] (signed), convergence_delta)``; the delta is
        sum(scores) - (f(x) - f(x')), in log-odds units.

    Raises:
        ExplanationCancelled: when ``should_stop()`` returned True.
        ValueError: if ``n_steps`` < 1 or the model is in training mode.
    """
    from captum.attr import IntegratedGradients

    if n_steps < 1:
        raise ValueError(f"n_steps must be >= 1, got {n_steps}")
    _check_eval(model)
    T = input_ids.shape[1]
    ibs = internal_batch_size or ig_internal_batch_size(T, n_steps)
    total = math.ceil(n_steps / ibs) + 2
    calls = 0

    def forward(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        nonlocal calls
        if should_stop is not None and should_stop():
            raise ExplanationCancelled("integrated gradients was cancelled")
        logits, _ = model.encode(x, mask)
        calls += 1
        if progress is not None:
            progress(min(calls, total), total)
        return class_log_odds(logits, target)  # (B,)

    with _grad_context():
        x = model.embed(input_ids).detach()  # (1, T, D)
        cfg = model.config
        x0 = model.embed(ig_baseline_ids(input_ids, cfg.pad_id, cfg.cls_id)).detach()  # (1, T, D)
        ig = IntegratedGradients(forward)
        attr, delta = ig.attribute(
            x,
            baselines=x0,
            additional_forward_args=(attention_mask,),
            n_steps=n_steps,
            internal_batch_size=ibs,
            return_convergence_delta=True,
        )
    scores = attr.sum(-1)[0].detach().float().cpu().numpy().astype(np.float32)  # (T,)
    return scores, float(delta.reshape(-1)[0])


# --------------------------------------------------------------------------- the entry point


def explain(
    predictor: Predictor,
    text: str,
    method: str,
    target: int | None = None,
    layer: int = -1,
    n_steps: int = DEFAULT_IG_STEPS,
    progress: Callable[[int, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    prediction: Prediction | None = None,
    seed: int = 0,
    internal_batch_size: int | None = None,
) -> Explanation:
    """Explain the predictor's decision on ``text`` with one method.

    Args:
        predictor: a loaded :class:`model.Predictor`.
        text: the review.
        method: one of :data:`EXPLANATION_METHODS`.
        target: class index to explain; default the predicted class.
        layer: the attention layer for ``method="attention"`` (negative
            indices count from the last layer).
        n_steps: integrated-gradients quadrature points.
        progress: ``progress(done, total)`` callback (integrated gradients:
            after every internal batch; other methods: once at the end).
        should_stop: checked between internal batches; True cancels.
        prediction: ``predictor.predict(text)`` if already computed (reuses
            its attention and predicted class); must be for the same text.
        seed: seed of the ``random`` baseline.
        internal_batch_size: integrated-gradients points per pass (default:
            see :func:`ig_internal_batch_size`).

    Returns:
        An :class:`Explanation` with float32 [T] scores aligned with
        ``predictor.predict(text).tokens``.

    Raises:
        ValueError: unknown method, bad text (empty, not a string, too long),
            target or layer out of range, or ``prediction`` for another text.
        ExplanationCancelled: ``should_stop()`` returned True.
    """
    if method not in EXPLANATION_METHODS:
        raise ValueError(f"unknown explanation method {method!r}; choose one of {', '.join(EXPLANATION_METHODS)}")
    if prediction is not None and prediction.text != text:
        raise ValueError("the given prediction is for a different text")
    t0 = time.perf_counter()
    C = len(predictor.labels)
    if target is not None and not (0 <= int(target) < C):
        raise ValueError(f"target must be a class index in [0, {C}), got {target}")
    if should_stop is not None and should_stop():
        raise ExplanationCancelled(f"{method} was cancelled")

    extra_s = 0.0
    delta: float | None = None
    if method in ("attention", "rollout") or (target is None and prediction is not None):
        if prediction is None:
            prediction = predictor.predict(text)
        else:
            extra_s = prediction.elapsed_s if method in ("attention", "rollout") else 0.0
        tokens = list(prediction.tokens)
        tgt = prediction.label_index if target is None else int(target)
    else:
        tokens = None
        tgt = None if target is None else int(target)

    if method == "attention":
        L = prediction.attention.shape[0]
        if not -L <= layer < L:
            raise ValueError(f"layer must be in [-{L}, {L}), got {layer}")
        scores = prediction.classification_attention(layer)
    elif method == "rollout":
        scores = rollout_importance(prediction.attention, prediction.pooling)
    elif method == "random":
        enc = predictor.encode(text)
        tokens = list(enc.tokens)
        if tgt is None:
            tgt = predictor.predict(text).label_index
        scores = random_importance(len(enc.ids), text, seed)
    else:
        enc = predictor.encode(text)
        tokens = list(enc.tokens)
        ids = torch.from_numpy(enc.ids).unsqueeze(0).to(predictor.device)  # (1, T)
        mask = torch.ones_like(ids, dtype=torch.bool)  # (1, T)
        model = predictor.model
        if tgt is None:
            with torch.inference_mode():
                logits, _ = model(ids, mask)
            tgt = int(logits[0].argmax())
        if method == "grad_x_input":
            scores = gradient_x_input(model, ids, mask, tgt)
        elif method == "grad_attention":
            scores = gradient_weighted_rollout(model, ids, mask, tgt)
        else:  # integrated_gradients
            scores, delta = integrated_gradients(
                model, ids, mask, tgt, n_steps, internal_batch_size, progress, should_stop
            )
    if progress is not None and method != "integrated_gradients":
        progress(1, 1)
    return Explanation(
        method=method,
        scores=np.asarray(scores, dtype=np.float32),
        signed=method in SIGNED_METHODS,
        target=int(tgt),
        elapsed_s=extra_s + time.perf_counter() - t0,
        convergence_delta=delta,
        tokens=tokens,
    )
