"""The work behind ``Predictor.explain`` and ``Predictor.faithfulness``: token importance of one text by one method,
and the ERASER faithfulness of an explanation, a long text's windows merged (:mod:`._long_text`). Private to
:mod:`model.predictor`; each function is given the Predictor (the explanation methods call back into its ``predict``
and forward passes) and the call's settled :class:`~model.predictor.options.PredictOptions`.
"""

from __future__ import annotations

from model.explain.heads import head_mask_hooks

from . import _long_text, _reading
from .options import PredictOptions


def explain(predictor, text: str, method: str, target: int | None, text_pair: str | None, opts: PredictOptions,
            kwargs: dict):
    """``Predictor.explain`` under the settled ``opts`` (``kwargs``: the method's keywords, ``head_mask`` removed).
    Returns :class:`model.explain.Explanation`; raises as ``Predictor.explain`` says."""
    from model.explain import METHODS, explain as explain_text

    cut = opts.replace(long_text="head_tail")
    if text_pair is not None:
        predictor.encode(text, text_pair)  # checks both texts; a pair is cut, never read in windows
    elif (doc := _long_text.read_in_windows(predictor.encoder, text, opts.windowed, kwargs.get("prediction"),
                                            lambda: predictor.predict(text, options=opts))) is not None:
        target, progress = doc.label_index if target is None else int(target), kwargs.pop("progress", None)
        kwargs.pop("prediction", None)
        return _long_text.explain_document(predictor.encoder, text, doc, lambda sub: predictor.explain(
            sub, method, target, options=cut, **kwargs), progress)
    elif kwargs.get("prediction") is None and predictor.encode(text).truncated:  # one input: head+tail, as asked
        kwargs["prediction"] = predictor.predict(text, options=cut)
    if kwargs.get("prediction") is None and method in METHODS and METHODS[method].uses_prediction:
        kwargs["prediction"] = predictor.predict(text, text_pair=text_pair, options=opts)  # the call's mask and task
    return explain_text(predictor, text, method, target=target, text_pair=text_pair, head_mask=opts.head_mask,
                        kind=opts.task.kind, **kwargs)


def faithfulness(predictor, text: str, explanation, text_pair: str | None, opts: PredictOptions, kwargs: dict):
    """``Predictor.faithfulness`` under the settled ``opts`` (``kwargs``: passed to
    :func:`model.explain.erasure.faithfulness`). Returns :class:`model.explain.Faithfulness`; raises as
    ``Predictor.faithfulness`` says."""
    from model.explain.erasure import faithfulness as measure_text

    def measure(sub: str, expl, **kw):
        with head_mask_hooks(predictor.model, opts.head_mask, predictor.config.n_heads):  # this thread's passes only
            return measure_text(predictor, sub, expl, kind=opts.task.kind, **kw, **kwargs)

    if text_pair is not None:
        pair = _reading.check_pair(predictor.encoder, predictor.model_dir, text_pair)
        return measure(text, explanation, text_pair=pair)
    if (doc := _long_text.read_in_windows(predictor.encoder, text, opts.windowed, None,
                                          lambda: predictor.predict(text, options=opts))) is not None:
        return _long_text.faithfulness_document(predictor.encoder, text, explanation, doc, measure)
    return measure(text, explanation)
