"""What a user interface needs to know about a loaded model: :class:`ModelInfo` (NumPy and plain types only).

Built by :meth:`model.Predictor.model_info` (in the GUI on the inference thread, right after loading); the GUI
thread and the views only ever see the immutable record: a frozen dataclass whose arrays are read-only. This
module never imports torch, not even lazily (the views may name :class:`ModelInfo`, and the import-linter contract
"views never import torch" follows every chain): the worked positional-encoding table is computed by the predictor
with the model's own function and handed in.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from model.records.prediction import freeze_arrays
from model.tasks.types import SINGLE_LABEL

PE_WORKED_EXAMPLE = (4, 4, 100.0)
"""(positions, d_model, base n) of the positional-encoding tutorial's worked table."""


@dataclass(frozen=True)
class ModelInfo:
    """What the views need to know about the loaded model (NumPy and plain types only; arrays read-only).

    Attributes:
        n_layers: L, encoder layers.
        n_heads: H, attention heads per layer.
        d_model: width of the residual stream.
        max_len: longest input in tokens, the classification token included.
        pe_base: base of the sinusoidal positional encoding (10000 in Vaswani et al. 2017, section 3.5).
        pooling: "mean" or "cls".
        labels: class names.
        device_name: e.g. "CPU" or "CUDA (NVIDIA H100)".
        model_dir: the folder the model was loaded from ("" if unknown).
        positional_encoding: float32 [max_len, d_model], exactly
            ``Predictor.positional_encoding(max_len)``; its first P rows are
            ``positional_encoding(P)``. None for a model that adds no positional matrix
            (relative positions, e.g. DeBERTa-v2/v3): ``pe_note`` says why.
        pe_worked_example: float32 [4, 4], the positional-encoding tutorial's worked table (d_model = 4,
            base n = 100, positions 0-3) computed by the app's own
            :func:`model.core.positional.sinusoidal_positional_encoding`.
        metrics: the model folder's ``metrics.json`` (may be empty; a copy, not shared with the predictor).
        model_card: the text of ``README.md`` in the model folder, or "".
        load_s: seconds it took to load the model.
        family: the architecture family, e.g. "BERT" (Hugging Face) or "Attention Explorer encoder".
        pe_kind: the positional-encoding kind, e.g. "sinusoidal" or "learned absolute (512 positions)".
        pe_note: why there is no positional matrix ("" when there is one).
        has_head: False for a bare encoder (attention-only mode: no labels, no probabilities).
        load_note: what loading noticed but allowed (e.g. extra weights not used), for the status bar, or "".
        precision: "fp32" or "bf16", what ``predict`` and ``score_many`` run in (:mod:`model.predictor.precision`).
        task: how the head's outputs are read (:data:`model.tasks.task.TASKS`: single-label, multi-label, regression).
        threshold: the multi-label decision threshold in (0, 1).
        task_source: ``"config"`` (from ``config.json``), ``"user"`` (overridden) or ``"bundled"``.
        reads_pairs: the model's tokenizer encodes sentence pairs (a second text with its own segment); False for
            the bundled model, which reads single texts.
    """

    n_layers: int
    n_heads: int
    d_model: int
    max_len: int
    pe_base: float
    pooling: str
    labels: tuple[str, ...]
    device_name: str
    model_dir: str
    positional_encoding: np.ndarray | None
    pe_worked_example: np.ndarray | None = None
    metrics: dict = field(default_factory=dict)
    model_card: str = ""
    load_s: float = 0.0
    family: str = "Attention Explorer encoder"
    pe_kind: str = "sinusoidal"
    pe_note: str = ""
    has_head: bool = True
    load_note: str = ""
    precision: str = "fp32"
    task: str = SINGLE_LABEL
    threshold: float = 0.5
    task_source: str = "config"
    reads_pairs: bool = False

    def __post_init__(self) -> None:
        freeze_arrays(self)

    def summary(self) -> str:
        """One line for the status bar: family, layers x heads, d_model, positional encoding, device, precision."""
        head = "" if self.has_head else ", attention only (no classification head)"
        return (f"{self.family}: {self.n_layers} layers \u00d7 {self.n_heads} heads, d_model {self.d_model}, "
                f"max {self.max_len} tokens, PE {self.pe_kind}{head} \u2014 {self.device_name}, {self.precision}")


def _model_card(model_dir: Path | None) -> str:
    """The text of ``README.md`` in ``model_dir``, or "" (no folder, no file, unreadable)."""
    if model_dir is None or not (model_dir / "README.md").is_file():
        return ""
    try:
        return (model_dir / "README.md").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def build_model_info(predictor: Any, load_s: float, pe_worked_example: np.ndarray) -> ModelInfo:
    """Summarise a loaded :class:`model.Predictor` as a :class:`ModelInfo` (see :meth:`model.Predictor.model_info`).

    Args:
        predictor: the loaded predictor (its ``config``, ``model_dir``, ``metrics``, ``device_name``,
            ``positional_encoding``, ``task`` and ``reads_pairs``).
        load_s: seconds it took to load the model (shown in the GUI).
        pe_worked_example: float32 [4, 4], the sinusoidal encoding of :data:`PE_WORKED_EXAMPLE`.
    """
    cfg = predictor.config
    model_dir = Path(predictor.model_dir) if predictor.model_dir is not None else None
    answer = predictor.positional_encoding(cfg.max_len)  # float32 [max_len, d] or a NoPositionalMatrix record
    note = getattr(answer, "explanation", "")
    pe = None if note else np.asarray(answer, dtype=np.float32)
    return ModelInfo(
        n_layers=cfg.n_layers,
        n_heads=cfg.n_heads,
        d_model=cfg.d_model,
        max_len=cfg.max_len,
        pe_base=float(cfg.pe_base),
        pooling=cfg.pooling,
        labels=tuple(cfg.labels),
        device_name=predictor.device_name,
        model_dir=str(model_dir) if model_dir is not None else "",
        positional_encoding=pe,
        pe_worked_example=np.asarray(pe_worked_example, dtype=np.float32),
        metrics=copy.deepcopy(dict(predictor.metrics or {})),
        model_card=_model_card(model_dir),
        load_s=load_s,
        family=getattr(cfg, "family", "Attention Explorer encoder"),
        pe_kind=getattr(cfg, "pe_kind", "sinusoidal"),
        pe_note=note,
        precision=getattr(predictor, "precision", "fp32"),
        has_head=len(cfg.labels) > 0,
        load_note=getattr(cfg, "load_note", ""),
        task=predictor.task.kind,
        threshold=predictor.task.threshold,
        task_source=predictor.task.source,
        reads_pairs=bool(predictor.reads_pairs),
    )


__all__ = ["PE_WORKED_EXAMPLE", "ModelInfo", "build_model_info"]
