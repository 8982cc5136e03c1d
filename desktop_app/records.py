"""The records and choices of :class:`desktop_app.state.ExplorerState` (NumPy only, no Qt, no torch).

The head choices (:data:`MEAN_HEADS`, :data:`MAX_HEADS`), what the attention views show (:data:`SHOW_CHOICES`),
and the immutable records the state hands to the views: :class:`TokenImportance`, :class:`LayerProbabilities`,
:class:`Pin`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from model.tasks.types import SINGLE_LABEL

MEAN_HEADS = -1  # head choice: mean over heads
MAX_HEADS = -2  # head choice: element-wise max over heads

SHOW_ATTENTION = "attention"
SHOW_CHOICES: tuple[str, ...] = ("attention", "value_norm", "alti")
"""What the attention views show: the attention weights alpha, the value-weighted norms ||alpha f(x)|| (Kobayashi
et al. 2020) or the ALTI contributions (Ferrando et al. 2022); the last two are :data:`model.records.flow.FLOW_METHODS`."""
SHOW_TITLES: dict[str, str] = {
    "attention": "attention weights",
    "value_norm": "value-weighted (\u2016\u03b1f(x)\u2016)",
    "alti": "ALTI contributions",
}
"""The selector's names of :data:`SHOW_CHOICES`."""


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


@dataclass(frozen=True)
class LayerProbabilities:
    """The prediction by layer of the current text (a "logit lens" for encoders, ``Predictor.layer_predictions``).

    Attributes:
        probabilities: float32 (L + 1, C), read-only: row 0 after the embeddings, row l after layer l, with the state's
            head mask in force (the last row is the prediction's probabilities).
        reference: float32 (L + 1, C), read-only, the same with every head on; None when no head is off.
        labels: the C class names.
        task: the model's task (:data:`model.tasks.task.TASKS`); for regression the rows hold the predicted value
            (C = 1, the raw output) instead of probabilities.
    """

    probabilities: np.ndarray
    reference: np.ndarray | None
    labels: tuple[str, ...]
    task: str = SINGLE_LABEL


@dataclass(frozen=True)
class Pin:
    """A pinned analysis the current one is compared with.

    Attributes:
        text: the review text as analysed (a long review's whole text: ``prediction.document.text``).
        prediction: its :class:`model.records.prediction.Prediction` (with the head mask then in force; for a long
            review the window then shown, carrying the whole review's verdict and ``document``); None for a pin of
            model B (computed by the comparison).
        head_mask: the (L, H) head mask it was analysed with, read-only, or None (all heads on).
        text_pair: a sentence pair's second text, or None.
        model: which model the pin reads the text with: :data:`MODEL_A` (the model on display) or :data:`MODEL_B` (the
            second model opened to compare with, issue 44: the Compare view then shows the two models' importances
            of the same text side by side).
    """

    text: str
    prediction: object
    head_mask: np.ndarray | None = None
    text_pair: str | None = None
    model: str = ""

    @property
    def of_model_b(self) -> bool:
        """True for a pin of the second model (:data:`MODEL_B`)."""
        return self.model == MODEL_B


MODEL_A = ""  # a pin of the model on display
MODEL_B = "B"  # a pin of the second model (Model > Compare with a second model...)

def same_mask(a, b) -> bool:
    """True when two head masks (None = every head on) switch the same heads off by the same amount."""
    if a is None or b is None:
        return a is None and b is None
    return a.shape == b.shape and bool(np.array_equal(a, b))


def checked_head_mask(mask, info=None):
    """A head mask as the state keeps it: ``mask`` array-like (L, H), 0 removes a head, 1 keeps it, as a read-only
    float32 array; None when ``mask`` is None or all ones (every head on).

    Raises:
        ValueError: not (L, H) for ``info`` (a :class:`model.records.info.ModelInfo`, when given), or values outside
            [0, 1].
    """
    if mask is None:
        return None
    m = np.array(mask, dtype=np.float32)
    if info is not None and m.shape != (info.n_layers, info.n_heads):
        raise ValueError(f"head mask of shape {m.shape}; the model has {info.n_layers} layers x {info.n_heads} heads")
    if m.ndim != 2 or not np.isfinite(m).all() or (m < 0).any() or (m > 1).any():
        raise ValueError("a head mask is (layers, heads) with values in [0, 1]")
    if (m == 1).all():
        return None
    m.setflags(write=False)
    return m
