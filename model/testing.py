"""Small, randomly initialised model folders for tests and for running the GUI before training.

Not used by the product at run time.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
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


def cut_at_word_start(predictor, text: str, n: int) -> tuple[str, int]:
    """``(the longest start of text that is whole words of at most n word pieces, its pieces)`` for ``predictor``'s
    tokenizer (special tokens not counted); ``text`` itself when it has at most ``n`` pieces."""
    enc = predictor.encoder.encode(text, whole=True)
    P, S = predictor.encoder.specials
    pieces = enc.ids[P : len(enc.ids) - S]
    if len(pieces) <= n:
        return text, len(pieces)
    cut = int(np.flatnonzero(predictor.encoder.word_starts(pieces[: n + 1]))[-1])  # the last word start <= n
    return text[: int(enc.offsets[P + cut, 0])].rstrip(), cut


def text_of_pieces(predictor, n: int) -> str:
    """A text of exactly ``n`` word pieces for ``predictor``'s tokenizer (special tokens not counted): the
    :data:`SAMPLE_TEXTS` repeated, cut at a word start (:func:`cut_at_word_start`), then filled up with the
    one-piece word "a". With ``n`` a multiple of the model's window budget, every window of the text is full
    (``model.windows.window_ranges``).

    Raises:
        ValueError: when the tokenizer does not split the result into exactly ``n`` pieces.
    """
    text = " ".join(SAMPLE_TEXTS)
    while predictor.encoder.encode(text, whole=True).num_source_tokens <= n:
        text = f"{text} {text}"
    text, cut = cut_at_word_start(predictor, text, n)
    text += " a" * (n - cut)
    got = predictor.encoder.encode(text, whole=True).num_source_tokens
    if got != n:
        raise ValueError(f"could not make a text of {n} pieces (got {got})")
    return text
