"""ExplorerState: the one owner of what the explorer shows.

Everything on screen is drawn from this one object and changes only through its setters, each announced by a signal:

* the model: :attr:`ExplorerState.info`, the :class:`model.records.info.ModelInfo` of the loaded model;
* the text: :attr:`~ExplorerState.prediction` and what was computed for it on the workers
  (:attr:`~ExplorerState.explanations`, :attr:`~ExplorerState.internals`, :attr:`~ExplorerState.embedding_norms`);
* the selection: :attr:`~ExplorerState.layer`, :attr:`~ExplorerState.head` (a head, or :data:`MEAN_HEADS` /
  :data:`MAX_HEADS`) and the selected query tokens :attr:`~ExplorerState.selection`;
* the token colouring: :attr:`~ExplorerState.importance` (None: attention; else one explanation's scores); the
  highlighted words :attr:`~ExplorerState.highlighted_words` (marked by the token view wherever they occur);
* what the attention views show (:attr:`~ExplorerState.show`: attention weights, or what flows, :data:`SHOW_CHOICES`)
  and the flow of the current text (:attr:`~ExplorerState.flow`, from :mod:`desktop_app.workers.attention_flow`),
  the value-vector norms ||f(x_j)|| beside the weights (:attr:`~ExplorerState.value_norms`), the causal-mask what-if
  of the heatmap and the attention steps (:attr:`~ExplorerState.causal`: a lesson; no prediction ever uses it);
* the head mask (:attr:`~ExplorerState.head_mask`: heads off, for the prediction and every result), a head importance
  (:attr:`~ExplorerState.head_importance`), the prediction by layer (:attr:`~ExplorerState.layer_probabilities`);
* the pinned analyses (:attr:`~ExplorerState.pins`) the current one is compared with; the window of a long review
  the attention views show (:attr:`~ExplorerState.windows`, :mod:`desktop_app.document`: the prediction is then one
  window's, ``prediction.whole`` the review's); the class to explain, the multi-label threshold and the second text
  of a pair (:attr:`~ExplorerState.task`, :mod:`desktop_app.task_choice`).

Views read it and listen to it (a click on a token selects it in all of them); nothing else tells a view what to show.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QObject, Signal

if TYPE_CHECKING:  # pragma: no cover - the records import no torch, but model.explain's package does
    from model.records.explanation import ExplanationResult
    from model.records.info import ModelInfo
    from model.records.prediction import Prediction

from .document import WindowChoice
from .task_choice import TaskChoice
from .records import (  # noqa: F401 - the state's records and choices, re-exported
    MAX_HEADS, MEAN_HEADS, SHOW_ATTENTION, SHOW_CHOICES, SHOW_TITLES, LayerProbabilities, Pin, TokenImportance, same_mask
)


class ExplorerState(QObject):
    """The model, the prediction and its results, the selection and the token colouring (see the module docstring).

    Signals:
        model_changed(object): a new :class:`model.records.info.ModelInfo`.
        prediction_changed(object): a new Prediction (or None when cleared).
        explanation_added(object): an :class:`model.explain.ExplanationResult` for the current text.
        explanations_cleared(): the explanations no longer fit (new text or model).
        internals_changed(object): new :class:`model.records.internals.AttentionInternals` for the current text and
            layer (computed on a worker, :mod:`desktop_app.workers.internals`), or None.
        embedding_norms_changed(object): new :class:`model.records.internals.EmbeddingNorms` for the current text.
        layer_head_changed(int, int): (layer, head choice); head is 0-based or
            :data:`MEAN_HEADS` / :data:`MAX_HEADS`.
        selection_changed(tuple): the selected query token indices (sorted; empty = none).
        importance_changed(object): the new :class:`TokenImportance`, or None (colour by attention).
        highlighted_words_changed(frozenset): the new set of highlighted words (lower case; may be empty).
        show_changed(str): the new :data:`SHOW_CHOICES` entry.
        flow_changed(object): the new :class:`model.records.flow.AttentionFlow` for the current text, method and head mask,
            or None (none yet, or it cannot be computed: :attr:`ExplorerState.flow_note` says why).
        value_norms_changed(object): float32 (L, H, T) ||f^h(x_j)|| of the current text, or None.
        head_mask_changed(object): the new head mask, float32 (L, H) read-only with a 0 for each head off, or None
            (every head on).
        head_importance_changed(object): float32 (L, H) head importance to overlay, or None.
        layer_probabilities_changed(object): the new :class:`LayerProbabilities`, or None.
        pins_changed(tuple): the new tuple of :class:`Pin` (oldest first; may be empty).
        causal_changed(bool): the causal what-if switched on or off.
    """

    model_changed = Signal(object)
    prediction_changed = Signal(object)
    explanation_added = Signal(object)
    explanations_cleared = Signal()
    internals_changed = Signal(object)
    embedding_norms_changed = Signal(object)
    layer_head_changed = Signal(int, int)
    selection_changed = Signal(tuple)
    importance_changed = Signal(object)
    highlighted_words_changed = Signal(frozenset)
    show_changed = Signal(str)
    flow_changed = Signal(object)
    value_norms_changed = Signal(object)
    head_mask_changed = Signal(object)
    head_importance_changed = Signal(object)
    layer_probabilities_changed = Signal(object)
    pins_changed = Signal(tuple)
    causal_changed = Signal(bool)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.info: ModelInfo | None = None
        self.prediction: Prediction | None = None
        self.explanations: dict[str, ExplanationResult] = {}  # method -> result, for the current text
        self.internals = None  # model.records.internals.AttentionInternals of (current text, some layer), or None
        self.embedding_norms = None  # model.records.internals.EmbeddingNorms of the current text, or None
        self.layer = 0
        self.head = MEAN_HEADS
        self.selection: tuple[int, ...] = ()
        self.importance: TokenImportance | None = None
        self.highlighted_words: frozenset[str] = frozenset()
        self.show = SHOW_ATTENTION
        self.flow = None  # model.records.flow.AttentionFlow of (current text, show, head mask), or None
        self.flow_note = ""  # why no flow is shown ("Computing ALTI..." or the reason it cannot be), "" otherwise
        self.value_norms: np.ndarray | None = None  # (L, H, T) ||f^h(x_j)|| of the current text
        self.head_mask: np.ndarray | None = None  # (L, H), 0 = head off; None = every head on
        self.head_importance: np.ndarray | None = None  # (L, H) overlay, e.g. Michel et al. 2019 eq. 2
        self.head_importance_name = ""
        self.layer_probabilities: LayerProbabilities | None = None
        self.pins: tuple[Pin, ...] = ()
        self.causal = False  # the causal-mask what-if (model.attention.lessons) in the heatmap and the attention steps
        self.windows = WindowChoice(self)  # the window of a long review shown (desktop_app.document)
        self.task = TaskChoice(self)  # the class to explain, the threshold, the second text (desktop_app.task_choice)

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
        """Adopt a newly loaded model's :class:`model.records.info.ModelInfo`; clamps layer/head to its size."""
        self.info = info
        if self.head_mask is not None and self.head_mask.shape != (info.n_layers, info.n_heads):
            self.set_head_mask(None)
        if self.head_importance is not None and self.head_importance.shape != (info.n_layers, info.n_heads):
            self.set_head_importance(None)
        if self.pins:
            self.clear_pins()  # another model: the pinned predictions are of the old one
        self.model_changed.emit(info)
        self.set_layer_head(self.layer, self.head, force=True)

    # ------------------------------------------------------------------ the text and its results
    def set_prediction(self, pred) -> None:
        """Show ``pred``; the token selection survives only if the tokens are unchanged; None also clears the
        internals and embedding norms (they belong to the old text).

        The token colouring returns to attention (scores of another text do not fit); views redraw on
        ``prediction_changed``, so no ``importance_changed`` is sent for it.
        """
        old = self.prediction
        self.prediction = pred
        self.importance = None
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
            self.selection = ()
            self.selection_changed.emit(())
        self.prediction_changed.emit(pred)

    def clear_results(self) -> None:
        """Show that nothing is current (a model switch started): the prediction, the internals, the embedding
        norms and the explanations are cleared and announced, until the next :meth:`set_prediction`."""
        self.set_prediction(None)
        self.clear_explanations()

    def set_internals(self, internals) -> None:
        """Adopt one layer's :class:`model.records.internals.AttentionInternals` (or None) and announce it."""
        self.internals = internals
        self.internals_changed.emit(internals)

    def set_embedding_norms(self, norms) -> None:
        """Adopt the current text's :class:`model.records.internals.EmbeddingNorms` (or None) and announce them."""
        self.embedding_norms = norms
        self.embedding_norms_changed.emit(norms)

    def current_internals(self):
        """The internals if they belong to the current prediction's tokens and the selected layer, else None."""
        x, pred = self.internals, self.prediction
        if x is None or pred is None or x.layer != self.layer or x.tokens != tuple(pred.tokens):
            return None
        return x

    def add_explanation(self, result: ExplanationResult) -> None:
        """Keep ``result`` (one method's explanation of the current text) and announce it."""
        self.explanations[result.method] = result
        self.explanation_added.emit(result)

    def discard_explanation(self, method: str) -> None:
        """Forget one method's result (it is being recomputed)."""
        self.explanations.pop(method, None)

    def clear_explanations(self) -> None:
        """Forget every explanation (a new text or model)."""
        self.explanations.clear()
        self.explanations_cleared.emit()

    # ------------------------------------------------------------------ the token colouring
    def set_importance(self, scores, signed: bool = False, name: str = "") -> bool:
        """Colour the tokens by per-token ``scores`` (float [T] for the whole review), or by attention (None).

        Returns:
            True when adopted. Scores that do not fit the current prediction (wrong length, or no
            prediction) are refused: False, and the colouring is attention again (no signal: the caller
            says why, e.g. :meth:`desktop_app.views.token_view.TokenView.set_importance`).
        """
        if scores is None:
            self.importance = None
            self.importance_changed.emit(None)
            return True
        arr = np.array(scores, dtype=np.float32).reshape(-1)
        if self.prediction is None or len(arr) != self.prediction.whole.num_tokens:  # the whole review's tokens
            self.importance = None
            return False
        arr.setflags(write=False)
        self.importance = TokenImportance(arr, bool(signed), name or "importance")
        self.importance_changed.emit(self.importance)
        return True

    # ------------------------------------------------------------------ the highlighted words
    def set_highlighted_words(self, words) -> None:
        """Highlight these words or bigrams (any iterable of strings; compared case-insensitively, whole words) in
        every review shown until changed; an empty iterable highlights none. Survives new predictions."""
        new = frozenset(" ".join(str(w).lower().split()) for w in words if str(w).strip())
        if new != self.highlighted_words:
            self.highlighted_words = new
            self.highlighted_words_changed.emit(new)

    # ------------------------------------------------------------------ the selection
    def set_layer_head(self, layer: int, head: int, force: bool = False) -> None:
        """Select ``layer`` (0-based) and head choice (0-based, MEAN_HEADS or MAX_HEADS), clamped to the model."""
        if self.info is not None:
            layer = min(max(0, int(layer)), self.info.n_layers - 1)
            if head not in (MEAN_HEADS, MAX_HEADS):
                head = min(max(0, int(head)), self.info.n_heads - 1)
        if force or (layer, head) != (self.layer, self.head):
            self.layer, self.head = int(layer), int(head)
            self.layer_head_changed.emit(self.layer, self.head)

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
        new = tuple(sorted({int(i) for i in indices}))
        if new != self.selection:
            self.selection = new
            self.selection_changed.emit(new)

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
            self.show = show
            if self.flow is not None and self.flow.method != show:
                self.flow, self.flow_note = None, ""
            self.show_changed.emit(show)

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
        self.flow, self.flow_note = flow, ("" if flow is not None else str(note))
        self.flow_changed.emit(flow)

    def set_value_norms(self, norms) -> None:
        """Adopt float32 (L, H, T) ||f^h(x_j)|| of the current text (or None) and announce them."""
        self.value_norms = norms
        self.value_norms_changed.emit(norms)

    def set_causal(self, on: bool) -> None:
        """Show (True) or hide the causal-mask what-if, :mod:`model.attention.lessons`: a lesson; the prediction is unchanged."""
        if bool(on) != self.causal:
            self.causal = bool(on)
            self.causal_changed.emit(self.causal)

    # ------------------------------------------------------------------ heads switched off
    def set_head_mask(self, mask) -> None:
        """Switch heads off: ``mask`` array-like (L, H), 0 removes a head, 1 keeps it; None or all ones: every head on.

        Raises:
            ValueError: the wrong shape for the model, or values outside [0, 1].
        """
        if mask is not None:
            m = np.array(mask, dtype=np.float32)
            if self.info is not None and m.shape != (self.info.n_layers, self.info.n_heads):
                raise ValueError(f"head mask of shape {m.shape}; the model has {self.info.n_layers} layers x "
                                 f"{self.info.n_heads} heads")
            if m.ndim != 2 or not np.isfinite(m).all() or (m < 0).any() or (m > 1).any():
                raise ValueError("a head mask is (layers, heads) with values in [0, 1]")
            mask = None if (m == 1).all() else m
            if mask is not None:
                mask.setflags(write=False)
        if not same_mask(mask, self.head_mask):
            self.head_mask = mask
            self.head_mask_changed.emit(mask)

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
        self.head_importance, self.head_importance_name = importance, (name if importance is not None else "")
        self.head_importance_changed.emit(importance)

    def set_layer_probabilities(self, probs: LayerProbabilities | None) -> None:
        """Adopt the current text's prediction by layer (or None) and announce it."""
        self.layer_probabilities = probs
        self.layer_probabilities_changed.emit(probs)

    # ------------------------------------------------------------------ pinned analyses
    def pin_current(self) -> Pin | None:
        """Pin the current analysis (text, prediction, head mask); returns the pin, or None with nothing to pin.
        Pinning the same text and mask twice keeps one pin (the newest)."""
        pred = self.prediction.whole if self.prediction is not None else None  # the whole review
        if pred is None:
            return None
        pin = Pin(pred.text, pred, self.head_mask)
        kept = tuple(p for p in self.pins if not (p.text == pin.text and same_mask(p.head_mask, pin.head_mask)))
        self.set_pins((*kept, pin))
        return pin

    def set_pins(self, pins) -> None:
        """Replace the pins (an iterable of :class:`Pin`, oldest first) and announce them."""
        self.pins = tuple(pins)
        self.pins_changed.emit(self.pins)

    def unpin(self, index: int = -1) -> None:
        """Remove pin ``index`` (default the newest); nothing when there is none."""
        if self.pins:
            pins = list(self.pins)
            del pins[index]
            self.set_pins(pins)

    def clear_pins(self) -> None:
        """Remove every pin."""
        self.set_pins(())
