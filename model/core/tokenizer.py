"""WordPiece tokenizer (HF ``tokenizers``) with character offsets and head+tail truncation.

The tokenizer is trained by us on the IMDB train and unlabeled reviews
(:func:`train_tokenizer`) and saved as ``tokenizer.json`` in the model folder.

Normalisation: HTML line breaks (``<br />``, ``<br>``, any case) become
spaces, control characters are dropped, accents stripped, text lower-cased
(BERT's normaliser). Pre-tokenisation splits on whitespace and punctuation;
WordPiece splits rare words into ``##``-prefixed pieces. Every token keeps
the character span (start, end) it came from in the *original* text.

Truncation policy (head+tail, Sun et al. 2019, "How to Fine-Tune BERT for
Text Classification?", section 5.3.1): when a review has more than
``max_len - 1`` word pieces, keep the first quarter of the budget from the
head and the rest from the tail, and flag the result as truncated.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

from .tokenizer_check import check_tokenizer_file

PAD, UNK, CLS, MASK = "[PAD]", "[UNK]", "[CLS]", "[MASK]"
SPECIAL_TOKENS = (PAD, UNK, CLS, MASK)  # ids 0, 1, 2, 3
HEAD_FRACTION = 0.25


@dataclass(frozen=True)
class Encoded:
    """One tokenized text, ready for the model.

    Attributes:
        ids: int64 [T], the classification token first.
        tokens: T token strings.
        offsets: int64 [T, 2], character spans (start, end) in the original
            text; the classification token has (0, 0).
        truncated: True when tokens were dropped by the head+tail policy.
        num_source_tokens: word pieces in the whole text before truncation.
        special: bool [T], True for the special tokens (never erased by the faithfulness metrics), or None:
            only the first token (the classification token) is special.
        segment_ids: int8 [T] for a sentence pair: 0 for the first text's tokens and the special tokens before
            and around it, 1 from the second text's first token on (the model's ``token_type_ids`` where it has
            them); None for a single text. A token's offsets index the text of its segment.
        pair_truncated: which side of a pair the longest-first truncation cut: "" (none), "first", "second" or
            "both".
    """

    ids: np.ndarray
    tokens: list[str]
    offsets: np.ndarray
    truncated: bool
    num_source_tokens: int
    special: np.ndarray | None = None
    segment_ids: np.ndarray | None = None
    pair_truncated: str = ""

    def special_mask(self) -> np.ndarray:
        """bool [T]: ``special``, or only position 0 when it is None."""
        if self.special is not None:
            return np.asarray(self.special, dtype=bool)
        mask = np.zeros(len(self.ids), dtype=bool)
        mask[:1] = True
        return mask


def build_untrained_tokenizer() -> Tokenizer:
    """A WordPiece tokenizer with our normaliser and pre-tokeniser but no vocabulary yet."""
    tok = Tokenizer(models.WordPiece(unk_token=UNK, max_input_chars_per_word=100))
    tok.normalizer = normalizers.Sequence(
        [
            normalizers.Replace(Regex(r"(?i)<br\s*/?\s*>"), " "),
            normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=True, lowercase=True),
        ]
    )
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    return tok


def train_tokenizer(texts: Iterable[str], vocab_size: int = 16000, min_frequency: int = 3) -> Tokenizer:
    """Train a WordPiece vocabulary on ``texts``.

    Args:
        texts: training texts (an iterator is fine).
        vocab_size: target vocabulary size, special tokens included.
        min_frequency: a pair must occur this often to be merged.

    Returns:
        The trained ``tokenizers.Tokenizer``; special tokens get ids 0..3
        in the order of ``SPECIAL_TOKENS``.
    """
    tok = build_untrained_tokenizer()
    trainer = trainers.WordPieceTrainer(
        vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=list(SPECIAL_TOKENS)
    )
    tok.train_from_iterator(texts, trainer=trainer)
    return tok


def load_tokenizer(path: str | Path, rows: int | None = None) -> Tokenizer:
    """Load ``tokenizer.json``, its token ids checked first (:func:`model.core.tokenizer_check.check_tokenizer_file`:
    below ``rows``, the model's embedding rows, when given) so that the ``tokenizers`` library never sees an absurd one.

    Raises:
        FileNotFoundError: if the file is missing.
        ValueError: if it cannot be parsed, gives an id out of range or twice, or lacks the special tokens; the
            message names the file.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"tokenizer not found: {path}")
    check_tokenizer_file(path, rows)
    try:
        tok = Tokenizer.from_file(str(path))
    except Exception as exc:  # tokenizers raises a bare Exception on bad JSON
        raise ValueError(f"invalid tokenizer file {path}: {exc}") from exc
    for i, name in enumerate(SPECIAL_TOKENS):
        if tok.token_to_id(name) != i:
            raise ValueError(f"invalid tokenizer file {path}: special token {name} must have id {i}")
    return tok


def head_tail_keep(n: int, budget: int) -> np.ndarray:
    """Indices of the word pieces kept by the head+tail policy.

    Args:
        n: word pieces in the text.
        budget: how many may be kept (``max_len - 1``).

    Returns:
        int64 [min(n, budget)] sorted indices into the n pieces.
    """
    if n <= budget:
        return np.arange(n, dtype=np.int64)
    head = int(budget * HEAD_FRACTION)
    tail = budget - head
    return np.concatenate([np.arange(head), np.arange(n - tail, n)]).astype(np.int64)


def pad_sequences(batch: Sequence[np.ndarray], pad_id: int, length: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Right-pad id sequences (int [T_i] each) into ``(input_ids int64 (B, T), attention_mask bool (B, T))``,
    T = ``length`` (None: the longest sequence; raises ValueError when shorter than it); padding positions hold
    ``pad_id`` and are False in the mask."""
    longest = max(len(x) for x in batch)
    T = longest if length is None else int(length)
    if T < longest:
        raise ValueError(f"cannot pad a sequence of {longest} ids to {T}")
    ids = np.full((len(batch), T), pad_id, dtype=np.int64)
    mask = np.zeros((len(batch), T), dtype=bool)
    for i, x in enumerate(batch):
        ids[i, : len(x)] = x
        mask[i, : len(x)] = True
    return ids, mask


def _word_marks(tokenizer: Tokenizer) -> tuple[str, str]:
    """``(continuation prefix, word-start mark)`` of a tokenizer, read from its JSON: WordPiece's
    ``continuing_subword_prefix`` (``##``); the space mark of a byte-level pre-tokenizer (``\u0120``) or of a
    Metaspace one (its ``replacement``, ``\u2581``); ``("", "")`` for neither."""
    import json

    spec = json.loads(tokenizer.to_str())
    model = spec.get("model") or {}
    if model.get("type") == "WordPiece":
        return model.get("continuing_subword_prefix") or "##", ""
    stack, mark = [spec.get("pre_tokenizer") or {}], ""
    while stack:
        pre = stack.pop()
        stack.extend(pre.get("pretokenizers") or [])
        if pre.get("type") == "ByteLevel":
            mark = "\u0120"
        elif pre.get("type") == "Metaspace":
            mark = pre.get("replacement") or "\u2581"
    return "", mark


class TextEncoder:
    """Turns raw text into :class:`Encoded` inputs for a model of length ``max_len``.

    Args:
        tokenizer: a tokenizer from :func:`train_tokenizer` / :func:`load_tokenizer`.
        max_len: the model's maximum length in tokens, the classification token included.
    """

    def __init__(self, tokenizer: Tokenizer, max_len: int) -> None:
        if max_len < 2:
            raise ValueError(f"max_len must be at least 2, got {max_len}")
        self.tokenizer = tokenizer
        self.max_len = max_len
        self.cls_id = tokenizer.token_to_id(CLS)
        self.pad_id = tokenizer.token_to_id(PAD)

    @property
    def specials(self) -> tuple[int, int]:
        """(special tokens before the pieces, after them): (1, 0), the classification token only."""
        return 1, 0

    def word_starts(self, piece_ids: np.ndarray) -> np.ndarray:
        """bool [n]: True where a piece begins a word, for the windows' boundaries (:func:`model.text.document_windows.window_ranges`).

        The vocabulary says which pieces continue a word: WordPiece marks continuations (``##``); byte-level BPE
        (RoBERTa, GPT-2: ``\u0120``, a space before) and SentencePiece (XLM-R, ALBERT, DeBERTa-v3: ``\u2581``) mark
        starts, so there every piece without the mark continues a word (punctuation after a word too). A vocabulary
        with none of these marks: all True."""
        if getattr(self, "_continuation", None) is None:
            vocab = self.tokenizer.get_vocab()
            table = np.zeros(max(vocab.values(), default=0) + 1, dtype=bool)
            prefix, mark = _word_marks(self.tokenizer)
            if prefix:
                table[[i for t, i in vocab.items() if t.startswith(prefix)]] = True
            elif mark:
                table[[i for t, i in vocab.items() if not t.startswith(mark)]] = True
            self._continuation = table
        ids = np.asarray(piece_ids, dtype=np.int64)
        table = self._continuation
        return ~table[np.clip(ids, 0, len(table) - 1)]

    def _kept_ids(self, enc, whole: bool = False) -> tuple[np.ndarray, np.ndarray, int]:
        """Head+tail selection of one raw encoding (``whole``: every piece): (int64 [T] ids with the classification
        token first, int64 [T-1] indices of the kept pieces, n pieces in the whole text). ``enc.ids`` is converted
        once."""
        all_ids = enc.ids
        n = len(all_ids)
        keep = np.arange(n, dtype=np.int64) if whole else head_tail_keep(n, self.max_len - 1)
        ids = np.empty(len(keep) + 1, dtype=np.int64)
        ids[0] = self.cls_id
        ids[1:] = np.asarray(all_ids, dtype=np.int64)[keep]
        return ids, keep, n

    def _finish(self, enc, whole: bool = False) -> Encoded:
        # Only the kept pieces' offsets and strings are converted to Python: ``enc.offsets``/``enc.tokens`` build
        # lists of every piece while holding the GIL (346 ms for a 1 MB review, against 21 ms this way).
        ids, keep, n = self._kept_ids(enc, whole)
        offsets = np.array([enc.token_to_chars(int(i)) for i in keep], dtype=np.int64).reshape(-1, 2)
        tokens = [self.tokenizer.id_to_token(int(i)) for i in ids[1:]]  # WordPiece tokens are vocabulary entries
        return Encoded(
            ids=ids,
            tokens=[CLS, *tokens],
            offsets=np.concatenate([np.zeros((1, 2), np.int64), offsets]),
            truncated=n > len(keep),
            num_source_tokens=n,
        )

    def encode(self, text: str, whole: bool = False) -> Encoded:
        """Tokenize one text (any length; truncated to ``max_len``, or every piece with ``whole``: the document
        that :mod:`model.text.document_windows` reads in windows).

        Goes through ``encode_batch``, which releases the GIL while the Rust tokenizer works
        (``Tokenizer.encode`` keeps it: a 1 MB review froze the GUI thread for 0.8 s).
        """
        return self._finish(self.tokenizer.encode_batch([text], add_special_tokens=False)[0], whole)

    def encode_batch(self, texts: Sequence[str]) -> list[Encoded]:
        """Tokenize many texts in parallel (the Rust tokenizer's threads)."""
        return [self._finish(e) for e in self.tokenizer.encode_batch(list(texts), add_special_tokens=False)]

    def encode_ids_batch(self, texts: Sequence[str], whole: bool = False) -> list[tuple[np.ndarray, bool]]:
        """Token ids only, for scoring: the same ids as :meth:`encode_batch`, about twice as fast.

        Skips what only the views need (token strings, character offsets): ``encode_batch_fast``
        (tokenizers >= 0.21) does not even compute the offsets.

        Returns:
            One ``(ids, truncated)`` per text: ids int64 [T] with the classification token first,
            T <= ``max_len`` (any T with ``whole``: every piece); truncated as in :class:`Encoded`.
        """
        encode = getattr(self.tokenizer, "encode_batch_fast", self.tokenizer.encode_batch)
        out = []
        for enc in encode(list(texts), add_special_tokens=False):
            ids, keep, n = self._kept_ids(enc, whole)
            out.append((ids, n > len(keep)))
        return out

    def pad(self, batch: Sequence[Encoded]) -> tuple[np.ndarray, np.ndarray]:
        """Right-pad encodings into a batch.

        Returns:
            ``(input_ids, attention_mask)``: int64 (B, T) and bool (B, T),
            T = the longest encoding in the batch.
        """
        return self.pad_ids([e.ids for e in batch])

    def pad_ids(self, batch: Sequence[np.ndarray], length: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Right-pad id sequences (int [T_i] each) into ``(input_ids, attention_mask)`` as :meth:`pad` does, to
        ``length`` positions (None: the longest; see :func:`pad_sequences`)."""
        return pad_sequences(batch, self.pad_id, length)
