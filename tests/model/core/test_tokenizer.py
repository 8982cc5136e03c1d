"""Tokenizer: offsets slice back to the text, <br /> is whitespace, head+tail truncation."""

from __future__ import annotations

import numpy as np
import pytest

from model.core.tokenizer import CLS, HEAD_FRACTION, TextEncoder, head_tail_keep, load_tokenizer, train_tokenizer

TEXTS = [
    "The acting was superb.<br /><br />I loved the ending, truly unforgettable!",
    "Worst. Movie. Ever. The plot made no sense and the dialogue was wooden.",
    "An okay film; some scenes drag, but the score is beautiful.",
] * 5


@pytest.fixture(scope="module")
def encoder():
    return TextEncoder(train_tokenizer(TEXTS, vocab_size=200, min_frequency=1), max_len=32)


def test_offsets_slice_back_to_their_text(encoder):
    text = "The ACTING was superb.<br />I Loved the ending!"
    enc = encoder.encode(text)
    assert enc.tokens[0] == CLS and tuple(enc.offsets[0]) == (0, 0)
    for token, (s, e) in zip(enc.tokens[1:], enc.offsets[1:]):
        piece = token.removeprefix("##")
        if token != "[UNK]":
            assert text[s:e].lower() == piece


def test_br_tags_are_whitespace(encoder):
    enc = encoder.encode("good<br />bad<BR>fine<br/>end")
    assert "<" not in "".join(enc.tokens) and "br" not in enc.tokens


def test_head_tail_truncation_is_flagged(encoder):
    words = " ".join(f"the{i % 7} plot" for i in range(200))
    enc = encoder.encode(words)
    assert enc.truncated and len(enc.ids) == 32 and enc.num_source_tokens > 31
    full = encoder.tokenizer.encode(words, add_special_tokens=False)
    head = int(31 * HEAD_FRACTION)
    assert list(enc.ids[1 : 1 + head]) == full.ids[:head]
    assert list(enc.ids[1 + head :]) == full.ids[-(31 - head) :]
    assert not encoder.encode("short text").truncated


def test_head_tail_keep_indices():
    assert list(head_tail_keep(5, 10)) == [0, 1, 2, 3, 4]
    keep = head_tail_keep(100, 8)
    assert list(keep) == [0, 1, 94, 95, 96, 97, 98, 99]


def test_pad_builds_mask(encoder):
    batch = encoder.encode_batch(["good", "the plot was wooden and dull"])
    ids, mask = encoder.pad(batch)
    assert ids.shape == mask.shape == (2, len(batch[1].ids))
    assert mask[0].sum() == len(batch[0].ids) and np.all(ids[0][~mask[0]] == 0)


def test_load_tokenizer_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="tokenizer"):
        load_tokenizer(tmp_path / "tokenizer.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{oops")
    with pytest.raises(ValueError, match="bad.json"):
        load_tokenizer(bad)


def test_kept_pieces_match_the_full_tokenization(encoder):
    """Only the kept pieces are converted; they are exactly the full tokenization's pieces at those indices."""
    text = " ".join(f"Caf\u00e9 n\u00e4ive<br />the{i % 7} PLOT \U0001F600 unknownword{i}!" for i in range(60))
    full = encoder.tokenizer.encode(text, add_special_tokens=False)
    keep = head_tail_keep(len(full.ids), encoder.max_len - 1)
    enc = encoder.encode(text)
    assert enc.truncated and enc.num_source_tokens == len(full.ids)
    assert enc.tokens[1:] == [full.tokens[i] for i in keep]
    np.testing.assert_array_equal(enc.ids[1:], np.asarray(full.ids)[keep])
    np.testing.assert_array_equal(enc.offsets[1:], np.asarray(full.offsets)[keep])
