"""What the attention views show for a layer and head choice under the state's "Show" selector (NumPy only).

:attr:`desktop_app.state.ExplorerState.show` picks the quantity every attention view draws:

``attention``
    the attention weights alpha_ij of ``Prediction.attention`` (rows sum to 1).
``value_norm``
    ||alpha_ij^h f^h(x_j)|| of the state's :class:`model.records.flow.AttentionFlow` (Kobayashi et al. 2020): a head's matrix,
    the norm of the heads' summed vectors for "mean of heads", the element-wise max of the heads' norms for "max".
``alti``
    the ALTI contributions c_ij of the layer (Ferrando et al. 2022; residual and LayerNorm included, rows sum to 1):
    one matrix per layer, whatever the head choice.

:func:`shown_matrix` gives one (T, T) matrix and its captions, or the reason there is none (the flow is still being
computed on its worker, or cannot be computed for this model: ``state.flow_note``); :func:`shown_heads` the
per-head matrices of one layer (the token links); :func:`read_out_row` the per-token values of the classification
read-out (the token colours when no token is selected); :func:`token_values` what the token view colours by;
:func:`head_value_norms` the ||f(x_j)|| of one head that the neuron view and the attention steps show beside alpha_ij;
:func:`causal_shown` the heatmap's causal-mask what-if (``state.causal``, :mod:`model.attention.lessons`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from model.attention.lessons import causal_weights

from ..state import MAX_HEADS, MEAN_HEADS, SHOW_ATTENTION, SHOW_TITLES
from .heads import head_matrix, head_name

UNITS = {
    "attention": "attention weight",
    "value_norm": "\u2016\u03b1f(x)\u2016",
    "alti": "ALTI contribution",
}
"""The colour-bar label of each choice."""


@dataclass(frozen=True)
class Shown:
    """One (T, T) query x key matrix a view draws, with its captions.

    Attributes:
        matrix: float32 (T, T) (read-only views of the records; do not write), or None when there is nothing to show.
        units: the colour-bar label ("attention weight", "\u2016\u03b1f(x)\u2016", "ALTI contribution").
        caption: e.g. "Layer 2, head 3 \u2014 value-weighted (\u2016\u03b1f(x)\u2016)".
        note: why ``matrix`` is None (e.g. "Computing ALTI contributions\u2026"), else "".
        rows_sum_to_one: True for attention weights and ALTI.
    """

    matrix: np.ndarray | None
    units: str
    caption: str
    note: str = ""
    rows_sum_to_one: bool = False


def current_flow(state):
    """The state's flow if it fits the current text, the selector and the head mask, else None."""
    flow = state.flow
    return flow if flow is not None and state.flow_fits(flow) else None


def missing_note(state) -> str:
    """Why a flow view shows nothing: the state's note, or "Computing ... \u2026"."""
    return state.flow_note or f"Computing {SHOW_TITLES[state.show]}\u2026"


def shown_matrix(state, layer: int | None = None, head: int | None = None) -> Shown:
    """The matrix the views show for ``layer`` and ``head`` (default: the state's), under ``state.show``.

    Returns:
        :class:`Shown`; its ``matrix`` is None without a prediction, or while a flow is missing (``note`` says why).
    """
    pred = state.prediction
    show = state.show
    if pred is None:
        return Shown(None, UNITS[show], "")
    L = pred.attention.shape[0]
    layer = min(state.layer if layer is None else int(layer), L - 1)
    head = state.head if head is None else int(head)
    where = f"Layer {layer + 1}, {head_name(head)}"
    if show == SHOW_ATTENTION:
        return Shown(head_matrix(pred.attention, layer, head), UNITS[show], f"{where} \u2014 attention weights",
                     rows_sum_to_one=True)
    flow = current_flow(state)
    if flow is None:
        return Shown(None, UNITS[show], f"{where} \u2014 {SHOW_TITLES[show]}", note=missing_note(state))
    if not flow.per_head:  # ALTI: one matrix per layer
        return Shown(flow.layer_matrix(layer), UNITS[show],
                     f"Layer {layer + 1}, all heads with residual and LayerNorm \u2014 {SHOW_TITLES[show]}",
                     rows_sum_to_one=True)
    if head == MEAN_HEADS:
        m, what = flow.layer_matrix(layer), "\u2016\u03a3\u2095 \u03b1f(x)\u2016 of the heads' summed vectors"
    elif head == MAX_HEADS:
        m, what = flow.matrices[layer].max(axis=0), "max over heads of \u2016\u03b1f(x)\u2016"
    else:
        m, what = flow.layer_matrix(layer, head), SHOW_TITLES[show]
    return Shown(m, UNITS[show], f"{where} \u2014 {what}")


def shown_heads(state, layer: int) -> tuple[np.ndarray | None, str]:
    """Per-head matrices of ``layer`` under ``state.show``: float32 (H, T, T) for attention and value norms,
    (1, T, T) for ALTI (one matrix per layer); (None, note) while the flow is missing or without a prediction."""
    pred = state.prediction
    if pred is None:
        return None, ""
    layer = min(int(layer), pred.attention.shape[0] - 1)
    if state.show == SHOW_ATTENTION:
        return pred.attention[layer], ""
    flow = current_flow(state)
    if flow is None:
        return None, missing_note(state)
    return (flow.matrices[layer] if flow.per_head else flow.matrices[layer][None]), ""


def read_out_row(state, layer: int) -> tuple[np.ndarray | None, str]:
    """Per-token values (float32 [T]) of the classification read-out at ``layer`` under ``state.show``, with a caption.

    Attention: ``Prediction.classification_attention(layer)`` (mean of heads). Value norms: the read-out row of the
    heads' summed norms (``[CLS]`` row, or the mean of the rows for mean pooling). ALTI: the read-out row of the
    contributions aggregated up to ``layer`` (how much of the pooled representation after that layer comes from each
    input token). (None, note) while the flow is missing.
    """
    pred = state.prediction
    if pred is None:
        return None, ""
    layer = min(int(layer), pred.attention.shape[0] - 1)
    where = "[CLS] row" if pred.pooling == "cls" else "mean of query rows (mean pooling)"
    if state.show == SHOW_ATTENTION:
        return (pred.classification_attention(layer),
                f"attention from the classification position ({where}), layer {layer + 1}, mean of heads")
    flow = current_flow(state)
    if flow is None:
        return None, missing_note(state)
    m = flow.aggregated[layer] if state.show == "alti" else flow.layer_matrix(layer)
    row = m[0] if pred.pooling == "cls" else m.mean(axis=0)
    what = (f"ALTI contributions aggregated through layers 1\u2013{layer + 1}" if state.show == "alti"
            else f"\u2016\u03a3\u2095 \u03b1f(x)\u2016, layer {layer + 1}")
    return np.asarray(row, np.float32), f"{what}, into the classification read-out ({where})"


def token_values(state) -> tuple[np.ndarray | None, bool, str]:
    """What the token view colours the tokens by: (float32 [T] or None, signed, description).

    In order: the state's token importance (an explanation's scores, whatever the "Show" choice); with query tokens
    selected, the sum of their rows of :func:`shown_matrix` (selected layer and head choice); else the read-out row
    (:func:`read_out_row`). The values are None, and the description says why (e.g. "Computing ALTI
    contributions\u2026"), while the flow the choice needs is missing: no colours rather than stale ones.
    """
    pred = state.prediction
    if pred is None:
        return np.zeros(0, np.float32), False, ""
    importance = state.importance
    if importance is not None:
        return importance.scores, importance.signed, importance.name
    layer = min(state.layer, pred.attention.shape[0] - 1)
    if state.selection:
        shown = shown_matrix(state, layer)
        n = len(state.selection)
        who = f"token {state.selection[0]}" if n == 1 else f"{n} selected tokens (summed)"
        if shown.matrix is None:
            return None, False, f"{shown.note} (for the row of {who})"
        v = shown.matrix[list(state.selection)].sum(axis=0).astype(np.float32)
        what = ("attention" if state.show == SHOW_ATTENTION else SHOW_TITLES[state.show])
        where = shown.caption.split(" \u2014 ")[0].lower()
        return v, False, f"{what} from {who}, {where}"
    values, caption = read_out_row(state, layer)
    return values, False, caption


def head_value_norms(state, layer: int, head: int, num_tokens: int) -> np.ndarray | None:
    """||f^h(x_j)|| of head ``head`` (0-based) of ``layer`` for every key j: float32 [T] from ``state.value_norms``
    (L, H, T), or None when they are not there (yet) or do not fit (another layer count, head count or T)."""
    norms = state.value_norms
    if norms is None or norms.ndim != 3 or not (0 <= layer < norms.shape[0] and 0 <= head < norms.shape[1]):
        return None
    return norms[layer, head] if norms.shape[2] == num_tokens else None


def causal_shown(state, shown: Shown) -> Shown:
    """``shown`` as a causal (decoder) layer would give it, when ``state.causal`` is on (else ``shown`` itself).

    Attention weights: every head's row renormalised over keys j <= i (:func:`model.attention.lessons.causal_weights`, equal to
    the softmax of the scores with keys j > i at -inf), then the head choice (mean, max) as usual. A flow: its keys
    after the query set to 0, not renormalised (renormalising is defined for the softmax weights only; the caption
    says so). Only a lesson: the prediction and every other view are unchanged.
    """
    pred = state.prediction
    if not state.causal or pred is None or shown.matrix is None:
        return shown
    if state.show == SHOW_ATTENTION:
        layer = min(state.layer, pred.attention.shape[0] - 1)
        m = head_matrix(causal_weights(pred.attention[layer])[None], 0, state.head)
        return Shown(m, shown.units, f"{shown.caption}, causal what-if (rows renormalised over keys j \u2264 i)",
                     rows_sum_to_one=True)
    return Shown(np.tril(shown.matrix), shown.units,
                 f"{shown.caption}, causal what-if (keys j > i removed; not renormalised: defined for attention "
                 "weights only)")
