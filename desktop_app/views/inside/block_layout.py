"""The geometry and the texts of the Block diagram (:mod:`desktop_app.views.inside.block`): where each step's box
goes, how tall it is (its norm x the row's scale), which bands join the boxes, and what is written under and beside
them. Pure functions of a :class:`model.records.block.BlockTrace` and a width (no painting), so the tests read
exactly what is drawn.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from PySide6.QtCore import QRectF

from model.palette import OKABE_ITO
from model.records.block import BlockStep, BlockTrace

BRANCH_COLOURS = {"stream": "#6b7f99", "attention": OKABE_ITO[3], "ffn": OKABE_ITO[2], "readout": OKABE_ITO[4]}
"""Box and band colours: the residual stream slate blue, the attention branch orange, the FFN bluish green, the
read-out reddish purple (Okabe-Ito: apart for the common colour-vision deficiencies)."""

LANES = {"attention": 0, "stream": 1, "ffn": 2}
MAX_BAND = 40.0  # px: the largest norm of a row
MIN_BAND = 3.0  # px: a box never thinner than this (its norm is still shown)
STRIP_DIMS = 24  # the first dimensions of each vector shown under its box
LABEL_ZONE = 40.0  # px under a lane's boxes: the strip, the name, the norm
MIN_COLUMN = 52.0  # px: a column (of weight 1) narrower than this and the view scrolls
COLUMN_WEIGHT = {"add1": 0.8, "add2": 0.8, "attention": 1.35, "input": 0.85, "output": 0.85}
"""The columns' shares of the width (1 for the others): a residual add's name is one sign, the heads' is a word."""
SHORT = {"input": "x", "ln1": "LN 1", "q": "Q", "k": "K", "v": "V", "attention": "Attention", "w_o": "W_O",
         "add1": "\u2295", "w1": "W1", "w2": "W2", "add2": "\u2295", "ln2": "LN 2", "output": "x\u2032",
         "final_ln": "Final LN", "probabilities": ""}


def short_name(step: BlockStep) -> str:
    """The name under a box: short on the layer's rows ("LN 1", "⊕"), the full title on the read-out's."""
    if step.key == "act":
        return step.title.split(": ", 1)[-1]
    if step.branch == "readout" and step.key != "final_ln":
        return step.title
    return SHORT.get(step.key, step.title)


def norm_text(value: float) -> str:
    """A norm as the view prints it under its box (three significant digits; the legend says it is the norm)."""
    return f"{value:.3g}"


@dataclass
class Node:
    """One box as drawn: its step, its rectangle, its row's band scale (px per unit of norm) and its column."""

    step: BlockStep
    rect: QRectF
    scale: float
    column: int
    label_y: float  # the top of its strip / name / norm block

    @property
    def key(self) -> str:
        """The step's key."""
        return self.step.key


@dataclass
class Layout:
    """The geometry of one trace at one size: boxes, bands ((from key, to key)), the rows' tops and the height."""

    nodes: list[Node] = field(default_factory=list)
    edges: list[tuple[str, str]] = field(default_factory=list)
    readout_top: float = 0.0
    height: float = 0.0

    def node(self, key: str) -> Node:
        """The node of step ``key``. Raises KeyError."""
        for n in self.nodes:
            if n.key == key:
                return n
        raise KeyError(key)


def edges_of(steps) -> list[tuple[str, str]]:
    """The bands between the layer's steps: each step reads the one before it (Q, K and V the same one; the heads
    all three); a stream step after a branch also receives the residual stream that skipped the branch."""
    edges: list[tuple[str, str]] = []
    last = last_stream = q_from = None
    for s in steps:
        if s.key in ("k", "v"):
            src = [q_from]
        elif s.key == "attention":
            src = ["q", "k", "v"]
        else:
            src = [last] if last else []
        q_from = last if s.key == "q" else q_from
        if s.branch == "stream" and last_stream is not None and last not in (None, last_stream):
            src.append(last_stream)  # the residual connection joins here
        edges += [(f, s.key) for f in src if f is not None]
        last_stream = s.key if s.branch == "stream" else last_stream
        last = s.key
    return edges


def _scale(steps) -> float:
    top = max((s.norm for s in steps), default=0.0)
    return MAX_BAND / top if top > 0 else 0.0


def _weights(steps, cols: list[int], n_cols: int) -> list[float]:
    weight = [1.0] * n_cols  # a column's share of the width: the adds narrower, the attention's name wider
    for s, c in zip(steps, cols):
        weight[c] = COLUMN_WEIGHT.get(s.key, 1.0)
    return weight


def min_width(trace: BlockTrace) -> int:
    """The width (px) below which the diagram scrolls: every column at least :data:`MIN_COLUMN` x its weight."""
    keys = [s.key for s in trace.steps if s.key not in ("k", "v")]
    return int(16 + MIN_COLUMN * sum(COLUMN_WEIGHT.get(k, 1.0) for k in keys))


def layout(trace: BlockTrace, width: float, top: float = 40.0) -> Layout:
    """Where every box of ``trace`` goes in a view ``width`` px wide, from ``top`` down: the layer's three lanes
    (attention above the stream, the FFN below), then the read-out row. Box heights: norm x the row's scale, at least
    :data:`MIN_BAND`."""
    out = Layout(edges=edges_of(trace.steps))
    cols, col = [], -1
    for s in trace.steps:
        col += 0 if s.key in ("k", "v") else 1
        cols.append(col)
    n_cols = col + 1
    weight = _weights(trace.steps, cols, n_cols)
    unit = max(MIN_COLUMN, (width - 16) / sum(weight))
    left = np.concatenate([[0.0], np.cumsum(weight)]) * unit + 8  # each column's left edge
    scale = _scale(trace.steps)
    qkv_h = sum(max(MIN_BAND, trace.step(k).norm * scale) for k in ("q", "k", "v")) + 18  # three boxes, 6 px apart
    lane_h = [max(MAX_BAND, qkv_h) + LABEL_ZONE, MAX_BAND + LABEL_ZONE, MAX_BAND + LABEL_ZONE]
    lane_top = [top, top + lane_h[0] + 8, top + lane_h[0] + lane_h[1] + 16]
    box_w = min(22.0, unit * 0.4)
    stacked = 0.0
    for s, c in zip(trace.steps, cols):
        lane = LANES[s.branch]
        h = max(MIN_BAND, s.norm * scale)
        x = (left[c] + left[c + 1] - box_w) / 2
        zone = lane_h[lane] - LABEL_ZONE
        if s.key in ("q", "k", "v"):
            y = lane_top[lane] + (zone - qkv_h) / 2 + 3 + stacked
            stacked += h + 6
        else:
            y = lane_top[lane] + (zone - h) / 2
        out.nodes.append(Node(s, QRectF(x, y, box_w, h), scale, c, lane_top[lane] + zone + 2))
    out.readout_top = lane_top[2] + lane_h[2] + 10
    out.height = out.readout_top
    if trace.readout:
        r_scale = _scale(trace.readout)
        r_col = max(MIN_COLUMN * 1.6, (width - 16) / len(trace.readout))
        r_top = out.readout_top + 22
        for c, s in enumerate(trace.readout):
            h = max(MIN_BAND, s.norm * r_scale)
            x = 8 + c * r_col + (r_col - box_w) / 2
            out.nodes.append(Node(s, QRectF(x, r_top + (MAX_BAND - h) / 2, box_w, h), r_scale, n_cols + c,
                                  r_top + MAX_BAND + 2))
        keys = [s.key for s in trace.readout]
        out.edges += list(zip(keys, keys[1:]))
        out.height = r_top + MAX_BAND + LABEL_ZONE + 24
    return out


def step_details(trace: BlockTrace, step: BlockStep) -> str:
    """The rich text under the diagram for ``step``: name, formula, norm and size, and what the step has of its own
    (LayerNorm statistics, the attention per head, the top neurons, the read-out's numbers)."""
    rows = [f"<b>{step.title}</b> &nbsp; <code>{step.formula}</code>",
            f"output: {step.output.size} numbers, norm \u2016\u00b7\u2016 = {step.norm:.4g}"]
    ln = step.layer_norm
    if ln is not None:
        rows.append(f"mean \u03bc = {ln.mean:.4g}, variance \u03c3\u00b2 = {ln.variance:.4g}, \u03b5 = {ln.eps:.0e}; "
                    f"\u03b3: mean {float(ln.gamma.mean()):.3g}, \u03b2: mean {float(ln.beta.mean()):.3g} "
                    f"({ln.gamma.size} values each)")
    if step.weights is not None:
        for h, row in enumerate(step.weights):
            best = np.argsort(-row, kind="stable")[:3]
            shown = ", ".join(f"{_tok(trace.tokens[j])} {row[j]:.2f}" for j in best)
            rows.append(f"head {h}: attends to {shown}")
    if step.neurons is not None:
        nz = step.neurons
        rows.append("top FFN units (|g_k| \u00b7 \u2016W2[k]\u2016): " + ", ".join(
            f"#{int(k)} g={a:.3g} ({s:.3g})" for k, a, s in zip(nz.index, nz.activation, nz.score)))
    if step.key == "probabilities" and trace.labels:
        rows.append(", ".join(f"{lab} {v:.3f}" for lab, v in zip(trace.labels, step.output)))
    return "<br>".join(rows)


def _tok(token: str) -> str:
    return "'" + token.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") + "'"


def outputs_text(trace: BlockTrace, step: BlockStep) -> str:
    """The read-out's last numbers as printed under its box: each label's value (the two largest of more than 3)."""
    pairs = list(zip(trace.labels, step.output))
    if len(pairs) > 3:
        pairs = sorted(pairs, key=lambda t: -float(t[1]))[:2]
    return "  ".join(f"{lab} {float(v):.2f}" for lab, v in pairs)
