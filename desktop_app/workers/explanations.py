"""The explanation jobs: explanations and their faithfulness for the current prediction, off the GUI thread.

Jobs of :mod:`desktop_app.workers.jobs`, run on the explanation panel's :class:`~desktop_app.workers.jobs.Jobs`
(thread "explanation-worker", reniced to :data:`~desktop_app.workers.handle.EXPLANATION_NICE`): the only code of the
explanation panel that calls the model. Results are immutable :class:`model.explain.ExplanationResult` records (NumPy
only). :func:`explain_job` (the cheap methods) stops between methods, and inside one, when its request is stale;
:func:`on_demand_job` (integrated gradients, DecompX) also checks the abort flag (Cancel) between its internal batches
(DecompX: layers).
"""

from __future__ import annotations

from dataclasses import dataclass

from model.explain import ExplanationCancelled, ExplanationResult

from .jobs import JobContext, JobStopped


@dataclass(frozen=True)
class MethodFailed:
    """One method of :func:`explain_job` failed (the others go on).

    Attributes:
        method: the method id. message: why, in one line.
    """

    method: str
    message: str


def task_args(prediction, target: int | None = None) -> dict:
    """The keyword arguments that carry a pair's second text (``text_pair``, when ``prediction`` is of a pair) and
    the class to explain (``target``, when given and >= 0) to the Predictor's explain / faithfulness / flow calls;
    empty for a single text and the predicted class (so every Predictor call stays as it was)."""
    kw = {}
    if getattr(prediction, "text_pair", None) is not None:
        kw["text_pair"] = prediction.text_pair
    if target is not None and target >= 0:
        kw["target"] = int(target)
    return kw


def explain_job(ctx: JobContext, predictor, prediction, methods, layer: int, head_mask=None, target: int = -1):
    """Explain ``prediction.document.text`` (the whole review, also when ``prediction`` is one window of a long one)
    with each method in ``methods`` and score its faithfulness, for the model with
    ``head_mask`` ((L, H), 0 = head off; None: every head on), the mask ``prediction`` was made with; ``target``:
    the class to explain (-1: the predicted one); a pair's second text comes from ``prediction.text_pair``.

    A generator: yields one :class:`model.explain.ExplanationResult` or :class:`MethodFailed` per method, and returns
    None once all are done. Stops (:class:`~desktop_app.workers.jobs.JobStopped`) when a newer request was made.
    """
    for method in methods:
        try:
            e = predictor.explain(
                prediction.document.text,
                method,
                prediction=prediction,
                layer=layer,
                should_stop=ctx.stale,
                head_mask=head_mask,
                **task_args(prediction, target),
            )
            f = predictor.faithfulness(prediction.document.text, e, head_mask=head_mask, **task_args(prediction))
        except ExplanationCancelled as exc:
            raise JobStopped from exc
        except Exception as exc:  # noqa: BLE001 - one method's failure is shown in its row; the others go on
            yield MethodFailed(method, str(exc) or type(exc).__name__)
            continue
        yield ExplanationResult(method, e, f)


def on_demand_job(ctx: JobContext, predictor, prediction, n_steps: int, head_mask=None,
                  method: str = "integrated_gradients", target: int = -1) -> ExplanationResult:
    """An on-demand method, integrated gradients (``n_steps`` steps) or DecompX (``method``), for the model with
    ``head_mask``: progress (done, total) per internal batch (DecompX: per layer) through ``ctx.report``.

    Returns:
        its :class:`model.explain.ExplanationResult`.

    Raises:
        :class:`~desktop_app.workers.jobs.JobStopped`: cancelled (the abort flag) or stale; else what the method
        raises (the panel shows it in the method's row).
    """
    try:
        e = predictor.explain(
            prediction.document.text,
            method,
            prediction=prediction,
            n_steps=n_steps,
            progress=lambda done, total: ctx.report((done, total)),
            should_stop=ctx.should_stop,
            head_mask=head_mask,
            **task_args(prediction, target),
        )
        f = predictor.faithfulness(prediction.document.text, e, head_mask=head_mask, **task_args(prediction))
    except ExplanationCancelled as exc:
        raise JobStopped from exc
    return ExplanationResult(method, e, f)
