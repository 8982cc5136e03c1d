"""The inference API used by the GUI, the command line and the tests.

``Predictor.from_pretrained()`` loads the bundled model, one of our own model folders or a local Hugging Face
encoder folder (:mod:`model.hf`: the same API; without a classification head, attention-only mode); ``predict`` returns
a :class:`Prediction` (with attention for every layer and head) and
``score_many`` scores many texts in length-bucketed batches on the fast SDPA
path; ``model_info`` summarises the loaded model for a user interface (:class:`model.records.info.ModelInfo`). Input
checks and the token-budget batching are in :mod:`model.text.inputs`. ``attention_flow``, ``layer_predictions`` and the
head mask (``head_mask=`` of ``predict``, ``score_many``, ``explain``) come from :mod:`model.predictor.analysis`.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import torch

from model.predictor.analysis import PredictorAnalysis
from model.core.config import EncoderConfig
from model.core.encoder import TransformerClassifier
from model.core.paths import default_model_dir
from model.core.positional import sinusoidal_positional_encoding
from model.core.tokenizer import TextEncoder, load_tokenizer
from model.core.weights import TOKENIZER_FILE, load_model, read_metrics
from model.hf.backend import HFEncoder, HFModelSummary
from model.hf.loading import is_hf_folder, load_hf_folder
from model.records.info import PE_WORKED_EXAMPLE, ModelInfo, build_model_info
from model.text.inputs import check_text, resolve_device, token_budget_batches
from model.predictor.inspection import PredictorInternals
from model.predictor.long_text import WindowCollector, forward_logits, whole_windows, window_inputs
from model.predictor.precision import bf16_copy, resolve as resolve_precision
from model.records.prediction import NoClassificationHead, NoPositionalMatrix, Prediction, Score
from model.predictor.reading import PredictorReading, config_task
from model.text.segments import pad_segments, types_kw
from model.text.document_windows import aggregate, check_policy


MAX_TOKENS_CPU = 4096  # padded tokens per score_many pass on a CPU
MAX_TOKENS_GPU = 32768  # ... on a GPU (an H100 scored 1.3-1.6x faster than with 4,096: benchmarks.batch_passes)
BATCH_SIZE_CPU = 64  # most texts per score_many pass on a CPU
BATCH_SIZE_GPU = 256  # ... on a GPU (4-19% more reviews/s than 64 on an H100 and an H200, same labels: benchmarks.gpu_scoring)


class Predictor(PredictorReading, PredictorAnalysis, PredictorInternals):
    """A loaded model + tokenizer, ready to classify.

    Concurrency policy: one Predictor per thread. A thread that runs the model alongside another
    one (the GUI's explanation and batch threads, beside the inference thread that loaded the
    model) works on its own :meth:`replica`: a copy of the weights that shares only the read-only
    tokenizer, so no torch module is ever used by two threads and no thread waits for another.
    As a safety net, every forward pass through :attr:`model` (in :meth:`predict`, in each
    :meth:`score_many` batch, in the explanation methods and the faithfulness erasure pass) holds
    :attr:`forward_lock`, a re-entrant lock: a Predictor that is shared after all serialises its
    forward passes instead of racing (uncontended, the lock costs nothing). Code that calls
    ``predictor.model`` directly must hold ``predictor.forward_lock`` too.
    """

    def __init__(
        self,
        model: TransformerClassifier | HFEncoder,
        encoder: TextEncoder,
        device: torch.device,
        model_dir: Path | None = None,
        metrics: dict | None = None,
    ) -> None:
        self.model = model.to(device).eval()
        self.forward_lock = threading.RLock()  # see the class docstring: one forward pass at a time
        self.encoder = encoder
        self.device = device
        self.model_dir = model_dir
        self.metrics = metrics or {}
        self._precision, self._bf16 = "fp32", None  # of predict and score_many (:meth:`use_precision`)
        self._task = config_task(model.config)  # how the logits are read (:attr:`task`, :meth:`set_task`)

    @property
    def config(self) -> EncoderConfig | HFModelSummary:
        """The model's :class:`EncoderConfig` (a :class:`model.hf.HFModelSummary` for Hugging Face models)."""
        return self.model.config

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
    def labels(self) -> tuple[str, ...]:
        """Class names, index-aligned with probabilities."""
        return self.config.labels

    @property
    def device_name(self) -> str:
        """Human-readable device, e.g. "CPU" or "CUDA (NVIDIA H100)"."""
        if self.device.type == "cuda":
            return f"CUDA ({torch.cuda.get_device_name(self.device)})"
        return self.device.type.upper()

    @classmethod
    def from_pretrained(cls, path: str | Path | None = None, device: str | torch.device | None = None) -> Predictor:
        """Load a model folder (``config.json``, ``model.safetensors``, ``tokenizer.json``).

        A Hugging Face folder (``config.json`` with ``model_type``) goes to :func:`model.hf.load_hf_folder`
        (safetensors only, no remote code, supported encoders only; see :mod:`model.hf.loading`).

        Args:
            path: the folder; defaults to the bundled ``resources/model``.
            device: "cpu", "cuda", ... ; defaults to CUDA when available, else CPU.

        Raises:
            FileNotFoundError: the folder or one of its files is missing (named).
            ValueError: a file is corrupt or the weights do not match the config (named); a Hugging Face folder
                that is refused (pickled weights only, remote code, unsupported architecture).
            ImportError: a Hugging Face folder without ``transformers`` installed (the ``hf`` extra).
        """
        model_dir = Path(path) if path is not None else default_model_dir()
        if not model_dir.is_dir():
            raise FileNotFoundError(f"model folder not found: {model_dir}")
        dev = resolve_device(device)
        if is_hf_folder(model_dir):
            hf_model, hf_encoder, hf_metrics = load_hf_folder(model_dir, dev)
            return cls(hf_model, hf_encoder, dev, model_dir, hf_metrics)
        model = load_model(model_dir, dev)
        tokenizer = load_tokenizer(model_dir / TOKENIZER_FILE, rows=model.config.vocab_size)
        if tokenizer.get_vocab_size() != model.config.vocab_size:
            raise ValueError(
                f"{model_dir / TOKENIZER_FILE} has {tokenizer.get_vocab_size()} tokens but the model expects "
                f"{model.config.vocab_size}"
            )
        return cls(model, TextEncoder(tokenizer, model.config.max_len), dev, model_dir, read_metrics(model_dir))

    def replica(self) -> Predictor:
        """A Predictor for another thread (see the class docstring): its own copy of the model's weights on
        the same device (a few MB for the shipped model), the read-only tokenizer and metadata shared.
        Its results equal this Predictor's."""
        twin = Predictor(copy.deepcopy(self.model), self.encoder, self.device, self.model_dir, self.metrics)
        twin.use_precision(self.precision)
        twin._task = self._task
        return twin

    @property
    def precision(self) -> str:
        """What ``predict`` and ``score_many`` run in: "fp32" or "bf16" (set by :meth:`use_precision`)."""
        return self._precision

    def use_precision(self, requested: str = "auto") -> str:
        """Run ``predict`` and ``score_many`` in ``requested`` precision ("auto", "fp32", "bf16"; auto: decided by
        :func:`model.predictor.precision.resolve` from the hardware's reported features and the model, never by a timing);
        bf16 converts a copy of the weights once, here (:func:`model.predictor.precision.bf16_copy`). Returns the one in use,
        "fp32" or "bf16". Raises ValueError: an unknown one."""
        chosen = resolve_precision(requested, self)
        with self.forward_lock:
            if chosen == "bf16" and self._bf16 is None:
                self._bf16 = bf16_copy(self.model)
            elif chosen == "fp32":
                self._bf16 = None
            self._precision = chosen
        return chosen

    @contextmanager
    def scoring(self, head_mask=None) -> Iterator[torch.nn.Module]:
        """The model ``predict`` and ``score_many`` run (:attr:`model`, or its bfloat16 copy under bf16), with
        :attr:`forward_lock` held and the validated ``head_mask`` (or None) applied inside the ``with`` block.
        Its logits may be bfloat16: read them with ``.float()``."""
        with self.forward_lock:  # the model chosen under the lock use_precision changes it under (re-entrant)
            model = self._bf16 if self._precision == "bf16" else self.model
            with self.masked(head_mask, model):
                yield model

    @torch.inference_mode()
    def predict(self, text: str, head_mask=None, long_text: str | None = None, text_pair: str | None = None
                ) -> Prediction:
        """Classify one text (or a sentence pair) and return attention for every layer and head.

        ``head_mask``: optional array-like (L, H), 1 keeps head h of layer l, 0 removes it (its context vector times
        0 before the output projection; Michel et al. 2019); an all-ones mask gives bit-identical results.
        ``long_text``: ``"windows"`` (default: a text longer than the model's maximum length is read in side-by-side
        windows, :mod:`model.text.document_windows`; ``attention`` is the first window's) or ``"head_tail"`` (cut). A text that
        fits gives the same result under both. ``text_pair``: the second text of a sentence pair, encoded as the
        model's tokenizer encodes a pair (separators, ``token_type_ids``; the longer side cut first, never read in
        windows). The probabilities and the label follow :attr:`task`.

        Raises:
            ValueError: empty/whitespace-only text (either text), a non-string, or more than
                ``model.text.inputs.MAX_TEXT_CHARS`` characters; a head mask of the wrong shape or values; an unknown
                ``long_text`` policy. PairNotSupported (a ValueError): a pair on a model that reads single texts.
        """
        t0 = time.perf_counter()
        hm = self.check_head_mask(head_mask)
        windowed = check_policy(long_text) == "windows"
        pair = self.check_pair(text_pair)
        if pair is None:
            enc = self.encoder.encode(check_text(text), whole=windowed)
            windows, inputs = whole_windows(self, enc), window_inputs(self.encoder, enc.ids)[0]
        else:
            enc = self.encode(text, pair)
            windows, inputs = None, [enc.ids]
        ids = torch.from_numpy(inputs[0]).unsqueeze(0).to(self.device)  # (1, T_0)
        mask = torch.ones_like(ids, dtype=torch.bool)  # (1, T_0)
        with self.scoring(hm) as model:
            logits, attn = model(ids, mask, need_weights=True, **types_kw(self.model, enc.segment_ids,
                                                                                self.device))  # (1, C), (1, L, H, T_0, T_0)
        window_logits = logits.float().cpu()
        if len(inputs) > 1:  # the other windows
            window_logits = torch.cat([window_logits, forward_logits(self, inputs[1:], hm)])  # (W, C)
            logits = torch.from_numpy(aggregate(window_logits.numpy(), windows.ranges))[None]
        probs = self.probabilities(logits[0])  # (C,); (0,) for regression and in attention-only mode
        z = logits[0].float().cpu().numpy().astype(np.float32)
        label, _ = self.read_out(z, probs)
        return Prediction(
            text=text, tokens=enc.tokens, offsets=enc.offsets, label=label, labels=self.labels,
            probabilities=probs, logits=z, attention=attn[0].float().cpu().numpy().astype(np.float32),
            truncated=enc.truncated, num_source_tokens=enc.num_source_tokens, elapsed_s=time.perf_counter() - t0,
            device=str(self.device), pooling=self.config.pooling, task=self._task.kind,
            threshold=self._task.threshold, text_pair=pair, segment_ids=enc.segment_ids,
            pair_truncated=enc.pair_truncated, **({} if windows is None else dict(
                windows=windows.ranges, window_chars=windows.chars, window_logits=window_logits.numpy().astype(
                    np.float32), window_probabilities=self.probabilities(window_logits))),
        )

    @torch.inference_mode()
    def score_many(
        self,
        texts: Sequence[str],
        batch_size: int | None = None,
        progress: Callable[[int, int], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
        window: int | None = None,
        max_tokens: int | None = None,
        head_mask=None,
        long_text: str | None = None,
        text_pairs: Sequence[str | None] | None = None,
    ) -> list[Score]:
        """Score many texts (or sentence pairs) without attention, in length-bucketed batches (fast SDPA path).

        Texts are taken in windows of ``window`` consecutive texts, sorted by length within one (each batch holds
        similar lengths); the scores come back in input order. Each Score is read as :attr:`task` reads it.

        Args:
            texts: the texts; a bad one (empty, not a string, too long) gets a :class:`Score` with ``error`` set.
            batch_size: at most this many texts per pass; default :data:`BATCH_SIZE_CPU` or :data:`BATCH_SIZE_GPU`.
            max_tokens: at most this many (padded) tokens per forward pass (token-budget batching, as fairseq's
                ``--max-tokens``; a single text always fits); default :data:`MAX_TOKENS_CPU` or :data:`MAX_TOKENS_GPU`.
            window: texts sorted together (default ``8 * batch_size``, at least 1024).
            progress: called as ``progress(done, total)`` after every batch.
            should_stop: checked before every batch; when it returns True, scoring stops.
            head_mask: optional (L, H) head mask, as in :meth:`predict`.
            long_text: ``"windows"`` (default) or ``"head_tail"``, as in :meth:`predict`; a long text's windows
                are batched like texts (each one costs its windows).
            text_pairs: None, or one second text per text (None for a single text): each pair is encoded as
                :meth:`predict` encodes it (cut longest side first, never in windows); a bad second text (empty,
                too long) gets that row's Score an ``error``.

        Returns:
            Scores for ``texts[:k]`` in input order: k == len(texts) unless stopped early (the scored prefix).

        Raises:
            ValueError: if ``batch_size`` < 1, a bad head mask or ``long_text`` policy, ``text_pairs`` of another
                length than ``texts``. PairNotSupported (a ValueError): a second text on a model that reads
                single texts.
            NoClassificationHead: (a ValueError) in attention-only mode.
        """
        self.require_head("scoring")
        hm = self.check_head_mask(head_mask)
        windowed = check_policy(long_text) == "windows"
        batch_size, max_tokens = self._pass_limits(batch_size, max_tokens)
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if text_pairs is not None and len(text_pairs) != len(texts):
            raise ValueError(f"text_pairs has {len(text_pairs)} entries for {len(texts)} texts")
        if text_pairs is not None:  # a pair on a single-text model: PairNotSupported, naming the model
            self.input_spec.allow(next((p for p in text_pairs if p is not None), None))
        window = window or max(1024, 8 * batch_size)
        total, results, done = len(texts), [], 0
        for w0 in range(0, total, window):
            chunk = texts[w0 : w0 + window]
            pairs = [None] * len(chunk) if text_pairs is None else text_pairs[w0 : w0 + window]
            slots, good, items = self._score_items(chunk, pairs, windowed)
            lengths = [len(ids) for ids in items.items]
            order = np.argsort(lengths, kind="stable")
            done += len(chunk) - len(good)
            for idx in token_budget_batches([lengths[i] for i in order], order, batch_size, max_tokens):
                if should_stop is not None and should_stop():
                    k = next((i for i, s in enumerate(slots) if s is None), len(slots))
                    return results + slots[:k]  # type: ignore[operator]
                ids, mask = self.encoder.pad_ids([items.items[i] for i in idx])  # (B, T) each
                types = types_kw(self.model, pad_segments([items.segments[i] for i in idx], ids.shape[1]), self.device)
                with self.scoring(hm) as model:
                    logits, _ = model(torch.from_numpy(ids).to(self.device), torch.from_numpy(mask).to(self.device),
                                           **types)
                probs, z = self.probabilities(logits), logits.float().cpu().numpy()  # (B, C) each
                for row, i in enumerate(idx):
                    if (complete := items.add(int(i), z[row], probs[row])) is not None:
                        slots[good[complete[0]]] = complete[1]
                        done += 1
                if progress is not None:
                    progress(done, total)
            if not good and progress is not None:
                progress(done, total)
            results.extend(slots)  # type: ignore[arg-type]
        return results

    def _pass_limits(self, batch_size: int | None, max_tokens: int | None) -> tuple[int, int]:
        """(texts, padded tokens) per :meth:`score_many` pass: the ones given, or this device's defaults."""
        cpu = self.device.type == "cpu"
        return (batch_size if batch_size is not None else BATCH_SIZE_CPU if cpu else BATCH_SIZE_GPU,
                max_tokens or (MAX_TOKENS_CPU if cpu else MAX_TOKENS_GPU))

    def _score_items(self, chunk: Sequence[str], pairs: Sequence[str | None], windowed: bool):
        """``(slots, good, items)`` of one window of :meth:`score_many`: a Score with the error for each bad text
        or pair (else None), the indices of the good ones, and their :class:`~model.predictor.long_text.WindowCollector`."""
        C = len(self.labels)
        slots: list[Score | None] = [None] * len(chunk)
        good, singles, twins = [], [], []
        for i, (t, p) in enumerate(zip(chunk, pairs, strict=True)):
            try:
                text = check_text(t)
                (twins if p is not None else singles).append((i, text, self.check_pair(p)))
                good.append(i)
            except ValueError as exc:
                slots[i] = Score("", np.zeros(self._task.type.score_width(C), np.float32), False, 0,
                                 str(exc), task=self._task.kind)
        encoded: dict[int, tuple] = {}
        if singles:  # (ids int64 [T_i], truncated)
            encoded.update(zip([i for i, _, _ in singles], self.encoder.encode_ids_batch(
                [t for _, t, _ in singles], whole=windowed)))
        if twins:  # (ids, segment ids, which side was cut)
            encoded.update(zip([i for i, _, _ in twins], self.encoder.encode_pair_ids_batch(
                [(t, p) for _, t, p in twins])))
        items = WindowCollector(self.encoder, [encoded[i] for i in good], self, windowed)
        return slots, good, items

    def positional_encoding(self, num_positions: int) -> np.ndarray | NoPositionalMatrix:
        """The exact positional-encoding matrix the model adds to its embeddings.

        Args:
            num_positions: P rows (positions 0..P-1); for our sinusoidal model P may exceed ``max_len``
                (the closed form continues); for learned position embeddings P <= ``max_len``.

        Returns:
            float32 [P, d_model] (Hugging Face models: their learned position-embedding rows, [P, E]); for a
            relative-position model (DeBERTa-v2/v3) a :class:`~model.records.prediction.NoPositionalMatrix` saying why
            there is none.

        Raises:
            ValueError: if ``num_positions`` < 0 (or above a learned table's ``max_len``).
        """
        if isinstance(self.model, HFEncoder):
            return self.model.positional_matrix(num_positions)
        if num_positions < 0:
            raise ValueError(f"num_positions must be >= 0, got {num_positions}")
        buf = self.model.positional_encoding
        if num_positions <= buf.shape[0]:
            return buf[:num_positions].cpu().numpy().copy()
        return sinusoidal_positional_encoding(num_positions, self.config.d_model, self.config.pe_base).numpy()

    def model_info(self, load_s: float = 0.0) -> ModelInfo:
        """What a user interface needs to know about this model, as an immutable NumPy record.

        Args:
            load_s: seconds it took to load the model (the caller measured them).

        Returns:
            :class:`model.records.info.ModelInfo`: shape, labels, device, positional-encoding matrix (read-only), the
            worked positional-encoding table, metrics and model card.
        """
        return build_model_info(self, load_s, sinusoidal_positional_encoding(*PE_WORKED_EXAMPLE).numpy())
