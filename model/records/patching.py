"""Activation patching between two texts: :class:`PatchingResult` (NumPy only, no torch).

:meth:`model.Predictor.activation_patching` returns it; the hooks are :mod:`model.explain.patching`, the batching and
the position matching :mod:`model.predictor._patching`. Every array is read-only, so the record may cross threads
and reach the GUI's views.

Two texts: the *clean* one (the pinned text; the verdict we want to explain) and the *corrupted* one (a What if edit
of it). Patching runs one text (the *receiving* run) with one activation replaced by the other text's (the *source*)
at the positions the word alignment matches (:func:`model.text.alignment.align_tokens`):

* ``direction="denoise"``: the corrupted text receives the clean one's activation (does this site restore the verdict?);
* ``direction="noise"``: the clean text receives the corrupted one's (does this site break it?).

Sites (:data:`SITES`; L layers, H heads, T the receiving text's tokens):

``resid``
    the residual stream entering layer l (the embeddings for l = 0) at one position t: ``effects`` [L, T];
``head``
    head h's output in layer l: its d_head slice of the attention context, before the output projection W_O (the
    site of the head mask, Michel et al. 2019), at every aligned position: ``effects`` [L, H];
``ffn``
    layer l's feed-forward output (the second linear layer's output, before the residual add) at every aligned
    position: ``effects`` [L].

The score is the target's logit (regression: the predicted value, output 0). ``effects`` is, for both directions,
``(patched - corrupted) / (clean - corrupted)``: where the patched run's score lies between the corrupted text's (0)
and the clean text's (1). Denoising starts at 0 (nothing restored) and a site that carries the whole difference
reaches 1; noising starts at 1 (nothing broken) and such a site drops to 0. NaN where a position has no partner in
the other text (never patched; :attr:`PatchingResult.unaligned`), and everywhere when the two scores are equal.

``method="attribution"`` is attribution patching (Nanda 2023, "Attribution Patching: Activation Patching At
Industrial Scale"): the first-order Taylor estimate ``(a_source - a_receiving) . dscore/da`` at the receiving run,
from one forward pass of the source and one forward and one backward pass of the receiving text. It is an
approximation (:attr:`PatchingResult.approximate`); its agreement with real patching is measured in docs/components.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from model.records.prediction import freeze_arrays

SITES: tuple[str, ...] = ("resid", "head", "ffn")
"""The sites :meth:`model.Predictor.activation_patching` patches (module docstring)."""

DIRECTIONS: tuple[str, ...] = ("denoise", "noise")
"""``denoise``: clean into corrupted; ``noise``: corrupted into clean."""

PATCHING_METHODS: tuple[str, ...] = ("exact", "attribution")
"""``exact``: one patched forward pass per cell (batched); ``attribution``: the gradient estimate (Nanda 2023)."""


class PatchingCancelled(Exception):
    """Raised when the caller's ``should_stop()`` returned True: checked before every patched pass and, inside one,
    before every module call (:func:`model.explain.patching.stop_checks`), so within one module's time."""


def check_patching(site: str, direction: str, method: str, target: int | None = None, n_outputs: int = 0) -> None:
    """Raise ValueError naming the accepted values when ``site``, ``direction`` or ``method`` is not one of
    :data:`SITES`, :data:`DIRECTIONS`, :data:`PATCHING_METHODS`, or ``target`` is neither None nor an output index
    in [0, ``n_outputs``)."""
    for name, value, allowed in (("site", site, SITES), ("direction", direction, DIRECTIONS),
                                 ("method", method, PATCHING_METHODS)):
        if value not in allowed:
            raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")
    if target is not None and not 0 <= int(target) < n_outputs:
        raise ValueError(f"target must be an output index in [0, {n_outputs}), got {target}")


@dataclass(frozen=True)
class PatchingResult:
    """Activation patching of one site between a clean and a corrupted text (module docstring).

    Attributes:
        site: one of :data:`SITES`. direction: one of :data:`DIRECTIONS`. method: one of :data:`PATCHING_METHODS`.
        effects: float32 [L, T] (resid), [L, H] (head) or [L] (ffn): ``(patched - corrupted) / (clean -
            corrupted)``, unitless; NaN for unaligned positions (resid) and when the two scores are equal.
        patched_scores: float32, the shape of ``effects``: the patched run's score (``attribution``: its first-order
            estimate), in logits (regression: the value's units); NaN where ``effects`` is NaN for a position.
        clean_score, corrupted_score: the target's logit on each text unpatched (regression: the value).
        target: the output index scored (default the clean text's ``Prediction.label_index``); label: its name.
        clean_tokens, corrupted_tokens: each text's tokens as the model saw them (``Prediction.tokens``).
        alignment: int64 [T]: for each position of the receiving text (corrupted when denoising, clean when noising)
            the position of the source text whose activation it receives, -1 when it has none.
        unaligned: the receiving positions that are not patched, named ``"7:terrible"`` (position, token).
        passes: forward passes run (attribution: 2, plus one backward pass); elapsed_s: wall seconds.
    """

    site: str
    direction: str
    method: str
    effects: np.ndarray
    patched_scores: np.ndarray
    clean_score: float
    corrupted_score: float
    target: int
    label: str
    clean_tokens: tuple[str, ...]
    corrupted_tokens: tuple[str, ...]
    alignment: np.ndarray
    unaligned: tuple[str, ...]
    passes: int
    elapsed_s: float

    def __post_init__(self) -> None:
        freeze_arrays(self)

    @property
    def approximate(self) -> bool:
        """True for attribution patching, a first-order estimate (Nanda 2023), not a patched forward pass."""
        return self.method == "attribution"

    @property
    def tokens(self) -> tuple[str, ...]:
        """The receiving text's tokens, which ``effects`` [L, T] (resid) is indexed by."""
        return self.corrupted_tokens if self.direction == "denoise" else self.clean_tokens

    @property
    def title(self) -> str:
        """A one-line description for a view or a report, saying when the numbers are an approximation."""
        what = {"resid": "residual stream by layer and position", "head": "head outputs",
                "ffn": "feed-forward outputs"}[self.site]
        how = ("attribution patching (gradient approximation, Nanda 2023)" if self.approximate
               else "activation patching")
        return f"{how}, {self.direction}: {what}, restored share of the {self.label or 'output'} logit"
