"""The Block view's job (issue 53, section 4): one token through one encoder layer
(``Predictor.block_trace``), run on the Block dock's own :class:`~desktop_app.workers.jobs.Jobs` runner
(:mod:`desktop_app.panels.inside.block`) with the one shared Predictor."""

from __future__ import annotations


def block_trace_job(_ctx, predictor, text: str, layer: int, position: int, text_pair: str | None = None,
                    head_mask=None):
    """``predictor.block_trace(text, layer, position, text_pair, head_mask=head_mask)``: a
    :class:`model.records.block.BlockTrace` (layer and position 0-based).

    Raises:
        whatever ``Predictor.block_trace`` raises (BlockNotSupported, IndexError, ValueError): the dock shows it.
    """
    return predictor.block_trace(text, layer, position, text_pair=text_pair, head_mask=head_mask)
