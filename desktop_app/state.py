"""ExplorerState: the one owner of what the explorer shows.

Everything on screen is drawn from this one object and changes only through its setters, each of which
announces the change with a signal:

* the model: :attr:`ExplorerState.info`, the :class:`model.info.ModelInfo` of the loaded model;
* the text: :attr:`~ExplorerState.prediction` and what was computed for it on the workers
  (:attr:`~ExplorerState.explanations`, :attr:`~ExplorerState.internals`,
  :attr:`~ExplorerState.embedding_norms`);
* the selection: :attr:`~ExplorerState.layer`, :attr:`~ExplorerState.head` (a head, or
  :data:`MEAN_HEADS` / :data:`MAX_HEADS`) and the selected query tokens :attr:`~ExplorerState.selection`;
* the token colouring: :attr:`~ExplorerState.importance` (None: attention; else one explanation's scores);
* the highlighted words: :attr:`~ExplorerState.highlighted_words` (words or bigrams the token view marks wherever
  they occur, e.g. the word the batch table is filtered by in the corpus dock).

Views read it and listen to it, so clicking a token in any view selects it in all of them, and nothing
else tells a view what to show. A new choice of what to show (the attention-flow choice is next) is one
more attribute, setter and signal here, beside layer and head. No torch: NumPy records only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QObject, Signal

if TYPE_CHECKING:  # pragma: no cover - the records import no torch, but model.explain's package does
    from model.explain.records import ExplanationResult
    from model.info import ModelInfo
    from model.prediction import Prediction

MEAN_HEADS = -1  # head choice: mean over heads
MAX_HEADS = -2  # head choice: element-wise max over heads


@dataclass(frozen=True)
class TokenImportance:
    """Per-token scores that colour the tokens instead of attention.

    Attributes:
        scores: float32 [T], read-only, aligned with the current prediction's tokens.
        signed: the scores can be negative (a diverging colour map, 0 = white).
        name: what they are, e.g. "integrated gradients" (captions and tooltips).
    """

    scores: np.ndarray
    signed: bool
    name: str


class ExplorerState(QObject):
    """The model, the prediction and its results, the selection and the token colouring (see the module docstring).

    Signals:
        model_changed(object): a new :class:`model.info.ModelInfo`.
        prediction_changed(object): a new Prediction (or None when cleared).
        explanation_added(object): an :class:`model.explain.ExplanationResult` for the current text.
        explanations_cleared(): the explanations no longer fit (new text or model).
        internals_changed(object): new :class:`model.internals.AttentionInternals` for the current text and
            layer (computed on a worker, :mod:`desktop_app.workers.internals`), or None.
        embedding_norms_changed(object): new :class:`model.internals.EmbeddingNorms` for the current text.
        layer_head_changed(int, int): (layer, head choice); head is 0-based or
            :data:`MEAN_HEADS` / :data:`MAX_HEADS`.
        selection_changed(tuple): the selected query token indices (sorted; empty = none).
        importance_changed(object): the new :class:`TokenImportance`, or None (colour by attention).
        highlighted_words_changed(frozenset): the new set of highlighted words (lower case; may be empty).
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

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.info: ModelInfo | None = None
        self.prediction: Prediction | None = None
        self.explanations: dict[str, ExplanationResult] = {}  # method -> result, for the current text
        self.internals = None  # model.internals.AttentionInternals of (current text, some layer), or None
        self.embedding_norms = None  # model.internals.EmbeddingNorms of the current text, or None
        self.layer = 0
        self.head = MEAN_HEADS
        self.selection: tuple[int, ...] = ()
        self.importance: TokenImportance | None = None
        self.highlighted_words: frozenset[str] = frozenset()

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
        """Adopt a newly loaded model's :class:`model.info.ModelInfo`; clamps layer/head to its size."""
        self.info = info
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

    # ------------------------------------------------------------------ the token colouring
    def set_importance(self, scores, signed: bool = False, name: str = "") -> bool:
        """Colour the tokens by per-token ``scores`` (float [T] for the current prediction), or by attention (None).

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
        if self.prediction is None or len(arr) != self.prediction.num_tokens:
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
