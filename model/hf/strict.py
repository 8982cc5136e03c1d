"""Strict loading: a Hugging Face folder opens only when its weights are the model its config describes.

``transformers`` fills any weight the checkpoint lacks with random numbers and only prints a load report on the
console. :func:`check_loading_info` reads that report (``output_loading_info=True``) and refuses the folder when a
weight of the encoder or of the classification head is missing or has another shape (loaded with
``ignore_mismatched_sizes=True`` so every mismatch is listed, not raised as "see the report above"); extra weights
(e.g. a masked-language-model head) are allowed and returned as a note for the status bar. :func:`check_finite`
refuses NaN or infinite weights, and :func:`check_probe` a model whose output on a probe text is not finite.

Every refusal is a ``ValueError`` with one paragraph naming the file, the first few keys and the likely cause
(e.g. "config.json says distilbert, but the weights are BERT's").
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import torch

from .backend import FAMILY_NAMES

SHOWN_KEYS = 3
"""How many keys a message names."""

PREFIXES = {"bert": "bert", "roberta": "roberta", "electra": "electra", "distilbert": "distilbert",
            "albert": "albert", "deberta": "deberta-v2"}
"""The first name of a checkpoint key (the base model's attribute) and the family it gives away."""
FAMILY_MARKS: tuple[tuple[str, str], ...] = (
    ("albert_layer_groups", "albert"), (".q_lin.", "distilbert"), (".query_proj.", "deberta-v2"),
    (".in_proj.", "deberta"),
)
"""Substrings of prefix-less checkpoint keys that give away the family (first match wins)."""
SAME_WEIGHTS = {"xlm-roberta": "roberta", "camembert": "roberta", "deberta": "deberta-v2"}
"""Families whose checkpoints use another family's names (they cannot be told apart by their keys)."""

PROBE_TEXT = "A probe sentence: the film was good, the acting was not."


def guess_family(keys) -> str | None:
    """The ``model_type`` a set of checkpoint keys most likely belongs to (:data:`PREFIXES`, else
    :data:`FAMILY_MARKS`), or None when the keys do not tell (e.g. a bare BERT and a bare RoBERTa share names)."""
    firsts = Counter(k.split(".")[0] for k in keys if k.split(".")[0] in PREFIXES)
    if firsts:
        return PREFIXES[firsts.most_common(1)[0][0]]
    joined = "\n".join(f".{k}" for k in sorted(keys))
    for mark, family in FAMILY_MARKS:
        if mark in joined:
            return family
    return None


def _first(keys) -> str:
    keys = sorted(keys)
    more = f" and {len(keys) - SHOWN_KEYS} more" if len(keys) > SHOWN_KEYS else ""
    return ", ".join(keys[:SHOWN_KEYS]) + more


def _cause_of_missing(missing: list[str], file_keys, model_type: str, has_head: bool) -> str:
    family = guess_family(file_keys)
    if family and family != SAME_WEIGHTS.get(model_type, model_type) and len(missing) * 2 > len(file_keys):
        return (f"config.json says {model_type}, but the weights are {FAMILY_NAMES.get(family, family)}'s: "
                f"set model_type in config.json to \"{family}\"")
    if has_head and all(k.split(".")[0] in ("classifier", "pre_classifier", "score") or ".pooler." in f".{k}"
                        for k in missing):  # the head: the classifier (and the pooler that feeds it)
        return ("config.json's architectures names a sequence-classification model, but the weights have no "
                "trained classification head; remove \"architectures\" to open the encoder in attention-only mode")
    return "the weights file is incomplete, or its tensors were renamed"


def check_loading_info(info: dict, file_keys, weights_file: Path, model_type: str, has_head: bool) -> str:
    """Refuse a load whose report has missing or mismatched weights; returns a note on the extra weights ("").

    Args:
        info: ``transformers``' loading info (``missing_keys``, ``unexpected_keys``, ``mismatched_keys``).
        file_keys: the tensor names in the weights (from the safetensors header).
        weights_file: the weights file, for the message.
        model_type: the config's ``model_type``; has_head: whether a classification head was built.

    Raises:
        ValueError: one paragraph naming ``weights_file``, the first keys and the likely cause.
    """
    mismatched = sorted(info.get("mismatched_keys") or (), key=lambda m: m[0])
    if mismatched:
        key, in_file, expected = mismatched[0]
        hint = ("vocab_size in config.json does not match the embedding rows" if "word_embeddings" in key else
                "max_position_embeddings in config.json does not match the position table"
                if "position_embeddings" in key else
                "the number of classes (id2label) does not match the classifier" if "classifier" in key else
                "config.json's sizes do not match the weights")
        raise ValueError(f"{weights_file}: {len(mismatched)} weight(s) have another shape than config.json "
                         f"describes, first {key}: {tuple(in_file)} in the file, {tuple(expected)} expected; {hint}")
    missing = sorted(info.get("missing_keys") or ())
    if missing:
        cause = _cause_of_missing(missing, file_keys, model_type, has_head)
        raise ValueError(f"{weights_file}: {len(missing)} weight(s) the model needs are missing ({_first(missing)}); "
                         f"{cause}. Opening it would explain random numbers, so it was not opened")
    unexpected = sorted(k for k in info.get("unexpected_keys") or () if has_head or ".pooler." not in f".{k}")
    if not unexpected:
        return ""
    return f"{len(unexpected)} extra weight(s) in the folder not used ({_first(unexpected)})"


NUMPY_DTYPES = (torch.float32, torch.float64, torch.float16)
"""The dtypes :func:`_finite` reads through NumPy (bfloat16 has no NumPy type: torch reads it)."""


def _finite(tensor: torch.Tensor) -> bool:
    """Whether every value is finite: its min and max (NaN propagates into both, infinity is one of them).

    A CPU tensor of a NumPy dtype is read through NumPy without a copy: single-threaded, so none of torch's
    parallel regions, each of which waited for a scheduler slice on a loaded 2-core machine (the 101 tensors of
    all-MiniLM-L6-v2: 0.12-0.30 s with ``torch.aminmax``, 0.04-0.06 s this way, the check timed alone under load
    4; docs/performance.md). Other tensors: one ``torch.aminmax`` pass."""
    t = tensor.detach()
    if t.device.type == "cpu" and t.dtype in NUMPY_DTYPES:
        values = t.numpy()
        return bool(np.isfinite(values.min())) and bool(np.isfinite(values.max()))
    low, high = torch.aminmax(t)
    return bool(torch.isfinite(low)) and bool(torch.isfinite(high))


def check_finite(model: torch.nn.Module, weights_file: Path) -> None:
    """Refuse a model with a NaN or infinite weight or buffer.

    Raises:
        ValueError: naming ``weights_file`` and the first such tensor.
    """
    for name, tensor in list(model.named_parameters()) + list(model.named_buffers()):
        if tensor.is_floating_point() and tensor.numel() and not _finite(tensor):
            raise ValueError(f"{weights_file}: the tensor {name} holds NaN or infinite values; the weights are "
                             "damaged (or were saved from a diverged training run), so the model was not opened")


def check_probe(model, encoder, vocab_rows: int, model_dir: Path) -> None:
    """Run :data:`PROBE_TEXT` through ``model`` (an :class:`~.backend.HFEncoder`); refuse token ids beyond the
    embedding table and logits or attention maps that are not finite.

    Raises:
        ValueError: naming the folder's tokenizer or weights.
    """
    ids = encoder.encode(PROBE_TEXT).ids
    if int(ids.max()) >= vocab_rows or int(ids.min()) < 0:
        raise ValueError(f"{model_dir / 'tokenizer.json'}: the tokenizer gives token id {int(ids.max())}, but the "
                         f"embedding table has {vocab_rows} rows; the tokenizer does not belong to these weights")
    x = torch.as_tensor(ids, dtype=torch.long, device=next(model.parameters()).device)[None]
    with torch.no_grad():
        logits, attn = model(x, need_weights=True)
    if not (bool(torch.isfinite(logits).all()) and bool(torch.isfinite(attn).all())):
        raise ValueError(f"{model_dir}: the model's output on a probe sentence is not finite (NaN or infinity); "
                         "its weights or config.json (e.g. layer_norm_eps) are damaged, so it was not opened")
