"""The explanation worker: explanations and their faithfulness for the current prediction, off the GUI thread.

A :class:`~desktop_app.workers.handle.BackgroundWorker` (generation token + abort flag) on its own QThread,
owned by the explanation panel's :class:`~desktop_app.workers.handle.WorkerHandle` and reniced to
:data:`~desktop_app.workers.handle.EXPLANATION_NICE`; the only code of the explanation panel that calls the
model. Results are immutable :class:`model.explain.ExplanationResult` records (NumPy only).
The cheap methods stop between methods when their generation is stale; the on-demand methods (integrated
gradients, DecompX) also check the abort flag (Cancel) between their internal batches (DecompX: layers).
"""

from __future__ import annotations

from PySide6.QtCore import Signal

from model.explain import ExplanationCancelled, ExplanationResult

from .handle import BackgroundWorker


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


class ExplanationWorker(BackgroundWorker):
    """Runs explanations and faithfulness on a worker thread; the only code here that calls the model.

    Signals:
        result(int generation, object :class:`model.explain.ExplanationResult`)
        failed(int generation, str method, str message)
        batch_finished(int generation): all requested cheap methods are done.
        ig_progress(int generation, int done, int total): the on-demand method's steps done out of total
            (integrated gradients: forward passes; DecompX: layers).
        ig_cancelled(int generation)
    """

    result = Signal(int, object)
    failed = Signal(int, str, str)
    batch_finished = Signal(int)
    ig_progress = Signal(int, int, int)
    ig_cancelled = Signal(int)

    def compute(self, generation: int, predictor, prediction, methods, layer: int, head_mask=None,
                target: int = -1) -> None:
        """Explain ``prediction.text`` with each method in ``methods`` and score its faithfulness, for the model with
        ``head_mask`` ((L, H), 0 = head off; None: every head on), the mask ``prediction`` was made with; ``target``:
        the class to explain (-1: the predicted one); a pair's second text comes from ``prediction.text_pair``.

        Stops early (silently) when a newer generation was requested.
        """
        for method in methods:
            if self.is_stale(generation):
                return
            try:
                e = predictor.explain(
                    prediction.text,
                    method,
                    prediction=prediction,
                    layer=layer,
                    should_stop=lambda: self.is_stale(generation),
                    head_mask=head_mask,
                    **task_args(prediction, target),
                )
                f = predictor.faithfulness(prediction.text, e, head_mask=head_mask, **task_args(prediction))
            except ExplanationCancelled:
                return
            except Exception as exc:  # noqa: BLE001 - shown to the user, never a crash
                self.failed.emit(generation, method, str(exc) or type(exc).__name__)
                continue
            self.result.emit(generation, ExplanationResult(method, e, f))
        self.batch_finished.emit(generation)

    def compute_integrated_gradients(self, generation: int, predictor, prediction, n_steps: int,
                                     head_mask=None, method: str = "integrated_gradients", target: int = -1) -> None:
        """An on-demand method, integrated gradients (``n_steps`` steps) or DecompX (``method``), for the model with
        ``head_mask``: progress per internal batch (DecompX: per layer) through ``ig_progress``, cancellable."""
        try:
            e = predictor.explain(
                prediction.text,
                method,
                prediction=prediction,
                n_steps=n_steps,
                progress=lambda done, total: self.ig_progress.emit(generation, done, total),
                should_stop=lambda: self.should_stop(generation),
                head_mask=head_mask,
                **task_args(prediction, target),
            )
            f = predictor.faithfulness(prediction.text, e, head_mask=head_mask, **task_args(prediction))
        except ExplanationCancelled:
            self.ig_cancelled.emit(generation)
            return
        except Exception as exc:  # noqa: BLE001
            self.failed.emit(generation, method, str(exc) or type(exc).__name__)
            return
        self.result.emit(generation, ExplanationResult(method, e, f))
