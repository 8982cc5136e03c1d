"""ExplorerState: the one owner of what the explorer shows.

Everything on screen is drawn from this one object, an evented dataclass (:mod:`psygnal`, as napari's models): each
field announces its own change on ``state.events.<field>`` (emitted with the new and the old value; a slot taking one
argument gets the new one). It holds the model (:attr:`~ExplorerState.info`), the text's prediction and what was
computed for it, the selection (layer, head, query tokens), the token colouring and highlighted words, what the
attention views show (weights or a flow, the causal what-if), the heads switched off, the pins, the window of a long
review (:attr:`~ExplorerState.windows`, :mod:`desktop_app.document`) and the class to explain, threshold and second
text (:attr:`~ExplorerState.task`, :mod:`desktop_app.task_choice`); the class docstring lists every field. Fields
change through the methods below, which validate and derive (a new prediction clears what belonged to the old text,
a head mask is checked against the model, ...).

Views read it and listen to it (a click on a token selects it in all of them); nothing else tells a view what to show.
Every change happens on the GUI thread (workers hand their results to controllers there), so every event is emitted,
and every slot runs, on the GUI thread. Controllers in :mod:`desktop_app.workers` see it through the typed protocols
of what they read and set (:mod:`desktop_app.workers.state_protocol`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

import numpy as np
from psygnal import SignalGroupDescriptor

if TYPE_CHECKING:  # pragma: no cover - the records import no torch, but model.explain's package does
    from model.records.explanation import ExplanationResult
    from model.records.flow import AttentionFlow
    from model.records.info import ModelInfo
    from model.records.internals import AttentionInternals, EmbeddingNorms
    from model.records.prediction import Prediction

from .document import WindowChoice
from .inside_results import InsideResults
from .state_events import EQUALITY, StateEvents
from .task_choice import TaskChoice
from .records import (  # noqa: F401 - the state's records and choices, re-exported
    MAX_HEADS, MEAN_HEADS, SHOW_ATTENTION, SHOW_CHOICES, SHOW_TITLES, LayerProbabilities, Pin, TokenImportance, checked_head_mask,
    same_mask
)


@dataclass(eq=False)
class ExplorerState:
    """The model, the prediction and its results, the selection and the token colouring (see the module docstring).

    Fields (each announced on ``events.<name>`` with (new, old): the model, the prediction and the results whenever
    set, the choices and the head mask when they change):
        info: the loaded model's :class:`model.records.info.ModelInfo`, or None before one is known.
        prediction: the :class:`model.records.prediction.Prediction` shown (None when cleared).
        internals: :class:`model.records.internals.AttentionInternals` of the current text and some layer (computed
            on a worker, :mod:`desktop_app.workers.internals`), or None; :meth:`current_internals` checks the fit.
        embedding_norms: :class:`model.records.internals.EmbeddingNorms` of the current text, or None.
        layer_head: (layer, head choice); layer 0-based, head 0-based or :data:`MEAN_HEADS` / :data:`MAX_HEADS`.
        selection: the selected query token indices (sorted; empty = none).
        importance: the :class:`TokenImportance` the tokens are coloured by, or None (colour by attention).
        highlighted_words: the highlighted words (lower case; may be empty).
        show: the :data:`SHOW_CHOICES` entry the attention views show.
        flow: the :class:`model.records.flow.AttentionFlow` of the current text, method and head mask, or None (none
            yet, or it cannot be computed: ``flow_note`` says why).
        flow_note: why no flow is shown ("Computing ALTI..." or the reason it cannot be), "" otherwise (no event of
            its own: announced with ``flow``).
        value_norms: float32 (L, H, T) ||f^h(x_j)|| of the current text, or None.
        head_mask: float32 (L, H) read-only with a 0 for each head off, or None (every head on).
        head_importance: float32 (L, H) head importance to overlay, or None; ``head_importance_name`` names it (no
            event of its own).
        layer_probabilities: the current text's :class:`LayerProbabilities`, or None.
        pins: the tuple of :class:`Pin` (oldest first; may be empty).
        causal: the causal what-if switched on or off.
        explanations: method -> :class:`model.records.explanation.ExplanationResult` for the current text (no field
            event: ``events.explanation_added`` and ``events.explanations_cleared``).

    Attributes:
        events: the :class:`StateEvents` group.
        windows: the window of a long review shown (:class:`desktop_app.document.WindowChoice`).
        task: the class to explain, the threshold, the second text (:class:`desktop_app.task_choice.TaskChoice`).
        inside: the block's views' results (:class:`desktop_app.inside_results.InsideResults`).
    """

    events: ClassVar[SignalGroupDescriptor] = SignalGroupDescriptor(
        signal_group_class=StateEvents, equality_operators=EQUALITY,
        signal_aliases={"flow_note": None, "head_importance_name": None, "explanations": None})

    info: ModelInfo | None = None
    prediction: Prediction | None = None
    explanations: dict[str, ExplanationResult] = field(default_factory=dict)
    internals: AttentionInternals | None = None
    embedding_norms: EmbeddingNorms | None = None
    layer_head: tuple[int, int] = (0, MEAN_HEADS)
    selection: tuple[int, ...] = ()
    importance: TokenImportance | None = None
    highlighted_words: frozenset[str] = frozenset()
    show: str = SHOW_ATTENTION
    flow: AttentionFlow | None = None
    flow_note: str = ""
    value_norms: np.ndarray | None = None
    head_mask: np.ndarray | None = None
    head_importance: np.ndarray | None = None  # e.g. Michel et al. 2019 eq. 2
    head_importance_name: str = ""
    layer_probabilities: LayerProbabilities | None = None
    pins: tuple[Pin, ...] = ()
    causal: bool = False  # the causal-mask what-if (model.attention.lessons) in the heatmap and the attention steps

    def __post_init__(self) -> None:
        self.windows = WindowChoice(self)  # the window of a long review shown (desktop_app.document)
        self.task = TaskChoice(self)  # the class to explain, the threshold, the second text (desktop_app.task_choice)
        self.inside = InsideResults()  # the block's views' results (desktop_app.inside_results)

    # ------------------------------------------------------------------ the model
    @property
    def n_layers(self) -> int:
        """L, or 0 before a model is known."""
        return self.info.n_layers if self.info is not None else 0

    @property
    def n_heads(self) -> int:
        """H, or 0 before a model is known."""
        return self.info.n_heads if self.info is not None else 0

    def set_model(self, info: ModelInfo) -> None:
        """Adopt a newly loaded model's :class:`model.records.info.ModelInfo`; a head mask, head importance or pins
        of the old model go first, then ``events.info``; the layer and head are clamped to its size and announced
        (``events.layer_head``, even when unchanged: the views rebuilt for the model mark them again)."""
        if self.head_mask is not None and self.head_mask.shape != (info.n_layers, info.n_heads):
            self.set_head_mask(None)
        if self.head_importance is not None and self.head_importance.shape != (info.n_layers, info.n_heads):
            self.set_head_importance(None)
        if self.pins:
            self.clear_pins()  # another model: the pinned predictions are of the old one
        with self.events.info.paused():  # announced once the old model's choices are gone
            self.info = info
        self.set_layer_head(self.layer, self.head, force=True)

    def reread_model(self, info: ModelInfo) -> None:
        """The same model read another way (its threshold, ``Predictor.set_task``): ``info`` becomes ``info`` without
        a model change, so nothing is announced (the views, the class pick and the pins stay)."""
        with self.events.info.blocked():
            self.info = info

    @property
    def layer(self) -> int:
        """The selected layer (0-based; the first of :attr:`layer_head`)."""
        return self.layer_head[0]

    @property
    def head(self) -> int:
        """The selected head choice (0-based, :data:`MEAN_HEADS` or :data:`MAX_HEADS`; the second of
        :attr:`layer_head`)."""
        return self.layer_head[1]

    # ------------------------------------------------------------------ the text and its results
    def set_prediction(self, pred) -> None:
        """Show ``pred``; the token selection survives only if the tokens are unchanged; None also clears the
        internals and embedding norms (they belong to the old text).

        The token colouring returns to attention (scores of another text do not fit); views redraw on
        ``events.prediction``, so no ``events.importance`` is sent for it. What the new text clears is announced
        first, ``events.prediction`` last (while those slots run, :attr:`prediction` is already ``pred``).
        """
        old = self.prediction
        with self.events.prediction.paused():
            self.prediction = pred
            self._set_prediction_results(pred, old)

    def _set_prediction_results(self, pred, old) -> None:
        """What :meth:`set_prediction` derives from the new prediction ``pred`` (``old``: the one before)."""
        with self.events.importance.blocked():
            self.importance = None
        self.inside.follow(None if pred is None else pred.tokens)
        if pred is None:  # nothing is current: what was computed for the old text goes with it
            if self.internals is not None:
                self.set_internals(None)
            if self.embedding_norms is not None:
                self.set_embedding_norms(None)
        if self.layer_probabilities is not None:  # of the old prediction; the new one's follow from the worker
            self.set_layer_probabilities(None)
        if self.flow is not None and not self.flow_fits(self.flow):
            self.set_flow(None, "")
        if self.value_norms is not None and (pred is None or old is None or old.text != pred.text):
            self.set_value_norms(None)
        if pred is None or old is None or list(old.tokens) != list(pred.tokens):
            if not self.selection:  # no change of value, but of text: announced all the same
                self.events.selection.emit((), ())
            self.selection = ()

    def clear_results(self) -> None:
        """Show that nothing is current (a model switch started): the prediction, the internals, the embedding
        norms and the explanations are cleared and announced, until the next :meth:`set_prediction`."""
        self.set_prediction(None)
        self.clear_explanations()

    def set_internals(self, internals) -> None:
        """Adopt one layer's :class:`model.records.internals.AttentionInternals` (or None) and announce it."""
        self.internals = internals

    def set_embedding_norms(self, norms) -> None:
        """Adopt the current text's :class:`model.records.internals.EmbeddingNorms` (or None) and announce them."""
        self.embedding_norms = norms

    def current_internals(self):
        """The internals if they belong to the current prediction's tokens and the selected layer, else None."""
        x, pred = self.internals, self.prediction
        if x is None or pred is None or x.layer != self.layer or x.tokens != tuple(pred.tokens):
            return None
        return x

    def add_explanation(self, result: ExplanationResult) -> None:
        """Keep ``result`` (one method's explanation of the current text) and announce it."""
        self.explanations[result.method] = result
        self.events.explanation_added.emit(result)

    def discard_explanation(self, method: str) -> None:
        """Forget one method's result (it is being recomputed)."""
        self.explanations.pop(method, None)

    def clear_explanations(self) -> None:
        """Forget every explanation (a new text or model)."""
        self.explanations.clear()
        self.events.explanations_cleared.emit()

    # ------------------------------------------------------------------ the token colouring
    def set_importance(self, scores, signed: bool = False, name: str = "") -> bool:
        """Colour the tokens by per-token ``scores`` (float [T] for the whole review), or by attention (None).

        Returns:
            True when adopted. Scores that do not fit the current prediction (wrong length, or no
            prediction) are refused: False, and the colouring is attention again (no event: the caller
            says why, e.g. :meth:`desktop_app.views.token_view.TokenView.set_importance`).
        """
        if scores is None:
            self.importance = None
            return True
        arr = np.array(scores, dtype=np.float32).reshape(-1)
        if self.prediction is None or len(arr) != self.prediction.document.num_tokens:  # the whole review's tokens
            with self.events.importance.blocked():
                self.importance = None
            return False
        arr.setflags(write=False)
        self.importance = TokenImportance(arr, bool(signed), name or "importance")
        return True

    # ------------------------------------------------------------------ the highlighted words
    def set_highlighted_words(self, words) -> None:
        """Highlight these words or bigrams (any iterable of strings; compared case-insensitively, whole words) in
        every review shown until changed; an empty iterable highlights none. Survives new predictions."""
        self.highlighted_words = frozenset(" ".join(str(w).lower().split()) for w in words if str(w).strip())

    # ------------------------------------------------------------------ the selection
    def set_layer_head(self, layer: int, head: int, force: bool = False) -> None:
        """Select ``layer`` (0-based) and head choice (0-based, MEAN_HEADS or MAX_HEADS), clamped to the model;
        ``force``: announce it even when unchanged."""
        if self.info is not None:
            layer = min(max(0, int(layer)), self.info.n_layers - 1)
            if head not in (MEAN_HEADS, MAX_HEADS):
                head = min(max(0, int(head)), self.info.n_heads - 1)
        new = (int(layer), int(head))
        if force and new == self.layer_head:
            self.events.layer_head.emit(new, new)
        self.layer_head = new

    def select_token(self, index: int, additive: bool = False) -> None:
        """Select query token ``index`` (again: none); with ``additive`` (Shift-click) toggle it in a multi-token
        selection."""
        index = int(index)
        if self.prediction is None or not 0 <= index < self.prediction.num_tokens:
            return
        if additive:
            sel = set(self.selection)
            sel.symmetric_difference_update({index})
            new = tuple(sorted(sel))
        else:
            new = () if self.selection == (index,) else (index,)
        self.set_selection(new)

    def set_selection(self, indices) -> None:
        """Replace the selection with ``indices`` (any iterable of token indices)."""
        self.selection = tuple(sorted({int(i) for i in indices}))

    def clear_selection(self) -> None:
        """Select no token."""
        self.set_selection(())

    # ------------------------------------------------------------------ what the attention views show
    def set_show(self, show: str) -> None:
        """Show ``show`` (one of :data:`SHOW_CHOICES`) in every attention view; a flow that no longer fits is dropped.

        Raises:
            ValueError: an unknown choice (the message names the choices).
        """
        if show not in SHOW_CHOICES:
            raise ValueError(f"unknown view choice {show!r}; choose one of {', '.join(SHOW_CHOICES)}")
        if show != self.show:
            if self.flow is not None and self.flow.method != show:
                with self.events.flow.blocked():  # the views redraw on events.show
                    self.flow, self.flow_note = None, ""
            self.show = show

    def flow_fits(self, flow) -> bool:
        """True when ``flow`` (an :class:`model.records.flow.AttentionFlow`) is of the current text's tokens, the chosen
        :attr:`show` and the current head mask."""
        pred = self.prediction
        if flow is None or pred is None or flow.method != self.show or flow.tokens != tuple(pred.tokens):
            return False
        return same_mask(flow.head_mask, self.head_mask)

    def set_flow(self, flow, note: str = "") -> None:
        """Adopt the current text's attention flow (or None with ``note``, e.g. "Computing ALTI\u2026" or why it
        cannot be computed) and announce it."""
        self.flow_note = "" if flow is not None else str(note)
        self.flow = flow

    def set_value_norms(self, norms) -> None:
        """Adopt float32 (L, H, T) ||f^h(x_j)|| of the current text (or None) and announce them."""
        self.value_norms = norms

    def set_causal(self, on: bool) -> None:
        """Show (True) or hide the causal-mask what-if, :mod:`model.attention.lessons`: a lesson; the prediction is unchanged."""
        self.causal = bool(on)

    # ------------------------------------------------------------------ heads switched off
    def set_head_mask(self, mask) -> None:
        """Switch heads off: ``mask`` array-like (L, H), 0 removes a head, 1 keeps it; None or all ones: every head on.

        Raises:
            ValueError: the wrong shape for the model, or values outside [0, 1].
        """
        mask = checked_head_mask(mask, self.info)
        self.head_mask = mask  # announced unless the same heads are off

    def head_on(self, layer: int, head: int) -> bool:
        """True unless head ``head`` of layer ``layer`` (0-based) is switched off."""
        return self.head_mask is None or bool(self.head_mask[layer, head] > 0)

    def toggle_head(self, layer: int, head: int) -> None:
        """Switch head ``head`` of layer ``layer`` (0-based) off, or on again."""
        if self.info is None:
            return
        m = np.ones((self.info.n_layers, self.info.n_heads), np.float32) if self.head_mask is None else \
            self.head_mask.copy()
        m[layer, head] = 0.0 if m[layer, head] > 0 else 1.0
        self.set_head_mask(m)

    def reset_heads(self) -> None:
        """Every head on again."""
        self.set_head_mask(None)

    def set_head_importance(self, importance, name: str = "") -> None:
        """Overlay per-head importance (array-like (L, H), e.g. from ``python -m model.evaluation.head_importance``),
        or none (None).

        Raises:
            ValueError: not (L, H) for the loaded model, or not finite.
        """
        if importance is not None:
            importance = np.array(importance, dtype=np.float32)
            if self.info is not None and importance.shape != (self.info.n_layers, self.info.n_heads):
                raise ValueError(f"head importance of shape {importance.shape}; the model has "
                                 f"{self.info.n_layers} layers x {self.info.n_heads} heads")
            if importance.ndim != 2 or not np.isfinite(importance).all():
                raise ValueError("head importance must be a finite (layers, heads) table")
            importance.setflags(write=False)
        self.head_importance_name = name if importance is not None else ""
        self.head_importance = importance

    def set_layer_probabilities(self, probs: LayerProbabilities | None) -> None:
        """Adopt the current text's prediction by layer (or None) and announce it."""
        self.layer_probabilities = probs

    # ------------------------------------------------------------------ pinned analyses
    def pin_current(self) -> Pin | None:
        """Pin the current analysis (text, prediction, head mask); returns the pin, or None with nothing to pin.
        Pinning the same text and mask twice keeps one pin (the newest)."""
        pred = self.prediction
        if pred is None:
            return None
        pin = Pin(pred.document.text, pred, self.head_mask, pred.text_pair)  # the whole review (pred: maybe a window)
        kept = tuple(p for p in self.pins if p.of_model_b or not (p.text == pin.text
                                                                   and same_mask(p.head_mask, pin.head_mask)))
        self.set_pins((*kept, pin))
        return pin

    def set_pins(self, pins) -> None:
        """Replace the pins (an iterable of :class:`Pin`, oldest first) and announce them."""
        self.pins = tuple(pins)

    def unpin(self, index: int = -1) -> None:
        """Remove pin ``index`` (default the newest); nothing when there is none."""
        if self.pins:
            pins = list(self.pins)
            del pins[index]
            self.set_pins(pins)

    def clear_pins(self) -> None:
        """Remove every pin."""
        self.set_pins(())
