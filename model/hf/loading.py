"""Open a local Hugging Face encoder folder, offline and safely, for :meth:`model.Predictor.from_pretrained`.

A folder opens when it has ``config.json`` with a supported ``model_type`` (:data:`~.backend.FAMILY_NAMES`),
``*.safetensors`` weights and a fast tokenizer (``tokenizer.json``). It is refused, with a message that says
why, when:

* its weights are only a pickled ``pytorch_model.bin`` (nothing is ever unpickled: ``use_safetensors=True``);
* its config asks for remote code (``auto_map``; ``trust_remote_code`` stays False);
* the architecture is not an encoder we support (GPT-2, T5, BART, Llama, ...: decoders and seq2seq models);
* ``config.json`` or the tokenizer is corrupt, or a file is missing.

Nothing is downloaded (``local_files_only=True``). ``transformers`` is the optional extra ``hf``.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import threading
from pathlib import Path

import torch

from ..core.weights import read_metrics
from .backend import FAMILY_NAMES, HFEncoder, HFModelSummary, position_offset, positional_kind
from .encoding import HFTextEncoder, encoder_for

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
        ValueError: when ``config.json`` exists but is not a JSON object (corrupt); the message names the file.
    """
    path = model_dir / "config.json"
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"corrupt model config {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ValueError(f"corrupt model config {path}: expected a JSON object")  # noqa: TRY004
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
    mt = str(cfg["model_type"])
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
        pe_kind=positional_kind(hf_config), has_head=has_head,
    )


def load_hf_folder(model_dir: str | Path, device: torch.device) -> tuple[HFEncoder, HFTextEncoder, dict]:
    """Load a Hugging Face encoder folder for :class:`model.Predictor`.

    Args:
        model_dir: the folder (see the module docstring).
        device: where the weights go.

    Returns:
        ``(model, encoder, metrics)``: the :class:`~.backend.HFEncoder` (eval mode, float32, eager attention),
        the :class:`~.encoding.HFTextEncoder` and ``metrics.json`` (or {}).

    Raises:
        ImportError: ``transformers`` is not installed (``pip install 'attention-explorer[hf]'``).
        FileNotFoundError, ValueError: see :func:`check_hf_folder`; also a corrupt tokenizer or weights.
    """
    model_dir = Path(model_dir)
    raw = check_hf_folder(model_dir)
    if not warm_up():
        raise ImportError("opening Hugging Face models needs transformers: pip install 'attention-explorer[hf]'")
    import transformers
    from transformers import AutoConfig, AutoModel, AutoModelForSequenceClassification, AutoTokenizer
    transformers.utils.logging.disable_progress_bar()
    safe = {"local_files_only": True, "trust_remote_code": False}
    try:
        tok = AutoTokenizer.from_pretrained(model_dir, **safe)
        encoder_probe = encoder_for(tok, 8)
    except Exception as exc:
        raise ValueError(f"{model_dir}: corrupt or unsupported tokenizer: {exc}") from exc
    try:
        hf_config = AutoConfig.from_pretrained(model_dir, **safe)
    except Exception as exc:
        raise ValueError(f"corrupt model config {model_dir / 'config.json'}: {exc}") from exc
    has_head = any(a.endswith("ForSequenceClassification") for a in raw.get("architectures") or [])
    cls = AutoModelForSequenceClassification if has_head else AutoModel
    try:
        hf_model = cls.from_pretrained(model_dir, config=hf_config, use_safetensors=True, dtype=torch.float32,
                                       attn_implementation="eager", **safe)
    except Exception as exc:
        raise ValueError(f"{model_dir}: the weights could not be loaded: {exc}") from exc
    if len(tok) > hf_config.vocab_size:
        raise ValueError(f"{model_dir}: the tokenizer has {len(tok)} tokens but the model only {hf_config.vocab_size}")
    summary = _summary(hf_config, tok, has_head)
    summary = HFModelSummary(**{**summary.__dict__, "cls_id": encoder_probe.cls_id})
    model = HFEncoder(hf_model.to(device).eval(), summary)
    return model, encoder_for(tok, summary.max_len), read_metrics(model_dir)
