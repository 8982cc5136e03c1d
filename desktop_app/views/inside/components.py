"""The Components view (issue 53, section 1): which heads and FFNs wrote the verdict.

It draws the explorer state's ``state.inside.components`` (a :class:`model.records.components.ComponentAttribution`
of the current text, or None with its note): the target's logit (regression: the value) and that it is the sum of the
parts; the :class:`~desktop_app.views.inside.component_grid.ComponentGrid` of the parts, hover giving a part's name
and number; under it, where in the sequence the selected part wrote (its ``by_position`` row) as bars over the tokens
of the text on display, the selected tokens framed; and a detail pane for the part clicked, which its controller
(:class:`desktop_app.panels.inside.components.ComponentsPanel`) fills: a head's attention row from the read-out and
its value flow alpha_j ||f(x_j)|| (Kobayashi et al. 2020; ``state.value_norms``), or an FFN's top neurons
(:class:`model.records.components.FfnNeurons`).

A text read in windows: the numbers are of the whole text (its windows weighted as its verdict weighs them); the
bars show the tokens of the window on display (``prediction.document_index`` maps them). NumPy and Qt only.
"""

from __future__ import annotations

import re

import numpy as np
from PySide6.QtWidgets import QAbstractItemView, QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from model.records.components import FfnNeurons, head_of, head_part
from model.tasks.types import task_type

from ..render import DeferredRender
from ..shown import head_value_norms
from ..widgets import display_token
from .component_grid import ComponentGrid, TokenBars, decimals, number, part_title

FFN_PART = re.compile(r"^L(\d+)\.ffn$")
IDLE_NOTE = "Analyse a text: its verdict's parts show here."


def signed(v: float, scale: float | None = None) -> str:
    """``v`` with its sign and a real minus: "+1.24", "\u22120.80"; with as many decimals as
    :func:`~desktop_app.views.inside.component_grid.decimals` gives for ``scale`` (the largest |value| of its kind;
    None: ``|v|``)."""
    return number(v, decimals(abs(v) if scale is None else scale))


def score_words(state) -> str:
    """What the split number is for the loaded task: "value" (regression) or "logit"."""
    info = state.info
    return "logit" if info is None or task_type(info.task).reads_probabilities else "value"


def distinct_tokens(fn: FfnNeurons, k: int, n: int = 3) -> list[tuple[str, float]]:
    """The ``n`` distinct token strings that fire shown neuron ``k`` of ``fn`` most, each with its largest activation
    (a word repeated in the text is named once)."""
    out: dict[str, float] = {}
    for j, a in fn.top_tokens(k, len(fn.tokens)):
        out.setdefault(display_token(fn.tokens[j]), a)
        if len(out) == n:
            break
    return list(out.items())


class ComponentsView(DeferredRender, QWidget):
    """The Components view (module docstring).

    Args:
        state: the :class:`~desktop_app.state.ExplorerState` (read: ``inside.components``, ``prediction``,
            ``selection``, ``value_norms``, ``info``).

    Attributes:
        summary: the target, its number and "= sum of the parts" (or the note why there is no number).
        hover: the part under the mouse, its name and number. grid: the :class:`ComponentGrid`.
        strip: where the selected part wrote, per token. part: the selected part's name ("": the largest).
        detail: the detail pane's title; head_attention, head_flow: a head's bars; neuron_table: an FFN's neurons.
        neurons: the :class:`FfnNeurons` shown, or None.
    """

    def __init__(self, state, parent: QWidget | None = None) -> None:
        QWidget.__init__(self, parent)
        self._init_deferred()
        self.state = state
        self.part = ""
        self.neurons: FfnNeurons | None = None
        self._neuron_note = ""
        self.summary = QLabel(IDLE_NOTE)
        self.summary.setWordWrap(True)
        self.hover = QLabel(" ")
        self.grid = ComponentGrid()
        self.grid.setMinimumHeight(180)
        self.grid.part_hovered.connect(self._on_hover)
        self.strip = TokenBars()
        self.detail = QLabel("")
        self.detail.setWordWrap(True)
        self.head_attention = TokenBars(height=90)
        self.head_flow = TokenBars(height=90)
        self.neuron_table = QTableWidget(0, 3)
        self.neuron_table.setHorizontalHeaderLabels(["Neuron", "Contribution", "Fires most on (activation)"])
        self.neuron_table.horizontalHeader().setStretchLastSection(True)
        self.neuron_table.verticalHeader().setVisible(False)
        self.neuron_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        for w, stretch in ((self.summary, 0), (self.hover, 0), (self.grid, 3), (self.strip, 1), (self.detail, 0),
                           (self.head_attention, 1), (self.head_flow, 1), (self.neuron_table, 2)):
            lay.addWidget(w, stretch)
        self._show_detail("")
        state.inside.events.components.connect(lambda *_: self.request_render())
        state.events.selection.connect(lambda *_: self.request_render())
        state.events.value_norms.connect(lambda *_: self.request_render())

    # ---------------------------------------------------------------- what the controller sets
    def select_part(self, name: str) -> None:
        """Show part ``name`` in the bars and frame it in the grid; the detail pane is the controller's."""
        self.part = name
        self.neurons, self._neuron_note = None, ""
        self.request_render()

    def show_neurons(self, neurons: FfnNeurons | None, note: str = "") -> None:
        """Show an FFN's top neurons (None: ``note`` instead, e.g. "Computing\u2026")."""
        self.neurons, self._neuron_note = neurons, note
        self.request_render()

    def shown_part(self) -> str:
        """The part the bars show: the selected one, else the part of largest |value|; "" without a record."""
        ca = self.state.inside.components
        if ca is None:
            return ""
        return self.part if self.part in ca.names else ca.top(1)[0][0]

    # ---------------------------------------------------------------- drawing
    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        self._deferred_show()

    def redraw(self) -> None:
        """Draw what the state holds."""
        ca, pred = self.state.inside.components, self.state.prediction
        self.grid.set_record(ca)
        if ca is None or pred is None:
            note = self.state.inside.note("components")
            self.summary.setText(note or IDLE_NOTE)
            self.strip.set_bars([], None)
            self._show_detail("")
            return
        self.summary.setText(self._summary(ca, pred))
        name = self.shown_part()
        self.grid.select(name)
        k = ca.names.index(name)
        values = self._on_display(ca.by_position[k], pred)
        what = "read from each token" if head_of(name) else "wrote at each token"
        if pred.pooling == "cls" and not head_of(name):
            what += " (the read-out reads [CLS] only)"
        self.strip.set_bars(pred.tokens, values, self.state.selection,
                            title=f"{name}: what {part_title(name)} {what} ({score_words(self.state)})")
        self._draw_detail(name, pred)

    def _summary(self, ca, pred) -> str:
        units = score_words(self.state)
        missing = [n for n in ca.names if n not in self.grid.cells]
        rest = f" (not in the grid: {', '.join(f'{n} {signed(ca.value(n))}' for n in missing)})" if missing else ""
        text = (f"<b>{ca.label}: {units} {signed(ca.total)}</b> = the sum of its {len(ca.names)} parts{rest}: red "
                f"pushes it up, blue down. Hover a cell for its name; click a head or an FFN to look inside it.")
        info = self.state.info
        if info is not None and task_type(info.task).label_set:
            text += " Multi-label: one label at a time (Explain class)."
        if ca.num_windows > 1:
            text += (f" The text is read in {ca.num_windows} windows: the numbers are the whole text's (the windows "
                     f"weighted as its verdict weighs them); the bars show window {pred.window + 1}'s tokens.")
        return text

    @staticmethod
    def _on_display(row: np.ndarray, pred) -> np.ndarray:
        """A document-token row as float32 [T] over the tokens on display (NaN where the document has none)."""
        idx = np.asarray(pred.document_index)
        if len(row) == len(pred.tokens) and pred.num_windows == 1:
            return np.asarray(row, np.float32)
        out = np.full(len(pred.tokens), np.nan, np.float32)
        ok = (idx >= 0) & (idx < len(row))
        out[ok] = row[idx[ok]]
        return out

    def _show_detail(self, kind: str) -> None:
        self.head_attention.setVisible(kind == "head")
        self.head_flow.setVisible(kind == "head")
        self.neuron_table.setVisible(kind == "ffn")
        self.detail.setVisible(bool(kind))

    def _draw_detail(self, name: str, pred) -> None:
        head, ffn = head_of(name), FFN_PART.match(name)
        if head and name == self.part:
            self._draw_head(head[0] - 1, head[1], pred)
        elif ffn and name == self.part:
            self._draw_neurons(name)
        else:
            self._show_detail("text")
            self.detail.setText(f"{name}, {part_title(name)}: {signed(self.state.inside.components.value(name))}. "
                                "Click a head for its attention and value flow, an FFN for its top neurons.")

    def _draw_head(self, layer: int, head: int, pred) -> None:
        self._show_detail("head")
        row = pred.attention[layer, head]
        alpha = row[0] if pred.pooling == "cls" else row.mean(axis=0)
        where = "[CLS]" if pred.pooling == "cls" else "every token (mean pooling)"
        name = head_part(layer + 1, head)
        self.detail.setText(f"<b>{name}</b>, {part_title(name)}: "
                            f"{signed(self.state.inside.components.value(name))}. Its attention "
                            f"from the read-out ({where}) and its value flow \u03b1\u2c7c\u2016f(x\u2c7c)\u2016; the "
                            f"heatmap and the Model view show the same head.")
        self.head_attention.set_bars(pred.tokens, alpha, self.state.selection, signed=False,
                                     title=f"attention \u03b1\u2c7c from the read-out, {name}")
        norms = head_value_norms(self.state, layer, head, len(pred.tokens))
        if norms is None:
            self.head_flow.set_bars([], None, title="value flow: the value norms are being computed\u2026")
        else:
            self.head_flow.set_bars(pred.tokens, alpha * norms, self.state.selection, signed=False,
                                    title="value flow \u03b1\u2c7c \u2016f(x\u2c7c)\u2016 (Kobayashi et al. 2020)")

    def _draw_neurons(self, name: str) -> None:
        self._show_detail("ffn")
        fn = self.neurons
        table = self.neuron_table
        if fn is None or fn.name != name:
            self.detail.setText(f"<b>{name}</b>: {self._neuron_note or 'its neurons are being computed'}")
            table.setRowCount(0)
            return
        units = score_words(self.state)
        self.detail.setText(
            f"<b>{name}</b> {signed(fn.value)} = its {fn.n_neurons} neurons {signed(float(fn.contributions.sum()))} "
            f"+ its output bias {signed(fn.bias)}. A neuron's part: its activation \u00d7 its output weight's "
            f"projection on the target direction ({units}). The {len(fn.neurons)} largest:")
        table.setRowCount(len(fn.neurons))
        top = float(np.abs(fn.contributions[fn.neurons]).max())
        for k, n in enumerate(fn.neurons):
            fires = ", ".join(f"{token} {a:.2f}" for token, a in distinct_tokens(fn, k))
            for c, text in enumerate((str(int(n)), signed(float(fn.contributions[n]), top), fires)):
                table.setItem(k, c, QTableWidgetItem(text))
        table.resizeColumnsToContents()

    def _on_hover(self, name: str) -> None:
        ca = self.state.inside.components
        if not name or ca is None:
            self.hover.setText(" ")
            return
        text = f"{name}, {part_title(name)}: {signed(ca.value(name))} of {ca.label}'s {score_words(self.state)}"
        self.hover.setText(text)
        self.grid.setToolTip(text)


__all__ = ["ComponentsView", "FFN_PART", "IDLE_NOTE"]
