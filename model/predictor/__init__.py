"""The inference facade: :class:`~model.predictor.predictor.Predictor` (one class, in :mod:`.predictor`), the settings
of one call (:class:`~model.predictor.options.PredictOptions`, :mod:`.options`), the precision rule (:mod:`.precision`)
and the private helpers by concern, each a module of typed functions given what they need explicitly (the model, the
encoder, the lock, the call's options; never the Predictor): :mod:`._loading` (model folders, the positional matrix),
:mod:`._reading` (inputs, sentence pairs, the task's read-out; :class:`~._reading.Parts`, what the helpers are
given), :mod:`._scoring` (``predict``, ``score_many``, windows' logits), :mod:`._analysis` (attention flow, prediction
by layer, one layer's internals, embedding norms) and :mod:`._long_text` (documents in windows: explanations and
faithfulness merged over windows, ``score_many``'s items).

Concurrency (issue 41, item 5): one Predictor, one copy of the weights, shared read-only by every thread (the GUI's
prediction, internals, flow, explanation, compare and batch threads); there is no per-thread replica. Inference never
changes the weights, and what is per call is per call:

* the settings are one :class:`~model.predictor.options.PredictOptions` fixed at the start of the call (head mask,
  long-text policy, precision, task): a later ``set_task`` or ``use_precision`` reaches the next call, never a call or
  a job already running with its options (a batch job builds its options once, at its start:
  :func:`model.batch.engine.score_records`);
* a head mask lives in the calling thread's context only (:func:`model.explain.heads.head_mask_hooks`: inert
  pre-hooks registered once when the Predictor is built, the mask in a :class:`contextvars.ContextVar`);
* capture hooks (attention flows, prediction by layer, one layer's internals) are registered and removed within one
  forward pass and record the registering thread's pass only (:func:`model.explain.taps.capture`);
* so a forward pass of the bundled encoder changes no shared state, and the Predictor's own passes (``predict``,
  ``score_many``, flows, internals) run side by side with other threads' (:attr:`._reading.Parts.pass_lock`): a
  prediction never waits for an explanation or a batch. A Hugging Face model switches its attention implementation
  per pass (``stateful_passes``), so there every pass holds ``Predictor.forward_lock`` (re-entrant), one pass at a
  time (never a whole explanation); the explanation methods and the faithfulness passes always hold it.

Imported lazily (PEP 562): ``import model.predictor.precision`` does not import torch.
"""

from __future__ import annotations

import importlib

__all__ = ["Predictor"]


def __getattr__(name: str):
    """``model.predictor.Predictor``, imported when first asked for."""
    if name == "Predictor":
        value = importlib.import_module(".predictor", __name__).Predictor
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
