"""Gradient-based token importances on the embedding output of a :class:`~model.core.encoder.TransformerClassifier`.

* :func:`gradient_x_input` (Shrikumar et al. 2016): float32 [T], signed; :func:`gradient_x_input_batch`: the same
  for a padded batch, float32 [B, T];
* :func:`gradient_weighted_rollout` (Chefer, Gur & Wolf 2021, eqs. 13-14, gradient variant): float32 [T], >= 0;
* :func:`integrated_gradients` (Sundararajan, Taly & Yan 2017, eq. 1, via captum): float32 [T], signed,
  plus the convergence delta in log-odds units.

Every function takes ``input_ids`` int64 (1, T) and ``attention_mask`` bool (1, T) (and, for a sentence pair on
a model with token types, ``token_type_ids`` int64 (1, T), passed to the model's forward pass), explains the
scalar :func:`target_score` of the target class (the class's log-odds :func:`class_log_odds` for a single-label
head; a multi-label head's label logit, the log-odds of its sigmoid; a regression head's value), and raises
ValueError when the model is in training mode. No hooks are registered and the model is never changed, so they may run on a worker
thread while another thread classifies with the same model. The forward pass is the encoder's own
(:meth:`~model.core.encoder.TransformerClassifier.encode` / ``encode_with_maps``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING

import numpy as np
import torch

from model.tasks.types import SINGLE_LABEL, TaskType, task_type
from model.records.explanation import ExplanationCancelled
from .rollout import readout_row

if TYPE_CHECKING:  # pragma: no cover
    from model.core.encoder import TransformerClassifier

DEFAULT_IG_STEPS = 32
IG_TOKEN_BUDGET = 8192  # tokens per internal IG batch (internal_batch_size * T), bounds memory (~150 MB at T=512)


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


def target_score(logits: torch.Tensor, target: int, kind: str | TaskType = SINGLE_LABEL) -> torch.Tensor:
    """The explained scalar of class ``target`` for a head read as ``kind`` (:data:`model.tasks.task.TASKS`), (B,):
    single-label, :func:`class_log_odds`; multi-label, the label's logit (= log(p / (1 - p)) of its sigmoid p);
    regression (or a single output), the output itself.

    Args:
        logits: (B, C). target: the class (output) index in [0, C). kind: the task.
    """
    if not task_type(kind).explains_log_odds or logits.shape[1] == 1:
        return logits[:, target]
    return class_log_odds(logits, target)


def _types(token_type_ids: torch.Tensor | None) -> dict:
    return {} if token_type_ids is None else {"token_type_ids": token_type_ids}


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


def gradient_x_input(model, input_ids: torch.Tensor, attention_mask: torch.Tensor, target: int,
                     kind: str | TaskType = SINGLE_LABEL, token_type_ids: torch.Tensor | None = None) -> np.ndarray:
    """Gradient x input on the embedding output (Shrikumar et al. 2016).

    score_t = sum_d x[t, d] * df/dx[t, d], where x = ``model.embed(input_ids)``
    (B = 1) and f = :func:`target_score` of ``model.encode(x, mask)``.

    Args:
        model: anything with ``embed(ids) -> (1, T, D)`` and
            ``encode(x, mask) -> (logits (1, C), _)`` in eval mode (a
            :class:`~model.core.encoder.TransformerClassifier`).
        input_ids: int64 (1, T).
        attention_mask: bool (1, T).
        target: the class index explained.
        kind: the task the head is read as (:func:`target_score`).
        token_type_ids: int64 (1, T) segment ids of a pair, or None.

    Returns:
        float32 [T], signed.

    Raises:
        ValueError: if the model is in training mode.
    """
    _check_eval(model)
    with _grad_context():
        x = model.embed(input_ids).detach().requires_grad_(True)  # (1, T, D)
        logits, _ = model.encode(x, attention_mask, **_types(token_type_ids))  # (1, C)
        f = target_score(logits, target, kind).sum()
        (grad,) = torch.autograd.grad(f, x)  # (1, T, D)
        scores = (grad * x).sum(-1)[0]  # (T,)
    return scores.detach().float().cpu().numpy().astype(np.float32)


def gradient_x_input_batch(
    model, input_ids: torch.Tensor, attention_mask: torch.Tensor, target: int, kind: str | TaskType = SINGLE_LABEL,
    token_type_ids: torch.Tensor | None = None,
) -> np.ndarray:
    """Gradient x input for a padded batch: :func:`gradient_x_input` of every row in one forward + backward pass.

    The reviews of a batch do not interact (attention never crosses rows and padded keys are masked), so the
    gradient of the summed log-odds with respect to row b's embeddings is row b's own gradient; each row's
    scores equal :func:`gradient_x_input` of that review alone up to float rounding (the padded attention and
    pooling sum in another order). Used by :mod:`model.corpus.tokens` (corpus-level token importance).

    Args:
        model: as for :func:`gradient_x_input`, in eval mode.
        input_ids: int64 (B, T), right-padded.
        attention_mask: bool (B, T), True on real tokens.
        target: the class index explained (the same for every row).
        kind, token_type_ids: as for :func:`gradient_x_input` (token types (B, T)).

    Returns:
        float32 [B, T], signed, in log-odds units; 0 at padded positions.

    Raises:
        ValueError: if the model is in training mode.
    """
    _check_eval(model)
    with _grad_context():
        x = model.embed(input_ids).detach().requires_grad_(True)  # (B, T, D)
        logits, _ = model.encode(x, attention_mask, **_types(token_type_ids))  # (B, C)
        f = target_score(logits, target, kind).sum()
        (grad,) = torch.autograd.grad(f, x)  # (B, T, D)
        scores = (grad * x).sum(-1) * attention_mask  # (B, T)
    return scores.detach().float().cpu().numpy().astype(np.float32)


def forward_with_attention(
    model: TransformerClassifier, x: torch.Tensor, attention_mask: torch.Tensor,
    token_type_ids: torch.Tensor | None = None,
) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """The encoder's forward pass keeping each layer's attention tensor in the graph.

    Delegates to :meth:`~model.core.encoder.TransformerClassifier.encode_with_maps`
    (the one forward pass), whose maps are the tensors the logits were computed from, so
    ``torch.autograd.grad(f, maps)`` gives dF/dA.

    Args:
        model: a :class:`~model.core.encoder.TransformerClassifier`.
        x: (B, T, D) embedded input.
        attention_mask: bool (B, T).
        token_type_ids: int64 (B, T) segment ids of pairs, or None.

    Returns:
        ``(logits (B, C), [p_attn (B, H, T, T)] * L)``.
    """
    return model.encode_with_maps(x, attention_mask, need_weights=True, **_types(token_type_ids))


def gradient_weighted_rollout(
    model: TransformerClassifier, input_ids: torch.Tensor, attention_mask: torch.Tensor, target: int,
    kind: str | TaskType = SINGLE_LABEL, token_type_ids: torch.Tensor | None = None,
) -> np.ndarray:
    """Gradient-weighted attention rollout (Chefer, Gur & Wolf 2021, eqs. 13-14, gradient variant).

    Per layer Abar = mean_heads((dF/dA * A)^+) with F the target's
    :func:`target_score`; R = I, then R <- R + Abar R for layers 1..L.
    The importance is :func:`readout_row` of R - I (the relevance that flowed
    through attention).

    Args:
        model: a :class:`~model.core.encoder.TransformerClassifier` in eval mode.
        input_ids: int64 (1, T).
        attention_mask: bool (1, T).
        target: the class index explained.
        kind, token_type_ids: as for :func:`gradient_x_input`.

    Returns:
        float32 [T], >= 0.
    """
    _check_eval(model)
    with _grad_context():
        x = model.embed(input_ids).detach()
        logits, maps = forward_with_attention(model, x, attention_mask, token_type_ids)
        f = target_score(logits, target, kind).sum()
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
    lock: AbstractContextManager | None = None,
    kind: str | TaskType = SINGLE_LABEL,
    token_type_ids: torch.Tensor | None = None,
) -> tuple[np.ndarray, float]:
    """Integrated gradients (Sundararajan et al. 2017, eq. 1) on the embedding output, via captum.

    IG_t = sum_d (x - x')[t, d] * integral_0^1 df/dx(x' + a (x - x'))[t, d] da,
    with x = ``model.embed(ids)``, x' = ``model.embed(ig_baseline_ids(ids))``
    and f = :func:`target_score` of the target. Interpolating the embedding
    output is the same as interpolating the token embedding (the positional
    encoding is the same at both ends). captum's
    :class:`~captum.attr.IntegratedGradients` is used instead of
    ``LayerIntegratedGradients`` because the latter hooks the shared model.

    Args:
        model: a :class:`~model.core.encoder.TransformerClassifier` in eval mode.
        input_ids: int64 (1, T).
        attention_mask: bool (1, T).
        target: the class index explained.
        n_steps: quadrature points (Gauss-Legendre), >= 1.
        internal_batch_size: interpolation points per forward/backward pass;
            default :func:`ig_internal_batch_size`.
        progress: ``progress(done, total)`` after every forward pass (``total`` = internal batches + 2 for the
            convergence delta). should_stop: checked before every forward pass.
        lock: held around every forward pass (the predictor's ``forward_lock``); None: no lock.
        kind, token_type_ids: as for :func:`gradient_x_input` (the token types are the same along the path).

    Returns:
        ``(scores float32 [T] (signed), convergence_delta)``; the delta is
        sum(scores) - (f(x) - f(x')), in log-odds units (regression: the output's units).

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

    def forward(x: torch.Tensor, mask: torch.Tensor, types: torch.Tensor | None = None) -> torch.Tensor:
        nonlocal calls
        if should_stop is not None and should_stop():
            raise ExplanationCancelled("integrated gradients was cancelled")
        with lock if lock is not None else nullcontext():
            logits, _ = model.encode(x, mask, **_types(types))
        calls += 1
        if progress is not None:
            progress(min(calls, total), total)
        return target_score(logits, target, kind)  # (B,)

    with _grad_context():
        with lock if lock is not None else nullcontext():  # the embeddings are a forward pass too
            x = model.embed(input_ids).detach()  # (1, T, D)
            x0 = model.embed(ig_baseline_ids(input_ids, model.config.pad_id, model.config.cls_id)).detach()  # (1, T, D)
        ig = IntegratedGradients(forward)
        attr, delta = ig.attribute(
            x,
            baselines=x0,
            additional_forward_args=(attention_mask,) if token_type_ids is None else (attention_mask, token_type_ids),
            n_steps=n_steps,
            internal_batch_size=ibs,
            return_convergence_delta=True,
        )
    scores = attr.sum(-1)[0].detach().float().cpu().numpy().astype(np.float32)  # (T,)
    return scores, float(delta.reshape(-1)[0])

