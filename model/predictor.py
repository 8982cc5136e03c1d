"""The inference API used by the GUI, the command line and the tests.

``Predictor.from_pretrained()`` loads the bundled model, one of our own model folders or a local Hugging Face
encoder folder (:mod:`model.hf`: the same API; without a classification head, attention-only mode); ``predict`` returns
a :class:`Prediction` (with attention for every layer and head) and
``score_many`` scores many texts in length-bucketed batches on the fast SDPA
path; ``model_info`` summarises the loaded model for a user interface (:class:`model.info.ModelInfo`). Input
checks and the token-budget batching are in :mod:`model.inputs`. ``attention_flow``, ``layer_predictions`` and the
head mask (``head_mask=`` of ``predict``, ``score_many``, ``explain``) come from :mod:`model.analysis`.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import torch

from .analysis import PredictorAnalysis
from .core.config import EncoderConfig
from .core.encoder import TransformerClassifier
from .core.paths import default_model_dir
from .core.positional import sinusoidal_positional_encoding
from .core.tokenizer import Encoded, TextEncoder, load_tokenizer
from .core.weights import TOKENIZER_FILE, load_model, read_metrics
from .hf.backend import HFEncoder, HFModelSummary
from .hf.loading import is_hf_folder, load_hf_folder
from .info import PE_WORKED_EXAMPLE, ModelInfo, build_model_info
from .inputs import check_text, resolve_device, token_budget_batches
from .internals import AttentionInternals, EmbeddingNorms
from .long_text import WindowCollector, forward_logits, whole_windows, window_inputs
from .precision import autocast, resolve as resolve_precision
from .prediction import NoClassificationHead, NoPositionalMatrix, Prediction, Score
from .windows import aggregate, check_policy


class Predictor(PredictorAnalysis):
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
        self.precision = "fp32"  # of predict and score_many: "fp32" or "bf16" (:meth:`use_precision`)

    @property
    def config(self) -> EncoderConfig | HFModelSummary:
        """The model's :class:`EncoderConfig` (a :class:`model.hf.HFModelSummary` for Hugging Face models)."""
        return self.model.config

    @property
    def has_head(self) -> bool:
        """False for a bare encoder opened in attention-only mode (no labels, no probabilities)."""
        return len(self.labels) > 0

    def require_head(self, what: str) -> None:
        """Raise :class:`~model.prediction.NoClassificationHead` (a ValueError) in attention-only mode."""
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
        tokenizer = load_tokenizer(model_dir / TOKENIZER_FILE)
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
        twin.precision = self.precision
        return twin

    def use_precision(self, requested: str = "auto") -> str:
        """Run ``predict`` and ``score_many`` in ``requested`` precision ("auto", "fp32", "bf16"; auto: decided by
        :func:`model.precision.resolve`); returns the one in use, "fp32" or "bf16". Raises ValueError: unknown one."""
        self.precision = resolve_precision(requested, self)
        return self.precision

    def encode(self, text: str) -> Encoded:
        """Tokenize ``text`` as the model will see it (see :class:`model.core.tokenizer.Encoded`).

        Raises:
            ValueError: see :func:`~model.inputs.check_text`.
        """
        return self.encoder.encode(check_text(text))

    @torch.inference_mode()
    def predict(self, text: str, head_mask=None, long_text: str | None = None) -> Prediction:
        """Classify one text and return attention for every layer and head.

        ``head_mask``: optional array-like (L, H), 1 keeps head h of layer l, 0 removes it (its context vector times
        0 before the output projection; Michel et al. 2019); an all-ones mask gives bit-identical results.
        ``long_text``: ``"windows"`` (default: a text longer than the model's maximum length is read in overlapping
        windows, :mod:`model.windows`; ``attention`` is the first window's) or ``"head_tail"`` (cut). A text that
        fits gives the same result under both.

        Raises:
            ValueError: empty/whitespace-only text, a non-string, or more than
                ``model.inputs.MAX_TEXT_CHARS`` characters; a head mask of the wrong shape or values; an unknown
                ``long_text`` policy.
        """
        t0 = time.perf_counter()
        hm = self.check_head_mask(head_mask)
        enc = self.encoder.encode(check_text(text), whole=check_policy(long_text) == "windows")
        windows = whole_windows(self, enc)
        inputs, _ = window_inputs(self.encoder, enc.ids)
        ids = torch.from_numpy(inputs[0]).unsqueeze(0).to(self.device)  # (1, T_0)
        mask = torch.ones_like(ids, dtype=torch.bool)  # (1, T_0)
        with self.masked(hm), autocast(self.precision, self.device):
            logits, attn = self.model(ids, mask, need_weights=True)  # (1, C), (1, L, H, T_0, T_0)
        window_logits, head_tail = logits.float().cpu(), None
        if len(inputs) > 1:  # the other windows, then the head+tail cut
            with autocast(self.precision, self.device):
                views = torch.cat([window_logits, forward_logits(self, inputs[1:], hm)])  # (W + 1, C)
            window_logits, head_tail = views[: windows.count], views[windows.count].numpy()
            logits = torch.from_numpy(aggregate(window_logits.numpy(), windows.ranges, head_tail=head_tail))[None]
        probs = logits.softmax(-1)[0].float().cpu().numpy()  # (C,); (0,) in attention-only mode
        return Prediction(
            text=text, tokens=enc.tokens, offsets=enc.offsets,
            label=self.labels[int(probs.argmax())] if len(probs) else "", labels=self.labels,
            probabilities=probs.astype(np.float32), logits=logits[0].float().cpu().numpy().astype(np.float32),
            attention=attn[0].float().cpu().numpy().astype(np.float32), truncated=enc.truncated,
            num_source_tokens=enc.num_source_tokens, elapsed_s=time.perf_counter() - t0, device=str(self.device),
            pooling=self.config.pooling, windows=windows.ranges, window_chars=windows.chars,
            window_logits=window_logits.numpy().astype(np.float32),
            window_probabilities=window_logits.softmax(-1).numpy().astype(np.float32), head_tail_logits=head_tail,
        )

    @torch.inference_mode()
    def attention_internals(self, text: str, layer: int, head_mask=None) -> AttentionInternals:
        """Queries, keys, values, pre-softmax scores and head outputs of one layer for ``text``.

        Dispatches to the backend: ``self.model.attention_internals(input_ids, mask, layer)`` (the bundled
        :class:`~model.core.encoder.TransformerClassifier`; another backend supplies the same method and,
        where its scores carry extra terms, says so in ``extra_score_terms``). ``softmax(scores)`` equals
        ``predict(text).attention[layer]``. Computed for one layer only (512 tokens x d_model floats, not
        all layers at once).

        Args:
            text: the review (tokenized exactly as :meth:`predict` does).
            layer: 0-based layer; negative counts from the last.
            head_mask: optional (L, H) head mask, as in :meth:`predict` (the layers below see the masked model).

        Returns:
            :class:`model.internals.AttentionInternals` (read-only float32 arrays).

        Raises:
            ValueError: bad text (see :func:`~model.inputs.check_text`) or head mask. IndexError: ``layer`` out of
                range.
        """
        n_layers = self.config.n_layers
        if not -n_layers <= layer < n_layers:
            raise IndexError(f"layer {layer} out of range for {n_layers} layers")
        layer %= n_layers
        enc = self.encode(text)
        ids = torch.from_numpy(enc.ids).unsqueeze(0).to(self.device)  # (1, T)
        mask = torch.ones_like(ids, dtype=torch.bool)  # (1, T)
        checked = self.check_head_mask(head_mask)
        with self.masked(checked):
            parts = self.model.attention_internals(ids, mask, layer)

        def arr(name: str, batched: bool = True) -> np.ndarray | None:
            t = parts.get(name)
            return None if t is None else (t[0] if batched else t).float().cpu().numpy().astype(np.float32)

        return AttentionInternals(
            tokens=tuple(enc.tokens), layer=layer, extra_score_terms=parts.get("extra_score_terms"),
            **{n: arr(n) for n in ("queries", "keys", "values", "scores", "head_outputs", "inputs", "attention_output",
                                   "position_scores")},
            output_weight=arr("output_weight", False), output_bias=arr("output_bias", False),
            score_scale=parts.get("score_scale"), head_scale=None if checked is None else checked[layer].copy(),
        )

    @torch.inference_mode()
    def embedding_norms(self, text: str) -> EmbeddingNorms:
        """Per-position ||PE(pos)|| and ||token embedding x sqrt(d_model)|| of ``text`` (dispatches to
        ``self.model.embedding_norms``, like :meth:`attention_internals`).

        Raises:
            ValueError: bad text (see :func:`~model.inputs.check_text`).
        """
        enc = self.encode(text)
        ids = torch.from_numpy(enc.ids).unsqueeze(0).to(self.device)  # (1, T)
        with self.forward_lock:
            pe, tok = self.model.embedding_norms(ids)
        return EmbeddingNorms(tuple(enc.tokens), pe[0].float().cpu().numpy(), tok[0].float().cpu().numpy())

    @torch.inference_mode()
    def score_many(
        self,
        texts: Sequence[str],
        batch_size: int = 64,
        progress: Callable[[int, int], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
        window: int | None = None,
        max_tokens: int = 4096,
        head_mask=None,
        long_text: str | None = None,
    ) -> list[Score]:
        """Score many texts without attention, in length-bucketed batches (fast SDPA path).

        Texts are taken in windows of ``window`` consecutive texts, sorted by length within one (each batch holds
        similar lengths); the scores come back in input order.

        Args:
            texts: the texts; a bad one (empty, not a string, too long) gets a :class:`Score` with ``error`` set.
            batch_size: at most this many texts per forward pass.
            max_tokens: at most this many (padded) tokens per forward pass, so batches of long reviews are smaller
                (token-budget batching, as fairseq's ``--max-tokens``); a single text always fits.
            window: texts sorted together (default ``8 * batch_size``, at least 1024).
            progress: called as ``progress(done, total)`` after every batch.
            should_stop: checked before every batch; when it returns True, scoring stops.
            head_mask: optional (L, H) head mask, as in :meth:`predict`.
            long_text: ``"windows"`` (default) or ``"head_tail"``, as in :meth:`predict`; a long text's windows
                are batched like texts (each one costs its windows).

        Returns:
            Scores for ``texts[:k]`` in input order: k == len(texts) unless stopped early (the scored prefix).

        Raises:
            ValueError: if ``batch_size`` < 1, a bad head mask or ``long_text`` policy.
            NoClassificationHead: (a ValueError) in attention-only mode.
        """
        self.require_head("scoring")
        hm = self.check_head_mask(head_mask)
        windowed = check_policy(long_text) == "windows"
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        window = window or max(1024, 8 * batch_size)
        total = len(texts)
        C = len(self.labels)
        results: list[Score] = []
        done = 0
        for w0 in range(0, total, window):
            chunk = texts[w0 : w0 + window]
            slots: list[Score | None] = [None] * len(chunk)
            good: list[int] = []
            good_texts: list[str] = []
            for i, t in enumerate(chunk):
                try:
                    good_texts.append(check_text(t))
                    good.append(i)
                except ValueError as exc:
                    slots[i] = Score("", np.zeros(C, np.float32), False, 0, str(exc))
            encoded = self.encoder.encode_ids_batch(good_texts, whole=windowed)  # (ids int64 [T_i], truncated)
            items = WindowCollector(self.encoder, encoded, self.labels, windowed)  # a text's windows: one item each
            lengths = [len(ids) for ids in items.items]
            order = np.argsort(lengths, kind="stable")
            done += len(chunk) - len(good)
            for idx in token_budget_batches([lengths[i] for i in order], order, batch_size, max_tokens):
                if should_stop is not None and should_stop():
                    k = next((i for i, s in enumerate(slots) if s is None), len(slots))
                    return results + slots[:k]  # type: ignore[operator]
                ids, mask = self.encoder.pad_ids([items.items[i] for i in idx])  # (B, T) each
                with self.masked(hm), autocast(self.precision, self.device):
                    logits, _ = self.model(torch.from_numpy(ids).to(self.device), torch.from_numpy(mask).to(self.device))
                probs, z = logits.softmax(-1).float().cpu().numpy(), logits.float().cpu().numpy()  # (B, C) each
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

    def positional_encoding(self, num_positions: int) -> np.ndarray | NoPositionalMatrix:
        """The exact positional-encoding matrix the model adds to its embeddings.

        Args:
            num_positions: P rows (positions 0..P-1); for our sinusoidal model P may exceed ``max_len``
                (the closed form continues); for learned position embeddings P <= ``max_len``.

        Returns:
            float32 [P, d_model] (Hugging Face models: their learned position-embedding rows, [P, E]); for a
            relative-position model (DeBERTa-v2/v3) a :class:`~model.prediction.NoPositionalMatrix` saying why
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
            :class:`model.info.ModelInfo`: shape, labels, device, positional-encoding matrix (read-only), the
            worked positional-encoding table, metrics and model card.
        """
        return build_model_info(self, load_s, sinusoidal_positional_encoding(*PE_WORKED_EXAMPLE).numpy())
