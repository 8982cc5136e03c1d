"""The Hugging Face families as the attention-flow methods and the head mask see them: per layer the modules of
:class:`model.explain.taps.LayerTaps` and the classification read-out as a chain of the model's own modules.

Covered (all post-LayerNorm): BERT and MiniLM-style BERTs, RoBERTa, XLM-RoBERTa, CamemBERT, ELECTRA, DistilBERT,
DeBERTa-v2/v3 (its relative-position terms change the attention weights only, which the flows take from the
forward pass) and ALBERT (one layer shared by all L: its modules are read call by call). DeBERTa (v1) fuses its
projections with separate biases and is refused with :class:`model.records.flow.FlowNotSupported`. The head mask reaches
every family, DeBERTa v1 included (:func:`output_projections`).

The read-out chains, checked against the model's own logits by the tests:

* BERT: first token -> ``bert.pooler.dense`` -> tanh -> ``classifier``; ALBERT: ``albert.pooler`` ->
  ``pooler_activation`` -> ``classifier``;
* RoBERTa, XLM-R, CamemBERT: first token -> ``classifier.dense`` -> tanh -> ``classifier.out_proj``; ELECTRA the same
  with its ``classifier.activation`` (GELU);
* DistilBERT: first token -> ``pre_classifier`` -> ReLU -> ``classifier``;
* DeBERTa-v2: first token -> ``pooler.dense`` -> ``ACT2FN[pooler_hidden_act]`` -> ``classifier``.
"""

from __future__ import annotations

import re

import torch

from ..explain.taps import LayerTaps, ModelTaps, ReadOutOp
from model.records.flow import FlowNotSupported

_BERT_ROLES = {"value": "attention.self.value", "out_proj": "attention.output.dense",
               "ln1": "attention.output.LayerNorm", "fc1": "intermediate.dense", "fc2": "output.dense",
               "ln2": "output.LayerNorm"}
_LAYERS = r"encoder\.layer\.(\d+)"
_FAMILIES: dict[str, tuple[str, dict[str, str]]] = {
    **{mt: (_LAYERS, _BERT_ROLES) for mt in ("bert", "roberta", "xlm-roberta", "camembert", "electra")},
    "deberta-v2": (_LAYERS, {**_BERT_ROLES, "value": "attention.self.value_proj"}),
    "distilbert": (r"transformer\.layer\.(\d+)", {
        "value": "attention.v_lin", "out_proj": "attention.out_lin", "ln1": "sa_layer_norm", "fc1": "ffn.lin1",
        "fc2": "ffn.lin2", "ln2": "output_layer_norm"}),
    "albert": (r"albert_layer_groups\.0\.albert_layers\.0", {
        "value": "attention.value", "out_proj": "attention.dense", "ln1": "attention.LayerNorm", "fc1": "ffn",
        "fc2": "ffn_output", "ln2": "full_layer_layer_norm"}),
}
_OUT_PROJ = {**{mt: roles["out_proj"] for mt, (_, roles) in _FAMILIES.items()}, "deberta": "attention.output.dense"}
_PATTERN = {**{mt: p for mt, (p, _) in _FAMILIES.items()}, "deberta": _LAYERS}

SUPPORTED = ("BERT/MiniLM, RoBERTa, XLM-RoBERTa, CamemBERT, ELECTRA, DistilBERT, DeBERTa-v2/v3 and ALBERT")


def _layer_modules(encoder) -> list[torch.nn.Module]:
    """The L layer modules in forward order (ALBERT: its one shared layer, L times).

    Raises:
        FlowNotSupported: an ALBERT with several layer groups or inner layers, or layers not found.
    """
    mt, cfg = encoder.config.model_type, encoder.hf.config
    base = encoder.hf.base_model
    L = encoder.config.n_layers
    if mt == "albert" and (cfg.num_hidden_groups != 1 or cfg.inner_group_num != 1):
        raise FlowNotSupported("attention flow and head masks cover ALBERT with one shared layer only "
                               "(num_hidden_groups = inner_group_num = 1)")
    pattern = re.compile(_PATTERN[mt] + "$")
    found = [(m.group(1) if m.lastindex else "0", mod) for name, mod in base.named_modules()
             if (m := pattern.search(name))]
    if mt == "albert" and len(found) == 1:
        return [found[0][1]] * L
    layers = [mod for _, mod in sorted(found, key=lambda t: int(t[0]))]
    if len(layers) != L:
        raise FlowNotSupported(f"the {len(layers)} layers found in {type(encoder.hf).__name__} do not match its {L}")
    return layers


def output_projections(encoder) -> list[torch.nn.Module]:
    """Each layer's attention output projection (the head mask scales its input), L modules in layer order.

    Raises:
        FlowNotSupported: a family whose output projection is not known.
    """
    mt = encoder.config.model_type
    if mt not in _OUT_PROJ:
        raise FlowNotSupported(f"head masks are not implemented for {encoder.config.family}; they are for "
                               f"{SUPPORTED} and DeBERTa (v1)")
    return [layer.get_submodule(_OUT_PROJ[mt]) for layer in _layer_modules(encoder)]


def _read_out(encoder) -> tuple[ReadOutOp, ...]:
    """The classification read-out chain of the family (module docstring); () without a head."""
    if not encoder.config.has_head:
        return ()
    from transformers.activations import ACT2FN

    hf, mt = encoder.hf, encoder.config.model_type
    base = hf.base_model
    cls: tuple[ReadOutOp, ...] = (("pool", "cls"),)
    if mt == "bert":
        return cls + (("linear", base.pooler.dense), ("act", base.pooler.activation), ("linear", hf.classifier))
    if mt == "albert":
        return cls + (("linear", base.pooler), ("act", base.pooler_activation), ("linear", hf.classifier))
    if mt in ("roberta", "xlm-roberta", "camembert"):
        return cls + (("linear", hf.classifier.dense), ("act", torch.tanh), ("linear", hf.classifier.out_proj))
    if mt == "electra":
        head = hf.classifier
        return cls + (("linear", head.dense), ("act", head.activation), ("linear", head.out_proj))
    if mt == "distilbert":
        return cls + (("linear", hf.pre_classifier), ("act", torch.relu), ("linear", hf.classifier))
    act = ACT2FN[hf.config.pooler_hidden_act]  # deberta-v2
    return cls + (("linear", hf.pooler.dense), ("act", act), ("linear", hf.classifier))


def flow_taps(encoder) -> ModelTaps:
    """The :class:`~model.explain.taps.ModelTaps` of an :class:`~model.hf.backend.HFEncoder`.

    Raises:
        FlowNotSupported: a family not covered (the message names those that are).
    """
    mt = encoder.config.model_type
    if mt not in _FAMILIES:
        raise FlowNotSupported(f"attention flow is not implemented for {encoder.config.family}; it is for {SUPPORTED}")
    roles = _FAMILIES[mt][1]
    layers = tuple(LayerTaps(layer=layer, **{r: layer.get_submodule(p) for r, p in roles.items()})
                   for layer in _layer_modules(encoder))
    return ModelTaps(encoder.config.family, layers, encoder.config.n_heads, True, _read_out(encoder),
                     _ffn_act(encoder.hf.config))


def _ffn_act(cfg) -> tuple[str, object] | None:
    """``(name, callable)`` of the feed-forward activation (``hidden_act``; DistilBERT's ``activation``) as
    ``transformers`` builds it (``ACT2FN``), or None for one given as a callable or not known."""
    from transformers.activations import ACT2FN

    name = getattr(cfg, "hidden_act", None) or getattr(cfg, "activation", None)
    return (name, ACT2FN[name]) if isinstance(name, str) and name in ACT2FN else None
