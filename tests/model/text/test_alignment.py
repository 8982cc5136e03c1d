"""The token alignment activation patching matches positions by (model.text.alignment.align_tokens), on top of the
word alignment Compare shows."""

from __future__ import annotations

import numpy as np

from model.text.alignment import align_tokens


def _offsets(text: str, pieces: list[str], cls: bool = True, sep: bool = True) -> np.ndarray:
    """Character offsets of ``pieces`` found left to right in ``text``, with an empty [CLS] and [SEP] span."""
    out, at = [], 0
    for p in pieces:
        start = text.index(p, at)
        out.append((start, start + len(p)))
        at = start + len(p)
    return np.array(([(0, 0)] if cls else []) + out + ([(0, 0)] if sep else []), dtype=np.int64)


def test_equal_and_replaced_words_align_token_by_token():
    a, b = "the film was good .", "the film was bad ."
    pa, pb = ["the", "film", "was", "good", "."], ["the", "film", "was", "bad", "."]
    got = align_tokens(a, _offsets(a, pa), b, _offsets(b, pb))
    assert got.tolist() == [0, 1, 2, 3, 4, 5, 6]
    assert not got.flags.writeable


def test_inserted_word_and_extra_pieces_are_unaligned():
    a, b = "the film was good", "the film was really terrible"
    pa = ["the", "film", "was", "good"]
    pb = ["the", "film", "was", "really", "terr", "ible"]
    got = align_tokens(a, _offsets(a, pa), b, _offsets(b, pb))
    # "good" -> "really" (replaced, paired in order); "terrible" is inserted: both its pieces unaligned
    assert got.tolist() == [0, 1, 2, 3, 4, -1, -1, 5]


def test_a_replaced_word_of_more_pieces_pairs_its_first_pieces():
    a, b = "it was good", "it was terrible"
    got = align_tokens(a, _offsets(a, ["it", "was", "good"]), b, _offsets(b, ["it", "was", "terr", "ible"]))
    assert got.tolist() == [0, 1, 2, 3, -1, 4]


def test_special_tokens_pair_from_the_start_and_the_end():
    a, b = "good film", "good film"
    oa = _offsets(a, ["good", "film"], cls=True, sep=True)
    ob = _offsets(b, ["good", "film"], cls=True, sep=False)  # a tokenizer without [SEP] on one side
    got = align_tokens(a, oa, b, ob)
    assert got.tolist() == [0, 1, 2]
    got = align_tokens(b, ob, a, oa)  # a's [SEP] has no partner
    assert got.tolist() == [0, 1, 2, -1]


def test_compare_records_reexports_the_one_alignment():
    from desktop_app import compare_records
    from model.text import alignment

    assert compare_records.align_words is alignment.align_words
    assert compare_records.text_words is alignment.text_words
