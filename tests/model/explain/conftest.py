"""Fixtures of the explanation tests: tiny random Hugging Face Predictors by family, and a DeBERTa (v1) folder, the
family whose fused projections the component views refuse."""

from __future__ import annotations

import pytest

from model import Predictor


@pytest.fixture(scope="module")
def hf_predictor(tmp_path_factory):
    """``hf_predictor(family, **make_tiny_hf_dir keywords)``: a tiny random Predictor of that family (initializer range
    0.3: logits of a useful size), built once per module (skips without ``transformers``)."""
    pytest.importorskip("transformers")
    from tests.fixtures.tiny_hf import make_tiny_hf_dir

    made = {}

    def make(family: str, **kw) -> Predictor:
        key = (family, tuple(sorted(kw.items())))
        if key not in made:
            folder = make_tiny_hf_dir(tmp_path_factory.mktemp(family), family, init_std=0.3, **kw)
            made[key] = Predictor.from_pretrained(folder, device="cpu")
        return made[key]

    return make


@pytest.fixture
def deberta_v1_predictor(tmp_path) -> Predictor:
    """A tiny random DeBERTa (v1) classifier (2 layers, 2 heads, width 16) with the tiny BERT tokenizer."""
    pytest.importorskip("transformers")
    import torch
    from transformers import AutoConfig, AutoModelForSequenceClassification

    from tests.fixtures.tiny_hf import fast_tokenizer

    tok = fast_tokenizer("bert")
    cfg = AutoConfig.for_model("deberta", vocab_size=len(tok), pad_token_id=tok.pad_token_id, hidden_size=16,
                               num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
                               max_position_embeddings=64, num_labels=2)
    torch.manual_seed(0)
    AutoModelForSequenceClassification.from_config(cfg).save_pretrained(tmp_path, safe_serialization=True)
    tok.save_pretrained(tmp_path)
    return Predictor.from_pretrained(tmp_path, device="cpu")
