"""The job of the Contribution graph dock (issue 53, section 2): :func:`graph_job`, run on the dock's own
:class:`~desktop_app.workers.jobs.Jobs` thread with the one shared :class:`model.Predictor`."""

from __future__ import annotations

from desktop_app.workers.jobs import JobContext


def graph_job(ctx: JobContext, predictor, text: str, threshold: float, head_mask=None, text_pair: str | None = None):
    """``predictor.contribution_graph(text, threshold, text_pair, head_mask=head_mask)``: the graph of the text on
    display (for a long text, the text of the window shown: it fits), computed once at the view's least threshold.

    Returns:
        the :class:`model.records.graph.ContributionGraph`.

    Raises:
        what the Predictor raises (NoClassificationHead, FlowNotSupported, ValueError); the dock shows it.
    """
    return predictor.contribution_graph(text, threshold, text_pair, head_mask=head_mask)


__all__ = ["graph_job"]
