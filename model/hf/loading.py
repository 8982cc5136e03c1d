"""Open a local Hugging Face encoder folder, offline and safely, for :meth:`model.Predictor.from_pretrained`.

A folder opens when it has ``config.json`` with a supported ``model_type`` (:data:`~.backend.FAMILY_NAMES`),
``*.safetensors`` weights and a fast tokenizer (``tokenizer.json``). It is refused, with a message that says
why, when:

* its weights are only a pickled ``pytorch_model.bin`` (nothing is ever unpickled: ``use_safetensors=True``);
* its config asks for remote code (``auto_map``; ``trust_remote_code`` stays False);
* the architecture is not an encoder we support (GPT-2, T5, BART, Llama, ...: decoders and seq2seq models);
* ``config.json`` or the tokenizer is corrupt, or a file is missing, or a file is a pipe or a device;
* ``config.json`` has a field of the wrong type or range, or sizes the weights or the machine's RAM cannot hold
  (:mod:`.config_checks`, before anything is built);
* a weight is missing or of another shape, or a weight or the output on a probe text is not finite
  (:mod:`.strict`: strict loading; extra weights such as an MLM head are allowed and noted).

Nothing is downloaded (``local_files_only=True``). ``transformers`` is the optional extra ``hf``.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import stat
import threading
from pathlib import Path

import torch

from ..core.tokenizer_check import check_tokenizer_file
from ..core.weights import read_metrics
from .backend import FAMILY_NAMES, HFEncoder, HFModelSummary, position_offset, positional_kind
from .config_checks import check_config_fields, check_sizes, read_json_file, read_weights_header
from .encoding import HFTextEncoder, encoder_for
from .strict import check_finite, check_loading_info, check_probe

UNSUPPORTED_KINDS = {
    "gpt2": "a decoder-only (causal) language model", "gpt_neo": "a decoder-only model", "gptj": "a decoder-only model",
    "llama": "a decoder-only model", "mistral": "a decoder-only model", "qwen2": "a decoder-only model",
    "opt": "a decoder-only model", "t5": "an encoder-decoder (seq2seq) model", "mt5": "an encoder-decoder model",
    "bart": "an encoder-decoder (seq2seq) model", "mbart": "an encoder-decoder model", "pegasus": "a seq2seq model",
}
MAX_TOKENS = 512  # the longest input the app analyses, special tokens included
SHARED_MODULES = (
    "transformers.modeling_utils", "transformers.modeling_layers", "transformers.tokenization_utils_fast",
)
"""What every folder imports besides ``transformers`` itself: most of the first folder's opening time (see
:func:`warm_up`)."""

_import_lock = threading.Lock()  # one thread imports transformers at a time (see warm_up)
_warm = False


def read_hf_config(model_dir: Path) -> dict | None:
    """The parsed ``config.json`` when it is a Hugging Face config (has ``model_type``), else None.

    Raises:
        ValueError: when ``config.json`` exists but is not a JSON object (corrupt, too large, nested too deeply,
            not a regular file); the message names the file.
    """
    path = model_dir / "config.json"
    if not path.exists():
        return None
    data = read_json_file(path)
    if not isinstance(data, dict):
        raise ValueError(f"corrupt model config {path}: expected a JSON object")  # noqa: TRY004
    if "model_type" not in data and "architectures" in data:
        raise ValueError(f"{path}: a Hugging Face config (it names architectures) without a model_type; add the "
                         "model_type field (e.g. \"bert\")")
    return data if "model_type" in data else None


def is_hf_folder(model_dir: str | Path) -> bool:
    """True when ``model_dir/config.json`` is a Hugging Face config (it names a ``model_type``).

    Raises:
        ValueError: for a corrupt ``config.json``.
    """
    return read_hf_config(Path(model_dir)) is not None


def check_hf_folder(model_dir: Path) -> dict:
    """Validate a Hugging Face folder before anything is loaded; returns its config dict.

    Raises:
        FileNotFoundError: no ``config.json``, no weights, or no ``tokenizer.json`` (named).
        ValueError: corrupt config, remote code, an unsupported architecture or pickled-only weights.
    """
    cfg = read_hf_config(model_dir)
    if cfg is None:
        raise FileNotFoundError(f"{model_dir}: no Hugging Face config.json (with a model_type)")
    if cfg.get("auto_map"):
        raise ValueError(f"{model_dir}: the model needs its own Python code (auto_map in config.json); "
                         "Attention Explorer never runs code from a model folder (trust_remote_code stays off)")
    mt = cfg["model_type"]
    if not isinstance(mt, str):
        raise ValueError(f"{model_dir / 'config.json'}: the field model_type must be a string, not {mt!r}")
    if mt not in FAMILY_NAMES:
        kind = UNSUPPORTED_KINDS.get(mt, "not a supported encoder")
        raise ValueError(f"{model_dir}: unsupported architecture '{mt}' ({kind}); open an encoder: "
                         f"{', '.join(sorted(set(FAMILY_NAMES.values())))}")
    if not list(model_dir.glob("*.safetensors")):
        if list(model_dir.glob("*.bin")) or list(model_dir.glob("*.pt*")):
            raise ValueError(f"{model_dir}: the weights are a pickled PyTorch checkpoint (pytorch_model.bin) only; "
                             "Attention Explorer loads safetensors only and never unpickles files. Convert it, e.g. "
                             "model.save_pretrained(folder, safe_serialization=True) in a trusted environment")
        raise FileNotFoundError(f"{model_dir}: no weights (*.safetensors)")
    if not (model_dir / "tokenizer.json").is_file():
        raise FileNotFoundError(f"{model_dir}: no fast tokenizer (tokenizer.json)")
    check_config_fields(cfg, model_dir / "config.json")
    return cfg


def warm_up() -> bool:
    """Import ``transformers`` and :data:`SHARED_MODULES` now, once per process: about 2-4 s on a 2-core CPU, most
    of the time it takes to open the first folder (the weights of a 6 x 12 MiniLM load in ~0.1 s), so a
    background thread can do it ahead while the user picks a folder.

    Thread-safe: one thread imports at a time (concurrent imports of a package with circular imports can see
    half-initialised modules) and :func:`load_hf_folder` calls it first, so a load started meanwhile waits for
    the import in progress instead of racing it. Returns False when ``transformers`` is not installed.
    """
    global _warm
    with _import_lock:
        if _warm:
            return True
        with gc_paused():
            try:
                import transformers  # noqa: F401
                from transformers import (  # noqa: F401 - imported for their cost, now
                    AutoConfig, AutoModel, AutoModelForSequenceClassification, AutoTokenizer)
            except ImportError:
                return False
            for name in SHARED_MODULES:  # absent from some versions: then they are not needed
                with contextlib.suppress(ImportError):
                    importlib.import_module(name)
        _warm = True
    return True


@contextlib.contextmanager
def gc_paused():
    """Python's cyclic garbage collector off for the block (back on after it, if it was on before).

    Importing ``transformers`` creates objects by the hundred thousand and set off ~536 collections, each one
    scanning what the import had built so far: about a fifth of the import's CPU time in the app (4.1-5.1 s with
    them, 3.2-3.4 s without, three runs each; docs/performance.md). Nothing is leaked: the import's objects are
    module state, and the next collection sees any cycle left.
    """
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def is_warm() -> bool:
    """True once :func:`warm_up` has imported ``transformers`` (opening a folder no longer pays for it)."""
    return _warm


def _summary(hf_config, tok, has_head: bool) -> HFModelSummary:
    mt = hf_config.model_type
    pad_id = hf_config.pad_token_id if hf_config.pad_token_id is not None else (tok.pad_token_id or 0)
    max_len = hf_config.max_position_embeddings - position_offset(mt, pad_id)
    if 1 < (tok.model_max_length or 0) < max_len:
        max_len = tok.model_max_length
    labels = tuple(str(hf_config.id2label[i]) for i in range(hf_config.num_labels)) if has_head else ()
    return HFModelSummary(
        family=FAMILY_NAMES[mt], model_type=mt, n_layers=hf_config.num_hidden_layers,
        n_heads=hf_config.num_attention_heads, d_model=hf_config.hidden_size, max_len=min(max_len, MAX_TOKENS),
        vocab_size=hf_config.vocab_size, pad_id=int(pad_id), cls_id=0, pooling="cls", labels=labels,
        pe_kind=positional_kind(hf_config), has_head=has_head, problem_type=getattr(hf_config, "problem_type", None),
        token_types=int(getattr(hf_config, "type_vocab_size", 0) or 0) >= 2
        and "token_type_ids" in (getattr(tok, "model_input_names", None) or ()),
    )


def _check_room(max_len: int, specials: int, tok, model_dir: Path) -> None:
    """Refuse a maximum length that leaves no token for text between the special tokens, naming the file that set
    it: ``tokenizer_config.json`` (``model_max_length``) when it is below the model's positions, else
    ``config.json`` (``max_position_embeddings``)."""
    if max_len - specials >= 1:
        return
    if 1 < (tok.model_max_length or 0) == max_len:
        where = f"{model_dir / 'tokenizer_config.json'}: model_max_length is {max_len}"
    else:
        where = f"{model_dir / 'config.json'}: max_position_embeddings gives {max_len} positions"
    raise ValueError(f"{where}, which leaves no room for text between the {specials} special tokens")


def one_paragraph(exc: BaseException, limit: int = 300) -> str:
    """An exception from ``transformers`` or ``tokenizers`` as one short paragraph: its lines joined, the lines that
    point at a console report the user never sees ("look at the above report") left out, cut at ``limit``."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip() and "above" not in ln.lower()]
    text = " ".join(lines) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _check_special_files(model_dir: Path) -> None:
    """Refuse a folder holding a FIFO, socket or device (reading one would block or never end)."""
    for entry in os.scandir(model_dir):
        try:
            mode = os.stat(entry.path).st_mode
        except OSError as exc:
            raise ValueError(f"{entry.path}: cannot be read ({exc.strerror or exc})") from exc
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            raise ValueError(f"{entry.path} is not a regular file (a pipe, socket or device); "
                             "the folder was not opened")


def _load_config(model_dir: Path, safe: dict):
    from transformers import AutoConfig
    from transformers.activations import ACT2FN

    try:
        hf_config = AutoConfig.from_pretrained(model_dir, **safe)
    except Exception as exc:
        raise ValueError(f"{model_dir / 'config.json'}: not a usable model config: {one_paragraph(exc)}") from exc
    field = "activation" if hf_config.model_type == "distilbert" else "hidden_act"
    act = getattr(hf_config, field, "gelu")
    if isinstance(act, str) and act not in ACT2FN:
        raise ValueError(f"{model_dir / 'config.json'}: the field {field} names an unknown activation {act[:40]!r}; "
                         f"known ones include gelu, relu, silu, gelu_new")
    return hf_config


TOKENIZER_SIDE_FILES = ("tokenizer_config.json", "special_tokens_map.json", "added_tokens.json")
"""The tokenizer's small JSON files, checked (regular file, size, valid JSON object, depth) before loading."""


def _load_tokenizer(model_dir: Path, safe: dict):
    from transformers import AutoTokenizer

    for name in TOKENIZER_SIDE_FILES:
        path = model_dir / name
        if path.exists() and not isinstance(read_json_file(path, what="tokenizer file"), dict):
            raise ValueError(f"corrupt tokenizer file {path}: expected a JSON object")
    try:
        tok = AutoTokenizer.from_pretrained(model_dir, **safe)
        probe = encoder_for(tok, 8)
    except Exception as exc:
        raise ValueError(f"{model_dir / 'tokenizer.json'}: corrupt or unsupported tokenizer: "
                         f"{one_paragraph(exc)}") from exc
    return tok, probe


def _no_pooler(hf_config) -> dict:
    """``{"add_pooling_layer": False}`` where the family's bare model has a pooler (BERT, RoBERTa, ALBERT, ...):
    attention-only mode never uses it, so it is not built (nothing random is left in the model)."""
    import inspect

    from transformers.models.auto.modeling_auto import MODEL_MAPPING

    try:
        params = inspect.signature(MODEL_MAPPING[type(hf_config)].__init__).parameters
    except (KeyError, TypeError, ValueError):
        return {}
    return {"add_pooling_layer": False} if "add_pooling_layer" in params else {}


def _load_weights(model_dir: Path, hf_config, has_head: bool, shapes: dict, safe: dict):
    """The ``transformers`` model, loaded strictly (see :mod:`.strict`); returns ``(model, note on extra weights)``."""
    from transformers import AutoModel, AutoModelForSequenceClassification

    cls = AutoModelForSequenceClassification if has_head else AutoModel
    extra = {} if has_head else _no_pooler(hf_config)
    weights_file = model_dir / "model.safetensors"
    if not weights_file.is_file():
        weights_file = next(iter(sorted(model_dir.glob("*.safetensors"))), weights_file)
    try:
        hf_model, info = cls.from_pretrained(
            model_dir, config=hf_config, use_safetensors=True, dtype=torch.float32, attn_implementation="eager",
            output_loading_info=True, ignore_mismatched_sizes=True, **extra, **safe)
    except Exception as exc:
        raise ValueError(f"{weights_file}: the weights could not be loaded: {one_paragraph(exc)}") from exc
    note = check_loading_info(info, shapes, weights_file, hf_config.model_type, has_head)
    check_finite(hf_model, weights_file)
    return hf_model, note


def load_hf_folder(model_dir: str | Path, device: torch.device) -> tuple[HFEncoder, HFTextEncoder, dict]:
    """Load a Hugging Face encoder folder for :class:`model.Predictor`, strictly.

    Before anything is built: the folder (:func:`check_hf_folder`), the fields of ``config.json`` and its sizes
    against the weights' header and the machine's RAM (:mod:`.config_checks`). Then the tokenizer and the weights;
    a weight missing or of another shape, a NaN/infinite weight, or a non-finite output on a probe text refuses
    the folder (:mod:`.strict`). Extra weights (e.g. an MLM head) are allowed: ``model.config.load_note`` says so.

    Args:
        model_dir: the folder (see the module docstring).
        device: where the weights go.

    Returns:
        ``(model, encoder, metrics)``: the :class:`~.backend.HFEncoder` (eval mode, float32, eager attention),
        the :class:`~.encoding.HFTextEncoder` and ``metrics.json`` (or {}).

    Raises:
        ImportError: ``transformers`` is not installed (``pip install 'attention-explorer[hf]'``).
        FileNotFoundError, ValueError: see :func:`check_hf_folder`; also a corrupt tokenizer, weights that do not
            match the config, or a model whose weights or output are not finite. One paragraph naming the file.
    """
    model_dir = Path(model_dir)
    raw = check_hf_folder(model_dir)
    _check_special_files(model_dir)
    if not warm_up():
        raise ImportError("opening Hugging Face models needs transformers: pip install 'attention-explorer[hf]'")
    import transformers

    transformers.utils.logging.disable_progress_bar()
    safe = {"local_files_only": True, "trust_remote_code": False}
    shapes = read_weights_header(model_dir)
    hf_config = _load_config(model_dir, safe)
    check_sizes(hf_config, shapes, model_dir / "config.json")
    check_tokenizer_file(model_dir / "tokenizer.json", hf_config.vocab_size)  # before the Rust library sees it
    tok, encoder_probe = _load_tokenizer(model_dir, safe)
    top_id = max([len(tok) - 1, *tok.get_vocab().values()])
    if top_id >= hf_config.vocab_size:
        raise ValueError(f"{model_dir / 'tokenizer.json'}: the tokenizer has token ids up to {top_id}"
                         f" but the model's embedding table only {hf_config.vocab_size} rows (vocab_size in "
                         "config.json); the tokenizer does not belong to these weights")
    has_head = any(a.endswith("ForSequenceClassification") for a in raw.get("architectures") or [])
    hf_model, note = _load_weights(model_dir, hf_config, has_head, shapes, safe)
    summary = _summary(hf_config, tok, has_head)
    summary = HFModelSummary(**{**summary.__dict__, "cls_id": encoder_probe.cls_id, "load_note": note})
    _check_room(summary.max_len, sum(encoder_probe.specials), tok, model_dir)
    model = HFEncoder(hf_model.to(device).eval(), summary)
    encoder = encoder_for(tok, summary.max_len)
    check_probe(model, encoder, hf_model.get_input_embeddings().weight.shape[0], model_dir)
    return model, encoder, read_metrics(model_dir)
