"""Component attribution (direct logit attribution): one logit split into what each part of the encoder wrote into
the residual stream.

Source: Elhage et al. 2021, "A Mathematical Framework for Transformer Circuits" (the residual stream as a sum of the
components' outputs; direct logit attribution), with every LayerNorm frozen at this run's statistics as DecompX does
(Modarressi et al. 2023, section 3.2; :mod:`model.explain.decompx`, whose frozen-LayerNorm terms are reused here).

The residual stream at row i after the last layer is a sum of parts, each written once and then carried unchanged
along the stream: the first layer's input (``embeddings``), each head's output through its slice of W_O
(``L{l}.H{h}``), the attention output bias W_O b_V + b_O (``L{l}.attn_bias``; a head's context vector carries b_V
because the attention rows sum to 1, so b_V enters here once), each feed-forward block's output, both biases
included (``L{l}.ffn``), and, in a post-LN layer, the two LayerNorms' beta (``L{l}.ln_beta``). A LayerNorm on the
stream, LN(z)_i = gamma * (z_i - mean(z_i)) / sigma_i + beta, is linear in z once sigma_i is frozen at the value this
run computed: each part is centred and scaled by gamma / sigma_i on its own, and beta becomes a new part. The
read-out after the last layer (pooling, then the head's Linears and elementwise activations; a pre-LN encoder's final
LayerNorm first, ``final_ln_beta``) is linearised the same way: an activation act(z) is replaced by its slope from
zero theta = act(z) / z at this run's pre-activation z (the pooler's tanh, DistilBERT's ReLU, ELECTRA's GELU), so a
part v of z goes on as theta * v and the parts still sum to act(z); the head's biases are the part ``head_bias``.
Nothing inside a sublayer is linearised (the feed-forward activation and the attention softmax are what this run
computed), so the parts sum to the logit exactly (float32 rounding; tests: 1e-4 x max(1, |logit|)).

Computed backwards in one sweep: the logit is a linear functional of the last hidden states, g_i (T, D); through a
frozen LayerNorm it becomes C(gamma * g_i) / sigma_i (C: subtract the mean), and a part p written at row i adds
<p_i, g_i>. A head's part is further split by the token it read from: m_h alpha_ij^h <(v_j^h - b_V^h) W_O^h, g_i>
summed over the rows i (``by_position``). Only the rows the read-out reads carry a functional (direct effects stay in
their row of the stream): one row with [CLS] pooling, all T with mean pooling. Cost per layer besides the forward pass
with capture: R D^2 + R T D multiply-adds for R rows read.

An FFN's part splits further by neuron (:func:`ffn_neuron_parts`): W_2 a_i + b_2 = sum_n a_in W_2[:, n] + b_2, so
neuron n contributes its activation a_in times its output weight's projection <W_2[:, n], g_i> on the target
direction g_i at that layer (the direct-logit-attribution of single neurons, Geva et al. 2022, "Transformer
Feed-Forward Layers Build Predictions by Promoting Concepts in the Vocabulary Space", read out through the
classifier instead of the unembedding).

Shapes: T tokens, D width, H heads, d = D / H, L layers, C outputs, K parts, F the feed-forward width.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from model.records.components import head_part

from .decompx import _ln_terms
from .taps import LayerCapture, ModelTaps


def part_names(n_layers: int, n_heads: int, post_ln: bool) -> list[str]:
    """The K part names in order: ``embeddings``; per layer l (1-based) ``L{l}.H{h}`` (h 1-based too: :func:`model.records.components.head_part`), ``L{l}.attn_bias``,
    ``L{l}.ffn`` and, post-LN, ``L{l}.ln_beta``; pre-LN ``final_ln_beta``; ``head_bias``."""
    names = ["embeddings"]
    for layer in range(1, n_layers + 1):
        names += [head_part(layer, h) for h in range(n_heads)] + [f"L{layer}.attn_bias", f"L{layer}.ffn"]
        names += [f"L{layer}.ln_beta"] if post_ln else []
    return names + ([] if post_ln else ["final_ln_beta"]) + ["head_bias"]


def _frozen_ln_back(ln: torch.nn.LayerNorm, ln_in: torch.Tensor, g: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """A LayerNorm frozen at its inputs ``ln_in`` (T, D), seen from the functional ``g`` (T, D) on its output:
    ``(functional on its input (T, D), beta's part per row (T,))``."""
    scale, _, beta, _, _ = _ln_terms(ln, ln_in)  # scale (T, D) = gamma / sigma_i
    h = g * scale
    return h - h.mean(-1, keepdim=True), g @ beta


def _read_out_back(head: tuple, last: torch.Tensor, target: int) -> tuple[torch.Tensor, ...]:
    """The read-out linearised at this run (module docstring), backwards from output ``target``.

    Args:
        head: :attr:`ModelTaps.head`. last: (T, D) the last layer's output. target: the output index.

    Returns:
        ``(g (R, D) the functional on the rows the read-out reads, final-LN beta part per row (T,) (zeros post-LN),
        head-bias part per row (T,), spread over the rows by the pooling weights, those R rows' indices (R,))``: R = 1
        with [CLS] pooling, T with mean pooling.

    Raises:
        ValueError: an unknown read-out step.
    """
    T = last.shape[0]
    norm, pool, chain = None, None, []
    h = last
    for step, op in head:  # forward, recording what the backward sweep needs
        if step == "norm":
            norm, h = op, op(h)
        elif step == "pool":
            pool = torch.zeros(T, device=last.device)
            pool[0:1 if op == "cls" else T] = 1.0 if op == "cls" else 1.0 / T
            h = pool @ h
        elif step == "linear":
            chain.append((step, op, None))
            h = op(h)
        elif step == "act":
            chain.append((step, op, h))
            h = op(h)
        else:
            raise ValueError(f"component attribution does not read the read-out step {step!r}")
    u = torch.zeros(h.shape[-1], device=last.device)
    u[target] = 1.0
    bias = torch.zeros((), device=last.device)
    for step, op, pre in reversed(chain):
        if step == "linear":
            if op.bias is not None:
                bias = bias + op.bias.detach().float() @ u
            u = op.weight.detach().float().T @ u
        else:  # the slope from zero at this run's pre-activation (0 where it is 0)
            safe = torch.where(pre == 0, torch.ones_like(pre), pre)
            u = u * torch.where(pre.abs() > 1e-12, op(pre) / safe, torch.zeros_like(pre))
    g = pool[:, None] * u[None, :]  # (T, D)
    final = torch.zeros(T, device=last.device)
    if norm is not None:
        g, final = _frozen_ln_back(norm, last, g)
    read = torch.nonzero(pool).flatten()
    return g[read], final, pool * bias, read


def _heads_back(cap: LayerCapture, taps, g: torch.Tensor, read: torch.Tensor, n_heads: int,
                mask_row: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    """The attention sublayer seen from the functional ``g`` (R, D) on its output rows ``read`` (R,): ``(heads (H, T)
    by the token each read from, the attention bias W_O b_V + b_O per row read (R,))``."""
    w_v, b_v = taps.value_weight()
    w_o = taps.out_proj.weight.detach().float()  # (D, H d)
    D, HD = w_o.shape
    d = HD // n_heads
    R, T = g.shape[0], cap.values.shape[0]
    scale = torch.ones(n_heads, device=g.device) if mask_row is None else mask_row.to(g.device).float()
    q = (g @ w_o).view(R, n_heads, d).transpose(0, 1)  # (H, R, d): W_O^h^T g_i
    v = cap.values if b_v is None else cap.values - b_v.detach().float()
    attn = cap.attn if R == T else cap.attn[:, read]  # (H, R, T_j)
    moved = torch.bmm(attn.transpose(1, 2), q)  # (H, T_j, d): sum_i alpha_ij W_O^h^T g_i, no (H, R, T) product
    by_source = (moved * v.view(T, n_heads, d).transpose(0, 1)).sum(-1) * scale[:, None]  # (H, T_j)
    b_att = torch.zeros(D, device=g.device)
    if b_v is not None:
        b_att = b_att + w_o @ (b_v.detach().float() * scale.repeat_interleave(d))
    if taps.out_proj.bias is not None:
        b_att = b_att + taps.out_proj.bias.detach().float()
    return by_source, g @ b_att


@dataclass(frozen=True)
class LayerBack:
    """One layer seen from the logit, the backward sweep's step (module docstring).

    Attributes:
        ffn: (R, D) the functional on the feed-forward output's rows read (through the frozen LN2, post-LN).
        attn: (R, D) the functional on the attention output's rows read (and on the layer input: the residual).
        beta: (R,) the layer's LayerNorms' beta part per row read (post-LN), or None (pre-LN).
    """

    ffn: torch.Tensor
    attn: torch.Tensor
    beta: torch.Tensor | None


def backward_sweep(caps: list[LayerCapture], taps: ModelTaps, target: int):
    """The functionals of output ``target`` on every layer, from the read-out down (module docstring).

    Returns:
        ``(layers, g_in, final, head_bias, read)``: per layer (forward order) its :class:`LayerBack`; ``g_in`` (R, D)
        the functional on the first layer's input; ``final`` (T,) the final LayerNorm's beta part (zeros post-LN);
        ``head_bias`` (T,) the read-out's biases by the pooling weights; ``read`` (R,) the rows the read-out reads.

    Raises:
        ValueError: the model has no classification head, or a read-out step not covered.
    """
    if not taps.head:
        raise ValueError("component attribution splits a logit, and this model has no classification head")
    g, final, head_bias, read = _read_out_back(taps.head, caps[-1].out, int(target))
    layers = []
    for cap, lt in zip(reversed(caps), reversed(taps.layers)):
        if taps.post_ln:  # x_out = LN2(LN1(x + attn) + ffn)
            h2, beta2 = _frozen_ln_back(lt.ln2, cap.ln2_in[read], g)
            g, beta1 = _frozen_ln_back(lt.ln1, cap.ln1_in[read], h2)
            layers.append(LayerBack(h2, g, beta1 + beta2))
        else:  # x_out = x + attn + ffn
            layers.append(LayerBack(g, g, None))
    return layers[::-1], g, final, head_bias, read


def component_attribution(caps: list[LayerCapture], taps: ModelTaps, rows: list, target: int) -> torch.Tensor:
    """The parts of output ``target`` of one text (module docstring), by position.

    Args:
        caps: the layers' captures (:func:`.taps.capture`, full). taps: the model's taps (with a head).
        rows: per layer the (H,) head mask or None. target: the output index (the logit; regression: 0).

    Returns:
        float32 (K, T) on the captures' device, rows in :func:`part_names` order: a head's row by the token it read
        from, every other part's by the row of the stream it was written in (``head_bias`` by the pooling weights).
        Summed over everything: the logit ``target`` of this pass.

    Raises:
        ValueError: the model has no classification head, or a read-out step not covered.
    """
    layers, g_in, final, head_bias, read = backward_sweep(caps, taps, target)
    T = final.shape[0]

    def at_rows(v: torch.Tensor) -> torch.Tensor:  # (R,) -> (1, T): a part per row read, 0 in the others
        return torch.zeros(1, T, device=v.device).index_copy_(1, read, v[None])

    out = [at_rows((caps[0].x[read] * g_in).sum(-1))]
    for cap, lt, row, back in zip(caps, taps.layers, rows, layers):
        ffn = (cap.fc2_out[read] * back.ffn).sum(-1)
        heads, bias = _heads_back(cap, lt, back.attn, read, taps.n_heads, row)
        beta = [] if back.beta is None else [at_rows(back.beta)]
        out.append(torch.cat([heads, at_rows(bias), at_rows(ffn)] + beta))
    out += ([] if taps.post_ln else [final[None]]) + [head_bias[None]]
    return torch.cat(out)


def ffn_neuron_parts(caps: list[LayerCapture], taps: ModelTaps, target: int,
                     layer: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The FFN part of layer ``layer`` (0-based) of output ``target`` split by neuron: its output W_2 a_i + b_2 at
    row i is sum_n a_in W_2[:, n] + b_2, so neuron n contributes a_in <W_2[:, n], g_i> at each row i the read-out
    reads (g_i: the functional on the FFN output, the target direction carried back through the frozen LayerNorms
    as :func:`component_attribution` carries it), and b_2 contributes <b_2, g_i>.

    Args:
        caps, taps, target: as :func:`component_attribution`. layer: 0-based.

    Returns:
        ``(contributions (F, T), bias (T,), activations (F, T))`` float32: the neurons' contributions by row of the
        stream (0 in rows not read), the output bias's part by row, and the activations a_in at every token (read
        or not). ``contributions.sum() + bias.sum()`` is the ``L{layer+1}.ffn`` part of :func:`component_attribution`
        (float32 rounding).

    Raises:
        ValueError: as :func:`component_attribution`.
    """
    layers, _, final, _, read = backward_sweep(caps, taps, target)
    cap, fc2, g = caps[layer], taps.layers[layer].fc2, layers[layer].ffn  # g (R, D)
    T, F = final.shape[0], cap.fc2_in.shape[1]
    proj = g @ fc2.weight.detach().float()  # (R, F): <W_2[:, n], g_i>
    contributions = torch.zeros(F, T, device=g.device)
    contributions[:, read] = (cap.fc2_in[read] * proj).T
    bias = torch.zeros(T, device=g.device)
    if fc2.bias is not None:
        bias[read] = g @ fc2.bias.detach().float()
    return contributions, bias, cap.fc2_in.T.contiguous()
