"""The sinusoidal positional encoding of Vaswani et al. 2017, section 3.5 (the matrix the encoder adds to its
token embeddings; also the positional-encoding tutorial's worked table, :mod:`model.records.info`)."""

from __future__ import annotations

import torch


def sinusoidal_positional_encoding(num_positions: int, d_model: int, base: float = 10000.0) -> torch.Tensor:
    """The sinusoidal positional-encoding matrix of Vaswani et al. 2017, section 3.5.

    PE(pos, 2i) = sin(pos / base^(2i/d_model)),
    PE(pos, 2i+1) = cos(pos / base^(2i/d_model)).

    Args:
        num_positions: P, the number of positions (rows), >= 0.
        d_model: D, the encoding width (columns); must be even.
        base: the wavelength base (10000 in the paper).

    Returns:
        float32 tensor of shape (P, D).

    Raises:
        ValueError: if ``d_model`` is odd or not positive, or ``num_positions`` < 0.
    """
    if d_model <= 0 or d_model % 2:
        raise ValueError(f"d_model must be a positive even number, got {d_model}")
    if num_positions < 0:
        raise ValueError(f"num_positions must be >= 0, got {num_positions}")
    position = torch.arange(num_positions, dtype=torch.float64).unsqueeze(1)  # (P, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (D/2,)
    angle = position / torch.pow(torch.tensor(base, dtype=torch.float64), two_i / d_model)  # (P, D/2)
    pe = torch.empty(num_positions, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe.to(torch.float32)
