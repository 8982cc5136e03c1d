"""How :class:`model.Predictor` reads its model's inputs (single texts or sentence pairs) and outputs (the task), and
:class:`Parts`, what its helper modules are given of it.

The task (:mod:`model.tasks.task`) comes from the model folder's ``config.json`` (``problem_type`` and the number of
outputs, decided by :func:`model.tasks.task.task_from_config` as ``transformers``' text-classification pipeline decides
its ``function_to_apply``); the bundled model and our own folders are single-label. ``Predictor.set_task`` overrides it
(:func:`checked_task`: the same logits, read another way; nothing is reloaded). A pair is encoded as the model's
tokenizer encodes one (:meth:`model.hf.encoding.HFTextEncoder.encode_pair`); a model whose tokenizer has no pair
template refuses it with :class:`model.records.prediction.PairNotSupported`. Private to :mod:`model.predictor`.
"""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from model.core.tokenizer import Encoded
from model.tasks.readout import probabilities as task_probabilities
from model.tasks.task import SINGLE_LABEL, Task, check_threshold, label_text, task_from_config
from model.tasks.types import task_type
from model.text.inputs import InputSpec, check_text


@dataclass(frozen=True)
class Parts:
    """The parts of a loaded model that the Predictor's helpers work with, passed explicitly (read-only: threads
    share them).

    Attributes:
        model: the module a call runs (the float32 model, or its bfloat16 copy for ``predict``/``score_many`` in bf16),
            in eval mode.
        encoder: the text encoder (:class:`model.core.tokenizer.TextEncoder` or
            :class:`model.hf.encoding.HFTextEncoder`): tokenizes, pads, knows ``max_len`` and the special tokens.
        device: where the model's weights are.
        lock: the Predictor's ``forward_lock`` (re-entrant); a pass holds it as :attr:`pass_lock` says.
        labels: the C class names (empty in attention-only mode).
        model_dir: the model folder (named in messages), or None.
    """

    model: torch.nn.Module
    encoder: Any
    device: torch.device
    lock: threading.RLock
    labels: tuple[str, ...]
    model_dir: Path | None

    @property
    def pass_lock(self) -> AbstractContextManager:
        """What one forward pass holds: ``lock`` where the backend changes module state in a pass
        (``stateful_passes``: the Hugging Face one switches its attention implementation), else nothing: passes of
        the bundled encoder run side by side (a head mask is per thread, capture hooks record their own thread's
        pass only), so a prediction never waits for another thread's explanation or batch."""
        return self.lock if self.model.stateful_passes else nullcontext()

    @property
    def n_heads(self) -> int:
        """H, the heads per layer."""
        return self.model.config.n_heads


def config_task(config) -> Task:
    """The task a loaded model's config gives: Hugging Face folders by ``problem_type`` and the number of labels;
    the bundled model and our own folders (no ``problem_type`` field) single-label, ``source="bundled"``."""
    if not hasattr(config, "problem_type"):
        return Task(SINGLE_LABEL, source="bundled")
    return Task(task_from_config(config.problem_type, len(config.labels)), source="config")


def checked_task(current: Task, n_labels: int, kind: str | None, threshold: float | None) -> Task:
    """The task ``Predictor.set_task(kind, threshold)`` gives (``source="user"``): ``kind`` / ``threshold`` or, where
    None, ``current``'s.

    Raises:
        ValueError: an unknown task or a threshold outside (0, 1); regression on a head with more than one output.
    """
    new = current.type if kind is None else task_type(kind)
    threshold = current.threshold if threshold is None else check_threshold(threshold)
    new.check_outputs(n_labels)
    return Task(new.id, threshold, "user")


def reads_pairs(encoder) -> bool:
    """True when ``encoder`` encodes sentence pairs (a pair template); False for the bundled model's."""
    return bool(getattr(encoder, "reads_pairs", False))


def input_spec(encoder, model_dir: Path | None) -> InputSpec:
    """What the model reads (:class:`model.text.inputs.InputSpec`: one text, or a pair when its ``encoder`` has a
    pair template), naming the model by its folder in messages."""
    return InputSpec(reads_pairs(encoder), f"the model in {model_dir}" if model_dir is not None else "this model")


def check_pair(encoder, model_dir: Path | None, text_pair) -> str | None:
    """``text_pair`` checked (None stays None): :meth:`model.text.inputs.InputSpec.check_pair`, the one check.

    Raises:
        PairNotSupported: a pair on a model that reads single texts (the message names ``model_dir``).
        ValueError: an empty or bad second text (see :func:`~model.text.inputs.check_text`).
    """
    return input_spec(encoder, model_dir).check_pair(text_pair)


def encode(encoder, model_dir: Path | None, text: str, text_pair: str | None = None) -> Encoded:
    """``text`` (or the pair ``text``, ``text_pair``) tokenized as the model sees it (:class:`Encoded`; a pair has
    ``segment_ids``).

    Raises:
        ValueError: see :func:`~model.text.inputs.check_text` (either text); PairNotSupported: see :func:`check_pair`.
    """
    pair = check_pair(encoder, model_dir, text_pair)
    if pair is None:
        return encoder.encode(check_text(text))
    return encoder.encode_pair(check_text(text), pair)


def probabilities(logits: torch.Tensor, task: Task) -> np.ndarray:
    """float32 [..., C] probabilities of float logits [..., C] (float32 or bfloat16) under ``task`` (softmax, sigmoid;
    [..., 0] for regression), computed in float32 from the logits converted to float32 whatever the precision (so a
    softmax row sums to 1 within float32 rounding), as :func:`model.tasks.readout.probabilities`."""
    return task_probabilities(logits.float(), task.type).cpu().numpy().astype(np.float32)


def read_out(logits: np.ndarray, probs: np.ndarray, labels: tuple[str, ...], task: Task) -> tuple[str, float | None]:
    """``(label, value)`` of one text's float [C] logits and their probabilities under ``task`` (``label`` as
    :attr:`model.Prediction.label`; ``value`` the raw output for regression, else None)."""
    names = task.labels_of(probs, labels) if len(logits) else ()
    return label_text(names), task.type.value_of(logits)
