"""The inference API used by the GUI, the command line and the tests: :class:`Predictor`, one class, its work done by
the private helper modules beside it (see :mod:`model.predictor`); one call's settings: :class:`PredictOptions`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import torch

from model.core.config import EncoderConfig
from model.core.encoder import TransformerClassifier
from model.core.tokenizer import Encoded, TextEncoder
from model.explain.heads import install_head_mask_hooks
from model.hf.backend import HFEncoder, HFModelSummary
from model.records.block import BlockTrace
from model.records.components import ComponentAttribution, FfnNeurons
from model.records.flow import AttentionFlow
from model.records.graph import ContributionGraph
from model.records.info import ModelInfo, build_model_info
from model.records.internals import AttentionInternals, EmbeddingNorms
from model.records.patching import PatchingResult, check_patching
from model.records.document import Document
from model.records.prediction import NoClassificationHead, NoPositionalMatrix, Prediction, Score
from model.records.vectors import VectorSpec
from model.tasks.task import Task

from . import _analysis, _block, _components, _explaining, _loading, _long_text, _patching, _reading, _scoring
from ._scoring import BATCH_SIZE_CPU, BATCH_SIZE_GPU, MAX_TOKENS_CPU, MAX_TOKENS_GPU  # noqa: F401 - re-exported
from .options import PredictOptions
from .precision import PrecisionWeights, resolve as resolve_precision


class Predictor:
    """A loaded model + tokenizer, ready to classify and to explain.

    Arguments the methods share (each method documents only its own):

    * ``text``: the review (``str``, not empty, at most ``model.text.inputs.MAX_TEXT_CHARS`` characters), tokenized
      as :meth:`predict` tokenizes it; ``text_pair``: the second text of a sentence pair, encoded as the model's
      tokenizer encodes a pair (separators, ``token_type_ids``; the longer side cut first, never read in windows).
    * ``head_mask``: None, or array-like (L, H): 1 keeps head h of layer l, 0 removes it (its context vector times 0
      before the output projection; Michel et al. 2019), a fraction scales it; an all-ones mask gives bit-identical
      results. ``long_text``: ``"windows"`` (default: a text longer than the model's maximum length is read in
      side-by-side windows, :mod:`model.text.document_windows`) or ``"head_tail"`` (cut); a text that fits gives the
      same result under both.
    * ``options``: instead of ``head_mask`` and ``long_text``, the call's
      :class:`~model.predictor.options.PredictOptions` (also its precision and task; e.g. one built by
      :meth:`options` at the start of a job); without it, the call takes :attr:`precision` and :attr:`task` as they
      are when it starts.
    * Errors they share: ValueError for a bad text (empty, whitespace only, not a string, too long), head mask (shape,
      values) or ``long_text`` policy, or both ``options`` and a keyword; PairNotSupported (a ValueError): a pair on
      a model that reads single texts; NoClassificationHead (a ValueError): a head is needed, the model has none.

    Concurrency (issue 41; :mod:`model.predictor`): one copy of the weights, shared read-only by every thread; a call's
    settings, head mask and hooks are its own. Code that calls ``predictor.model`` must hold :attr:`forward_lock`.
    """

    def __init__(self, model: TransformerClassifier | HFEncoder, encoder: TextEncoder, device: torch.device,
                 model_dir: Path | None = None, metrics: dict | None = None) -> None:
        self.model = model.to(device).eval()
        install_head_mask_hooks(self.model)  # once, before any thread shares the model
        self.forward_lock = threading.RLock()  # see the class docstring: one forward pass at a time
        self.encoder, self.device, self.model_dir, self.metrics = encoder, device, model_dir, metrics or {}
        self._weights = PrecisionWeights(self.model, self.forward_lock)  # fp32 or bf16 (:meth:`use_precision`)
        self._task = _reading.config_task(model.config)  # how the logits are read (:attr:`task`, :meth:`set_task`)

    @classmethod
    def from_pretrained(cls, path: str | Path | None = None, device: str | torch.device | None = None) -> Predictor:
        """Load the model folder ``path`` (``config.json``, ``model.safetensors``, ``tokenizer.json``; default the
        bundled ``resources/model``) on ``device`` ("cpu", "cuda", ...; default CUDA when available, else CPU). A Hugging
        Face folder (``config.json`` with ``model_type``) goes to :func:`model.hf.load_hf_folder` (safetensors only, no
        remote code, supported encoders only; see :mod:`model.hf.loading`). Raises FileNotFoundError: the folder or one of
        its files is missing (named); ValueError: a file is corrupt or the weights do not match the config (named); a
        Hugging Face folder that is refused (pickled weights only, remote code, unsupported architecture); ImportError:
        a Hugging Face folder without ``transformers``."""
        return cls(*_loading.load_folder(path, device))

    @property
    def config(self) -> EncoderConfig | HFModelSummary:
        """The model's :class:`EncoderConfig` (a :class:`model.hf.HFModelSummary` for Hugging Face models)."""
        return self.model.config

    @property
    def labels(self) -> tuple[str, ...]:
        """Class names, index-aligned with probabilities."""
        return self.config.labels

    @property
    def has_head(self) -> bool:
        """False for a bare encoder opened in attention-only mode (no labels, no probabilities)."""
        return len(self.labels) > 0

    def require_head(self, what: str) -> None:
        """Raise :class:`~model.records.prediction.NoClassificationHead` (a ValueError) in attention-only mode."""
        if not self.has_head:
            raise NoClassificationHead(f"{what} needs a classification head, and the model in {self.model_dir} has "
                                       "none (a bare encoder, opened in attention-only mode)")

    @property
    def device_name(self) -> str:
        """Human-readable device, e.g. "CPU" or "CUDA (NVIDIA H100)"."""
        return f"CUDA ({torch.cuda.get_device_name(self.device)})" if self.device.type == "cuda" else \
            self.device.type.upper()

    @property
    def task(self) -> Task:
        """How the head's outputs are read (:class:`model.tasks.task.Task`: kind, threshold, source)."""
        return self._task

    def set_task(self, kind: str | None = None, threshold: float | None = None) -> Task:
        """Read the same logits as another task ``kind`` (one of :data:`model.tasks.task.TASKS`; None keeps the
        current one) and/or with another multi-label ``threshold`` in (0, 1) (None keeps it), ``source="user"``, from
        the next call on (a call or a job already running keeps its options). Returns the new
        :class:`~model.tasks.task.Task`. Raises ValueError: an unknown task or a threshold outside (0, 1); regression
        on a head with more than one output."""
        self._task = _reading.checked_task(self._task, len(self.labels), kind, threshold)
        return self._task

    @property
    def precision(self) -> str:
        """What ``predict`` and ``score_many`` run in: "fp32" or "bf16" (set by :meth:`use_precision`)."""
        return self._weights.precision

    def use_precision(self, requested: str = "auto") -> str:
        """Run ``predict`` and ``score_many`` in ``requested`` precision ("auto", "fp32", "bf16"; auto: decided by
        :func:`model.predictor.precision.resolve` from the hardware's reported features and the model, never by a
        timing) from the next call on; bf16 converts a copy of the weights once, here
        (:func:`model.predictor.precision.bf16_copy`); fp32 lets the copy go (a running bf16 job keeps its own).
        Returns the one in use, "fp32" or "bf16". Raises ValueError: an unknown one."""
        return self._weights.use(resolve_precision(requested, self))

    def options(self, head_mask=None, long_text: str | None = None, precision: str | None = None,
                task: Task | None = None) -> PredictOptions:
        """The settings of one call (or of one job of many calls), checked once: ``head_mask`` and ``long_text`` (see
        the class docstring), ``precision`` ("auto", "fp32", "bf16"; None: :attr:`precision`) and ``task`` (None:
        :attr:`task`). Raises ValueError: see :class:`~model.predictor.options.PredictOptions`."""
        run = self._weights.precision if precision is None else resolve_precision(precision, self)
        return PredictOptions(head_mask=head_mask, long_text=long_text, precision=run, task=task or self._task,
                              heads=(self.config.n_layers, self.config.n_heads))

    def _settle(self, options: PredictOptions | None, head_mask=None, long_text: str | None = None) -> PredictOptions:
        """``options`` (checked against this model: :meth:`PredictOptions.given`), or the options of ``head_mask`` and
        ``long_text`` with the current precision and task."""
        if options is None:
            return self.options(head_mask, long_text)
        return options.given(head_mask, long_text, (self.config.n_layers, self.config.n_heads))

    def _parts(self, precision: str = "fp32") -> _reading.Parts:
        """What the helper modules are given: the module running ``precision`` and the rest, read-only."""
        return _reading.Parts(self._weights.get(precision), self.encoder, self.device, self.forward_lock, self.labels,
                              self.model_dir)

    @property
    def reads_pairs(self) -> bool:
        """True when the model's tokenizer encodes sentence pairs (a pair template); False for the bundled model."""
        return _reading.reads_pairs(self.encoder)

    def encode(self, text: str, text_pair: str | None = None) -> Encoded:
        """Tokenize ``text`` (or the pair ``text``, ``text_pair``) as the model will see it
        (see :class:`model.core.tokenizer.Encoded`; a pair has ``segment_ids``). Raises: see the class docstring."""
        return _reading.encode(self.encoder, self.model_dir, text, text_pair)

    def probabilities(self, logits: torch.Tensor) -> np.ndarray:
        """float32 [..., C] probabilities of float logits [..., C] (float32 or bfloat16) under :attr:`task` (softmax,
        sigmoid; [..., 0] for regression), computed in float32 whatever the precision (so a softmax row sums to 1
        within float32 rounding), as :func:`model.tasks.readout.probabilities`."""
        return _reading.probabilities(logits, self._task)

    @torch.inference_mode()
    def predict(self, text: str, head_mask=None, long_text: str | None = None, text_pair: str | None = None, *,
                window: int = 0, document: Document | None = None, options: PredictOptions | None = None) -> Prediction:
        """Classify one text (or a sentence pair) and return attention for every layer and head.

        Arguments and errors: see the class docstring. A text read in windows gives window ``window``'s prediction
        (0-based; IndexError outside 0..W-1): its tokens, offsets and attention, the whole document's verdict (its
        windows' logits aggregated, :mod:`model.text.document_windows`) and ``document``, the whole text
        (:class:`model.records.document.Document`). A ``document`` of an earlier call on the same text and options
        lends its windows' logits, so only the window asked for is run (ValueError when it is of another text).
        The probabilities and the label follow the call's task. Returns a :class:`model.records.prediction.Prediction`
        (attention float32 (L, H, T, T), read-only arrays).
        """
        opts = self._settle(options, head_mask, long_text)
        pair = _reading.check_pair(self.encoder, self.model_dir, text_pair)
        return _scoring.predict_text(self._parts(opts.precision), text, pair, opts, window, document)

    @torch.inference_mode()
    def score_many(self, texts: Sequence[str], batch_size: int | None = None,
                   progress: Callable[[int, int], None] | None = None, should_stop: Callable[[], bool] | None = None,
                   window: int | None = None, max_tokens: int | None = None, head_mask=None,
                   long_text: str | None = None, text_pairs: Sequence[str | None] | None = None, *,
                   options: PredictOptions | None = None, vectors: VectorSpec | None = None) -> list[Score]:
        """Score many texts (or sentence pairs) without attention, in length-bucketed batches (fast SDPA path).

        Texts are taken in windows of ``window`` consecutive texts, sorted by length within one (each batch holds
        similar lengths); the scores come back in input order, each read as the call's task reads it.
        ``head_mask``, ``long_text`` (a long text's windows are batched like texts: each one costs its windows) and
        ``options`` (e.g. a job's, built once at its start by :meth:`options`): see the class docstring.

        Args:
            texts: the texts; a bad one (empty, not a string, too long) gets a :class:`Score` with ``error`` set.
            batch_size: at most this many texts per pass; default :data:`BATCH_SIZE_CPU` or :data:`BATCH_SIZE_GPU`.
            max_tokens: at most this many (padded) tokens per forward pass (token-budget batching, as fairseq's
                ``--max-tokens``; a single text always fits); default :data:`MAX_TOKENS_CPU` or :data:`MAX_TOKENS_GPU`.
            window: texts sorted together (default ``8 * batch_size``, at least 1024).
            progress: called as ``progress(done, total)`` after every batch.
            should_stop: checked before every batch; when it returns True, scoring stops.
            text_pairs: None, or one second text per text (None for a single text): each pair is encoded as
                :meth:`predict` encodes it (cut longest side first, never in windows); a bad second text (empty,
                too long) gets that row's Score an ``error``.
            vectors: keep each text's sentence vector in ``Score.vector`` (float32 [d]; :mod:`model.records.vectors`),
                read in the same passes; overrides ``options.vectors``.

        Returns the scores for ``texts[:k]`` in input order: k == len(texts) unless stopped early (the scored prefix).
        Raises ValueError: ``batch_size`` < 1, ``text_pairs`` of another length than ``texts``, a ``vectors`` layer
        out of range, and the class docstring's errors; NoClassificationHead in attention-only mode.
        """
        self.require_head("scoring")
        opts = self._settle(options, head_mask, long_text)
        opts, parts = opts if vectors is None else opts.replace(vectors=vectors), self._parts(opts.precision)
        batch_size, max_tokens = _scoring.pass_limits(parts, texts, text_pairs, batch_size, max_tokens)
        return _scoring.score_texts(parts, texts, text_pairs, opts, batch_size, max_tokens,
                                    window or max(1024, 8 * batch_size), progress, should_stop)

    @torch.inference_mode()
    def window_logits(self, inputs: list[np.ndarray], *, options: PredictOptions | None = None) -> torch.Tensor:
        """Logits of token-id inputs (int64 [T_i] each, special tokens included, e.g. a document's windows from
        :func:`model.text.document_windows.window_inputs`), a few padded inputs per forward pass, in the call's
        precision and head mask. Returns float32 [W, C] on the CPU."""
        opts = self._settle(options)
        return _scoring.window_logits(self._parts(opts.precision), inputs, opts)

    def attention_flow(self, text: str, method: str = "value_norm", head_mask=None, long_text: str | None = None,
                       window: int = 0, text_pair: str | None = None, target: int | None = None, *,
                       options: PredictOptions | None = None) -> AttentionFlow:
        """What flows through the attention layers of ``text`` by ``method``, one of
        :data:`~model.records.flow.FLOW_METHODS` (:mod:`model.records.flow`: value norms, Kobayashi et al. 2020; ALTI,
        Ferrando et al. 2022; DecompX, Modarressi et al. 2023, for class ``target``, default ``argmax(logits)``). A long
        text gives the flow of its window ``window`` (``long_text="windows"``) or of its head+tail cut. Other arguments:
        the class docstring. Returns :class:`~model.records.flow.AttentionFlow`. Raises ValueError: unknown method or
        target; NoClassificationHead: ``decompx`` without a head; FlowNotSupported: an architecture not covered."""
        opts = self._settle(options, head_mask, long_text)
        return _analysis.flow_of(self._parts(), text, text_pair, window, method, opts, target)

    def layer_predictions(self, text: str, head_mask=None, text_pair: str | None = None, target: int | None = None,
                          *, options: PredictOptions | None = None) -> np.ndarray:
        """What the model would say if it stopped after each layer (a "logit lens" for encoders). The embedding output
        (the first layer's input) and each layer's output go through the model's own classification read-out (pooling
        and head; see :func:`model.explain.value_flow.layer_logits`), read as the call's task reads the logits
        (:func:`model.tasks.readout.outputs`). ``target``: the class the caller follows (validated; its curve is column
        ``target``), or None. Other arguments and errors: see the class docstring.

        Returns float32 (L + 1, C), read-only: softmax probabilities (single-label), sigmoids (multi-label) or the
        predicted value (regression, C = 1); row 0: after the embeddings, row l: after layer l. The last row equals
        ``predict(text, head_mask=head_mask).probabilities`` (regression: ``.logits``)."""
        self.require_head("prediction by layer")
        _analysis.check_target(self.labels, target)
        opts = self._settle(options, head_mask)
        return _analysis.layer_predictions(self._parts(), self.encode(text, text_pair), opts)

    def activation_patching(self, clean: str, corrupted: str, site: str = "resid", target: int | None = None,
                            direction: str = "denoise", method: str = "exact", *, batch_tokens: int | None = None,
                            progress=None, should_stop=None) -> PatchingResult:
        """Activation patching of ``clean`` into ``corrupted`` (``direction="denoise"``) or back (``"noise"``) at
        ``site`` ``"resid"`` [L, T], ``"head"`` [L, H] or ``"ffn"`` [L], by ``method`` ``"exact"`` or ``"attribution"``
        (Nanda 2023's approximation): :mod:`model.records.patching` defines them, the restored share ``effects``, the
        position matching (Compare's word alignment) and ``target``. ``batch_tokens`` (per pass), ``progress(done,
        total)``: as in :meth:`score_many`; ``should_stop()`` is checked before every patched pass and inside one
        before every module call (a Cancel answers within one linear layer's time). Long texts are cut (head+tail);
        no pairs. The numbers do not depend on ``batch_tokens`` (within float32 rounding). Raises
        ValueError (a bad argument or text), NoClassificationHead, PatchingCancelled, FlowNotSupported (DeBERTa v1)."""
        self.require_head("activation patching")
        check_patching(site, direction, method, target, len(self.labels))
        return _patching.activation_patching(self._parts(), (clean, corrupted), site, target, direction, method,
                                             batch_tokens, progress, should_stop)

    def contribution_graph(self, text: str, threshold: float = 0.04, text_pair: str | None = None, *,
                           head_mask=None, options: PredictOptions | None = None) -> ContributionGraph:
        """The contribution graph of ``text`` (Ferrando & Voita 2024; :mod:`model.explain.contribution_graph`): the
        (layer, token) residual states the read-out is built from, edges through each head and the residual/FFN path
        weighted by ALTI's proportional contribution, kept when at least ``threshold`` (in [0, 1]), each node with what
        the read-out would say from its state (``node_outputs``, read as the task reads logits). ``head_mask``: the
        forward pass's (a switched-off head's edges weigh 0). A long text is cut (head+tail); the app passes the text of
        the window it shows. Returns :class:`~model.records.graph.ContributionGraph`. Raises ValueError: a bad text or
        threshold; NoClassificationHead: attention-only mode (no read-out to start from); FlowNotSupported: what ALTI
        does not cover (a pre-LN encoder, an unmapped family)."""
        self.require_head("the contribution graph")
        opts = self._settle(options, head_mask)
        return _analysis.contribution_graph(self._parts(), self.encode(text, text_pair), threshold, opts)

    def attention_internals(self, text: str, layer: int, head_mask=None, text_pair: str | None = None, *,
                            options: PredictOptions | None = None) -> AttentionInternals:
        """Queries, keys, values, pre-softmax scores and head outputs of one layer (0-based ``layer``; negative counts
        from the last) for ``text``, the layers below under the head mask. Dispatches to the backend:
        ``self.model.attention_internals(input_ids, mask, layer)`` (the bundled
        :class:`~model.core.encoder.TransformerClassifier`; another backend supplies the same method and, where its
        scores carry extra terms, says so in ``extra_score_terms``). ``softmax(scores)`` equals
        ``predict(text).attention[layer]``. Computed for one layer only (512 tokens x d_model floats, not all layers at
        once). Other arguments and errors: see the class docstring; IndexError: ``layer`` out of range. Returns
        :class:`model.records.internals.AttentionInternals` (read-only float32 arrays)."""
        enc = self.encode(text, text_pair)
        return _analysis.attention_internals(self._parts(), enc, layer, self._settle(options, head_mask))

    def block_trace(self, text: str, layer: int, position: int = 0, text_pair: str | None = None, *, head_mask=None,
                    options: PredictOptions | None = None) -> BlockTrace:
        """Token ``position`` through encoder layer ``layer`` (both 0-based; negatives count from the end) step by step,
        after the last layer the read-out (:mod:`model.records.block`); a long text cut as :meth:`encode` cuts it.
        Errors: the class docstring; IndexError (out of range); BlockNotSupported: a family that does not fit."""
        return _block.block_trace(self._parts(), self.encode(text, text_pair), layer, position,
                                  self._settle(options, head_mask))

    def embedding_norms(self, text: str, text_pair: str | None = None) -> EmbeddingNorms:
        """Per-position ||PE(pos)|| and ||token embedding x sqrt(d_model)|| of ``text`` (or the pair, tokenized as
        :meth:`predict` does; ``self.model.embedding_norms``, like :meth:`attention_internals`). Raises: as above."""
        return _analysis.embedding_norms(self._parts(), self.encode(text, text_pair))

    def component_attribution(self, text: str, target: int | None = None, text_pair: str | None = None, *,
                              head_mask=None, long_text: str | None = None,
                              options: PredictOptions | None = None) -> ComponentAttribution:
        """The logit ``target`` of ``text`` split into the encoder's components: the embeddings, each head, each FFN,
        the biases (direct logit attribution, every LayerNorm frozen at this run; :mod:`model.explain.components`,
        docs/components.md). ``target``: the output split (default the predicted one, ``argmax(logits)``; multi-label:
        that label's logit; regression: 0, the value). A text read in windows is split window by window and the parts
        weighted as the windows' logits are (:mod:`model.predictor._components`). Always float32. Other arguments and
        errors: see the class docstring. Returns :class:`model.records.components.ComponentAttribution`, whose
        ``values`` sum to ``predict(text).logits[target]``. Raises ValueError: a bad target; ComponentsNotSupported (a
        NotImplementedError): a family whose logits cannot be split exactly (DeBERTa v1)."""
        self.require_head("component attribution")
        opts = self._settle(options, head_mask, long_text)
        pair = _reading.check_pair(self.encoder, self.model_dir, text_pair)
        return _components.component_attribution(self._parts(), text, pair, target, opts)

    def ffn_neurons(self, text: str, layer: int, target: int | None = None, top: int = 10, text_pair: str | None = None,
                    *, head_mask=None, long_text: str | None = None, options=None) -> FfnNeurons:
        """Layer ``layer``'s (1-based) FFN part of :meth:`component_attribution` split by neuron, activation x the
        output weight's projection on the target direction (:class:`model.records.components.FfnNeurons`: every
        neuron's part and the output bias's sum to the FFN's; the ``top`` by |value|, with activations). Other and
        errors: :meth:`component_attribution`; ValueError: a layer not in 1..L."""
        self.require_head("FFN neurons")
        pair = _reading.check_pair(self.encoder, self.model_dir, text_pair)
        return _components.ffn_neurons(self._parts(), text, pair, target, self._settle(options, head_mask, long_text),
                                       layer, top)

    def explain(self, text: str, method: str, target: int | None = None, long_text: str | None = None,
                text_pair: str | None = None, *, options: PredictOptions | None = None, **kwargs):
        """Token importance for ``text`` by one method; see :func:`model.explain.explain`.

        A text longer than the model's maximum length (policy ``long_text="windows"``, the default) is explained
        window by window for the document's class and the scores merged into one per document token
        (:func:`model.predictor._long_text.explain_document`; rule: :func:`model.text.document_windows.merge_token_scores`).
        A pair's scores cover both texts' tokens (the segment ids reach every forward pass). Other arguments and
        errors: see the class docstring (the call's task says what is explained).

        Args:
            method: one of :data:`model.explain.EXPLANATION_METHODS`.
            target: class index to explain (default: the predicted class, ``Prediction.label_index``; multi-label:
                the chosen label's logit; regression: 0, the output value).
            **kwargs: ``layer``, ``n_steps``, ``progress``, ``should_stop``, ``prediction``, ``seed``,
                ``internal_batch_size``, ``head_mask`` (explain the model with those heads switched off).

        Returns :class:`model.explain.Explanation` with float32 [T] scores, aligned with ``predict(text).tokens``.
        Raises ValueError: bad method, target or layer; model.explain.ExplanationCancelled: ``should_stop()`` said so.
        """
        self.require_head("explaining a prediction")
        opts = self._settle(options, kwargs.pop("head_mask", None), long_text)
        return _explaining.explain(self, text, method, target, text_pair, opts, kwargs)

    def faithfulness(self, text: str, explanation, head_mask=None, long_text: str | None = None,
                     text_pair: str | None = None, *, options: PredictOptions | None = None, **kwargs):
        """ERASER comprehensiveness/sufficiency AOPC of an explanation; see :func:`model.explain.erasure.faithfulness`.

        ``head_mask``: measure the model with those heads switched off. A long text (policy ``"windows"``) is measured
        window by window (:func:`model.predictor._long_text.faithfulness_document`). ``text_pair``: the second text of
        the explained pair (each kept token keeps its segment id). The measured class is the explanation's target,
        read as the call's task reads it (probability, sigmoid, or the regression value). Other arguments and errors:
        see the class docstring; ValueError also for an explanation of another length. Returns
        :class:`model.explain.Faithfulness`.
        """
        self.require_head("measuring faithfulness")
        return _explaining.faithfulness(self, text, explanation, text_pair, self._settle(options, head_mask, long_text),
                                        kwargs)

    def positional_encoding(self, num_positions: int) -> np.ndarray | NoPositionalMatrix:
        """The exact positional-encoding matrix the model adds to its embeddings, for ``num_positions`` P rows
        (positions 0..P-1; for our sinusoidal model P may exceed ``max_len``: the closed form continues; for learned
        position embeddings P <= ``max_len``): float32 [P, d_model] (Hugging Face models: their learned
        position-embedding rows, [P, E]); for a relative-position model (DeBERTa-v2/v3) a
        :class:`~model.records.prediction.NoPositionalMatrix` saying why there is none. Raises ValueError: if
        ``num_positions`` < 0 (or above a learned table's ``max_len``)."""
        return _loading.positional_encoding(self.model, num_positions)

    def model_info(self, load_s: float = 0.0) -> ModelInfo:
        """What a user interface needs to know about this model, as an immutable NumPy record
        (:class:`model.records.info.ModelInfo`: shape, labels, device, positional-encoding matrix (read-only), the
        worked positional-encoding table, metrics and model card); ``load_s``: the seconds the load took (the caller
        measured them)."""
        return build_model_info(self, load_s, _loading.worked_positional_table())
