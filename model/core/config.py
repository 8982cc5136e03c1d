"""The encoder's configuration: one dataclass, saved as ``config.json`` beside the weights."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path


@dataclass(frozen=True)
class EncoderConfig:
    """Hyper-parameters of :class:`model.core.encoder.TransformerClassifier`.

    Attributes:
        vocab_size: number of token ids (embedding rows).
        max_len: the longest input the model accepts, in tokens, the
            classification token included. Longer reviews are truncated
            (see :mod:`model.core.tokenizer`).
        d_model: width of every residual-stream vector ("Attention Is All You
            Need", section 3).
        n_heads: attention heads per layer; ``d_model % n_heads == 0``.
        n_layers: encoder layers (N in the paper).
        d_ff: inner width of the position-wise feed-forward block.
        dropout: dropout probability on embeddings, attention probabilities,
            sub-layer outputs and the classification head.
        pe_base: the base of the sinusoidal positional encoding (10000 in the
            paper, section 3.5).
        pad_id: token id of padding; padded keys get exactly zero attention.
        cls_id: token id of the classification token prepended to every input.
        pooling: ``"mean"`` (masked mean of the final hidden states) or
            ``"cls"`` (the final hidden state of the classification token).
        labels: class names, index-aligned with the logits.
        norm_first: pre-LayerNorm (True) or the paper's post-LayerNorm (False).
    """

    vocab_size: int = 16000
    max_len: int = 512
    d_model: int = 128
    n_heads: int = 4
    n_layers: int = 2
    d_ff: int = 512
    dropout: float = 0.1
    pe_base: float = 10000.0
    pad_id: int = 0
    cls_id: int = 2
    pooling: str = "mean"
    labels: tuple[str, ...] = field(default=("negative", "positive"))
    norm_first: bool = False

    def __post_init__(self) -> None:
        if self.d_model % self.n_heads != 0:
            raise ValueError(f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}")
        if self.d_model % 2 != 0:
            raise ValueError(f"d_model={self.d_model} must be even for the sinusoidal encoding")
        if self.pooling not in ("mean", "cls"):
            raise ValueError(f"pooling must be 'mean' or 'cls', not {self.pooling!r}")
        if len(self.labels) < 2:
            raise ValueError("a classifier needs at least two labels")
        object.__setattr__(self, "labels", tuple(self.labels))

    @property
    def num_classes(self) -> int:
        """Number of output classes C (the logits' last dimension)."""
        return len(self.labels)

    @property
    def d_head(self) -> int:
        """Width of one head's query/key/value vectors: ``d_model // n_heads``."""
        return self.d_model // self.n_heads

    def to_json(self, path: str | Path) -> None:
        """Write the config as pretty JSON to ``path`` (UTF-8), atomically (:mod:`model.files.atomic`)."""
        from model.files.atomic import atomic_write_bytes

        atomic_write_bytes(path, (json.dumps(asdict(self), indent=2) + "\n").encode("utf-8"))

    @classmethod
    def from_dict(cls, data: dict) -> EncoderConfig:
        """Build a config from a dict, rejecting unknown keys.

        Raises:
            ValueError: on unknown keys or invalid values.
        """
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown config keys: {sorted(unknown)}")
        return cls(**data)

    @classmethod
    def from_json(cls, path: str | Path) -> EncoderConfig:
        """Read a config written by :meth:`to_json`.

        Raises:
            FileNotFoundError: when ``path`` does not exist.
            ValueError: when the file is not valid JSON or holds bad values;
                the message names the file.
        """
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"model config not found: {path}")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise ValueError("expected a JSON object")  # noqa: TRY004 (callers catch ValueError for bad files)
            return cls.from_dict(data)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"invalid model config {path}: {exc}") from exc
        except RecursionError as exc:
            raise ValueError(f"invalid model config {path}: its JSON is nested too deeply to read") from exc
