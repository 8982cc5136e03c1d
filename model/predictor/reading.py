"""How a :class:`model.Predictor` reads its model's outputs (the task) and its inputs (single texts or sentence
pairs): the mixin :class:`PredictorReading`.

The task (:mod:`model.tasks.task`) comes from the model folder's ``config.json`` (``problem_type`` and the number of
outputs, decided by :func:`model.tasks.task.task_from_config` as ``transformers``' text-classification pipeline decides
its ``function_to_apply``); the bundled model and our own folders are single-label. :meth:`PredictorReading.set_task`
overrides it (the same logits, read another way; nothing is reloaded). A pair is encoded as the model's tokenizer
encodes one (:meth:`model.hf.encoding.HFTextEncoder.encode_pair`); a model whose tokenizer has no pair template
refuses it with :class:`model.records.prediction.PairNotSupported`.
"""

from __future__ import annotations

import numpy as np
import torch

from model.core.tokenizer import Encoded
from model.text.inputs import InputSpec, check_text
from model.tasks.readout import probabilities
from model.tasks.task import SINGLE_LABEL, Task, check_threshold, label_text, task_from_config
from model.tasks.types import task_type


def config_task(config) -> Task:
    """The task a loaded model's config gives: Hugging Face folders by ``problem_type`` and the number of labels;
    the bundled model and our own folders (no ``problem_type`` field) single-label, ``source="bundled"``."""
    if not hasattr(config, "problem_type"):
        return Task(SINGLE_LABEL, source="bundled")
    return Task(task_from_config(config.problem_type, len(config.labels)), source="config")


class PredictorReading:
    """The task and sentence-pair half of :class:`model.Predictor` (uses its ``encoder``, ``labels``,
    ``model_dir`` and ``_task``)."""

    @property
    def task(self) -> Task:
        """How the head's outputs are read (:class:`model.tasks.task.Task`: kind, threshold, source)."""
        return self._task

    def set_task(self, kind: str | None = None, threshold: float | None = None) -> Task:
        """Read the same logits as another task and/or with another multi-label threshold (``source="user"``).

        Args:
            kind: one of :data:`model.tasks.task.TASKS`, or None to keep the current one.
            threshold: the multi-label decision threshold in (0, 1), or None to keep it.

        Returns:
            The new :class:`~model.tasks.task.Task`.

        Raises:
            ValueError: an unknown task or a threshold outside (0, 1); regression on a head with more than one
                output.
        """
        new = self._task.type if kind is None else task_type(kind)
        threshold = self._task.threshold if threshold is None else check_threshold(threshold)
        new.check_outputs(len(self.labels))
        self._task = Task(new.id, threshold, "user")
        return self._task

    @property
    def reads_pairs(self) -> bool:
        """True when the model's tokenizer encodes sentence pairs (a pair template); False for the bundled model."""
        return bool(getattr(self.encoder, "reads_pairs", False))

    @property
    def input_spec(self) -> InputSpec:
        """What the model reads (:class:`model.text.inputs.InputSpec`: one text, or a pair when :attr:`reads_pairs`),
        naming the model by its folder in messages."""
        return InputSpec.of(self)

    def check_pair(self, text_pair) -> str | None:
        """``text_pair`` checked (None stays None): :meth:`model.text.inputs.InputSpec.check_pair`.

        Raises:
            PairNotSupported: a pair on a model that reads single texts (the message names the model).
            ValueError: an empty or bad second text (see :func:`~model.text.inputs.check_text`).
        """
        return self.input_spec.check_pair(text_pair)

    def encode(self, text: str, text_pair: str | None = None) -> Encoded:
        """Tokenize ``text`` (or the pair ``text``, ``text_pair``) as the model will see it
        (see :class:`model.core.tokenizer.Encoded`; a pair has ``segment_ids``).

        Raises:
            ValueError: see :func:`~model.text.inputs.check_text` (either text); PairNotSupported: see :meth:`check_pair`.
        """
        pair = self.check_pair(text_pair)
        if pair is None:
            return self.encoder.encode(check_text(text))
        return self.encoder.encode_pair(check_text(text), pair)

    def probabilities(self, logits: torch.Tensor) -> np.ndarray:
        """float32 [..., C] probabilities of float logits [..., C] (float32 or bfloat16) under :attr:`task` (softmax,
        sigmoid; [..., 0] for regression), computed in float32 from the logits converted to float32 whatever the
        precision (so a softmax row sums to 1 within float32 rounding), as :func:`model.tasks.readout.probabilities`."""
        return probabilities(logits.float(), self._task.type).cpu().numpy().astype(np.float32)

    def read_out(self, logits: np.ndarray, probs: np.ndarray) -> tuple[str, float | None]:
        """``(label, value)`` of one text's float [C] logits and their probabilities under :attr:`task`
        (``label`` as :attr:`model.Prediction.label`; ``value`` the raw output for regression, else None)."""
        names = self._task.labels_of(probs, self.labels) if len(logits) else ()
        return label_text(names), self._task.type.value_of(logits)
