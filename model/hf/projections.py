"""Q/K/V projections of a Hugging Face encoder read by forward hooks: one layer's queries, keys, values and
pre-softmax scores (the Hugging Face side of :class:`model.records.internals.AttentionInternals`).

The projections are read with forward hooks on the layer's query/key/value ``nn.Linear`` modules during one
forward pass without attention maps (``transformers``' own code runs; nothing is re-implemented but the scaled dot product):
scores = Q K^T / sqrt(d_head) with padded keys at -inf (Vaswani et al. 2017, eq. 1), so ``softmax(scores)``
equals the model's ``output_attentions`` for the absolute-position families (BERT, RoBERTa, XLM-R, ALBERT,
ELECTRA, DistilBERT, MiniLM). DeBERTa-v2/v3 add disentangled relative-position terms to the scores and scale by
sqrt(3 d_head) (He et al. 2021, eq. 4): their ``disentangled_attention_bias`` is read as it runs (the method is
wrapped on that layer's module for the one pass) and kept as its own score part, ``position_scores``, so there too
``softmax(scores)`` is the model's attention. The same pass reads the layer's input states (the query projection's
input) and its attention output (the output projection's, :func:`model.hf.flow_taps.output_projections`).
"""

from __future__ import annotations

import math
import re
from contextlib import contextmanager

import torch

from model.records.flow import FlowNotSupported
from .flow_taps import output_projections

#: The query, key and value projection module names of one attention layer, by family (regex over
#: ``named_modules``; group 1 is the layer index, absent for ALBERT's shared layer).
_PROJECTIONS = (
    (r"\.layer\.(\d+)\.attention\.self\.(query|key|value)$", ("query", "key", "value")),  # BERT family
    (r"\.layer\.(\d+)\.attention\.(q_lin|k_lin|v_lin)$", ("q_lin", "k_lin", "v_lin")),  # DistilBERT
    (r"\.layer\.(\d+)\.attention\.self\.(query_proj|key_proj|value_proj)$",
     ("query_proj", "key_proj", "value_proj")),  # DeBERTa-v2/v3
    (r"albert_layers\.0\.attention\.(query|key|value)$", ("query", "key", "value")),  # ALBERT (shared layer)
)


def _projection_modules(hf_model: torch.nn.Module, layer: int) -> tuple[list[torch.nn.Module], bool]:
    """([query, key, value] Linear modules of ``layer``, shared-across-layers flag).

    Raises:
        ValueError: when the family's attention modules are not recognised.
    """
    named = dict(hf_model.named_modules())
    for pattern, roles in _PROJECTIONS:
        found = {}
        for name, module in named.items():
            m = re.search(pattern, name)
            if m and (m.lastindex == 1 or int(m.group(1)) == layer):
                found[m.group(m.lastindex)] = module
        if len(found) == 3:
            return [found[r] for r in roles], "albert" in pattern
    raise ValueError(f"attention internals are not available for {type(hf_model).__name__}")


@contextmanager
def _position_scores(hf_model: torch.nn.Module, query_module: torch.nn.Module, found: list):
    """Within the block, DeBERTa's relative-position score part of the layer whose query projection is
    ``query_module`` is appended to ``found`` ((B*H, T, T), scaled) each time it is computed; other families: no-op."""
    owner = next((m for m in hf_model.modules() if getattr(m, "query_proj", None) is query_module
                  and hasattr(m, "disentangled_attention_bias")), None)
    if owner is None:
        yield None
        return
    original = owner.disentangled_attention_bias

    def wrapped(*args, **kwargs):
        out = original(*args, **kwargs)
        found.append(out.detach())
        return out

    owner.disentangled_attention_bias = wrapped
    try:
        yield owner
    finally:
        del owner.disentangled_attention_bias


@torch.inference_mode()
def hf_attention_internals(encoder, input_ids: torch.Tensor, attention_mask: torch.Tensor, layer: int,
                           token_type_ids: torch.Tensor | None = None) -> dict:
    """One layer's internals of an :class:`~model.hf.backend.HFEncoder` (the dict ``TransformerClassifier`` gives).

    Args:
        encoder: the HF encoder wrapper (``.hf`` the transformers model, ``.config`` its summary).
        input_ids: int64 (B, T); attention_mask: bool (B, T), True for real tokens.
        layer: 0-based layer index.

    Returns:
        ``queries``, ``keys``, ``values`` (B, H, T, d_head); ``scores`` (B, H, T, T); ``head_outputs``
        (B, H, T, d_head) = softmax(scores) V; ``inputs`` (B, T, D), the query projection's input;
        ``attention_output`` (B, T, D), the output projection's output; ``output_weight`` (H, d_head, D) and
        ``output_bias`` (D,), W^O by head and b^O; ``position_scores`` (B, H, T, T) or None (DeBERTa's relative-position
        part, included in ``scores``); ``score_scale`` (None: sqrt(d_head)); ``extra_score_terms``: None, or what the
        model adds to Q K^T / sqrt(d_head).

    Raises:
        ValueError: an unrecognised family.
    """
    modules, shared = _projection_modules(encoder.hf, layer)
    try:
        out_proj = output_projections(encoder)[layer]
    except FlowNotSupported:  # e.g. an ALBERT with several layer groups: no W^O parts, the rest as usual
        out_proj = None
    captured: list[list[torch.Tensor]] = [[], [], [], [], [], []]  # q, k, v, query input, attention output, rel

    def keep(k: int, value: torch.Tensor) -> None:
        captured[k].append(value.detach())

    hooks = [m.register_forward_hook(lambda _m, _i, out, k=k: keep(k, out)) for k, m in enumerate(modules)]
    hooks.append(modules[0].register_forward_hook(lambda _m, args, _o: keep(3, args[0])))
    if out_proj is not None:
        hooks.append(out_proj.register_forward_hook(lambda _m, _a, out: keep(4, out)))
    try:
        # The projections are Linear outputs, the same whichever attention kernel runs afterwards: no maps needed,
        # so no [L, H, T, T] tensors are kept (12 layers x 12 heads x 512^2 floats would be 151 MB).
        with _position_scores(encoder.hf, modules[0], captured[5]) as deberta:
            encoder.forward(input_ids, attention_mask, need_weights=False, token_type_ids=token_type_ids)
    finally:
        for h in hooks:
            h.remove()
    pick = layer if shared else 0  # ALBERT runs its one shared layer L times
    B, T = input_ids.shape
    H = encoder.config.n_heads

    def heads(x: torch.Tensor) -> torch.Tensor:  # (B, T, H * d) -> (B, H, T, d)
        return x.float().view(B, T, H, -1).transpose(1, 2)

    q, k, v = (heads(c[pick]) for c in captured[:3])
    d = q.size(-1)
    factor = 1 + sum(t in getattr(deberta, "pos_att_type", ()) for t in ("c2p", "p2c"))  # He et al. 2021, eq. 4
    scale = math.sqrt(d * factor)
    scores = q @ k.transpose(-2, -1) / scale  # (B, H, T, T)
    position = captured[5][0].float().view(B, H, T, T) if captured[5] else None
    extra = None
    if position is not None:
        scores = scores + position
        extra = (f"DeBERTa's relative-position part (content-to-position and position-to-content terms, He et al. "
                 f"2021), with q·k scaled by √({factor} d_head)")
    scores = scores.masked_fill(~attention_mask.bool()[:, None, None, :], float("-inf"))
    parts = {"queries": q, "keys": k, "values": v, "scores": scores, "head_outputs": scores.softmax(-1) @ v,
             "extra_score_terms": extra, "inputs": captured[3][pick].float(), "position_scores": position,
             "score_scale": None if factor == 1 else scale}
    if out_proj is not None:
        W = out_proj.weight.float()  # (D, H d): out = ctx W^T + b
        parts.update(attention_output=captured[4][pick].float(), output_weight=W.T.reshape(H, d, -1),
                     output_bias=out_proj.bias.float() if out_proj.bias is not None else torch.zeros_like(W[:, 0]))
    return parts


@torch.inference_mode()
def hf_embedding_norms(encoder, input_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-position ``(||position embedding||, ||token embedding||)``, each float32 (B, T); the first is all
    zeros for relative-position models, which add no position vector."""
    tok = encoder.hf.get_input_embeddings()(input_ids).float().norm(dim=-1)  # (B, T)
    table = encoder.positional_matrix(input_ids.shape[1])
    if not hasattr(table, "shape"):  # NoPositionalMatrix
        return torch.zeros_like(tok), tok
    pe = torch.as_tensor(table).float().norm(dim=-1)  # (T,)
    return pe.unsqueeze(0).expand_as(tok).to(tok.device), tok
