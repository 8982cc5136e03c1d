"""Small, randomly initialised model folders for tests and for running the GUI before training.

Not used by the product at run time.
"""

from __future__ import annotations

from pathlib import Path

import torch

from .core.config import EncoderConfig
from .core.encoder import TransformerClassifier
from .core.tokenizer import train_tokenizer
from .core.weights import TOKENIZER_FILE, save_model

SAMPLE_TEXTS = [
    "This movie was wonderful, the acting was superb and the story moving.",
    "A terrible film. Boring, badly acted and far too long.<br /><br />Avoid it.",
    "I loved every minute of it; a great, great cast and a beautiful score!",
    "The worst script I have seen in years, and the ending was awful.",
    "An average thriller with some good moments but a weak second half.",
    "Brilliant direction, excellent photography, and a performance to remember.",
    "Dull, predictable and poorly edited. I wanted my money back.",
]


def make_random_model_dir(
    out_dir: str | Path, config: EncoderConfig | None = None, seed: int = 0, vocab_size: int = 400
) -> Path:
    """Write a randomly initialised model folder (weights, config, tokenizer) to ``out_dir``.

    Args:
        out_dir: the folder to create/fill.
        config: the architecture; by default a tiny 2-layer, 2-head, d_model=16
            encoder with max_len 64. ``vocab_size`` is taken from the tokenizer.
        seed: torch seed for the weights.
        vocab_size: WordPiece vocabulary size for the tokenizer trained on
            ``SAMPLE_TEXTS``.

    Returns:
        ``out_dir`` as a Path.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tok = train_tokenizer(SAMPLE_TEXTS * 3, vocab_size=vocab_size, min_frequency=1)
    tok.save(str(out / TOKENIZER_FILE))
    base = config or EncoderConfig(max_len=64, d_model=16, n_heads=2, n_layers=2, d_ff=32)
    cfg = EncoderConfig.from_dict({**base.__dict__, "vocab_size": tok.get_vocab_size()})
    torch.manual_seed(seed)
    save_model(TransformerClassifier(cfg), out)
    return out
