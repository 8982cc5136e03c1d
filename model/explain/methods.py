"""Token-importance explanations of one prediction, and the pure-NumPy attention rollout.

Attention weights are not by themselves an explanation (Jain & Wallace 2019,
"Attention is not Explanation"; Wiegreffe & Pinter 2019, "Attention is not
not Explanation"), so this module offers several methods side by side; their
faithfulness is measured by :mod:`model.explain.erasure`.

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
``value_norm``
    Value-weighted norms (Kobayashi et al. 2020, section 3) aggregated like
    rollout: per layer N = the row-normalised ||sum_h alpha_ij^h f^h(x_j)||,
    A' = 0.5 N + 0.5 I, R = A'_L ... A'_1; the read-out row of R
    (:mod:`model.explain.value_flow`). Unsigned, sums to 1.
``alti``
    ALTI (Ferrando et al. 2022, section 3): the rollout of the attention
    blocks' contribution matrices (residual and LayerNorm included); the
    read-out row. Unsigned, sums to 1.
``decompx``
    DecompX (Modarressi et al. 2023, section 3; :mod:`model.explain.decompx`):
    each token's contribution to the target logit minus the mean of its
    contributions to the other logits (for two classes: to the log-odds),
    propagated through attention, residuals, LayerNorms, the feed-forward
    networks and the head. Signed; the contributions sum to the logits.
``random``
    Uniform random scores in [0, 1), seeded by ``seed`` and the text: the
    baseline every faithful method must beat.

A ``head_mask`` (L, H) explains the model with those heads switched off
(:mod:`model.explain.heads`; Michel et al. 2019).

The scalar f explained by the gradient methods is the target class's
log-odds, log p_c - log(1 - p_c) = logit_c - logsumexp(logits without c)
(the logit difference for two classes), which, unlike the probability, does
not saturate for confident predictions.

Thread safety: no method changes the model's weights; a head mask applies to
the calling thread's forward passes only (:func:`.heads.head_mask_hooks`), and
the flow methods register their capture hooks only while they hold the
predictor's ``forward_lock``, which every forward pass holds (the Predictor's
concurrency policy), so an explanation may run on a worker thread while another
thread classifies with the same model.

The methods live in one registry, :data:`METHODS` (one :class:`Method` record per
method: id, title, signed or not, cost class, function); :func:`explain` looks the
method up there. The tuples below are derived from it.

This package never imports :mod:`model.predictor.predictor`: :func:`explain` takes any object
with the :class:`ExplainablePredictor` shape, so the inference façade may call it
without an import cycle.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import torch

from model.records.flow import class_scores
from model.tasks.task import task_of
from model.tasks.types import SINGLE_LABEL, TaskType, task_type
from model.text.segments import one_text_inputs
from .gradients import DEFAULT_IG_STEPS, gradient_weighted_rollout, gradient_x_input, integrated_gradients
from .heads import head_mask_hooks
from model.records.explanation import Explanation, ExplanationCancelled
from .rollout import random_importance, rollout_importance


class ExplainablePredictor(Protocol):
    """What :func:`explain` and :func:`~model.explain.erasure.faithfulness` need of a predictor.

    :class:`model.Predictor` has this shape: ``labels`` (C class names), ``device``,
    ``model`` (a :class:`~model.core.encoder.TransformerClassifier` in eval mode),
    ``config``, ``encode(text) -> Encoded`` and ``predict(text) -> Prediction``.
    """

    labels: tuple[str, ...]
    device: torch.device
    model: Any
    config: Any
    forward_lock: Any  # a re-entrant lock held around every forward pass (optional on test doubles)

    def encode(self, text: str) -> Any: ...

    def predict(self, text: str) -> Any: ...


@dataclass
class Request:
    """One :func:`explain` call as a method function sees it (``target`` resolved when a prediction gave it)."""

    predictor: ExplainablePredictor
    text: str
    target: int | None
    prediction: Any
    layer: int
    n_steps: int
    progress: Callable[[int, int], None] | None
    should_stop: Callable[[], bool] | None
    seed: int
    internal_batch_size: int | None
    head_mask: np.ndarray | None = None
    text_pair: str | None = None
    kind: str | TaskType = SINGLE_LABEL

    def encode(self) -> Any:
        """The predictor's encoding of the text (or the pair)."""
        return encode_of(self.predictor, self.text, self.text_pair)


MethodResult = tuple[np.ndarray, list[str], int, "float | None"]
"""``(scores float [T], tokens, target class index, convergence delta or None)``."""


@dataclass(frozen=True)
class Method:
    """One explanation method in the registry.

    Attributes:
        id: the name :func:`explain` accepts.
        title: human-readable name for the GUI and the reports.
        signed: whether its scores are signed (positive: evidence for the target class).
        cost: ``"cheap"`` (at most one forward + backward pass, fine to compute live) or ``"expensive"``.
        uses_prediction: computed from a :class:`model.Prediction`'s attention (no extra forward pass).
        function: ``function(request) -> MethodResult``.
        masks_itself: the function applies ``request.head_mask`` itself (the flow methods, which also need the
            mask in their arithmetic); otherwise :func:`explain` runs it inside the head-mask hooks.
    """

    id: str
    title: str
    signed: bool
    cost: str
    uses_prediction: bool
    function: Callable[[Request], MethodResult]
    masks_itself: bool = False


def forward_lock_of(predictor: Any) -> AbstractContextManager:
    """The predictor's ``forward_lock``; a no-op context for test doubles that have none."""
    lock = getattr(predictor, "forward_lock", None)
    return lock if lock is not None else nullcontext()


def encode_of(predictor: Any, text: str, text_pair: str | None) -> Any:
    """``predictor.encode(text)``, or ``predictor.encode(text, text_pair)`` for a sentence pair."""
    return predictor.encode(text) if text_pair is None else predictor.encode(text, text_pair)


def predict_of(predictor: Any, text: str, text_pair: str | None) -> Any:
    """``predictor.predict(text)``, or with ``text_pair=`` for a sentence pair."""
    return predictor.predict(text) if text_pair is None else predictor.predict(text, text_pair=text_pair)


def _attention(r: Request) -> MethodResult:
    L = r.prediction.attention.shape[0]
    if not -L <= r.layer < L:
        raise ValueError(f"layer must be in [-{L}, {L}), got {r.layer}")
    return r.prediction.classification_attention(r.layer), list(r.prediction.tokens), r.target, None


def _rollout(r: Request) -> MethodResult:
    scores = rollout_importance(r.prediction.attention, r.prediction.pooling)
    return scores, list(r.prediction.tokens), r.target, None


def _random(r: Request) -> MethodResult:
    enc = r.encode()
    target = predict_of(r.predictor, r.text, r.text_pair).label_index if r.target is None else r.target
    return random_importance(len(enc.ids), r.text, r.seed), list(enc.tokens), target, None


def _on_ids(r: Request) -> tuple[list[str], Any, torch.Tensor, torch.Tensor, int, dict]:
    """``(tokens, model, ids int64 (1, T), mask bool (1, T), target, task keywords)``; one forward pass if no
    target yet. The keywords (``kind`` and, for a pair on a model with token types, ``token_type_ids``) go to the
    gradient functions."""
    enc = r.encode()
    ids, mask, types = one_text_inputs(r.predictor, enc)
    model = r.predictor.model
    target = r.target
    if target is None:
        with torch.inference_mode(), forward_lock_of(r.predictor):
            logits, _ = model(ids, mask, **types)
        target = int(logits[0].argmax())
    return list(enc.tokens), model, ids, mask, target, {"kind": r.kind, **types}


def _grad_x_input(r: Request) -> MethodResult:
    tokens, model, ids, mask, target, kw = _on_ids(r)
    with forward_lock_of(r.predictor):  # one forward + backward pass
        return gradient_x_input(model, ids, mask, target, **kw), tokens, target, None


def _grad_attention(r: Request) -> MethodResult:
    tokens, model, ids, mask, target, kw = _on_ids(r)
    with forward_lock_of(r.predictor):  # one forward + backward pass
        return gradient_weighted_rollout(model, ids, mask, target, **kw), tokens, target, None


def _integrated_gradients(r: Request) -> MethodResult:
    tokens, model, ids, mask, target, kw = _on_ids(r)
    scores, delta = integrated_gradients(
        model, ids, mask, target, r.n_steps, r.internal_batch_size, r.progress, r.should_stop,
        lock=forward_lock_of(r.predictor), **kw,
    )
    return scores, tokens, target, delta


def _flow(method: str) -> Callable[[Request], MethodResult]:
    def run(r: Request) -> MethodResult:
        from model.explain.value_flow import compute_flow

        enc = r.encode()
        ids, mask, types = one_text_inputs(r.predictor, enc)
        out = compute_flow(r.predictor.model, ids, mask, method, r.head_mask,
                           lock=forward_lock_of(r.predictor), contributions_only=True, progress=r.progress,
                           should_stop=r.should_stop, types=types)
        target = int(out["logits"].argmax()) if r.target is None else r.target
        if "contributions" in out:
            return class_scores(out["contributions"].numpy(), target, r.kind), list(enc.tokens), target, None
        return out["importance"].numpy(), list(enc.tokens), target, None

    return run


METHODS: dict[str, Method] = {
    m.id: m
    for m in (
        Method("attention", "Attention (layer, mean of heads)", False, "cheap", True, _attention),
        Method("rollout", "Attention rollout", False, "cheap", True, _rollout),
        Method("grad_x_input", "Gradient \u00d7 input", True, "cheap", False, _grad_x_input),
        Method("grad_attention", "Gradient-weighted attention", False, "cheap", False, _grad_attention),
        Method("integrated_gradients", "Integrated gradients", True, "expensive", False, _integrated_gradients),
        Method("value_norm", "Value-norm rollout (\u2016\u03b1f(x)\u2016)", False, "cheap", False, _flow("value_norm"),
               True),
        Method("alti", "ALTI (aggregated contributions)", False, "cheap", False, _flow("alti"), True),
        Method("decompx", "DecompX (token decomposition)", True, "expensive", False, _flow("decompx"), True),
        Method("random", "Random baseline", False, "cheap", False, _random),
    )
}
"""The registry, in display order."""

EXPLANATION_METHODS: tuple[str, ...] = tuple(METHODS)
"""Names accepted by :func:`explain`, in display order."""

CHEAP_METHODS: tuple[str, ...] = tuple(m.id for m in METHODS.values() if m.cost == "cheap")
"""Methods needing at most one forward + backward pass (fine to compute live)."""

SIGNED_METHODS: frozenset[str] = frozenset(m.id for m in METHODS.values() if m.signed)
"""Methods whose scores are signed (positive: evidence for the target class)."""

METHOD_TITLES: dict[str, str] = {m.id: m.title for m in METHODS.values()}
"""Human-readable names for the GUI and the reports."""


def explain(
    predictor: ExplainablePredictor,
    text: str,
    method: str,
    target: int | None = None,
    layer: int = -1,
    n_steps: int = DEFAULT_IG_STEPS,
    progress: Callable[[int, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    prediction: Any = None,
    seed: int = 0,
    internal_batch_size: int | None = None,
    head_mask: np.ndarray | None = None,
    text_pair: str | None = None,
    kind: str | None = None,
) -> Explanation:
    """Explain the predictor's decision on ``text`` with one method.

    Args:
        predictor: a loaded :class:`model.Predictor`.
        text: the review.
        method: one of :data:`EXPLANATION_METHODS`.
        target: class index to explain; default the predicted class (``Prediction.label_index``: multi-label,
            the most probable label, explained through its logit; regression: 0, the output value).
        layer: the attention layer for ``method="attention"`` (negative
            indices count from the last layer).
        n_steps: integrated-gradients quadrature points.
        progress: ``progress(done, total)`` callback (integrated gradients:
            after every internal batch; DecompX: after every layer; other methods: once at the end).
        should_stop: checked between internal batches (DecompX: layers); True cancels.
        prediction: ``predictor.predict(text)`` if already computed (reuses its attention and predicted class);
            must be for the same text.
        seed: seed of the ``random`` baseline.
        internal_batch_size: integrated-gradients points per pass (default:
            see :func:`~model.explain.gradients.ig_internal_batch_size`).
        head_mask: a validated (L, H) head mask (``PredictOptions.head_mask``) or None, for this thread's forward
            passes only (:func:`.heads.head_mask_hooks`); a given ``prediction`` must have been made with it.
        text_pair: the second text of a sentence pair (scores cover both texts' tokens), or None.
        kind: the task the head is read as (``Predictor.explain`` passes its call's); None: ``predictor.task``'s.

    Returns:
        An :class:`Explanation` with float32 [T] scores aligned with ``predictor.predict(text).tokens``.

    Raises:
        ValueError: unknown method, bad text (empty, not a string, too long),
            target or layer out of range, or ``prediction`` for another text.
        ExplanationCancelled: ``should_stop()`` returned True.
    """
    if method not in METHODS:
        raise ValueError(f"unknown explanation method {method!r}; choose one of {', '.join(EXPLANATION_METHODS)}")
    spec = METHODS[method]
    if prediction is not None and (prediction.text != text or getattr(prediction, "text_pair", None) != text_pair):
        raise ValueError("the given prediction is for a different text")
    t0 = time.perf_counter()
    C = len(predictor.labels)
    if target is not None and not (0 <= int(target) < C):
        raise ValueError(f"target must be a class index in [0, {C}), got {target}")
    if should_stop is not None and should_stop():
        raise ExplanationCancelled(f"{method} was cancelled")

    extra_s = 0.0
    hooks = nullcontext() if head_mask is None or spec.masks_itself else head_mask_hooks(predictor.model, head_mask)
    with hooks:  # this thread's forward passes only; each pass takes the forward_lock itself
        if spec.uses_prediction or (target is None and prediction is not None):
            if prediction is None:
                prediction = predict_of(predictor, text, text_pair)  # inside the hooks: with the head mask
            else:
                extra_s = prediction.elapsed_s if spec.uses_prediction else 0.0
            tgt = prediction.label_index if target is None else int(target)
        else:
            tgt = None if target is None else int(target)
        request = Request(predictor, text, tgt, prediction, layer, n_steps, progress, should_stop, seed,
                          internal_batch_size, head_mask, text_pair, task_type(kind) if kind is not None else task_of(predictor).type)
        scores, tokens, tgt, delta = spec.function(request)
    if progress is not None and method != "integrated_gradients":
        progress(1, 1)
    scores = np.array(scores, dtype=np.float32)
    scores.setflags(write=False)
    return Explanation(method=method, scores=scores, signed=spec.signed, target=int(tgt),
                       elapsed_s=extra_s + time.perf_counter() - t0, convergence_delta=delta, tokens=tokens)
