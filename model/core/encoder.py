"""A Transformer-encoder sentiment classifier, written out so its attention can be returned.

Source: Vaswani et al. 2017, "Attention Is All You Need" (encoder only):
token embedding scaled by sqrt(d_model) (section 3.4), sinusoidal positional
encoding (section 3.5), N layers of multi-head scaled dot-product
self-attention (section 3.2, equation 1) and a position-wise feed-forward
block (section 3.3), each wrapped in a residual connection and LayerNorm
(section 3.1), followed by a pooled classification head.

Shapes use B = batch, T = tokens, H = heads, L = layers, D = d_model,
C = classes.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .config import EncoderConfig


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


class TransformerClassifier(nn.Module):
    """Encoder-only Transformer with a pooled classification head.

    ``forward(input_ids, attention_mask)`` returns ``(logits, attentions)``:
    logits (B, C); attentions (B, L, H, T, T) when ``need_weights`` else None.
    """

    def __init__(self, config: EncoderConfig) -> None:
        super().__init__()
        self.config = config
        self.token_embedding = nn.Embedding(config.vocab_size, config.d_model, padding_idx=config.pad_id)
        pe = sinusoidal_positional_encoding(config.max_len, config.d_model, config.pe_base)
        self.register_buffer("positional_encoding", pe, persistent=False)  # (max_len, D)
        self.embed_dropout = nn.Dropout(config.dropout)
        self.layers = nn.ModuleList(EncoderLayer(config) for _ in range(config.n_layers))
        self.final_norm = nn.LayerNorm(config.d_model) if config.norm_first else nn.Identity()
        self.head_dropout = nn.Dropout(config.dropout)
        self.head = nn.Linear(config.d_model, config.num_classes)
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, nn.Linear):
            nn.init.xavier_uniform_(module.weight)
            nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, std=module.embedding_dim**-0.5)
            if module.padding_idx is not None:
                with torch.no_grad():
                    module.weight[module.padding_idx].zero_()

    def embed(self, input_ids: torch.Tensor) -> torch.Tensor:
        """Token embedding times sqrt(d_model) plus positional encoding: (B, T) -> (B, T, D).

        Raises:
            ValueError: if T exceeds ``config.max_len``.
        """
        T = input_ids.size(1)
        if T > self.config.max_len:
            raise ValueError(f"input has {T} tokens; the model takes at most {self.config.max_len}")
        x = self.token_embedding(input_ids) * math.sqrt(self.config.d_model)  # (B, T, D)
        return x + self.positional_encoding[:T]

    def embedding_norms(self, input_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-position L2 norms of the two terms :meth:`embed` adds (section 3.4 and 3.5).

        Args:
            input_ids: int64 (B, T).

        Returns:
            ``(pe_norm, token_norm)``, each (B, T): ||PE(pos)|| and ||token embedding x sqrt(d_model)||.
        """
        T = input_ids.size(1)
        tok = self.token_embedding(input_ids) * math.sqrt(self.config.d_model)  # (B, T, D)
        pe = self.positional_encoding[:T].expand_as(tok)  # (B, T, D)
        return pe.norm(dim=-1), tok.norm(dim=-1)

    def hidden_states(
        self, x: torch.Tensor, attention_mask: torch.Tensor, need_weights: bool = False
    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """The encoder layers on embedded inputs: ``(final hidden states (B, T, D), maps)``.

        ``maps`` is ``[p_attn (B, H, T, T)] * L`` when ``need_weights``, else ``[]``. The classification read-out
        (:meth:`encode_with_maps`) and masked-language-model pretraining (``model.training.distill``) both
        start from these hidden states.
        """
        x, maps = self.run_layers(x, attention_mask, need_weights)
        return self.final_norm(x), maps

    def run_layers(
        self, x: torch.Tensor, attention_mask: torch.Tensor, need_weights: bool = False, stop: int | None = None,
        start: int = 0,
    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """The encoder layers ``start .. stop-1`` (to the last when ``stop`` is None), without the final norm.

        ``x`` is the embedded input (``start`` 0; the embedding dropout applies) or the input of layer ``start``
        (the output of layer ``start - 1``, as this method returns it with ``stop=start``).

        Returns:
            ``(x (B, T, D), maps)``: x is the input of layer ``stop`` (the last layer's output when None);
            maps as in :meth:`hidden_states`, for the layers run.
        """
        if start == 0:
            x = self.embed_dropout(x)
        maps = []
        for layer in self.layers[start:stop]:
            x, p_attn = layer(x, attention_mask, need_weights)  # (B, T, D), (B, H, T, T)
            if need_weights:
                maps.append(p_attn)
        return x, maps

    def attention_internals(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, layer: int
    ) -> dict[str, torch.Tensor | None]:
        """The inside of one layer's self-attention, for teaching views (Vaswani et al. 2017, section 3.2).

        Runs the layers before ``layer`` (the same code as the forward pass) and then that layer's own
        projections, so ``softmax(scores)`` is the attention the forward pass computes.

        Args:
            input_ids: int64 (B, T).
            attention_mask: bool (B, T), True for real tokens.
            layer: 0-based layer index.

        Returns:
            dict of tensors: ``queries``, ``keys``, ``values`` (B, H, T, d_k); ``scores`` (B, H, T, T), the
            scaled, masked logits (padded keys -inf); ``head_outputs`` (B, H, T, d_k) = softmax(scores) V;
            ``extra_score_terms``: None (this model adds nothing to Q K^T / sqrt(d_k)).

        Raises:
            IndexError: ``layer`` outside 0..L-1.
        """
        if not 0 <= layer < len(self.layers):
            raise IndexError(f"layer {layer} out of range 0..{len(self.layers) - 1}")
        x, _ = self.run_layers(self.embed(input_ids), attention_mask, stop=layer)  # input of `layer`
        block = self.layers[layer]
        q, k, v = block.attn.project_qkv(block.attention_input(x))  # (B, H, T, d_k) each
        scores = attention_scores(q, k, attention_mask)  # (B, H, T, T)
        return {
            "queries": q, "keys": k, "values": v, "scores": scores,
            "head_outputs": scores.softmax(dim=-1) @ v, "extra_score_terms": None,
        }

    def encode_with_maps(
        self, x: torch.Tensor, attention_mask: torch.Tensor, need_weights: bool = False
    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """The forward pass from embedded inputs to logits (the only copy of it).

        Args:
            x: (B, T, D) output of :meth:`embed` (or a perturbed copy of it).
            attention_mask: bool (B, T), True for real tokens.
            need_weights: keep every layer's attention probabilities.

        Returns:
            ``(logits (B, C), maps)``: maps is ``[p_attn (B, H, T, T)] * L`` (the
            tensors the logits were computed from, so autograd reaches them) when
            ``need_weights``, else ``[]``.
        """
        x, maps = self.hidden_states(x, attention_mask, need_weights)  # (B, T, D)
        return self.read_out(x, attention_mask), maps  # (B, C)

    def read_out(self, x: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """The classification head on final hidden states: pooling (``config.pooling``: the classification
        token's state, or the mean over real tokens), dropout, linear layer.

        Args:
            x: (B, T, D) final hidden states (:meth:`hidden_states`).
            attention_mask: bool (B, T), True for real tokens.

        Returns:
            logits (B, C).
        """
        if self.config.pooling == "cls":
            pooled = x[:, 0]  # (B, D)
        else:
            m = attention_mask.unsqueeze(-1).to(x.dtype)  # (B, T, 1)
            pooled = (x * m).sum(1) / m.sum(1).clamp_min(1.0)  # (B, D)
        return self.head(self.head_dropout(pooled))  # (B, C)

    def encode(
        self, x: torch.Tensor, attention_mask: torch.Tensor, need_weights: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Run the encoder layers and the head on embedded inputs (:meth:`encode_with_maps`, maps stacked).

        Args:
            x: (B, T, D) output of :meth:`embed` (or a perturbed copy of it).
            attention_mask: bool (B, T), True for real tokens.
            need_weights: also return every layer's attention probabilities.

        Returns:
            ``(logits, attentions)``: logits (B, C); attentions
            (B, L, H, T, T) or None.
        """
        logits, maps = self.encode_with_maps(x, attention_mask, need_weights)
        attentions = torch.stack(maps, dim=1) if need_weights else None  # (B, L, H, T, T)
        return logits, attentions

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None, need_weights: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Classify token ids.

        Args:
            input_ids: int64 (B, T).
            attention_mask: bool (B, T), True for real tokens; defaults to
                ``input_ids != pad_id``.
            need_weights: return attentions (B, L, H, T, T) from the explicit
                attention path; otherwise the fused SDPA path runs.

        Returns:
            ``(logits (B, C), attentions or None)``.
        """
        if attention_mask is None:
            attention_mask = input_ids != self.config.pad_id
        return self.encode(self.embed(input_ids), attention_mask.bool(), need_weights)
