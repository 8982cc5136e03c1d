"""Loading a model folder for ``Predictor.from_pretrained``: our own folders (:mod:`model.core.weights`) and Hugging
Face ones (:mod:`model.hf.loading`), and the positional-encoding matrix of a loaded model. Private to
:mod:`model.predictor`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from model.core.paths import default_model_dir
from model.core.positional import sinusoidal_positional_encoding
from model.core.tokenizer import TextEncoder, load_tokenizer
from model.core.weights import TOKENIZER_FILE, load_model, read_metrics
from model.hf.backend import HFEncoder
from model.hf.loading import is_hf_folder, load_hf_folder
from model.records.info import PE_WORKED_EXAMPLE
from model.records.prediction import NoPositionalMatrix
from model.text.inputs import resolve_device


def load_folder(path: str | Path | None, device: str | torch.device | None) -> tuple:
    """``(model, encoder, device, model_dir, metrics)`` of a model folder (default: the bundled ``resources/model``)
    on ``device`` (default: CUDA when available, else the CPU); errors as ``Predictor.from_pretrained`` says."""
    model_dir = Path(path) if path is not None else default_model_dir()
    if not model_dir.is_dir():
        raise FileNotFoundError(f"model folder not found: {model_dir}")
    dev = resolve_device(device)
    if is_hf_folder(model_dir):
        hf_model, hf_encoder, hf_metrics = load_hf_folder(model_dir, dev)
        return hf_model, hf_encoder, dev, model_dir, hf_metrics
    model = load_model(model_dir, dev)
    tokenizer = load_tokenizer(model_dir / TOKENIZER_FILE, rows=model.config.vocab_size)
    if tokenizer.get_vocab_size() != model.config.vocab_size:
        raise ValueError(f"{model_dir / TOKENIZER_FILE} has {tokenizer.get_vocab_size()} tokens but the model expects "
                         f"{model.config.vocab_size}")
    return model, TextEncoder(tokenizer, model.config.max_len), dev, model_dir, read_metrics(model_dir)


def positional_encoding(model, num_positions: int) -> np.ndarray | NoPositionalMatrix:
    """The positional-encoding matrix ``model`` adds for positions 0..P-1 (see ``Predictor.positional_encoding``):
    a Hugging Face model's own answer, else the bundled model's sinusoidal buffer, continued in closed form beyond it.

    Raises:
        ValueError: ``num_positions`` < 0 (or above a learned table's ``max_len``).
    """
    if isinstance(model, HFEncoder):
        return model.positional_matrix(num_positions)
    if num_positions < 0:
        raise ValueError(f"num_positions must be >= 0, got {num_positions}")
    buf = model.positional_encoding
    if num_positions <= buf.shape[0]:
        return buf[:num_positions].cpu().numpy().copy()
    return sinusoidal_positional_encoding(num_positions, model.config.d_model, model.config.pe_base).numpy()


def worked_positional_table() -> np.ndarray:
    """The worked positional-encoding table the model view explains (:data:`model.records.info.PE_WORKED_EXAMPLE`:
    positions x width and base), float32, from the closed form."""
    return sinusoidal_positional_encoding(*PE_WORKED_EXAMPLE).numpy()
