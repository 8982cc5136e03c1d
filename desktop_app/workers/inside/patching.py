"""The Patching dock's jobs (issue 53 section 3): activation patching between the pinned text and the current one,
and the prediction of a text to pin, off the GUI thread.

Jobs of :mod:`desktop_app.workers.jobs`, run on the Patching dock's own :class:`~desktop_app.workers.jobs.Jobs`
(:class:`desktop_app.panels.inside.patching.PatchingPanel`) with the one shared :class:`model.Predictor`. They return
NumPy records (:class:`model.records.patching.PatchingResult`, :class:`model.records.prediction.Prediction`).
"""

from __future__ import annotations

from model.records.patching import PatchingCancelled

from ..jobs import JobStopped


def patching_job(ctx, predictor, clean: str, corrupted: str, site: str, direction: str, method: str,
                 target: int | None):
    """``predictor.activation_patching(clean, corrupted, site, target, direction, method)``
    (:meth:`model.Predictor.activation_patching`), its progress ``(done, total)`` patches sent through ``ctx.report``
    and stopped by ``ctx.should_stop`` (Cancel, or a newer request) inside the running pass.

    Returns:
        the :class:`model.records.patching.PatchingResult`.

    Raises:
        JobStopped: cancelled, within one module call of a patched pass (the model's
            :class:`~model.records.patching.PatchingCancelled`); what the model raises otherwise (ValueError,
            NoClassificationHead, FlowNotSupported) goes to the request's ``on_error``.
    """
    try:
        return predictor.activation_patching(clean, corrupted, site=site, target=target, direction=direction,
                                             method=method, progress=lambda done, total: ctx.report((done, total)),
                                             should_stop=ctx.should_stop)
    except PatchingCancelled as exc:
        raise JobStopped(str(exc)) from None


def predict_job(ctx, predictor, text: str, text_pair: str | None, head_mask):
    """``predictor.predict(text, head_mask, text_pair=text_pair)``: the analysis a pin of ``text`` keeps
    (:class:`desktop_app.records.Pin`), for "Pin the original" of a What if edit. Raises what ``predict`` raises."""
    return predictor.predict(text, head_mask, text_pair=text_pair)


__all__ = ["patching_job", "predict_job"]
