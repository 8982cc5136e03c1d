"""The segment ids (``token_type_ids``) of sentence pairs on their way into a forward pass.

A pair's :class:`model.core.tokenizer.Encoded` carries ``segment_ids`` (int8 [T]); the model gets them as the
keyword ``token_type_ids`` (int64 (B, T)) only when it has a token-type embedding (``model.uses_token_types``:
BERT, ALBERT, ELECTRA...); models without one (RoBERTa, DistilBERT, the bundled encoder) tell the texts apart by
their separators and get no keyword at all. Passed explicitly on every call, never kept in the model.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch


def types_kw(model, segment_ids: np.ndarray | None, device: torch.device) -> dict:
    """``{"token_type_ids": int64 tensor (B, T)}`` for ``model(...)`` / ``model.encode(...)``, or ``{}`` for a single
    text or a model without token types. ``segment_ids``: int [T] (one text) or [B, T], or None."""
    if segment_ids is None or not getattr(model, "uses_token_types", False):
        return {}
    t = torch.from_numpy(np.asarray(segment_ids, dtype=np.int64)).to(device)
    return {"token_type_ids": t.unsqueeze(0) if t.dim() == 1 else t}


def pad_segments(batch: Sequence[np.ndarray | None], length: int) -> np.ndarray | None:
    """Right-pad segment ids (int [T_i] each, None for a single text: all 0) into int64 (B, ``length``); None when
    no item of the batch is a pair."""
    if all(s is None for s in batch):
        return None
    out = np.zeros((len(batch), length), dtype=np.int64)
    for i, s in enumerate(batch):
        if s is not None:
            out[i, : len(s)] = s
    return out


def one_text_inputs(predictor, enc) -> tuple[torch.Tensor, torch.Tensor, dict]:
    """``(ids int64 (1, T), mask bool (1, T), token-type keyword)`` of one encoding for ``predictor.model``."""
    ids = torch.from_numpy(enc.ids).unsqueeze(0).to(predictor.device)  # (1, T)
    kw = types_kw(predictor.model, getattr(enc, "segment_ids", None), predictor.device)
    return ids, torch.ones_like(ids, dtype=torch.bool), kw
