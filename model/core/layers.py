"""The parts of one encoder layer: scaled dot-product attention, multi-head self-attention, the feed-forward block
and the residual + LayerNorm layer around them (Vaswani et al. 2017, sections 3.1-3.3).

Shapes use B = batch, T = tokens, H = heads, D = d_model, d_k = D / H. The whole classifier is
:class:`model.core.encoder.TransformerClassifier`.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .config import EncoderConfig


def attention_scores(
    query: torch.Tensor, key: torch.Tensor, key_padding_mask: torch.Tensor | None = None
) -> torch.Tensor:
    """The scaled, masked attention logits before the softmax: Q K^T / sqrt(d_k), padded keys -inf.

    Vaswani et al. 2017, equation 1 (the argument of the softmax).

    Args:
        query: (B, H, T, d_k).
        key: (B, H, T, d_k).
        key_padding_mask: bool (B, T), True where the key is a real token; the others get ``-inf``.

    Returns:
        (B, H, T, T) scores; ``scores[b, h, i, j]`` is query i's logit for key j.
    """
    d_k = query.size(-1)
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)  # (B, H, T, T)
    if key_padding_mask is not None:
        scores = scores.masked_fill(~key_padding_mask[:, None, None, :], float("-inf"))
    return scores


def attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    key_padding_mask: torch.Tensor | None = None,
    dropout: nn.Dropout | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Scaled dot-product attention, returning the attention probabilities.

    softmax(Q K^T / sqrt(d_k)) V  (Vaswani et al. 2017, equation 1).

    Args:
        query: (B, H, T, d_k).
        key: (B, H, T, d_k).
        value: (B, H, T, d_k).
        key_padding_mask: bool (B, T), True where the key is a real token.
            Padded keys get exactly 0 probability.
        dropout: applied to the probabilities used for the output only; the
            returned probabilities are the undropped ones.

    Returns:
        ``(output, p_attn)``: output (B, H, T, d_k) and p_attn (B, H, T, T)
        whose rows sum to 1 over the keys.
    """
    scores = attention_scores(query, key, key_padding_mask)  # (B, H, T, T)
    p_attn = scores.softmax(dim=-1)  # (B, H, T, T)
    p_used = dropout(p_attn) if dropout is not None else p_attn
    return p_used @ value, p_attn


class MultiHeadSelfAttention(nn.Module):
    """Multi-head self-attention (Vaswani et al. 2017, section 3.2.2).

    Query, key and value projections are one fused (D, 3D) linear layer.
    """

    def __init__(self, config: EncoderConfig) -> None:
        super().__init__()
        self.n_heads = config.n_heads
        self.d_head = config.d_head
        self.qkv = nn.Linear(config.d_model, 3 * config.d_model)
        self.out = nn.Linear(config.d_model, config.d_model)
        self.attn_dropout = nn.Dropout(config.dropout)

    def project_qkv(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The per-head query, key and value vectors of a layer input (section 3.2.2: Q W^Q_h, K W^K_h, V W^V_h).

        Args:
            x: (B, T, D) the attention sublayer's input.

        Returns:
            ``(q, k, v)``, each (B, H, T, d_k) with d_k = D / H.
        """
        B, T, D = x.shape
        q, k, v = self.qkv(x).split(D, dim=-1)  # each (B, T, D)
        return tuple(t.view(B, T, self.n_heads, self.d_head).transpose(1, 2) for t in (q, k, v))  # type: ignore[return-value]

    def forward(
        self, x: torch.Tensor, key_padding_mask: torch.Tensor, need_weights: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Attend over ``x``.

        Args:
            x: (B, T, D) hidden states.
            key_padding_mask: bool (B, T), True for real tokens.
            need_weights: return the attention probabilities (explicit path);
                when False, the fused ``F.scaled_dot_product_attention`` runs
                instead and gives the same output.

        Returns:
            ``(y, p_attn)``: y (B, T, D); p_attn (B, H, T, T) or None.
        """
        B, T, D = x.shape
        q, k, v = self.project_qkv(x)  # each (B, H, T, d_k)
        if need_weights:
            y, p_attn = attention(q, k, v, key_padding_mask, self.attn_dropout)
        else:
            p_attn = None
            y = F.scaled_dot_product_attention(
                q,
                k,
                v,
                attn_mask=key_padding_mask[:, None, None, :],
                dropout_p=self.attn_dropout.p if self.training else 0.0,
            )  # (B, H, T, d_k)
        y = y.transpose(1, 2).reshape(B, T, D)  # (B, T, D)
        return self.out(y), p_attn


class FeedForward(nn.Module):
    """Position-wise feed-forward block: ReLU(x W1 + b1) W2 + b2 (section 3.3, equation 2)."""

    def __init__(self, config: EncoderConfig) -> None:
        super().__init__()
        self.fc1 = nn.Linear(config.d_model, config.d_ff)
        self.fc2 = nn.Linear(config.d_ff, config.d_model)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, D) -> (B, T, D)."""
        return self.fc2(self.dropout(F.relu(self.fc1(x))))


class EncoderLayer(nn.Module):
    """One encoder layer: self-attention and feed-forward, each with residual + LayerNorm.

    Post-LN as in the paper: x = LayerNorm(x + Dropout(Sublayer(x))); with
    ``config.norm_first`` the pre-LN variant x = x + Dropout(Sublayer(LayerNorm(x))).
    """

    def __init__(self, config: EncoderConfig) -> None:
        super().__init__()
        self.norm_first = config.norm_first
        self.attn = MultiHeadSelfAttention(config)
        self.ff = FeedForward(config)
        self.norm1 = nn.LayerNorm(config.d_model)
        self.norm2 = nn.LayerNorm(config.d_model)
        self.dropout = nn.Dropout(config.dropout)

    def attention_input(self, x: torch.Tensor) -> torch.Tensor:
        """What the self-attention sublayer sees of the layer input ``x`` (B, T, D): LayerNorm(x) for pre-LN, else x."""
        return self.norm1(x) if self.norm_first else x

    def forward(
        self, x: torch.Tensor, key_padding_mask: torch.Tensor, need_weights: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(B, T, D) -> ((B, T, D), p_attn (B, H, T, T) or None)."""
        if self.norm_first:
            a, p_attn = self.attn(self.attention_input(x), key_padding_mask, need_weights)
            x = x + self.dropout(a)
            x = x + self.dropout(self.ff(self.norm2(x)))
        else:
            a, p_attn = self.attn(x, key_padding_mask, need_weights)
            x = self.norm1(x + self.dropout(a))
            x = self.norm2(x + self.dropout(self.ff(x)))
        return x, p_attn
