"""The shared view state: current prediction, its explanations, selected layer/head and selected query tokens.

Every view reads this one object and listens to its signals, so clicking a
token in any view selects it in all of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from .common import MAX_HEADS, MEAN_HEADS

if TYPE_CHECKING:  # pragma: no cover - the records import no torch, but model.explain's package does
    from model.explain.records import ExplanationResult
    from model.prediction import Prediction


class ExplorerState(QObject):
    """Current ``model.Prediction``, its explanations, model info, layer, head choice and token selection.

    Signals:
        prediction_changed(object): a new Prediction (or None when cleared).
        explanation_added(object): an :class:`model.explain.ExplanationResult` for the current text.
        explanations_cleared(): the explanations no longer fit (new text or model).
        model_changed(object): a new :class:`desktop_app.worker.ModelInfo`.
        layer_head_changed(int, int): (layer, head choice); head is 0-based or
            :data:`MEAN_HEADS` / :data:`MAX_HEADS`.
        selection_changed(tuple): the selected query token indices (sorted; empty = none).
        internals_changed(object): new :class:`model.internals.AttentionInternals` for the current text and
            layer (computed on a worker, :mod:`desktop_app.internals_worker`), or None.
        embedding_norms_changed(object): new :class:`model.internals.EmbeddingNorms` for the current text.
    """

    prediction_changed = Signal(object)
    explanation_added = Signal(object)
    explanations_cleared = Signal()
    model_changed = Signal(object)
    layer_head_changed = Signal(int, int)
    selection_changed = Signal(tuple)
    internals_changed = Signal(object)
    embedding_norms_changed = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.prediction: Prediction | None = None
        self.explanations: dict[str, ExplanationResult] = {}  # method -> result, for the current text
        self.info = None
        self.layer = 0
        self.head = MEAN_HEADS
        self.selection: tuple[int, ...] = ()
        self.internals = None  # model.internals.AttentionInternals of (current text, some layer), or None
        self.embedding_norms = None  # model.internals.EmbeddingNorms of the current text, or None

    @property
    def n_layers(self) -> int:
        """L, or 0 before a model is known."""
        return self.info.n_layers if self.info is not None else 0

    @property
    def n_heads(self) -> int:
        """H, or 0 before a model is known."""
        return self.info.n_heads if self.info is not None else 0

    def set_model(self, info) -> None:
        """Adopt a newly loaded model's :class:`ModelInfo`; clamps layer/head to its size."""
        self.info = info
        self.model_changed.emit(info)
        self.set_layer_head(self.layer, self.head, force=True)

    def set_prediction(self, pred) -> None:
        """Show ``pred``; the token selection survives only if the tokens are unchanged."""
        old = self.prediction
        self.prediction = pred
        if pred is None or old is None or list(old.tokens) != list(pred.tokens):
            self.selection = ()
            self.selection_changed.emit(())
        self.prediction_changed.emit(pred)

    def set_internals(self, internals) -> None:
        """Adopt one layer's :class:`model.internals.AttentionInternals` (or None) and announce it."""
        self.internals = internals
        self.internals_changed.emit(internals)

    def set_embedding_norms(self, norms) -> None:
        """Adopt the current text's :class:`model.internals.EmbeddingNorms` (or None) and announce them."""
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
        if self.explanations:
            self.explanations.clear()
        self.explanations_cleared.emit()

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
        """Select query token ``index``; with ``additive`` (Shift-click) toggle it in a multi-token selection.

        Clicking the only selected token again clears the selection.
        """
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
