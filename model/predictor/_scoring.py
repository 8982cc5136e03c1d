"""The forward passes of ``Predictor.predict``, ``score_many`` and ``window_logits``: one text with attention, many
texts in length-bucketed batches on the fast SDPA path, and a document's windows.

Every function takes the :class:`~model.predictor._reading.Parts` of the call (the module it runs: the float32 model
or its bfloat16 copy) and the call's :class:`~model.predictor.options.PredictOptions`, fixed for the whole call: each
forward pass holds what ``parts.pass_lock`` says and runs inside the call's head mask (:func:`forward_scope`: this
thread only), so threads sharing one model never see each other's settings. Private to :mod:`model.predictor`.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext

import numpy as np
import torch

from model.core.tokenizer import Encoded
from model.explain.heads import head_mask_hooks
from model.records.document import Document
from model.records.prediction import Prediction, Score
from model.text.document_windows import aggregate, window_inputs
from model.text.inputs import check_text, token_budget_batches
from model.text.segments import pad_segments, types_kw

from . import _long_text
from ._long_text import WINDOW_BATCH, WindowCollector, whole_windows
from ._reading import Parts, check_pair, input_spec, probabilities, read_out
from ._vectors import VectorTap, text_vector
from .options import PredictOptions
from .precision import bucket_of

MAX_TOKENS_CPU = 4096  # padded tokens per score_many pass on a CPU
MAX_TOKENS_GPU = 32768  # ... on a GPU (an H100 scored 1.3-1.6x faster than with 4,096: benchmarks.batch_passes)
BATCH_SIZE_CPU = 64  # most texts per score_many pass on a CPU
BATCH_SIZE_GPU = 256  # ... on a GPU (4-19% more reviews/s than 64 on an H100 and an H200, same labels: benchmarks.gpu_scoring)


@contextmanager
def forward_scope(parts: Parts, options: PredictOptions) -> Iterator[torch.nn.Module]:
    """``parts.model`` with :attr:`~model.predictor._reading.Parts.pass_lock` held and the call's head mask applied
    (in this thread only) inside the ``with`` block: the frame of one forward pass."""
    with parts.pass_lock, head_mask_hooks(parts.model, options.head_mask, parts.n_heads):
        yield parts.model


def predict_text(parts: Parts, text: str, pair: str | None, options: PredictOptions, window: int = 0,
                 document: Document | None = None) -> Prediction:
    """``Predictor.predict`` of ``text`` (or of the checked pair ``text``, ``pair``) under ``options``.

    A text that fits (or is cut, or a pair) is one forward pass with attention, float32 (L, H, T, T). A text read in
    windows gives window ``window``'s prediction (:func:`_window_prediction`): that window's text, tokens, offsets and
    attention, the whole document's logits (its windows' logits aggregated) and its
    :class:`~model.records.document.Document`; a given ``document`` (of an earlier call on the same text and options)
    lends its windows' logits, so only the window shown is run.

    Raises:
        ValueError: a bad text (see :func:`~model.text.inputs.check_text`); a ``document`` of another text.
        IndexError: ``window`` outside 0..W-1.
    """
    t0 = time.perf_counter()
    enc_ = parts.encoder
    enc = enc_.encode(check_text(text), whole=options.windowed) if pair is None else enc_.encode_pair(check_text(text),
                                                                                                       pair)
    inputs = window_inputs(enc_, enc.ids)[0] if pair is None else [enc.ids]
    if len(inputs) > 1:
        return _window_prediction(parts, text, enc, inputs, options, window, document, t0)
    if int(window) != 0:
        raise IndexError(f"window {window} out of range for a text read in one window")
    logits, attention = _attention_pass(parts, enc, options)
    return _prediction(parts, text, enc, logits, attention, options, t0, text_pair=pair,
                       windows=None if pair is not None else whole_windows(enc_, enc))


def _attention_pass(parts: Parts, enc: Encoded, options: PredictOptions) -> tuple[np.ndarray, np.ndarray]:
    """One forward pass of an encoding that fits, with attention: float32 logits [C] and attention (L, H, T, T)."""
    ids = torch.from_numpy(enc.ids).unsqueeze(0).to(parts.device)  # (1, T)
    mask = torch.ones_like(ids, dtype=torch.bool)  # (1, T)
    with forward_scope(parts, options) as model:
        logits, attn = model(ids, mask, need_weights=True, **types_kw(model, enc.segment_ids, parts.device))
    if bucket_of(len(enc.ids), options.precision, parts.encoder.max_len) is not None:  # bf16: the scorer's pass
        logits, _ = _logits_pass(parts, [enc.ids], [enc.segment_ids], options)
    z = logits[0].float().cpu().numpy().astype(np.float32)  # (C,)
    return z, attn[0].float().cpu().numpy().astype(np.float32)  # (L, H, T, T)


def pass_batches(parts: Parts, lengths: Sequence[int], options: PredictOptions, batch_size: int,
                 max_tokens: int) -> Iterator[np.ndarray]:
    """The forward passes of items of ``lengths`` tokens: int64 index arrays, the items sorted by length and cut by
    :func:`~model.text.inputs.token_budget_batches`; in bf16 a pass never mixes two buckets
    (:func:`~model.predictor.precision.bucket_of`), so each item's padded length is its own."""
    order = np.argsort(lengths, kind="stable")
    keys = [bucket_of(lengths[i], options.precision, parts.encoder.max_len) for i in order]
    start = 0
    for end in [*(k for k in range(1, len(keys)) if keys[k] != keys[k - 1]), len(keys)]:
        padded = [keys[k] or lengths[order[k]] for k in range(start, end)]
        yield from token_budget_batches(padded, order[start:end], batch_size, max_tokens)
        start = end


def _logits_pass(parts: Parts, items: Sequence[np.ndarray], segments: Sequence[np.ndarray | None],
                 options: PredictOptions, tap: VectorTap | None = None) -> tuple[torch.Tensor, list]:
    """One forward pass without attention weights (the SDPA path) of int64 id arrays ``items`` (their segment ids,
    None for a single text), padded to the longest (float32) or to its bucket (bf16; all ``items`` share one), in
    the call's precision and head mask: (logits [B, C] in the model's dtype, ``tap``'s sentence vectors [B] or [])."""
    longest = max(len(x) for x in items)
    ids, mask = parts.encoder.pad_ids(items, bucket_of(longest, options.precision, parts.encoder.max_len))
    types = types_kw(parts.model, pad_segments(segments, ids.shape[1]), parts.device)
    mask_t = torch.from_numpy(mask).to(parts.device)
    with forward_scope(parts, options) as model, tap.recording() if tap else nullcontext() as outputs:
        logits, _ = model(torch.from_numpy(ids).to(parts.device), mask_t, **types)
    return logits, [] if tap is None else tap.vectors(outputs, mask_t)


def _prediction(parts: Parts, text: str, enc: Encoded, logits: np.ndarray, attention: np.ndarray,
                options: PredictOptions, t0: float, **more) -> Prediction:
    """The :class:`Prediction` of ``text`` read as ``enc`` (tokens, offsets, attention) with the verdict of float32
    ``logits`` [C] under ``options.task``; ``more``: the remaining fields (``text_pair``, ``document``, ...), or
    ``windows``, the one window of a text that fits (:class:`~model.records.document.DocumentWindows`)."""
    task = options.task
    probs = probabilities(torch.from_numpy(logits), task)  # (C,); (0,) for regression and in attention-only mode
    label, _ = read_out(logits, probs, parts.labels, task)
    more.setdefault("truncated", enc.truncated)
    more.setdefault("num_source_tokens", enc.num_source_tokens)
    windows = more.pop("windows", None)  # a text that fits: its one window
    if "document" not in more:
        more["document"] = Document.single(text, enc.tokens, enc.offsets, logits, probs, windows, more.get("text_pair"),
                                           enc.segment_ids)
    return Prediction(
        text=text, tokens=enc.tokens, offsets=enc.offsets, label=label, labels=parts.labels, probabilities=probs,
        logits=logits, attention=attention, elapsed_s=time.perf_counter() - t0, device=str(parts.device),
        pooling=parts.model.config.pooling, task=task.kind, threshold=task.threshold, segment_ids=enc.segment_ids,
        pair_truncated=enc.pair_truncated, **more)


def _window_prediction(parts: Parts, text: str, enc: Encoded, inputs: list[np.ndarray], options: PredictOptions,
                       window: int, document: Document | None, t0: float) -> Prediction:
    """Window ``window`` of a text read in W windows (``enc`` its whole encoding, ``inputs`` its windows' ids): the
    window's text encoded alone and run with attention; every window's logits (or ``document``'s), aggregated
    (:func:`model.text.document_windows.aggregate`) into the verdict."""
    windows = whole_windows(parts.encoder, enc)
    if not 0 <= int(window) < windows.count:
        raise IndexError(f"window {window} out of range for a text read in {windows.count} windows")
    if document is not None and (document.text != text or document.num_windows != windows.count):
        raise ValueError("the document given is of another text (or was read in other windows)")
    sub = _long_text.window_text(text, windows, int(window))
    enc_w = parts.encoder.encode(check_text(sub))  # the window's text alone: what the per-window views re-read
    own, attention = _attention_pass(parts, enc_w, options)
    doc = document
    if doc is None:
        same = np.array_equal(enc_w.ids, inputs[window])  # the window's pass is the one the aggregate reads
        rest = [v for v in range(windows.count) if v != window or not same]
        per_window = np.empty((windows.count, len(own)), np.float32)  # (W, C)
        per_window[rest] = window_logits(parts, [inputs[v] for v in rest], options).numpy()
        if same:
            per_window[window] = own
        doc = Document(text, enc.tokens, enc.offsets, windows, per_window,
                       probabilities(torch.from_numpy(per_window), options.task))
    per_window = doc.window_logits
    z = np.asarray(aggregate(per_window, windows.ranges), np.float32)  # (C,)
    index = _long_text.window_token_map(parts.encoder, text, windows, int(window), len(enc_w.tokens))
    return _prediction(parts, sub, enc_w, z, attention, options, t0, truncated=enc.truncated,
                       num_source_tokens=enc.num_source_tokens, document=doc, window=int(window),
                       document_index=index)


def window_logits(parts: Parts, inputs: list[np.ndarray], options: PredictOptions) -> torch.Tensor:
    """Logits of each int64 id array of ``inputs`` (single texts, e.g. a document's windows),
    :data:`~model.predictor._long_text.WINDOW_BATCH` padded inputs per forward pass (the SDPA path, no weights).

    Returns:
        float32 tensor [W, C] on the CPU.
    """
    out: torch.Tensor | None = None
    budget = WINDOW_BATCH * max([parts.encoder.max_len, *map(len, inputs)])  # WINDOW_BATCH inputs a pass, any length
    for idx in pass_batches(parts, [len(x) for x in inputs], options, WINDOW_BATCH, budget):
        logits, _ = _logits_pass(parts, [inputs[i] for i in idx], [None] * len(idx), options)
        if out is None:
            out = torch.empty((len(inputs), logits.shape[1]), dtype=torch.float32)
        out[torch.from_numpy(idx)] = logits.float().cpu()
    return out if out is not None else torch.empty((0, len(parts.labels)), dtype=torch.float32)


def pass_limits(parts: Parts, texts: Sequence[str], pairs: Sequence[str | None] | None, batch_size: int | None,
                max_tokens: int | None) -> tuple[int, int]:
    """(texts, padded tokens) per ``score_many`` pass: the ones given, or the device's defaults; and the checks of
    ``score_many``'s arguments.

    Raises:
        ValueError: ``batch_size`` < 1; ``pairs`` of another length than ``texts``. PairNotSupported: a second text
            on a model that reads single texts (naming the model).
    """
    cpu = parts.device.type == "cpu"
    batch_size = batch_size if batch_size is not None else BATCH_SIZE_CPU if cpu else BATCH_SIZE_GPU
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    if pairs is not None and len(pairs) != len(texts):
        raise ValueError(f"text_pairs has {len(pairs)} entries for {len(texts)} texts")
    if pairs is not None:  # a pair on a single-text model: PairNotSupported, naming the model
        input_spec(parts.encoder, parts.model_dir).allow(next((p for p in pairs if p is not None), None))
    return batch_size, max_tokens or (MAX_TOKENS_CPU if cpu else MAX_TOKENS_GPU)


def score_texts(parts: Parts, texts: Sequence[str], pairs: Sequence[str | None] | None, options: PredictOptions,
                batch_size: int, max_tokens: int, window: int, progress: Callable[[int, int], None] | None,
                should_stop: Callable[[], bool] | None) -> list[Score]:
    """``Predictor.score_many`` once its arguments are checked: the texts taken ``window`` at a time, sorted by length
    within one, scored in token-budget batches; the scores in input order (the scored prefix when stopped). With
    ``options.vectors`` each Score keeps its text's sentence vector (:mod:`model.predictor._vectors`), read in the
    same passes."""
    total, results, done = len(texts), [], 0
    tap = None if options.vectors is None else VectorTap(parts.model, options.vectors)
    for w0 in range(0, total, window):
        chunk = texts[w0 : w0 + window]
        chunk_pairs = [None] * len(chunk) if pairs is None else pairs[w0 : w0 + window]
        slots, good, items = score_items(parts, chunk, chunk_pairs, options)
        done += len(chunk) - len(good)
        item_vectors: dict[int, np.ndarray] = {}
        for idx in pass_batches(parts, [len(ids) for ids in items.items], options, batch_size, max_tokens):
            if should_stop is not None and should_stop():
                k = next((i for i, s in enumerate(slots) if s is None), len(slots))
                return results + slots[:k]  # type: ignore[operator]
            logits, vectors = _logits_pass(parts, [items.items[i] for i in idx], [items.segments[i] for i in idx],
                                           options, tap)
            item_vectors.update(zip((int(i) for i in idx), vectors))
            probs, z = probabilities(logits, options.task), logits.float().cpu().numpy()  # (B, C) each
            for row, i in enumerate(idx):
                if (complete := items.add(int(i), z[row], probs[row])) is not None:
                    k, score = complete
                    if tap is not None:
                        score = dataclasses.replace(score, vector=text_vector(
                            item_vectors, int(items.first[k]), len(items.ranges[k])))
                    slots[good[k]] = score
                    done += 1
            if progress is not None:
                progress(done, total)
        if not good and progress is not None:
            progress(done, total)
        results.extend(slots)  # type: ignore[arg-type]
    return results


def score_items(parts: Parts, chunk: Sequence[str], pairs: Sequence[str | None], options: PredictOptions):
    """``(slots, good, items)`` of one window of :func:`score_texts`: a Score with the error for each bad text or
    pair (else None), the indices of the good ones, and their :class:`~model.predictor._long_text.WindowCollector`."""
    task = options.task
    slots: list[Score | None] = [None] * len(chunk)
    good, singles, twins = [], [], []
    for i, (t, p) in enumerate(zip(chunk, pairs, strict=True)):
        try:
            text = check_text(t)
            (twins if p is not None else singles).append((i, text, check_pair(parts.encoder, parts.model_dir, p)))
            good.append(i)
        except ValueError as exc:
            slots[i] = Score("", np.zeros(task.type.score_width(len(parts.labels)), np.float32), False, 0,
                             str(exc), task=task.kind)
    encoded: dict[int, tuple] = {}
    if singles:  # (ids int64 [T_i], truncated)
        encoded.update(zip([i for i, _, _ in singles], parts.encoder.encode_ids_batch(
            [t for _, t, _ in singles], whole=options.windowed)))
    if twins:  # (ids, segment ids, which side was cut)
        encoded.update(zip([i for i, _, _ in twins], parts.encoder.encode_pair_ids_batch(
            [(t, p) for _, t, p in twins])))
    items = WindowCollector(parts.encoder, [encoded[i] for i in good], parts.labels, task, options.windowed)
    return slots, good, items
