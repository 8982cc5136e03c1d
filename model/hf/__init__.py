"""The Hugging Face backend: local encoder folders (BERT, DistilBERT, RoBERTa/XLM-R, ALBERT, ELECTRA, DeBERTa-v2/v3,
MiniLM-style BERTs) behind the :class:`model.Predictor` API.

Modules: :mod:`.loading` (safe, offline loading and the refusals), :mod:`.backend` (:class:`HFEncoder`, the model
adapter, and :class:`HFModelSummary`), :mod:`.encoding` (fast-tokenizer encoding with offsets and head+tail
truncation, shared with ``model.training.finetune_hf``), :mod:`.projections` (one layer's Q/K/V read by forward hooks,
for :meth:`model.Predictor.attention_internals`). Never imports ``model.predictor.predictor``, Qt or training code.
"""

from .backend import FAMILY_NAMES, HFEncoder, HFModelSummary
from .encoding import HFTextEncoder, encode_head_tail, encoder_for, normalise_breaks, special_wrap
from .loading import check_hf_folder, is_hf_folder, load_hf_folder

__all__ = [
    "FAMILY_NAMES", "HFEncoder", "HFModelSummary", "HFTextEncoder", "check_hf_folder", "encode_head_tail",
    "encoder_for", "is_hf_folder", "load_hf_folder", "normalise_breaks", "special_wrap",
]
