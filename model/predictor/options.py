"""The settings of one :class:`model.Predictor` call, checked once: :class:`PredictOptions`.

``predict``, ``score_many``, ``explain``, ``faithfulness``, ``attention_flow``, ``layer_predictions`` and
``attention_internals`` take either the keywords ``head_mask=`` and ``long_text=`` (built into one
:class:`PredictOptions` at the start of the call, with the Predictor's current precision and task) or
``options=`` (one object built once, e.g. by ``Predictor.options()`` at the start of a batch job, so that the job
keeps its precision and task while the GUI changes the Predictor's with ``use_precision`` / ``set_task``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from model.explain.heads import check_head_mask
from model.records.vectors import VectorSpec
from model.tasks.task import SINGLE_LABEL, Task
from model.text.document_windows import check_policy

RUN_PRECISIONS: tuple[str, ...] = ("fp32", "bf16")
"""The precisions a call runs in (``"auto"`` is resolved by ``Predictor.options`` / ``use_precision`` first)."""


@dataclass(frozen=True, eq=False)
class PredictOptions:
    """What one Predictor call runs with; every field is checked once, when the object is built.

    Attributes:
        head_mask: None (every head), or array-like (L, H) of numbers in [0, 1]: 1 keeps head h of layer l, 0 removes
            it (its context vector times 0 before the output projection; Michel et al. 2019), a fraction scales it.
            Stored as :func:`model.explain.heads.check_head_mask` returns it: a read-only float32 (L, H) array, or
            None for an all-ones mask (bit-identical to no mask).
        long_text: ``"windows"`` (a text longer than the model's maximum length is read in side-by-side windows,
            :mod:`model.text.document_windows`) or ``"head_tail"`` (cut to its head and tail); None means
            ``"windows"``.
        precision: ``"fp32"`` or ``"bf16"``: the weights ``predict``, ``score_many`` and ``window_logits`` run
            (:mod:`model.predictor.precision`); explanations, flows and internals always run the float32 weights.
        task: how the logits are read (:class:`model.tasks.task.Task`: kind and multi-label threshold).
        heads: the model's (L, H), which ``head_mask`` is checked against; None: no head mask may be given.
        vectors: None, or which sentence vector ``score_many`` keeps in each Score
            (:class:`model.records.vectors.VectorSpec`).

    Raises:
        ValueError: a head mask that is not numeric, not (L, H) or outside [0, 1], or given without ``heads``; an
            unknown long-text policy or precision. TypeError: ``task`` is not a Task, ``vectors`` not a VectorSpec.
    """

    head_mask: Any = None
    long_text: str | None = None
    precision: str = "fp32"
    task: Task = field(default_factory=lambda: Task(SINGLE_LABEL))
    heads: tuple[int, int] | None = None
    vectors: VectorSpec | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "long_text", check_policy(self.long_text))
        if self.precision not in RUN_PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(RUN_PRECISIONS)}, got {self.precision!r}")
        if not isinstance(self.task, Task):
            raise TypeError(f"task must be a model.tasks.task.Task, got {type(self.task).__name__}")
        if self.vectors is not None and not isinstance(self.vectors, VectorSpec):
            raise TypeError(f"vectors must be a model.records.vectors.VectorSpec, got {type(self.vectors).__name__}")
        if self.head_mask is not None:
            if self.heads is None:
                raise ValueError("a head mask needs the model's (layers, heads): build the options with "
                                 "Predictor.options(head_mask=...)")
            object.__setattr__(self, "head_mask", check_head_mask(self.head_mask, *self.heads))

    @property
    def windowed(self) -> bool:
        """True when a long text is read in windows (``long_text == "windows"``)."""
        return self.long_text == "windows"

    def replace(self, **changes) -> PredictOptions:
        """A copy with ``changes`` (checked again), e.g. ``options.replace(long_text="head_tail")``."""
        return dataclasses.replace(self, **changes)

    def given(self, head_mask, long_text: str | None, heads: tuple[int, int]) -> PredictOptions:
        """These options, given to a call of a model with ``heads`` (L, H) together with its keywords ``head_mask``
        and ``long_text`` (which must then be None).

        Raises:
            ValueError: a keyword given as well as the options; options checked for a model of other (L, H).
        """
        if head_mask is not None or long_text is not None:
            raise ValueError("give head_mask and long_text either as keywords or in options, not both")
        if self.heads not in (None, heads):
            raise ValueError(f"these options were checked for {self.heads} (layers, heads); this model has {heads}")
        return self

    def mask_copy(self) -> np.ndarray | None:
        """A writable copy of the head mask (None without one), for records that keep it."""
        return None if self.head_mask is None else self.head_mask.copy()
