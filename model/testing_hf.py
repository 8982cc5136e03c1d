"""Tiny, randomly initialised Hugging Face encoder folders for tests (no downloads).

:func:`make_tiny_hf_dir` writes a folder exactly as ``save_pretrained`` does for a real checkpoint: ``config.json``
(with ``model_type``), ``model.safetensors`` and a fast ``tokenizer.json`` (a WordPiece or byte-level BPE
vocabulary trained on a few sentences with the ``tokenizers`` library). Not used by the product at run time;
needs ``transformers`` (the ``hf`` extra).
"""

from __future__ import annotations

from pathlib import Path

from .testing import SAMPLE_TEXTS

FAMILIES: tuple[str, ...] = ("bert", "distilbert", "roberta", "deberta-v2", "albert", "electra", "xlm-roberta")
"""The ``model_type`` values :func:`make_tiny_hf_dir` can build."""

_BPE_FAMILIES = ("roberta", "xlm-roberta")
_TYPED_FAMILIES = ("bert", "albert", "electra")  # a token-type embedding of 2 rows (type_vocab_size 2)

TASK_KINDS: tuple[str, ...] = ("single_label", "multi_label", "regression")
"""The ``task`` values :func:`make_tiny_hf_dir` can write (``problem_type`` of its config)."""


def _tokenizer(family: str, positions: int = 64):
    """A fast tokenizer (``PreTrainedTokenizerFast``) trained on :data:`SAMPLE_TEXTS`: WordPiece with
    [CLS]/[SEP] for BERT-like families, byte-level BPE with <s>/</s> for RoBERTa-like ones. As the real BERT,
    ALBERT and ELECTRA tokenizers, those three give a pair's second text and its [SEP] token_type_ids 1."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    texts = SAMPLE_TEXTS * 3
    if family in _BPE_FAMILIES:
        specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
        tok = Tokenizer(models.BPE(unk_token="<unk>"))
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        tok.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=300, special_tokens=specials, show_progress=False,
                                                           initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
        tok.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0), trim_offsets=True)
        names = {"bos_token": "<s>", "eos_token": "</s>", "cls_token": "<s>", "sep_token": "</s>", "pad_token": "<pad>",
                     "unk_token": "<unk>", "mask_token": "<mask>"}
    else:
        specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(lowercase=True)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.decoder = decoders.WordPiece()
        tok.train_from_iterator(texts, trainers.WordPieceTrainer(vocab_size=200, special_tokens=specials,
                                                                 show_progress=False))
        tok.post_processor = processors.TemplateProcessing(  # BERT's own template: the second text's type id is 1
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
        names = {"cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]", "unk_token": "[UNK]", "mask_token": "[MASK]"}
    inputs = ["input_ids", "token_type_ids", "attention_mask"] if family in _TYPED_FAMILIES else [
        "input_ids", "attention_mask"]
    return PreTrainedTokenizerFast(tokenizer_object=tok, model_max_length=positions, model_input_names=inputs, **names)


def _head_fields(num_labels: int, task: str | None) -> dict:
    """The config's head fields: ``num_labels``, ``id2label`` (negative/positive/neutral for 2-3 classes, else
    ``class_0``...; regression ``score``) and ``problem_type`` (``task`` None: none written)."""
    if task == "regression":
        names = {0: "score"}
    elif num_labels in (2, 3):
        names = {i: n for i, n in enumerate(("negative", "positive", "neutral")[:num_labels])}
    else:
        names = {i: f"class_{i}" for i in range(num_labels)}
    kw = {"num_labels": len(names), "id2label": names, "label2id": {v: k for k, v in names.items()}}
    if task is not None:
        kw["problem_type"] = {"single_label": "single_label_classification",
                              "multi_label": "multi_label_classification", "regression": "regression"}[task]
    return kw


def _config(family: str, vocab_size: int, pad_id: int, num_labels: int | None, layers: int = 2, heads: int = 4,
            positions: int = 64, task: str | None = None):
    from transformers import AutoConfig

    common = {"vocab_size": vocab_size, "pad_token_id": pad_id}
    width = 8 * heads
    if family == "distilbert":
        kw = {"dim": width, "n_layers": layers, "n_heads": heads, "hidden_dim": 2 * width,
              "max_position_embeddings": positions}
    else:
        kw = {"hidden_size": width, "num_hidden_layers": layers, "num_attention_heads": heads,
              "intermediate_size": 2 * width,
              "max_position_embeddings": positions + 2 if family in _BPE_FAMILIES else positions}
    if family in ("albert", "electra"):
        kw["embedding_size"] = 16
    if family == "deberta-v2":
        kw.update(relative_attention=True, position_biased_input=False, pos_att_type=["p2c", "c2p"],
                  max_relative_positions=-1, position_buckets=16)
    if family in _BPE_FAMILIES:
        common.update(bos_token_id=0, eos_token_id=2)
    if family in _TYPED_FAMILIES:
        kw["type_vocab_size"] = 2
    if num_labels:
        kw.update(_head_fields(num_labels, task))
    return AutoConfig.for_model(family, **common, **kw)


def make_tiny_hf_dir(out_dir: str | Path, family: str = "bert", head: bool = True, seed: int = 0, layers: int = 2,
                     heads: int = 4, positions: int = 64, num_labels: int = 2, task: str | None = None,
                     init_std: float = 0.02) -> Path:
    """Write a tiny random Hugging Face encoder folder (default 2 layers x 4 heads, width 8 x heads, 64 positions).

    Args:
        out_dir: the folder to create/fill.
        family: one of :data:`FAMILIES` (a ``model_type``).
        head: with a sequence-classification head (default 2 classes, ``id2label`` negative/positive), else the bare
            encoder.
        seed: torch seed for the weights.
        layers, heads: L and H (the hidden width is 8 H).
        positions: the most tokens per input, special tokens included.
        num_labels: outputs of the head (regression: 1).
        task: one of :data:`TASK_KINDS`, written as the config's ``problem_type``; None writes none (as many shared
            configs do). BERT, ALBERT and ELECTRA folders have 2 token types (``[CLS] A [SEP] B [SEP]`` with the
            second text's type 1), as real ones do.
        init_std: the config's ``initializer_range`` (the weights' standard deviation; larger gives larger logits).

    Returns:
        ``out_dir`` as a Path (``config.json``, ``model.safetensors``, ``tokenizer.json``, ``tokenizer_config.json``).

    Raises:
        ValueError: for a family not in :data:`FAMILIES`.
    """
    import torch
    from transformers import AutoModel, AutoModelForSequenceClassification

    if family not in FAMILIES:
        raise ValueError(f"unknown family {family!r}; choose one of {FAMILIES}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tok = _tokenizer(family, positions)
    cfg = _config(family, len(tok), tok.pad_token_id, (1 if task == "regression" else num_labels) if head else None,
                  layers, heads, positions, task)
    cfg.initializer_range = init_std
    torch.manual_seed(seed)
    model = (AutoModelForSequenceClassification if head else AutoModel).from_config(cfg)
    model.save_pretrained(out, safe_serialization=True)
    tok.save_pretrained(out)
    return out
