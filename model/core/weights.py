"""Saving and loading a model folder: ``model.safetensors`` + ``config.json`` + ``tokenizer.json``.

Nothing here unpickles: weights are safetensors, everything else is JSON.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from model.files.atomic import atomic_path

from .config import EncoderConfig
from .encoder import TransformerClassifier

WEIGHTS_FILE = "model.safetensors"
CONFIG_FILE = "config.json"
TOKENIZER_FILE = "tokenizer.json"
METRICS_FILE = "metrics.json"


def save_state(tensors: dict[str, torch.Tensor], path: str | Path, metadata: dict | None = None) -> None:
    """Save named tensors as safetensors, atomically (temp file + rename).

    Args:
        tensors: name -> tensor; tensors are made contiguous CPU copies.
        path: destination ``.safetensors`` file.
        metadata: optional JSON-serialisable dict stored in the header under "json".
    """
    clean = {k: v.detach().to("cpu").contiguous() for k, v in tensors.items()}
    with atomic_path(path) as tmp:
        save_file(clean, tmp, metadata={"json": json.dumps(metadata)} if metadata is not None else None)


def load_state(path: str | Path) -> dict[str, torch.Tensor]:
    """Load a safetensors file onto the CPU.

    Raises:
        FileNotFoundError: if the file is missing.
        ValueError: if it is not a valid safetensors file (the message names it).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"weights not found: {path}")
    try:
        return load_file(str(path), device="cpu")
    except (SafetensorError, OSError, ValueError) as exc:
        raise ValueError(f"corrupt or unreadable weights file {path}: {exc}") from exc


def save_model(model: TransformerClassifier, out_dir: str | Path) -> None:
    """Write ``model.safetensors`` and ``config.json`` for ``model`` into ``out_dir`` (created)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    save_state(model.state_dict(), out_dir / WEIGHTS_FILE)
    model.config.to_json(out_dir / CONFIG_FILE)


def load_model(model_dir: str | Path, device: str | torch.device = "cpu") -> TransformerClassifier:
    """Build the model from ``config.json`` and fill it from ``model.safetensors``.

    Returns:
        The model in eval mode on ``device``.

    Raises:
        FileNotFoundError: a file is missing (named in the message).
        ValueError: a file is corrupt, or the weights do not match the config
            (missing/unexpected tensors or wrong shapes), naming the file.
    """
    model_dir = Path(model_dir)
    config = EncoderConfig.from_json(model_dir / CONFIG_FILE)
    state = load_state(model_dir / WEIGHTS_FILE)
    model = TransformerClassifier(config)
    expected = model.state_dict()
    missing = sorted(set(expected) - set(state))
    unexpected = sorted(set(state) - set(expected))
    wrong = sorted(k for k in set(expected) & set(state) if expected[k].shape != state[k].shape)
    if missing or unexpected or wrong:
        parts = []
        if missing:
            parts.append(f"missing {missing[:5]}")
        if unexpected:
            parts.append(f"unexpected {unexpected[:5]}")
        if wrong:
            parts.append(
                "wrong shapes " + ", ".join(f"{k}: {tuple(state[k].shape)} vs {tuple(expected[k].shape)}" for k in wrong[:5])
            )
        raise ValueError(f"weights {model_dir / WEIGHTS_FILE} do not match {model_dir / CONFIG_FILE}: " + "; ".join(parts))
    model.load_state_dict(state)
    return model.to(device).eval()


def read_metrics(model_dir: str | Path) -> dict:
    """The folder's ``metrics.json`` as a dict; {} when it is absent, not a regular file, over 10 MB, not valid JSON
    or nested too deeply."""
    path = Path(model_dir) / METRICS_FILE
    if not path.is_file() or path.stat().st_size > 10 * 2**20:
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, RecursionError, OSError):
        return {}
    return data if isinstance(data, dict) else {}
