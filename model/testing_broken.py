"""Broken Hugging Face folders for the tests (one of each kind; the random ones are ``benchmarks.fuzz_folders``).

Each breaker damages a copy of a tiny random folder (:func:`model.testing_hf.make_tiny_hf_dir`) in one way a user
could meet: a config that does not match its weights, renamed or missing tensors, NaN weights, wrong field types,
a tokenizer that does not fit. :data:`BREAKERS` maps a name to ``(damage(folder), expected)``, where ``expected``
is a regular expression the refusal must match, or :data:`ACCEPTED` for a folder that must open (with a note).
Not used by the product at run time; needs ``transformers``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

ACCEPTED = "accepted"


def edit_config(folder: Path, **changes) -> None:
    """Set fields of ``folder/config.json`` (a value of :data:`DELETE` removes the field)."""
    path = folder / "config.json"
    cfg = json.loads(path.read_text(encoding="utf-8"))
    for key, value in changes.items():
        if value is DELETE:
            cfg.pop(key, None)
        else:
            cfg[key] = value
    path.write_text(json.dumps(cfg, allow_nan=True), encoding="utf-8")


DELETE = object()


def edit_weights(folder: Path, change: Callable[[dict], dict]) -> None:
    """Rewrite ``folder/model.safetensors`` as ``change(tensors)`` (a dict name -> tensor)."""
    from safetensors.torch import load_file, save_file

    path = folder / "model.safetensors"
    save_file(change(load_file(str(path))), str(path), metadata={"format": "pt"})


def _drop(pred: Callable[[str], bool]) -> Callable[[Path], None]:
    return lambda f: edit_weights(f, lambda t: {k: v for k, v in t.items() if not pred(k)})


def _poison(value: float) -> Callable[[Path], None]:
    def change(t: dict) -> dict:
        key = next(k for k in sorted(t) if "layer.0.attention.self.query.weight" in k)
        t[key] = t[key].clone()
        t[key][0, 0] = value
        return t
    return lambda f: edit_weights(f, change)


def _extra_mlm_head(t: dict) -> dict:
    import torch

    width = t["bert.embeddings.word_embeddings.weight"].shape[1]
    return {**t, "cls.predictions.transform.dense.weight": torch.zeros(width, width),
            "cls.predictions.bias": torch.zeros(t["bert.embeddings.word_embeddings.weight"].shape[0])}


def _vocab_entry(token: str, value: object) -> Callable[[Path], None]:
    def damage(folder: Path) -> None:
        path = folder / "tokenizer.json"
        data = json.loads(path.read_text(encoding="utf-8"))
        data["model"]["vocab"][token] = value
        path.write_text(json.dumps(data), encoding="utf-8")

    return damage


def _tokenizer_config(**changes) -> Callable[[Path], None]:
    def damage(folder: Path) -> None:
        path = folder / "tokenizer_config.json"
        data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        path.write_text(json.dumps({**data, **changes}), encoding="utf-8")

    return damage


def _cls_id_beyond_table(folder: Path) -> None:
    path = folder / "tokenizer.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["post_processor"]["special_tokens"]["[CLS]"]["ids"] = [5000]
    path.write_text(json.dumps(data), encoding="utf-8")


def _nested(folder: Path) -> None:
    (folder / "config.json").write_text('{"model_type": "bert", "x": ' + "[" * 100_000 + "]" * 100_000 + "}")


BREAKERS: dict[str, tuple[Callable[[Path], None], str]] = {
    "model_type distilbert over BERT weights": (lambda f: edit_config(f, model_type="distilbert"),
                                                "config.json says distilbert, but the weights are BERT's"),
    "model_type roberta over BERT weights": (lambda f: edit_config(f, model_type="roberta"), "weights are BERT's"),
    "model_type electra over BERT weights": (lambda f: edit_config(f, model_type="electra"), "weights are BERT's"),
    "every tensor renamed": (lambda f: edit_weights(f, lambda t: {"x." + k: v for k, v in t.items()}),
                             "missing.*renamed"),
    "classifier missing": (_drop(lambda k: k.startswith("classifier")), "no trained classification head"),
    "one layer's query weights missing": (_drop(lambda k: "layer.1.attention.self.query" in k), "missing.*query"),
    "num_hidden_layers raised": (lambda f: edit_config(f, num_hidden_layers=3), "num_hidden_layers is 3.*random"),
    "num_hidden_layers lowered": (lambda f: edit_config(f, num_hidden_layers=1), "num_hidden_layers is 1.*dropped"),
    "num_hidden_layers 1000000": (lambda f: edit_config(f, num_hidden_layers=1_000_000), "num_hidden_layers"),
    "intermediate_size absurd": (lambda f: edit_config(f, intermediate_size=10**12), "GiB|parameters"),
    "NaN weight": (_poison(math.nan), "NaN or infinite"),
    "infinite weight": (_poison(math.inf), "NaN or infinite"),
    "vocab_size larger than the embedding rows": (lambda f: edit_config(f, vocab_size=205), "vocab_size"),
    "hidden_size a string": (lambda f: edit_config(f, hidden_size="32"), "config.json.*hidden_size.*string"),
    "dropout NaN": (lambda f: edit_config(f, hidden_dropout_prob=math.nan), "hidden_dropout_prob.*probability"),
    "dropout 1.5": (lambda f: edit_config(f, attention_probs_dropout_prob=1.5), "attention_probs_dropout_prob"),
    "num_attention_heads -2": (lambda f: edit_config(f, num_attention_heads=-2), "num_attention_heads.*at least 1"),
    "num_attention_heads 5 (does not divide 32)": (lambda f: edit_config(f, num_attention_heads=5), "divide"),
    "num_hidden_layers 0": (lambda f: edit_config(f, num_hidden_layers=0), "num_hidden_layers.*at least 1"),
    "architectures [5]": (lambda f: edit_config(f, architectures=[5]), "architectures.*list"),
    "id2label keys not 0..n-1": (lambda f: edit_config(f, id2label={"1": "a", "2": "b"}, label2id=DELETE),
                                 "id2label.*0..1"),
    "layer_norm_eps 0": (lambda f: edit_config(f, layer_norm_eps=0), "layer_norm_eps"),
    "deeply nested config.json": (_nested, "nested too deeply"),
    "token id beyond the embedding table": (_vocab_entry("zzzfar", 100_000), "tokenizer.*100000"),
    "[CLS] id beyond the embedding table": (_cls_id_beyond_table, r"tokenizer.json.*'\[CLS\]' the id 5000"),
    "token id 10^9": (_vocab_entry("zzzfar", 10**9), r"tokenizer.json: the vocabulary gives the token 'zzzfar' the "
                      r"id 1000000000, beyond the model's embedding table of 200 rows"),
    "two tokens with one id": (_vocab_entry("zzzfar", 5), r"tokenizer.json: the vocabulary gives the tokens .* the same "
                               r"id 5"),
    "token id a string": (_vocab_entry("zzzfar", "7"), r"tokenizer.json.*'zzzfar' the id '7', not an integer"),
    "vocab_size below the tokenizer's ids": (lambda f: edit_config(f, vocab_size=100),
                                             r"config.json: vocab_size is 100 but the weights' word-embedding table "
                                             r"has 200 rows"),
    "model_max_length 2": (_tokenizer_config(model_max_length=2), r"tokenizer_config.json: model_max_length is 2"),
    "weights file truncated": (lambda f: (f / "model.safetensors").write_bytes(
        (f / "model.safetensors").read_bytes()[:500]), "model.safetensors.*damaged|could not be loaded"),
    "integer weights": (lambda f: edit_weights(f, lambda t: {k: (v * 100).int() if k.endswith("query.bias") else v
                                                             for k, v in t.items()}), "I32.*not floating point"),
    "model_type missing": (lambda f: edit_config(f, model_type=DELETE), "config.json.*without a model_type"),
    "unknown activation": (lambda f: edit_config(f, hidden_act="swish2"), "hidden_act.*unknown activation"),
    "is_decoder true": (lambda f: edit_config(f, is_decoder=True), "is_decoder"),
    "extra MLM head": (lambda f: edit_weights(f, _extra_mlm_head), ACCEPTED),
}
"""Every kind of broken BERT folder the tests build (see the module docstring)."""


def break_folder(src: Path, dst: Path, name: str) -> str:
    """Copy the folder ``src`` to ``dst`` and damage it with ``BREAKERS[name]``; returns the expected outcome."""
    import shutil

    shutil.copytree(src, dst)
    damage, expected = BREAKERS[name]
    damage(dst)
    return expected
