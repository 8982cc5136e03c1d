"""Model loading and inference off the GUI thread: the jobs :func:`load_job`, :func:`set_task_job` and
:func:`analyze_job`, and their :class:`InferenceController`.

The jobs run on the "inference" thread of the controller's :class:`~desktop_app.workers.jobs.Jobs` and share one
:class:`InferenceSession` (the loaded Predictor; used on that thread only). The GUI talks to them only through
:class:`InferenceController`, which lives on the GUI thread; *latest request wins*: every analysis gets a new
generation; one that is no longer the latest when its turn comes is skipped (it is stale before it even starts), and
the result of a stale one is dropped when it arrives. Loading a model and setting its task are never stale.

Errors (a missing model folder, a corrupt weights file, empty text) arrive as signals with a one-line
message; no exception ever reaches the event loop.
"""

from __future__ import annotations

import gc
import logging
import time
import traceback
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from .handle import one_line
from .jobs import JobContext, Jobs

log = logging.getLogger(__name__)


class InferenceSession:
    """What the inference jobs share on their thread: the loaded Predictor and what is kept between requests.

    Attributes:
        predictor: the loaded :class:`model.Predictor`, or None before the first load.
        reference: ((text, pair), float (L + 1, C) all-heads probabilities by layer) of the last masked request.
        load_s: seconds the last load took.
    """

    def __init__(self) -> None:
        self.predictor = None
        self.reference: tuple | None = None
        self.load_s = 0.0

    def loaded(self):
        """The Predictor.

        Raises:
            ValueError: no model has loaded yet.
        """
        if self.predictor is None:
            raise ValueError("the model is not loaded")
        return self.predictor


def load_job(_ctx: JobContext, session: InferenceSession, model_dir, device, precision: str = "auto"):
    """Load ``model.Predictor.from_pretrained(model_dir, device)`` to run in ``precision`` (``auto``, ``fp32``,
    ``bf16``: ``Predictor.use_precision``); a generator: yields the loading stage under way ("Loading weights...").

    Returns:
        (Predictor, :class:`model.records.info.ModelInfo`); the session uses the new Predictor from now on.

    Raises:
        whatever loading raises (a missing folder, corrupt weights, ...); the session keeps its model.
    """
    t0 = time.perf_counter()
    from model.hf.loading import is_hf_folder, is_warm, warm_up
    from model.predictor.predictor import Predictor  # torch is imported here, on the worker thread

    if model_dir is not None and is_hf_folder(model_dir) and not is_warm():
        yield "Importing the Hugging Face backend (transformers)\u2026"
        warm_up()  # or wait for the one under way on the preloading thread (desktop_app.workers.preload)
        gc.freeze()  # the modules stay: keep them out of the window's gc.collect() on the GUI thread
    yield "Loading weights\u2026"
    predictor = Predictor.from_pretrained(model_dir, device=device)
    predictor.use_precision(precision)  # auto: from the CPU's reported features (model.predictor.precision)
    info = predictor.model_info(load_s=time.perf_counter() - t0)
    session.predictor, session.reference, session.load_s = predictor, None, info.load_s
    return predictor, info


def set_task_job(_ctx: JobContext, session: InferenceSession, kind: str | None, threshold: float | None = None):
    """``Predictor.set_task(kind, threshold)`` (the user's task override, :mod:`model.tasks.task`).

    Returns:
        the new :class:`model.records.info.ModelInfo`.

    Raises:
        ValueError: no model loaded, or the task does not fit it (e.g. regression of a model with several outputs).
    """
    predictor = session.loaded()
    predictor.set_task(kind, threshold=threshold)
    info = predictor.model_info(load_s=session.load_s)
    session.reference = None
    return info


def analyze_job(ctx: JobContext, session: InferenceSession, text: str, head_mask=None, window: int = 0,
                document=None, text_pair: str | None = None):
    """Run ``predict(text, head_mask=head_mask)``, then the prediction by layer (with the mask and, when heads are
    off, without); a generator: yields the ``model.Prediction`` as soon as it is computed (on screen before the plot's
    passes run), then returns the :class:`~desktop_app.records.LayerProbabilities` (None without a classification
    head, or if they fail: the prediction is shown anyway).

    A text read in several windows (:mod:`model.text.document_windows`) answers with the prediction of its window
    ``window`` (clamped to 0..W-1; ``predict(text, window=window)``: that window's tokens and attention, the whole
    review's verdict and ``prediction.document``; :mod:`desktop_app.document`); a given ``document`` (the
    :class:`model.records.document.Document` of ``text``, another window asked for) lends its windows' logits, so only
    that window is run. ``text_pair``: the second text of a sentence pair (None: a single text; a pair is never read
    in windows).

    Raises:
        ValueError: no model loaded, or what ``predict`` raises (e.g. the text is empty).
    """
    predictor = session.loaded()
    pair = {} if text_pair is None else {"text_pair": text_pair}
    if document is not None and document.text == text and document.num_windows > 1:
        w = min(max(0, int(window)), document.num_windows - 1)
        pred = predictor.predict(text, head_mask=head_mask, window=w, document=document)
    else:
        pred = predictor.predict(text, head_mask=head_mask, **pair)
        if int(window) > 0 and pred.num_windows > 1:
            w = min(int(window), pred.num_windows - 1)
            pred = predictor.predict(text, head_mask=head_mask, window=w, document=pred.document)
    yield pred  # the runner stops here when a newer request came meanwhile
    return _layer_probabilities(session, pred.text, head_mask, pred, pair)


def _layer_probabilities(session: InferenceSession, text: str, head_mask, pred, pair: dict):
    """The prediction by layer, and the all-heads curve when heads are off (kept for the last text, so toggling
    heads costs one pass); None without a head, or if it fails (the prediction is shown anyway)."""
    from ..records import LayerProbabilities

    if pred.attention_only:
        return None
    try:
        probs = session.predictor.layer_predictions(text, head_mask=head_mask, **pair)
        ref = None
        if head_mask is not None:
            if session.reference is None or session.reference[0] != (text, pred.text_pair):
                session.reference = ((text, pred.text_pair), session.predictor.layer_predictions(text, **pair))
            ref = session.reference[1]
    except Exception:  # noqa: BLE001 - the plot stays empty; the prediction itself is fine
        log.debug("layer predictions failed:\n%s", traceback.format_exc())
        return None
    return LayerProbabilities(probs, ref, tuple(pred.labels), pred.task)


class InferenceController(QObject):
    """GUI-thread front end of the inference jobs: owns their :class:`~desktop_app.workers.jobs.Jobs` and session.

    Signals:
        loaded(object, object): (Predictor, :class:`model.records.info.ModelInfo`).
        load_failed(str): why the model could not be loaded.
        prediction(object): the newest ``model.Prediction`` (stale ones never arrive).
        layer_probabilities(object): the newest prediction's :class:`~desktop_app.records.LayerProbabilities`,
            after ``prediction``.
        error(str): why the newest request failed.
        busy_changed(bool): True while a request is outstanding.
        progress(str): the loading stage under way (see :func:`load_job`).
        task_set(object): the new :class:`model.records.info.ModelInfo` after :meth:`set_task`.
        task_failed(str): why :meth:`set_task` failed.

    Attributes:
        precision: what the next loaded model runs predict and scoring in ("auto", "fp32", "bf16"; the app sets it
            from its settings, ``desktop_app.window.settings.precision_setting``).
    """

    loaded = Signal(object, object)
    progress = Signal(str)
    load_failed = Signal(str)
    prediction = Signal(object)
    layer_probabilities = Signal(object)
    error = Signal(str)
    busy_changed = Signal(bool)
    task_set = Signal(object)
    task_failed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.precision = "auto"
        self.handle = Jobs("inference", parent=self)
        self.session = InferenceSession()  # used by the jobs, on the inference thread only
        self._ready = False
        self._pending: tuple | None = None  # (text, head mask) asked before the model loaded
        self._busy = False

    @property
    def ready(self) -> bool:
        """True once the model has loaded."""
        return self._ready

    @property
    def busy(self) -> bool:
        """True while the newest request has not yet been answered."""
        return self._busy

    def load(self, model_dir: str | Path | None, device: str | None) -> None:
        """Ask the worker to load the model (asynchronous; answers with ``loaded`` or ``load_failed``)."""
        self.handle.run(load_job, self.session, str(model_dir) if model_dir is not None else None, device,
                        self.precision, latest=False, on_progress=self.progress.emit,
                        on_result=lambda loaded: self._on_loaded(*loaded), on_error=self._on_load_failed)

    def switch_model(self, model_dir: str | Path | None, device: str | None) -> None:
        """Load another model (asynchronous, like :meth:`load`): analysis requests still queued for the current
        model become stale and are dropped; the current model stays in use if the new one fails to load."""
        self.handle.next_generation()
        self._pending = None
        self._set_busy(False)
        self.load(model_dir, device)

    def set_task(self, kind: str | None, threshold: float | None = None) -> None:
        """Read the model's outputs as task ``kind`` (:data:`model.tasks.task.TASKS`; None: keep) with ``threshold`` on
        the inference thread (queued before any later analysis); answers ``task_set`` or ``task_failed``."""
        self.handle.run(set_task_job, self.session, kind, threshold, latest=False, on_result=self.task_set.emit,
                        on_error=lambda exc: self.task_failed.emit(one_line(exc)))

    def analyze(self, text: str, head_mask=None, window: int = 0, document=None, text_pair: str | None = None) -> int:
        """Queue ``text`` for analysis with ``head_mask`` ((L, H), 0 = head off; None: every head on); any older
        outstanding request becomes stale. ``window``, ``document``: a long text's window to show, and its whole
        prediction when known (see :func:`analyze_job`); ``text_pair``: a pair's second text.

        Before the model has loaded, only the newest text is kept and sent once
        it is ready. Returns the request's generation.
        """
        generation = self.handle.next_generation()
        self._set_busy(True)
        if not self._ready:
            self._pending = (text, head_mask, text_pair)
            return generation
        return self._analyze(generation, text, head_mask, window, document, text_pair)

    def _analyze(self, generation: int, text: str, head_mask, window: int, document, text_pair) -> int:
        """Send the analysis of generation ``generation`` to the inference thread."""
        return self.handle.run(analyze_job, self.session, text, head_mask, window, document, text_pair,
                               generation=generation, on_progress=self._on_result, on_result=self._on_layer_result,
                               on_error=self._on_failed)

    def shutdown(self) -> None:
        """Stop the worker thread (waits for a running forward pass, up to the handle's ``wait_ms``)."""
        self.handle.shutdown()

    def _set_busy(self, busy: bool) -> None:
        if busy != self._busy:
            self._busy = busy
            self.busy_changed.emit(busy)

    def _on_loaded(self, predictor, info) -> None:
        self._ready = True
        self.loaded.emit(predictor, info)
        if self._pending is not None:
            (text, mask, pair), self._pending = self._pending, None
            self._analyze(self.handle.generation, text, mask, 0, None, pair)

    def _on_load_failed(self, exc: Exception) -> None:
        self._pending = None
        self._set_busy(False)
        self.load_failed.emit(f"Could not load the model: {one_line(exc)}")

    def _on_result(self, pred) -> None:
        self._set_busy(False)
        self.prediction.emit(pred)

    def _on_layer_result(self, probs) -> None:
        if probs is not None:
            self.layer_probabilities.emit(probs)

    def _on_failed(self, exc: Exception) -> None:
        self._set_busy(False)
        self.error.emit(one_line(exc))
