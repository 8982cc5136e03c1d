"""The checks of a Hugging Face ``config.json`` made before a model is built (:mod:`model.hf.loading` runs them).

Two passes, each raising ``ValueError`` with one paragraph that names ``config.json`` and the field:

* :func:`check_config_fields` on the raw JSON object, before ``transformers`` reads it: the type and range of
  every size (``hidden_size``/``dim``, ``num_hidden_layers``/``n_layers``, ``num_attention_heads``/``n_heads``,
  ``intermediate_size``/``hidden_dim``, ``vocab_size``, ``max_position_embeddings``, ...), the dropout
  probabilities (finite, in [0, 1]), ``layer_norm_eps``, the token ids, ``architectures`` (a list of strings) and
  ``id2label`` / ``label2id`` (keys 0..n-1);
* :func:`check_sizes` on the resolved ``transformers`` config and the weights' header (:func:`read_weights_header`,
  which reads names and shapes only): heads divide the width, the layer count equals the layers the weights hold,
  and the estimated parameter memory (float32) fits the machine's RAM and is not far beyond what the weights hold,
  so an absurd config (``num_hidden_layers: 1000000``) is refused in milliseconds instead of allocating gigabytes.

:func:`read_json_file` is the one careful JSON reader (regular files only, a size limit, deep nesting refused).
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

from model.files.textio import read_regular_bytes

MAX_CONFIG_BYTES = 10 * 2**20
"""The largest ``config.json`` read (real ones are a few kB)."""

POSITIVE_INTS = (
    "hidden_size", "dim", "num_hidden_layers", "n_layers", "num_attention_heads", "n_heads", "intermediate_size",
    "hidden_dim", "vocab_size", "max_position_embeddings", "embedding_size", "num_hidden_groups", "inner_group_num",
    "num_labels",
)
NON_NEGATIVE_INTS = ("type_vocab_size",)
WHOLE_NUMBERS = ("max_relative_positions", "position_buckets")
BOOLEANS = ("relative_attention", "position_biased_input", "sinusoidal_pos_embds", "tie_word_embeddings",
            "is_decoder", "add_cross_attention")
TOKEN_IDS = ("pad_token_id", "bos_token_id", "eos_token_id", "sep_token_id", "cls_token_id")
PROBABILITIES = (
    "hidden_dropout_prob", "attention_probs_dropout_prob", "dropout", "attention_dropout", "seq_classif_dropout",
    "qa_dropout", "classifier_dropout", "classifier_dropout_prob", "pooler_dropout", "summary_last_dropout",
    "activation_dropout",
)
STRINGS = ("hidden_act", "activation", "position_embedding_type", "model_type")
LAYER_KEY = re.compile(r"(?:^|\.)layer\.(\d+)\.")


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _describe(value) -> str:
    text = json.dumps(value, allow_nan=True) if not isinstance(value, str) else repr(value)
    text = text if len(text) <= 40 else text[:37] + "..."
    kind = {"str": "a string", "int": "a whole number", "float": "a number", "bool": "true/false", "list": "a list",
            "dict": "an object", "NoneType": "null"}.get(type(value).__name__, type(value).__name__)
    return f"{text} ({kind})"


def read_json_file(path: Path, max_bytes: int = MAX_CONFIG_BYTES, what: str = "model config"):
    """Parse a small JSON file safely: only a regular file, at most ``max_bytes``, nesting within Python's limit.

    Returns:
        the parsed value (any JSON type).

    Raises:
        ValueError: not a regular file (a folder, a FIFO, a device), too large, unreadable, not UTF-8 JSON, or
            nested too deeply; the message names ``path``.
    """
    try:
        raw = read_regular_bytes(path, max_bytes)
    except ValueError as exc:
        raise ValueError(f"{what} {path}: {exc}") from exc
    try:
        return json.loads(raw.decode("utf-8"))
    except RecursionError as exc:
        raise ValueError(f"corrupt {what} {path}: its JSON is nested too deeply to read") from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"corrupt {what} {path}: {exc}") from exc


def check_config_fields(cfg: dict, path: Path) -> None:
    """Check the types and ranges of the fields of a raw ``config.json`` object (see the module docstring).

    Raises:
        ValueError: naming ``path`` and the first bad field.
    """
    def bad(name: str, expected: str) -> ValueError:
        return ValueError(f"{path}: the field {name} must be {expected}, not {_describe(cfg[name])}; "
                          "config.json is damaged or was edited by hand")

    for name in STRINGS:
        if name in cfg and cfg[name] is not None and not isinstance(cfg[name], str):
            raise bad(name, "a string")
    for name in POSITIVE_INTS:
        if name in cfg and not (_is_int(cfg[name]) and cfg[name] >= 1):
            raise bad(name, "a whole number of at least 1")
    for name in NON_NEGATIVE_INTS:
        if name in cfg and not (_is_int(cfg[name]) and cfg[name] >= 0):
            raise bad(name, "a whole number of at least 0")
    for name in WHOLE_NUMBERS:
        if name in cfg and not _is_int(cfg[name]):
            raise bad(name, "a whole number")
    for name in BOOLEANS:
        if name in cfg and not isinstance(cfg[name], bool):
            raise bad(name, "true or false")
    if cfg.get("is_decoder") or cfg.get("add_cross_attention"):
        raise ValueError(f"{path}: is_decoder / add_cross_attention make the model a decoder (causal attention); "
                         "Attention Explorer explains encoders, so set them to false")
    for name in TOKEN_IDS:
        if cfg.get(name) is not None and not (_is_int(cfg[name]) and cfg[name] >= 0):
            raise bad(name, "null or a token id (a whole number of at least 0)")
    for name in PROBABILITIES:
        value = cfg.get(name)
        if value is not None and not (isinstance(value, int | float) and not isinstance(value, bool)
                                      and math.isfinite(value) and 0.0 <= value <= 1.0):
            raise bad(name, "a probability between 0 and 1")
    eps = cfg.get("layer_norm_eps", 1e-12)
    if not (isinstance(eps, int | float) and not isinstance(eps, bool) and math.isfinite(eps) and eps > 0):
        raise bad("layer_norm_eps", "a small positive number")
    archs = cfg.get("architectures")
    if archs is not None and not (isinstance(archs, list) and all(isinstance(a, str) for a in archs)):
        raise bad("architectures", "a list of class names (strings)")
    _check_labels(cfg, path, bad)


def _check_labels(cfg: dict, path: Path, bad) -> None:
    id2label = cfg.get("id2label")
    if id2label is None:
        return
    if not isinstance(id2label, dict) or not id2label:
        raise bad("id2label", "an object {\"0\": label, \"1\": label, ...}")
    keys = sorted(str(k) for k in id2label)
    if set(keys) != {str(i) for i in range(len(keys))}:
        raise ValueError(f"{path}: the keys of id2label must be the class numbers 0..{len(keys) - 1}, not "
                         f"{', '.join(keys[:5])}{'...' if len(keys) > 5 else ''}; config.json is damaged")
    if not all(isinstance(v, str) for v in id2label.values()):
        raise bad("id2label", "an object whose labels are strings")
    n = cfg.get("num_labels")
    if n is not None and n != len(keys):
        raise ValueError(f"{path}: num_labels is {n} but id2label names {len(keys)} classes")
    label2id = cfg.get("label2id")
    if label2id is not None and not (isinstance(label2id, dict) and all(_is_int(v) for v in label2id.values())):
        raise bad("label2id", "an object {label: class number}")


def read_weights_header(model_dir: Path) -> dict[str, tuple[int, ...]]:
    """The tensor names and shapes of every ``*.safetensors`` file in ``model_dir`` (headers only: no tensor is read).

    Raises:
        ValueError: a file that is not a readable safetensors file, or a weight or bias stored as integers or
            booleans (a damaged file: weights are floating point); the message names the file and the tensor.
    """
    from safetensors import safe_open

    shapes: dict[str, tuple[int, ...]] = {}
    for file in sorted(model_dir.glob("*.safetensors")):
        dtypes: dict[str, str] = {}
        if not file.is_file():
            raise ValueError(f"{file} is not a regular file")
        try:
            with safe_open(str(file), framework="pt") as f:
                for key in f.keys():  # noqa: SIM118 - safe_open has keys(), no __iter__
                    tensor = f.get_slice(key)
                    shapes[key] = tuple(tensor.get_shape())
                    dtypes[key] = str(tensor.get_dtype())
        except Exception as exc:  # SafetensorError, OSError, ...: one message, naming the file
            raise ValueError(f"{file} is damaged or not a safetensors file: {str(exc).splitlines()[0]}") from exc
        for key, dtype in dtypes.items():
            if key.endswith((".weight", ".bias")) and not dtype.startswith(("F", "BF")):
                raise ValueError(f"{file}: the tensor {key} is stored as {dtype} (integers), not floating point; "
                                 "the weights file is damaged")
    return shapes


def estimated_parameters(hf_config) -> int:
    """A rough count of the parameters ``hf_config`` describes: embeddings, L encoder layers (Q, K, V, output and
    the feed-forward block) and a classification head; ALBERT counts its shared layer groups once."""
    hidden = int(hf_config.hidden_size)
    emb = int(getattr(hf_config, "embedding_size", None) or hidden)
    inter = int(getattr(hf_config, "intermediate_size", None) or getattr(hf_config, "hidden_dim", None) or 4 * hidden)
    layers = int(hf_config.num_hidden_layers)
    if hf_config.model_type == "albert":
        layers = int(getattr(hf_config, "num_hidden_groups", 1)) * int(getattr(hf_config, "inner_group_num", 1))
    positions = int(getattr(hf_config, "max_position_embeddings", 0) or 0)
    types = int(getattr(hf_config, "type_vocab_size", 0) or 0)
    per_layer = 4 * hidden * hidden + 2 * hidden * inter + 9 * hidden + inter
    return int(hf_config.vocab_size + positions + types) * emb + layers * per_layer + hidden * (hidden + 2)


def machine_ram_bytes() -> int | None:
    """The machine's physical memory in bytes, or None where the platform does not say."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def file_layers(shapes: dict[str, tuple[int, ...]]) -> int:
    """How many encoder layers the weights hold (1 + the highest ``layer.N.`` index; 0 when none is named)."""
    indices = [int(m.group(1)) for key in shapes if (m := LAYER_KEY.search(key))]
    return max(indices) + 1 if indices else 0


def embedding_rows(shapes: dict[str, tuple[int, ...]]) -> int | None:
    """The rows of the word-embedding table in the weights' header (``...word_embeddings.weight``), or None."""
    rows = [s[0] for key, s in shapes.items() if key.endswith("word_embeddings.weight") and len(s) == 2]
    return rows[0] if len(rows) == 1 else None


def check_sizes(hf_config, shapes: dict[str, tuple[int, ...]], path: Path) -> None:
    """Check the resolved sizes of ``hf_config`` against each other, the weights' header and the machine's RAM.

    Raises:
        ValueError: heads that do not divide the width, a ``vocab_size`` other than the weights' embedding rows, a
            layer count the weights do not hold, or a model whose float32 parameters would not fit in RAM or far
            exceed the weights (the message names ``path``).
    """
    hidden, heads, layers = hf_config.hidden_size, hf_config.num_attention_heads, hf_config.num_hidden_layers
    rows = embedding_rows(shapes)
    if rows is not None and rows != hf_config.vocab_size:
        raise ValueError(f"{path}: vocab_size is {hf_config.vocab_size} but the weights' word-embedding table has "
                         f"{rows} rows (one per token id); config.json does not belong to these weights")
    if hidden % heads:
        raise ValueError(f"{path}: num_attention_heads ({heads}) does not divide hidden_size ({hidden}); each head "
                         "takes an equal slice of the hidden width, so config.json is damaged")
    n_file = file_layers(shapes)
    if hf_config.model_type != "albert" and n_file and n_file != layers:
        what = (f"the {layers - n_file} extra layers would be random" if layers > n_file
                else f"trained layers {layers}..{n_file - 1} would be dropped silently")
        raise ValueError(f"{path}: num_hidden_layers is {layers} but the weights hold {n_file} layers; {what}. "
                         "config.json does not belong to these weights")
    params = estimated_parameters(hf_config)
    ram = machine_ram_bytes()
    if ram is not None and 4 * params > ram:
        raise ValueError(f"{path}: the model it describes would need about {4 * params / 2**30:,.0f} GiB for its "
                         f"weights (float32), more than this machine's {ram / 2**30:,.0f} GiB of memory; check "
                         "num_hidden_layers, hidden_size, intermediate_size and vocab_size")
    held = sum(math.prod(s) for s in shapes.values())
    if params > 2 * held + 1_000_000:
        raise ValueError(f"{path}: it describes a model of about {params:,} parameters but the weights hold only "
                         f"{held:,}; check num_hidden_layers, hidden_size, intermediate_size and vocab_size")
