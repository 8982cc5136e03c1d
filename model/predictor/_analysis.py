"""The analyses behind ``Predictor.attention_flow``, ``layer_predictions``, ``attention_internals`` and
``embedding_norms``: what flows through the attention layers, the prediction after each layer, and the inside of one
attention layer and of the embeddings.

Each function takes the call's :class:`~model.predictor._reading.Parts` (the float32 model), the text's encoding and
the call's :class:`~model.predictor.options.PredictOptions`; the computations live in :mod:`model.explain.value_flow`,
:mod:`model.explain.decompx` and the backends (``attention_internals``, ``embedding_norms``), the records in
:mod:`model.records.flow` and :mod:`model.records.internals`. Private to :mod:`model.predictor`.
"""

from __future__ import annotations

import numpy as np
import torch

from model.core.tokenizer import Encoded
from model.explain.heads import head_mask_hooks
from model.records.flow import AttentionFlow, check_flow_method
from model.records.graph import ContributionGraph
from model.records.internals import AttentionInternals, EmbeddingNorms
from model.records.prediction import NoClassificationHead
from model.text.segments import one_text_inputs

from ._long_text import window_text_of
from ._reading import Parts, encode
from .options import PredictOptions


def check_target(labels: tuple[str, ...], target: int | None) -> None:
    """Raise ValueError unless ``target`` is None or a class index in [0, C)."""
    C = len(labels)
    if target is not None and not 0 <= int(target) < C:
        raise ValueError(f"target must be a class index in [0, {C}), got {target}")


def check_flow(method: str, target: int | None, labels: tuple[str, ...], model_dir) -> None:
    """The checks of ``Predictor.attention_flow`` before any work: a known ``method`` (ValueError naming them),
    DecompX only with a classification head (NoClassificationHead naming ``model_dir``), a valid ``target``."""
    check_flow_method(method)
    if method == "decompx" and not labels:
        raise NoClassificationHead(f"DecompX needs a classification head, and the model in {model_dir} has none (a "
                                   "bare encoder, opened in attention-only mode)")
    check_target(labels, target)


def flow_of(parts: Parts, text: str, text_pair: str | None, window: int, method: str, options: PredictOptions,
            target: int | None) -> AttentionFlow:
    """``Predictor.attention_flow``'s work: the checks (:func:`check_flow`), the window ``window`` of a long text
    read in windows (:func:`model.predictor._long_text.window_text_of`), then :func:`attention_flow`."""
    check_flow(method, target, parts.labels, parts.model_dir)
    if text_pair is None and options.windowed and encode(parts.encoder, parts.model_dir, text).truncated:
        text = window_text_of(parts.encoder, text, window)
    return attention_flow(parts, encode(parts.encoder, parts.model_dir, text, text_pair), method, options, target)


def attention_flow(parts: Parts, enc: Encoded, method: str, options: PredictOptions,
                   target: int | None) -> AttentionFlow:
    """The flow ``method`` (checked) of one encoding under ``options`` (head mask, task): see
    ``Predictor.attention_flow``. ``target`` None: the predicted class (``argmax(logits)``), -1 without a head."""
    from model.explain.value_flow import compute_flow

    ids, att, types = one_text_inputs(parts, enc)
    out = compute_flow(parts.model, ids, att, method, options.head_mask, lock=parts.pass_lock, types=types,
                       target=target, kind=options.task.type)
    if target is None:
        target = int(torch.as_tensor(out["logits"]).argmax()) if len(out["logits"]) else -1

    def arr(name: str) -> np.ndarray | None:
        v = out.get(name)
        return None if v is None else np.ascontiguousarray(torch.as_tensor(v).float().cpu().numpy(), np.float32)

    return AttentionFlow(
        method=method, tokens=tuple(enc.tokens), matrices=arr("matrices"), aggregated=arr("aggregated"),
        importance=arr("importance"), logits=arr("logits"), labels=tuple(parts.labels), pooling=out["pooling"],
        summed=arr("summed"), value_norms=arr("value_norms"), contributions=arr("contributions"),
        head_mask=options.mask_copy(), elapsed_s=out["elapsed_s"], target=target, task=options.task.kind,
        segment_ids=enc.segment_ids)


def contribution_graph(parts: Parts, enc: Encoded, threshold: float, options: PredictOptions) -> ContributionGraph:
    """``Predictor.contribution_graph``: the pruned graph of one encoding (:mod:`model.explain.contribution_graph`)
    under ``options``' head mask, its nodes read out as ``options.task`` reads logits. Raises ValueError: ``threshold``
    not a number in [0, 1]; FlowNotSupported: what ALTI does not cover."""
    from model.explain.contribution_graph import contribution_graph as compute

    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1:
        raise ValueError(f"threshold must be a number in [0, 1], got {threshold!r}")
    ids, att, types = one_text_inputs(parts, enc)
    out = compute(parts.model, ids, att, float(threshold), lock=parts.pass_lock, types=types,
                  head_mask=options.head_mask, kind=options.task.type)
    return ContributionGraph(tokens=tuple(enc.tokens), nodes=out["nodes"], edges=out["edges"], heads=out["heads"],
                             weights=out["weights"], readout=out["readout"], threshold=float(threshold),
                             n_layers=parts.model.config.n_layers, elapsed_s=out["elapsed_s"],
                             node_outputs=out["node_outputs"], labels=tuple(parts.labels), task=options.task.kind,
                             head_mask=options.mask_copy())


@torch.inference_mode()
def layer_predictions(parts: Parts, enc: Encoded, options: PredictOptions) -> np.ndarray:
    """Read-only float32 (L + 1, C): the model's read-out after the embeddings and after each layer, read as
    ``options.task`` reads logits (see ``Predictor.layer_predictions``)."""
    from model.explain.value_flow import layer_logits
    from model.tasks.readout import outputs

    ids, att, types = one_text_inputs(parts, enc)
    with parts.pass_lock, head_mask_hooks(parts.model, options.head_mask, parts.n_heads):
        logits = layer_logits(parts.model, ids, att, types)  # (L + 1, C)
    probs = outputs(logits.float(), options.task.type).cpu().numpy().astype(np.float32)
    probs.setflags(write=False)
    return probs


@torch.inference_mode()
def attention_internals(parts: Parts, enc: Encoded, layer: int, options: PredictOptions) -> AttentionInternals:
    """Queries, keys, values, scores and head outputs of layer ``layer`` (-L <= layer < L; negative counts from the
    last) of one encoding, the layers below under the call's head mask (see ``Predictor.attention_internals``); the
    backend's ``attention_internals(ids, mask, layer)`` under ``parts.pass_lock`` (its capture hooks live for that pass
    only). Raises IndexError: ``layer`` out of range."""
    n_layers = parts.model.config.n_layers
    if not -n_layers <= layer < n_layers:
        raise IndexError(f"layer {layer} out of range for {n_layers} layers")
    layer %= n_layers
    ids, mask, types = one_text_inputs(parts, enc)  # (1, T) each
    with parts.pass_lock, head_mask_hooks(parts.model, options.head_mask, parts.n_heads):
        out = parts.model.attention_internals(ids, mask, layer, **types)

    def arr(name: str, batched: bool = True) -> np.ndarray | None:
        t = out.get(name)
        return None if t is None else (t[0] if batched else t).float().cpu().numpy().astype(np.float32)

    return AttentionInternals(
        tokens=tuple(enc.tokens), layer=layer, extra_score_terms=out.get("extra_score_terms"),
        **{n: arr(n) for n in ("queries", "keys", "values", "scores", "head_outputs", "inputs", "attention_output",
                               "position_scores")},
        output_weight=arr("output_weight", False), output_bias=arr("output_bias", False),
        score_scale=out.get("score_scale"),
        head_scale=None if options.head_mask is None else options.head_mask[layer].copy(),
    )


@torch.inference_mode()
def embedding_norms(parts: Parts, enc: Encoded) -> EmbeddingNorms:
    """Per-position ||PE(pos)|| and ||token embedding x sqrt(d_model)|| of one encoding (the backend's
    ``embedding_norms``, under ``parts.pass_lock``)."""
    ids = torch.from_numpy(enc.ids).unsqueeze(0).to(parts.device)  # (1, T)
    with parts.pass_lock:
        pe, tok = parts.model.embedding_norms(ids)
    return EmbeddingNorms(tuple(enc.tokens), pe[0].float().cpu().numpy(), tok[0].float().cpu().numpy())
