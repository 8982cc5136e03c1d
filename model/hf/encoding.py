"""Text -> token ids, tokens and character offsets for Hugging Face fast tokenizers, head+tail truncated.

The same :class:`~model.core.tokenizer.Encoded` records as our own tokenizer gives, so every view and
explanation works unchanged. The special tokens the tokenizer's post-processor puts around one sequence
([CLS] ... [SEP] for BERT-like models, <s> ... </s> for RoBERTa-like ones; read off the tokenizer itself by
:func:`special_wrap`) are tokens with empty spans (0, 0) and are flagged in ``Encoded.special``. Texts longer
than ``max_len`` tokens (special tokens included) are cut by the app's head+tail policy
(:func:`model.core.tokenizer.head_tail_keep`) and flagged ``truncated``.

Sentence pairs (:meth:`HFTextEncoder.encode_pair`) are encoded exactly as ``transformers``' fast tokenizer encodes
``tok(text, text_pair, truncation="longest_first", max_length=max_len)``: the tokenizer's own post-processor puts
the separators and the token types, its own longest-first truncation cuts the longer side first (a private copy of
the Rust tokenizer, its truncation set once at construction, so the shared one is never changed).

HTML line breaks (``<br />``, common in IMDB reviews) become a newline padded with spaces to the same length
(:func:`normalise_breaks`), so character offsets still point into the original text. The training CLI
``model.training.finetune_hf`` encodes with the same code (:func:`encode_head_tail`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from ..core.tokenizer import Encoded, TextEncoder, head_tail_keep

_BREAK = re.compile(r"(?i)<br\s*/?\s*>")


def normalise_breaks(text: str) -> str:
    """``<br />``-style HTML breaks -> ``"\\n"`` plus spaces, same length (offsets stay valid)."""
    if "<" not in text:
        return text
    return _BREAK.sub(lambda m: "\n" + " " * (len(m.group(0)) - 1), text)


def special_wrap(tok) -> tuple[list[int], list[int]]:
    """The special token ids a fast tokenizer puts before and after one sequence (e.g. [CLS] / [SEP]).

    Read off the tokenizer's own post-processor, so BERT-, RoBERTa- and XLNet-style layouts all work.

    Args:
        tok: a ``transformers`` fast tokenizer.

    Returns:
        ``(prefix ids, suffix ids)``.

    Raises:
        ValueError: when the text cannot be located between the special tokens.
    """
    plain = tok("a", add_special_tokens=False)["input_ids"]
    full = tok("a", add_special_tokens=True)["input_ids"]
    for i in range(len(full) - len(plain) + 1):
        if full[i : i + len(plain)] == plain:
            return list(full[:i]), list(full[i + len(plain) :])
    raise ValueError("cannot locate the text between the tokenizer's special tokens")


class HFTextEncoder(TextEncoder):
    """A :class:`~model.core.tokenizer.TextEncoder` for a Hugging Face fast tokenizer's Rust backend.

    Args:
        backend: the ``tokenizers.Tokenizer`` (``tok.backend_tokenizer``); only its ``encode_batch`` with
            ``add_special_tokens=False`` is used, so its truncation/padding settings never change.
        prefix: special token ids before the text (e.g. ``[CLS]``).
        suffix: special token ids after it (e.g. ``[SEP]``).
        max_len: the most tokens the model takes, special tokens included.
        pad_id: the padding id of the model.

    Raises:
        ValueError: when ``max_len`` leaves no room for text.
    """

    def __init__(self, backend, prefix: Sequence[int], suffix: Sequence[int], max_len: int, pad_id: int) -> None:
        self.prefix = np.asarray(prefix, dtype=np.int64)
        self.suffix = np.asarray(suffix, dtype=np.int64)
        if max_len - len(self.prefix) - len(self.suffix) < 1:
            raise ValueError(f"max_len {max_len} leaves no room for text between the special tokens")
        self.tokenizer = backend
        self.max_len = max_len
        self.pad_id = pad_id
        self.cls_id = int(self.prefix[0]) if len(self.prefix) else pad_id
        self.prefix_tokens = [backend.id_to_token(int(i)) for i in self.prefix]
        self.suffix_tokens = [backend.id_to_token(int(i)) for i in self.suffix]
        self._reads_pairs = _pair_template(backend, max_len)
        self._pair_twin = None

    @property
    def reads_pairs(self) -> bool:
        """True when the tokenizer has a pair template (more special tokens around a pair than around one text)."""
        return self._reads_pairs

    @property
    def pair_tokenizer(self):
        """The private copy of the Rust tokenizer that truncates pairs (see :func:`_pair_tokenizer`), or None when
        the tokenizer reads single texts. Built on first use, not when a folder opens: copying all-MiniLM-L6-v2's
        tokenizer takes 40-90 ms, and most models never read a pair."""
        if self._pair_twin is None and self._reads_pairs:
            self._pair_twin = _pair_tokenizer(self.tokenizer, self.max_len)
        return self._pair_twin

    @property
    def specials(self) -> tuple[int, int]:
        """(special tokens before the pieces, after them)."""
        return len(self.prefix), len(self.suffix)

    def _kept_ids(self, enc, whole: bool = False) -> tuple[np.ndarray, np.ndarray, int]:
        """(int64 [T] ids with the special tokens, int64 indices of the kept pieces (``whole``: all), n pieces)."""
        n = len(enc.ids)
        budget = self.max_len - len(self.prefix) - len(self.suffix)
        keep = np.arange(n, dtype=np.int64) if whole else head_tail_keep(n, budget)
        ids = np.concatenate([self.prefix, np.asarray(enc.ids, dtype=np.int64)[keep], self.suffix])
        return ids, keep, n

    def _finish(self, enc, whole: bool = False) -> Encoded:
        ids, keep, n = self._kept_ids(enc, whole)
        offsets = np.array([enc.token_to_chars(int(i)) or (0, 0) for i in keep], dtype=np.int64).reshape(-1, 2)
        pieces = [self.tokenizer.id_to_token(int(i)) for i in ids[len(self.prefix) : len(ids) - len(self.suffix)]]
        special = np.zeros(len(ids), dtype=bool)
        special[: len(self.prefix)] = True
        special[len(ids) - len(self.suffix) :] = True
        empty = np.zeros((len(self.prefix), 2), np.int64), np.zeros((len(self.suffix), 2), np.int64)
        return Encoded(
            ids=ids,
            tokens=[*self.prefix_tokens, *pieces, *self.suffix_tokens],
            offsets=np.concatenate([empty[0], offsets, empty[1]]),
            truncated=n > len(keep),
            num_source_tokens=n,
            special=special,
        )

    def encode(self, text: str, whole: bool = False) -> Encoded:
        """Tokenize one text (any length; head+tail truncated to ``max_len``, or whole); offsets index ``text``."""
        return super().encode(normalise_breaks(text), whole)

    def encode_batch(self, texts: Sequence[str]) -> list[Encoded]:
        """Tokenize many texts (the Rust tokenizer's threads)."""
        return super().encode_batch([normalise_breaks(t) for t in texts])

    def encode_ids_batch(self, texts: Sequence[str], whole: bool = False) -> list[tuple[np.ndarray, bool]]:
        """``(ids int64 [T], truncated)`` per text, T <= ``max_len`` unless ``whole``, special tokens included."""
        return super().encode_ids_batch([normalise_breaks(t) for t in texts], whole)


    def _pair_encodings(self, pairs: Sequence[tuple[str, str]], offsets: bool):
        """(truncated pair encodings, untruncated piece counts (n_first, n_second) per pair) of ``pairs``."""
        if self.pair_tokenizer is None:
            raise ValueError("this tokenizer has no sentence-pair template: it reads single texts")
        pairs = [(normalise_breaks(a), normalise_breaks(b)) for a, b in pairs]
        fast = getattr(self.pair_tokenizer, "encode_batch_fast", self.pair_tokenizer.encode_batch)
        encs = (self.pair_tokenizer.encode_batch if offsets else fast)(pairs, add_special_tokens=True)
        count = getattr(self.tokenizer, "encode_batch_fast", self.tokenizer.encode_batch)
        flat = count([t for p in pairs for t in p], add_special_tokens=False)
        return encs, [(len(flat[2 * i].ids), len(flat[2 * i + 1].ids)) for i in range(len(pairs))]

    @staticmethod
    def _segments(enc, counts: tuple[int, int]) -> tuple[np.ndarray, str]:
        """(int8 [T] segment ids, which side was cut) of one truncated pair encoding (see :class:`Encoded`)."""
        seq = [-1 if s is None else s for s in enc.sequence_ids]
        second = [i for i, s in enumerate(seq) if s == 1]
        segments = np.zeros(len(seq), np.int8)
        if second:
            segments[second[0]:] = 1
        else:  # the second text gave no piece: the tokenizer's own token types
            segments[:] = np.asarray(enc.type_ids, np.int8)
        cut = [counts[0] > seq.count(0), counts[1] > seq.count(1)]
        return segments, {(False, False): "", (True, False): "first", (False, True): "second"}.get(tuple(cut), "both")

    def encode_pair(self, text: str, text_pair: str) -> Encoded:
        """Tokenize a sentence pair as the model's tokenizer does (see the module docstring): ids and tokens with
        the separators, offsets into each text (``segment_ids`` says which), ``segment_ids``, ``pair_truncated``.

        Raises:
            ValueError: the tokenizer has no pair template.
        """
        (enc,), ((n1, n2),) = self._pair_encodings([(text, text_pair)], offsets=True)
        segments, cut = self._segments(enc, (n1, n2))
        special = np.asarray(enc.special_tokens_mask, dtype=bool)
        offsets = np.asarray(enc.offsets, dtype=np.int64).reshape(-1, 2)
        offsets[special] = 0
        return Encoded(ids=np.asarray(enc.ids, np.int64), tokens=list(enc.tokens), offsets=offsets, truncated=bool(cut),
                       num_source_tokens=n1 + n2, special=special, segment_ids=segments, pair_truncated=cut)

    def encode_pair_ids_batch(self, pairs: Sequence[tuple[str, str]]) -> list[tuple[np.ndarray, np.ndarray, str]]:
        """Ids only, for scoring: ``(ids int64 [T], segment ids int8 [T], which side was cut)`` per pair, the same
        as :meth:`encode_pair` gives.

        Raises:
            ValueError: the tokenizer has no pair template.
        """
        encs, counts = self._pair_encodings(pairs, offsets=False)
        out = []
        for enc, n in zip(encs, counts, strict=True):
            segments, cut = self._segments(enc, n)
            out.append((np.asarray(enc.ids, np.int64), segments, cut))
        return out


def _pair_template(backend, max_len: int) -> bool:
    """Whether the Rust tokenizer has a pair template (more special tokens around a pair than around one text) that
    leaves room for text within ``max_len`` tokens."""
    pair = backend.num_special_tokens_to_add(True)
    return pair > backend.num_special_tokens_to_add(False) and max_len > pair


def _pair_tokenizer(backend, max_len: int):
    """A private copy of the Rust tokenizer that truncates pairs longest-first to ``max_len`` tokens (as
    ``transformers`` sets it for ``truncation="longest_first"``), or None when it has no pair template."""
    from tokenizers import Tokenizer

    if not _pair_template(backend, max_len):
        return None
    twin = Tokenizer.from_str(backend.to_str())
    twin.no_padding()
    twin.enable_truncation(max_len, strategy="longest_first")
    return twin


def encoder_for(tok, max_len: int) -> HFTextEncoder:
    """An :class:`HFTextEncoder` for a ``transformers`` fast tokenizer ``tok`` and ``max_len`` tokens.

    Raises:
        ValueError: when the tokenizer is not a fast one or its special-token layout cannot be read.
    """
    if not getattr(tok, "is_fast", False):
        raise ValueError("a fast tokenizer (tokenizer.json) is needed")
    prefix, suffix = special_wrap(tok)
    pad_id = tok.pad_token_id if tok.pad_token_id is not None else 0
    return HFTextEncoder(tok.backend_tokenizer, prefix, suffix, max_len, pad_id)


def encode_head_tail(tok, texts: list[str], max_len: int, chunk: int = 2000) -> list[np.ndarray]:
    """Token ids with special tokens, cut by the app's head+tail policy to ``max_len`` (int64 [T] each).

    Exactly the ids the app's Hugging Face backend feeds the model (:class:`HFTextEncoder`).
    """
    encoder = encoder_for(tok, max_len)
    out: list[np.ndarray] = []
    for s in range(0, len(texts), chunk):
        out.extend(ids for ids, _ in encoder.encode_ids_batch(texts[s : s + chunk]))
    return out
