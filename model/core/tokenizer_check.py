"""``tokenizer.json`` read and checked in Python before the Rust ``tokenizers`` library sees it (issue 46).

A token id of 10^9 in the vocabulary made the library allocate about 4 GB while loading (a machine with less memory
aborts the process: SIGABRT, the user's unsaved work lost). :func:`check_tokenizer_file` refuses such a file with a
message naming it and the token: every id the file gives (the model's vocabulary, its added tokens and the special
tokens of its post-processor) must be an integer within the model's embedding table (``rows``, the ``vocab_size``
that matches the weights) or, without one, below :data:`MAX_TOKEN_ID`; two vocabulary entries may not share an id.
The file itself must be a regular file of at most :data:`MAX_TOKENIZER_BYTES` holding a JSON object.
"""

from __future__ import annotations

import json
from pathlib import Path

from model.files.textio import read_regular_bytes

MAX_TOKENIZER_BYTES = 64 * 2**20
"""The largest ``tokenizer.json`` read (the largest shared ones, 250,000-piece vocabularies, are about 17 MB)."""
MAX_TOKEN_ID = 2**24
"""Token ids at or above this (16,777,216) are refused when the embedding table's size is not known: about 60 times
the largest vocabulary of a shared encoder."""


def check_tokenizer_file(path: str | Path, rows: int | None = None) -> dict:
    """Read ``tokenizer.json`` and check every token id it gives, without the ``tokenizers`` library.

    Args:
        path: the file.
        rows: the model's embedding rows (``vocab_size`` in ``config.json``, matching the weights); ids must be
            below it. None: below :data:`MAX_TOKEN_ID`.

    Returns:
        the parsed JSON object.

    Raises:
        ValueError: not a regular file, over :data:`MAX_TOKENIZER_BYTES`, not a JSON object, nested too deeply,
            an id that is not a non-negative integer or is ``rows`` or more, or two vocabulary tokens with one id;
            one line naming ``path`` and the token.
    """
    path = Path(path)
    try:
        data = json.loads(read_regular_bytes(path, MAX_TOKENIZER_BYTES).decode("utf-8"))
    except RecursionError as exc:
        raise ValueError(f"corrupt tokenizer file {path}: its JSON is nested too deeply to read") from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"corrupt tokenizer file {path}: {str(exc).splitlines()[0][:200]}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("model"), dict):
        raise ValueError(f"corrupt tokenizer file {path}: expected a JSON object with a \"model\" object")
    limit = MAX_TOKEN_ID if rows is None else int(rows)
    for token, value, where in _ids(data):
        _check_id(path, token, value, where, limit, rows)
    vocab = data["model"].get("vocab")
    if isinstance(vocab, dict):
        seen: dict[int, str] = {}
        for token, value in vocab.items():
            if value in seen:
                raise ValueError(f"{path}: the vocabulary gives the tokens {seen[value][:40]!r} and {token[:40]!r} the "
                                 f"same id {value}; the file is damaged")
            seen[value] = token
    return data


def _check_id(path: Path, token: object, value: object, where: str, limit: int, rows: int | None) -> None:
    """Refuse one id that is not an integer in ``0 .. limit - 1``."""
    name = str(token)[:40]
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{path}: the {where} gives the token {name!r} the id {str(value)[:40]!r}, not an integer")
    if not 0 <= value < limit:
        bound = (f"beyond the model's embedding table of {rows} rows (vocab_size in config.json, as the weights "
                 "hold); the tokenizer does not belong to these weights" if rows is not None
                 else f"outside 0..{MAX_TOKEN_ID - 1}; the file is damaged")
        raise ValueError(f"{path}: the {where} gives the token {name!r} the id {value}, {bound}")


def _ids(data: dict):
    """``(token, id, where)`` for every id the file gives: vocabulary, added tokens, post-processor specials."""
    vocab = data["model"].get("vocab")
    if isinstance(vocab, dict):  # WordPiece, BPE, WordLevel: token -> id
        yield from ((token, value, "vocabulary") for token, value in vocab.items())
    elif isinstance(vocab, list) and vocab:  # Unigram: [piece, score] pairs, the id is the position
        last = vocab[-1][0] if isinstance(vocab[-1], list) and vocab[-1] else "?"
        yield last, len(vocab) - 1, "vocabulary"
    for entry in data.get("added_tokens") or []:
        if isinstance(entry, dict):
            yield entry.get("content", "?"), entry.get("id"), "added_tokens list"
    yield from _processor_ids(data.get("post_processor"))


def _processor_ids(proc: object):
    """The special-token ids of a post-processor (TemplateProcessing, BERT/RoBERTa processing, Sequence)."""
    if not isinstance(proc, dict):
        return
    specials = proc.get("special_tokens")
    for token, spec in specials.items() if isinstance(specials, dict) else ():
        ids = spec.get("ids") if isinstance(spec, dict) else None
        for value in ids if isinstance(ids, list) else ():
            yield token, value, "post-processor"
    for key in ("cls", "sep"):
        pair = proc.get(key)
        if isinstance(pair, list) and len(pair) == 2:
            yield pair[0], pair[1], "post-processor"
    for sub in proc.get("processors") or []:
        yield from _processor_ids(sub)


__all__ = ["MAX_TOKENIZER_BYTES", "MAX_TOKEN_ID", "check_tokenizer_file"]
