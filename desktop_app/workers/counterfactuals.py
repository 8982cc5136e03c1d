"""The "What if" jobs (issue 43): counterfactual edits of the current text, its smallest flip, and the edits of a
scored corpus, run by :class:`~desktop_app.workers.jobs.Jobs` on the one shared Predictor (progress through
``ctx.report((done, total))``, Cancel through ``ctx.should_stop``)."""

from __future__ import annotations

from model.counterfactuals import SearchCancelled, generate, smallest_flip

from .jobs import JobContext, JobStopped


def edits_job(ctx: JobContext, predictor, inputs: list[tuple[str, str | None]], names: tuple[str, ...], settings,
              head_mask=None, origins: list[str] | None = None) -> list:
    """The scored edits (:class:`model.records.counterfactual.Edit`) of ``inputs`` by the generators ``names``
    (:func:`model.counterfactuals.generate`), under the state's ``head_mask``. Raises JobStopped on Cancel (the
    edits made so far are dropped)."""
    options = predictor.options(head_mask=head_mask)
    edits = generate(predictor, inputs, names, settings, options, origins,
                     progress=lambda done, total: ctx.report((done, total)), should_stop=ctx.should_stop)
    ctx.check()
    return edits


def smallest_flip_job(ctx: JobContext, predictor, text: str, text_pair: str | None, settings, budget: int,
                      head_mask=None):
    """:func:`model.counterfactuals.smallest_flip` of one input (a
    :class:`model.counterfactuals.SearchResult`); progress ``(step, steps)``. Raises JobStopped on Cancel."""
    try:
        return smallest_flip(predictor, text, text_pair, settings, predictor.options(head_mask=head_mask), budget,
                             progress=lambda k, n, _what: ctx.report((k, n)), should_stop=ctx.should_stop)
    except SearchCancelled:
        raise JobStopped from None


__all__ = ["edits_job", "smallest_flip_job"]
