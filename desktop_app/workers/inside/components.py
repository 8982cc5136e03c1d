"""The Components view's jobs (issue 53, section 1): the current text's component attribution and one FFN's
neurons, off the GUI thread.

Jobs of :mod:`desktop_app.workers.jobs`, run on the Components dock's own :class:`~desktop_app.workers.jobs.Jobs`
(thread "components", :mod:`desktop_app.panels.inside.components`) with the window's one shared
:class:`model.Predictor` (never copied). Each returns a NumPy record; the errors the model raises reach the
controller's ``on_error`` (:class:`model.records.components.ComponentsNotSupported`, ValueError, ...).
"""

from __future__ import annotations

from ..jobs import JobContext


def components_job(ctx: JobContext, predictor, text: str, text_pair: str | None, target: int, head_mask):
    """``predictor.component_attribution(text, target, text_pair, head_mask=head_mask)``: a
    :class:`model.records.components.ComponentAttribution` (the whole text, a long one read in windows)."""
    ctx.check()
    return predictor.component_attribution(text, target=target, text_pair=text_pair, head_mask=head_mask)


def ffn_neurons_job(ctx: JobContext, predictor, text: str, text_pair: str | None, target: int, head_mask, layer: int,
                    top: int):
    """``predictor.ffn_neurons(text, layer, target, top, text_pair, head_mask=head_mask)``: a
    :class:`model.records.components.FfnNeurons` (``layer`` 1-based)."""
    ctx.check()
    return predictor.ffn_neurons(text, layer, target=target, top=top, text_pair=text_pair, head_mask=head_mask)
