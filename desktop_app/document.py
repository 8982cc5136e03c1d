"""Whole documents in the explorer: which window of a long review the attention views show (:class:`WindowChoice`)
and the mapping of one window's per-token values onto the whole review (:func:`document_values`).

A review longer than the model's maximum length is read in side-by-side windows (:mod:`model.text.document_windows`).
The state's prediction (:attr:`desktop_app.state.ExplorerState.prediction`) is then the prediction of one window (its
text, tokens and attention: every attention view works on it unchanged), with the whole review's verdict (label,
probabilities, logits) and the whole review in ``prediction.document`` (:class:`model.records.document.Document`: its
text, tokens, windows and each window's probabilities): the token view, the prediction panel, the explanations and
Compare read that one. Choosing another window asks the window (``WindowChoice.requested``) to analyse it; the answer
is a new state prediction of the same document. NumPy and Qt only.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QObject, Signal

MAX_SHOWN_TOKENS = 20_000  # the token view lays out at most this many tokens of a huge review (around the window)


class WindowChoice(QObject):
    """The window choice of the explorer state (``state.windows``).

    Signals:
        requested(int): window ``w`` of the current review should be shown (the main window analyses it).
    """

    requested = Signal(int)

    def __init__(self, state) -> None:
        super().__init__()  # owned by the state (a plain object, not a QObject parent)
        self.state = state
        self.pending_token: int | None = None  # a document token to select once its window is shown
        state.events.prediction.connect(self._on_prediction)

    @property
    def count(self) -> int:
        """W, the current review's windows (0 without a prediction)."""
        pred = self.state.prediction
        return 0 if pred is None else pred.num_windows

    @property
    def current(self) -> int:
        """The window shown (0 for a review that fits)."""
        pred = self.state.prediction
        return 0 if pred is None else pred.window

    def request(self, w: int) -> None:
        """Show window ``w`` (0-based); nothing when it is shown already or out of range."""
        if 0 <= int(w) < self.count and int(w) != self.current:
            self.requested.emit(int(w))

    def select_document_token(self, j: int, additive: bool = False) -> None:
        """Select the whole review's token ``j`` as query: in the window shown when it reads it, else after the
        window that reads it with the most context (:meth:`model.records.document.Document.window_of`) has been
        shown."""
        pred = self.state.prediction
        if pred is None:
            return
        i = pred.from_document_token(int(j))
        if i is not None:
            self.state.select_token(i, additive=additive)
            return
        self.pending_token = int(j)
        self.request(pred.document.window_of(int(j)))

    def _on_prediction(self, pred) -> None:
        j, self.pending_token = self.pending_token, None
        if pred is not None and j is not None:
            i = pred.from_document_token(j)
            if i is not None:
                self.state.select_token(i)


def document_values(pred, values: np.ndarray) -> np.ndarray:
    """Per-token values over the whole review: ``values`` as they are when they cover it (an explanation), else one
    window's values (float [T_w], e.g. attention) placed at its tokens, 0 elsewhere.

    Returns:
        float32 [T] over ``pred.document``'s tokens.
    """
    values = np.asarray(values, np.float32)
    if pred is None or pred.num_windows == 1 or len(values) in (0, pred.document.num_tokens):
        return values
    out = np.zeros(pred.document.num_tokens, np.float32)
    index = np.asarray(pred.document_index)
    if len(values) == len(index):
        kept = index >= 0  # a window token the document lacks (another split at the window's edge) is dropped
        out[index[kept]] = values[kept]
    return out


def document_selection(pred, selection) -> tuple[int, ...]:
    """The whole review's token indices of the window's selected tokens."""
    if pred is None or pred.num_windows == 1:
        return tuple(selection)
    idx = pred.document_index
    return tuple(int(idx[i]) for i in selection if 0 <= i < len(idx) and idx[i] >= 0)


def shown_range(pred, max_tokens: int = MAX_SHOWN_TOKENS) -> tuple[int, int]:
    """The whole review's tokens ``[lo, hi)`` the token view lays out: all of them, or for a review of more than
    ``max_tokens`` tokens (a 1 MB text has 225,000) the ``max_tokens`` around the shown window (laying out every
    token would hold the GUI thread for seconds). (0, 0) without a prediction."""
    if pred is None:
        return 0, 0
    T = pred.document.num_tokens
    if T <= max_tokens:
        return 0, T
    s, e = (int(x) for x in pred.document.windows.ranges[pred.window])
    lo = min(max(0, (s + e) // 2 - max_tokens // 2), T - max_tokens)
    return lo, lo + max_tokens
