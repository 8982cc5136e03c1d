"""Model B's jobs (issue 44): loading the second model and scoring the text on display with it, off the GUI thread.

Jobs of :mod:`desktop_app.workers.jobs`, run on the second-model controller's own
:class:`~desktop_app.workers.jobs.Jobs` (thread "model-b", :mod:`desktop_app.window.second_model`). Model B is one
:class:`model.Predictor`, shared as it is by that thread and the batch thread (never copied).
"""

from __future__ import annotations

import gc

from .jobs import JobContext


def load_second_job(_ctx: JobContext, folder: str, device: str | None, precision: str = "auto", task=None):
    """Load model B from ``folder`` (``Predictor.from_pretrained``) to run in ``precision``; a generator: yields the
    loading stage under way. ``task``: model A's :class:`model.tasks.task.Task` when the user chose it (Model > Task),
    so that B reads its head the same way (None: B's config decides).

    Returns:
        the :class:`model.Predictor`.

    Raises:
        whatever loading raises (a missing folder, corrupt weights, ...); ValueError when B cannot be read as
        ``task`` (e.g. regression of a head with several outputs).
    """
    from model.hf.loading import is_hf_folder, is_warm, warm_up
    from model.predictor.predictor import Predictor  # torch is imported here, on the worker thread

    if is_hf_folder(folder) and not is_warm():
        yield "Importing the Hugging Face backend (transformers)\u2026"
        warm_up()
        gc.freeze()
    yield "Loading model B\u2026"
    predictor = Predictor.from_pretrained(folder, device=device)
    predictor.use_precision(precision)
    if task is not None:
        predictor.set_task(task.kind, task.threshold)
    return predictor


def score_second_job(_ctx: JobContext, predictor, text: str, text_pair: str | None = None):
    """Model B's :class:`model.records.prediction.Score` of ``text`` (and ``text_pair``): the whole text's verdict
    (``score_many``: no attention; a long text read in windows as batch scoring reads it).

    Raises:
        PairNotSupported: a second text for a model B that reads single texts.
    """
    pairs = None if text_pair is None else [text_pair]
    return predictor.score_many([text], text_pairs=pairs)[0]


def attention_second_job(_ctx: JobContext, predictor, text: str, text_pair: str | None, start_char: int = 0):
    """Model B's summary and full analysis of ``text`` (and ``text_pair``): ``(ModelInfo, Prediction, window)`` with
    B's attention float32 (L_B, H_B, T, T) (:meth:`model.Predictor.predict`). A text B reads in windows gives B's window
    that starts at or before ``start_char`` (where model A's window on display starts; 0: the first window), its
    other windows' logits reused from the first call (``window``: its 0-based index).

    Raises:
        PairNotSupported: a second text for a model B that reads single texts; ValueError: a text B cannot read.
    """
    pred = predictor.predict(text, text_pair=text_pair)
    starts = pred.document.windows.chars[:, 0]
    window = max(0, int((starts <= start_char).sum()) - 1)
    if window > 0:
        pred = predictor.predict(text, text_pair=text_pair, window=window, document=pred.document)
    return predictor.model_info(), pred, window


__all__ = ["attention_second_job", "load_second_job", "score_second_job"]
