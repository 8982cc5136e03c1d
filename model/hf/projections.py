"""Q/K/V projections of a Hugging Face encoder read by forward hooks: one layer's queries, keys, values and
pre-softmax scores (the Hugging Face side of :class:`model.internals.AttentionInternals`).

The projections are read with forward hooks on the layer's query/key/value ``nn.Linear`` modules during one
forward pass without attention maps (``transformers``' own code runs; nothing is re-implemented but the scaled dot product):
scores = Q K^T / sqrt(d_head) with padded keys at -inf (Vaswani et al. 2017, eq. 1), so ``softmax(scores)``
equals the model's ``output_attentions`` for the absolute-position families (BERT, RoBERTa, XLM-R, ALBERT,
ELECTRA, DistilBERT, MiniLM). DeBERTa-v2/v3 add disentangled relative-position terms to the scores and scale by
sqrt(3 d_head) (He et al. 2021, eq. 4); there the record says so in ``extra_score_terms`` and Q K^T / sqrt(d_head)
is the content-to-content part only.
"""

from __future__ import annotations

import math
import re

import torch

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


@torch.inference_mode()
def hf_attention_internals(encoder, input_ids: torch.Tensor, attention_mask: torch.Tensor, layer: int) -> dict:
    """One layer's internals of an :class:`~model.hf.backend.HFEncoder` (the dict ``TransformerClassifier`` gives).

    Args:
        encoder: the HF encoder wrapper (``.hf`` the transformers model, ``.config`` its summary).
        input_ids: int64 (B, T); attention_mask: bool (B, T), True for real tokens.
        layer: 0-based layer index.

    Returns:
        ``queries``, ``keys``, ``values`` (B, H, T, d_head); ``scores`` (B, H, T, T); ``head_outputs``
        (B, H, T, d_head) = softmax(scores) V; ``extra_score_terms``: None, or what the model adds to the scores.

    Raises:
        ValueError: an unrecognised family.
    """
    modules, shared = _projection_modules(encoder.hf, layer)
    captured: list[list[torch.Tensor]] = [[], [], []]
    hooks = [m.register_forward_hook(lambda _m, _i, out, k=k: captured[k].append(out.detach()))
             for k, m in enumerate(modules)]
    try:
        # The projections are Linear outputs, the same whichever attention kernel runs afterwards: no maps needed,
        # so no [L, H, T, T] tensors are kept (12 layers x 12 heads x 512^2 floats would be 151 MB).
        encoder.forward(input_ids, attention_mask, need_weights=False)
    finally:
        for h in hooks:
            h.remove()
    pick = layer if shared else 0  # ALBERT runs its one shared layer L times
    B, T = input_ids.shape
    H = encoder.config.n_heads

    def heads(x: torch.Tensor) -> torch.Tensor:  # (B, T, H * d) -> (B, H, T, d)
        return x.float().view(B, T, H, -1).transpose(1, 2)

    q, k, v = (heads(c[pick]) for c in captured)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # (B, H, T, T)
    scores = scores.masked_fill(~attention_mask.bool()[:, None, None, :], float("-inf"))
    extra = None
    if encoder.config.pe_kind.startswith("relative"):
        extra = ("DeBERTa's disentangled attention adds content-to-position and position-to-content terms and "
                 "scales by sqrt(3 d_head); these scores are the content-to-content part only")
    return {"queries": q, "keys": k, "values": v, "scores": scores, "head_outputs": scores.softmax(-1) @ v,
            "extra_score_terms": extra}


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
