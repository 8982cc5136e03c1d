"""A Transformer-encoder sentiment classifier, written out so its attention can be returned.

Source: Vaswani et al. 2017, "Attention Is All You Need" (encoder only):
token embedding scaled by sqrt(d_model) (section 3.4), sinusoidal positional
encoding (section 3.5), N layers of multi-head scaled dot-product
self-attention (section 3.2, equation 1) and a position-wise feed-forward
block (section 3.3), each wrapped in a residual connection and LayerNorm
(section 3.1), followed by a pooled classification head.

Shapes use B = batch, T = tokens, H = heads, L = layers, D = d_model,
C = classes. The layer parts live in :mod:`model.core.layers`, the positional encoding in
:mod:`model.core.positional`.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .config import EncoderConfig
from .layers import EncoderLayer, attention_scores
from .positional import sinusoidal_positional_encoding


class TransformerClassifier(nn.Module):
    """Encoder-only Transformer with a pooled classification head.

    ``forward(input_ids, attention_mask)`` returns ``(logits, attentions)``:
    logits (B, C); attentions (B, L, H, T, T) when ``need_weights`` else None.
    """

    stateful_passes = False
    """A forward pass changes no module state, so passes of several threads may run at once (issue 41)."""

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
            ``inputs`` (B, T, D), what the projections read; ``attention_output`` (B, T, D), the attention sublayer's
            output by its own forward pass (head-mask hooks apply); ``output_weight`` (H, d_k, D), W^O by head
            (``out(y) = y W^O + b^O``); ``output_bias`` (D,); ``extra_score_terms``: None (this model adds nothing
            to Q K^T / sqrt(d_k)).

        Raises:
            IndexError: ``layer`` outside 0..L-1.
        """
        if not 0 <= layer < len(self.layers):
            raise IndexError(f"layer {layer} out of range 0..{len(self.layers) - 1}")
        x, _ = self.run_layers(self.embed(input_ids), attention_mask, stop=layer)  # input of `layer`
        block = self.layers[layer]
        a = block.attention_input(x)  # (B, T, D)
        q, k, v = block.attn.project_qkv(a)  # (B, H, T, d_k) each
        scores = attention_scores(q, k, attention_mask)  # (B, H, T, T)
        out = block.attn.out  # nn.Linear: y W^T + b, weight (D, D)
        return {
            "queries": q, "keys": k, "values": v, "scores": scores,
            "head_outputs": scores.softmax(dim=-1) @ v, "extra_score_terms": None, "inputs": a,
            "attention_output": block.attn(a, attention_mask)[0],
            "output_weight": out.weight.T.reshape(q.size(1), q.size(-1), -1), "output_bias": out.bias,
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
