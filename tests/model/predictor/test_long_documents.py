"""Whole documents (issue 31): the windows policy of predict/score_many/explain/faithfulness/flow and batch rows."""

from __future__ import annotations

import numpy as np
import pytest

from tests.fixtures.tiny_models import SAMPLE_TEXTS
from model.text.document_windows import aggregate, merge_token_scores, window_ranges, window_weights

LONG = " ".join(SAMPLE_TEXTS * 6)  # about 500 word pieces: several windows of the tiny model's 64 tokens


def test_a_text_that_fits_gives_identical_results_under_both_policies(tiny_predictor):
    for text in SAMPLE_TEXTS:
        a = tiny_predictor.predict(text)  # default: windows
        b = tiny_predictor.predict(text, long_text="head_tail")
        assert a.num_windows == 1 and a.tokens == b.tokens
        for name in ("logits", "probabilities", "attention", "offsets"):
            assert np.array_equal(getattr(a, name), getattr(b, name)), name
        assert np.array_equal(a.document.window_logits[0], a.logits) and a.document.tokens is a.tokens
        assert np.array_equal(a.document_index, np.arange(a.num_tokens)) and a.document.text == text
    many = tiny_predictor.score_many(SAMPLE_TEXTS)
    cut = tiny_predictor.score_many(SAMPLE_TEXTS, long_text="head_tail")
    assert all(np.array_equal(x.probabilities, y.probabilities) and x.num_windows == 1 for x, y in zip(many, cut))
    e1 = tiny_predictor.explain(SAMPLE_TEXTS[0], "grad_x_input")
    e2 = tiny_predictor.explain(SAMPLE_TEXTS[0], "grad_x_input", long_text="head_tail")
    assert np.array_equal(e1.scores, e2.scores)


@pytest.mark.parametrize("n, budget, stride", [(10, 10, 5), (11, 10, 5), (100, 10, 3), (1000, 63, 31), (64, 63, 63),
                                               (500, 511, 256), (2000, 511, 256), (2000, 511, 511)])
def test_stride_windows_cover_every_piece(n, budget, stride):
    rng = np.random.default_rng(n + budget)
    for word_start in (None, rng.random(n) < 0.6):
        r = window_ranges(n, budget, stride, word_start)
        covered = np.zeros(n, bool)
        for s, e in r:
            assert 0 <= s < e <= n and e - s <= budget
            covered[s:e] = True
        assert covered.all() and r[-1, 1] == n and (np.diff(r[:, 0]) > 0).all()
        if word_start is not None:  # a start moves to a word start where one lies in the part already read
            assert all(word_start[s] or not word_start[s:prev_e].any() for (s, _), (_, prev_e) in zip(r[1:], r[:-1]))


@pytest.mark.parametrize("n, budget", [(10, 10), (11, 10), (100, 10), (1000, 63), (64, 63), (127, 63), (500, 511),
                                       (513, 510), (1021, 510), (2000, 511), (5000, 510)])
def test_windows_read_every_piece_once_in_the_fewest_windows_of_nearly_equal_length(n, budget):
    rng = np.random.default_rng(n + budget)
    for word_start in (None, rng.random(n) < 0.6, np.ones(n, bool), np.r_[True, np.zeros(n - 1, bool)]):
        r = window_ranges(n, budget, word_start=word_start)
        lengths = r[:, 1] - r[:, 0]
        assert len(r) == -(-n // budget)  # the fewest windows that hold the text
        assert r[0, 0] == 0 and r[-1, 1] == n and (r[1:, 0] == r[:-1, 1]).all()  # side by side: each piece once
        assert (lengths >= 1).all() and (lengths <= budget).all()
        if word_start is None or word_start.all():
            assert lengths.max() - lengths.min() <= 1  # nearly equal
        elif word_start[1:].any():  # a boundary sits at a word start wherever one lies near it
            for s in r[1:, 0]:
                near = word_start[max(0, s - 8) : s + 8]
                assert word_start[s] or not near.any() or lengths.max() >= budget - 8


def test_a_long_prediction_covers_the_whole_text(tiny_predictor):
    pred = tiny_predictor.predict(LONG)
    doc = pred.document
    cut = tiny_predictor.predict(LONG, long_text="head_tail")
    assert cut.truncated and cut.num_windows == 1
    assert not pred.truncated and pred.num_windows > 3
    assert doc.num_tokens == pred.num_source_tokens + 1  # every piece, and [CLS]
    assert doc.text == LONG and doc.offsets[-1, 1] == len(LONG.rstrip())  # the last word is there
    covered = np.zeros(doc.num_tokens, bool)
    for s, e in doc.windows.ranges:
        covered[s:e] = True
    assert covered[1:].all()
    for w in range(pred.num_windows):  # each window's text alone gives its pieces and its logits
        alone = tiny_predictor.predict(doc.window_text(w))
        s, e = doc.windows.ranges[w]
        assert alone.tokens[1:] == doc.tokens[s:e]
        assert np.allclose(alone.logits, doc.window_logits[w], atol=1e-5)
    ranges = doc.windows.ranges
    lengths = ranges[:, 1] - ranges[:, 0]
    assert (ranges[1:, 0] == ranges[:-1, 1]).all()  # side by side: each piece read once
    assert np.allclose(pred.logits, lengths @ doc.window_logits / lengths.sum(), atol=1e-6)
    assert doc.window_of(int(ranges[-1, 1]) - 1) == pred.num_windows - 1
    scores = tiny_predictor.score_many([LONG, SAMPLE_TEXTS[0]])
    assert scores[0].num_windows == pred.num_windows and scores[1].num_windows == 1
    assert np.allclose(scores[0].probabilities, pred.probabilities, atol=1e-5)


def test_every_window_record_agrees_with_itself_and_maps_onto_the_document(tiny_predictor):
    """Issue 41, item 3: a long text's prediction is one window's (tokens, offsets and attention agree; ``text`` is
    the window's, so ``text[s:e]`` is each token's source) with the document's verdict; any window can be asked for,
    reusing the document's windows' logits, and gives what predicting the window's text alone gives."""
    first = tiny_predictor.predict(LONG)
    doc = first.document
    assert first.window == 0 and first.text == doc.window_text(0)
    for w in range(doc.num_windows):
        pred = first if w == 0 else tiny_predictor.predict(LONG, window=w, document=doc)
        T = pred.num_tokens
        assert pred.attention.shape[-2:] == (T, T) and pred.offsets.shape == (T, 2) and pred.document is doc
        assert all(pred.text[s:e].lower() == t.removeprefix("##") for t, (s, e) in zip(pred.tokens, pred.offsets)
                   if e > s)  # (the tiny model lower-cases)
        assert np.array_equal(pred.logits, first.logits) and pred.label == first.label  # the document's verdict
        alone = tiny_predictor.predict(doc.window_text(w))
        assert pred.tokens == alone.tokens and np.allclose(pred.attention, alone.attention, atol=1e-6)
        assert [doc.tokens[j] for j in pred.document_index] == pred.tokens
        assert pred.from_document_token(int(pred.document_index[5])) == 5 and pred.to_document_token(5) >= 5
        fresh = tiny_predictor.predict(LONG, window=w)  # without the document: the same numbers
        assert np.array_equal(fresh.attention, pred.attention) and np.allclose(fresh.logits, pred.logits, atol=1e-6)
    with pytest.raises(IndexError, match="out of range"):
        tiny_predictor.predict(LONG, window=doc.num_windows)
    with pytest.raises(ValueError, match="another text"):
        tiny_predictor.predict(LONG + " more", window=1, document=doc)
    with pytest.raises(IndexError):
        tiny_predictor.predict(SAMPLE_TEXTS[0], window=1)


def test_the_aggregation_on_a_hand_made_two_window_text():
    logits = np.array([[2.0, 0.0], [0.0, 1.0]], np.float32)
    ranges = np.array([[0, 10], [5, 10]])  # window 1 reads 5 pieces, window 0 ten
    assert np.allclose(window_weights(ranges), [2 / 3, 1 / 3])  # by the pieces each reads
    assert np.allclose(aggregate(logits, ranges), [4 / 3, 1 / 3])
    assert np.array_equal(aggregate(logits[:1], ranges[:1]), logits[0])  # one window: its own bits
    assert np.array_equal(window_weights(ranges[:1]), [1.0])


def test_merged_token_scores_follow_the_stated_rule():
    # document: [CLS] a b c d; window 0 reads a b c, window 1 reads c d
    scores = [np.array([1.0, 2.0, 3.0, 4.0]), np.array([10.0, 30.0, 50.0])]
    tokens = [np.array([0, 1, 2, 3]), np.array([0, 3, 4])]
    w = np.array([0.75, 0.25])
    out = merge_token_scores(scores, tokens, 5, w)
    assert np.allclose(out, [0.75 * 1 + 0.25 * 10, 0.75 * 2, 0.75 * 3, 0.75 * 4 + 0.25 * 30, 0.25 * 50])


def test_explanations_of_a_long_text_span_it(tiny_predictor):
    pred = tiny_predictor.predict(LONG)
    for method in ("grad_x_input", "rollout"):
        doc = pred.document
        e = tiny_predictor.explain(LONG, method, prediction=pred)
        assert e.scores.shape == (doc.num_tokens,) and e.tokens == list(doc.tokens)
        assert np.count_nonzero(e.scores[1:]) == doc.num_tokens - 1  # every word gets a score
        parts = [tiny_predictor.explain(doc.window_text(w), method, target=pred.label_index)
                 for w in range(pred.num_windows)]
        maps = [doc.windows.tokens_of(w) for w in range(pred.num_windows)]
        want = merge_token_scores([p.scores for p in parts], maps, doc.num_tokens, window_weights(doc.windows.ranges))
        assert np.allclose(e.scores, want, atol=1e-6)
    f = tiny_predictor.faithfulness(LONG, e)
    assert np.isfinite(f.comprehensiveness_aopc) and f.p_full == pytest.approx(float(pred.probabilities[e.target]))
    flow = tiny_predictor.attention_flow(LONG, "value_norm", window=1)
    assert list(flow.tokens) == list(tiny_predictor.predict(LONG, window=1).tokens)


def test_a_window_whose_text_alone_needs_more_pieces_is_explained_as_one_input(tiny_predictor, monkeypatch):
    """Issue 46: a window that starts inside a word (a tight partition leaves no word start near a cut) may need a
    piece or two more when its text is encoded alone ("##le" becomes "l", "##e"). Its explanation stays one input
    (head+tail) mapped onto the document, never new windows whose scores do not fit; faithfulness is measured."""
    from model.predictor import _long_text as long_text

    pred = tiny_predictor.predict(LONG)
    real = long_text.window_text
    monkeypatch.setattr(long_text, "window_text", lambda text, windows, w: real(text, windows, w)
                        + (" and then some more words" * 3 if w == 1 else ""))
    assert tiny_predictor.encode(long_text.window_text(LONG, pred.document.windows, 1)).truncated
    for method in ("grad_x_input", "attention"):
        e = tiny_predictor.explain(LONG, method, prediction=pred)
        assert e.scores.shape == (pred.document.num_tokens,) and np.isfinite(e.scores).all()
        f = tiny_predictor.faithfulness(LONG, e)
        assert np.isfinite([f.comprehensiveness_aopc, f.sufficiency_aopc]).all()


def test_batch_rows_and_the_scorer_say_how_many_windows(tiny_predictor, tmp_path):
    from model.scorer.main import main
    from model.batch.engine import score_records
    from model.batch.export import read_results
    from model.batch.readers import Record

    recs = [Record("a", LONG, None, "ok"), Record("b", SAMPLE_TEXTS[0], None, "ok")]
    rows = [r for chunk in score_records(tiny_predictor, recs) for r in chunk]
    assert rows[0].num_windows > 3 and not rows[0].truncated and rows[1].num_windows == 1
    cut = [r for chunk in score_records(tiny_predictor, recs, long_text="head_tail") for r in chunk]
    assert cut[0].num_windows == 1 and cut[0].truncated
    src = tmp_path / "long.txt"
    src.write_text(LONG, encoding="utf-8")
    for policy, windows in (("windows", rows[0].num_windows), ("head_tail", 1)):
        out = tmp_path / f"{policy}.csv"
        assert main([str(src), "--model", str(tiny_predictor.model_dir), "--device", "cpu", "--no-progress",
                     "--long-text", policy, "-o", str(out)]) == 0
        assert read_results(out)[0].num_windows == windows


def test_a_one_megabyte_text_is_scored_in_bounded_memory(tiny_predictor):
    text = (LONG + " ") * (1_000_000 // len(LONG) + 1)
    assert len(text) > 1_000_000
    score = tiny_predictor.score_many([text])[0]
    assert score.ok and score.num_windows > 1000
    pred = tiny_predictor.predict(text[:100_000])  # attention of one window only, never T x T
    assert pred.num_windows > 100 and pred.attention.shape[-1] <= tiny_predictor.config.max_len


@pytest.mark.parametrize("kind", ["wordpiece", "bytelevel", "metaspace"])
def test_word_starts_follow_the_tokenizer_s_own_marks(kind):
    """Window boundaries go to word starts: WordPiece marks continuations (##), byte-level BPE (RoBERTa) and
    SentencePiece-style Metaspace (XLM-R, ALBERT) mark starts, so a piece without the mark continues a word."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    from model.core.tokenizer import TextEncoder

    if kind == "wordpiece":
        vocab = {"[UNK]": 0, "[CLS]": 1, "[PAD]": 2, "un": 3, "##believ": 4, "##able": 5, "film": 6, ",": 7}
        tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        text, want = "unbelievable film,", [True, False, False, True, True]
    else:
        mark = "\u0120" if kind == "bytelevel" else "\u2581"
        vocab = {"[UNK]": 0, "[CLS]": 1, "[PAD]": 2, "un": 3, "believ": 4, "able": 5, f"{mark}film": 6, ",": 7,
                 f"{mark}un": 8}
        tok = Tokenizer(models.BPE(vocab, [], unk_token="[UNK]"))
        tok.pre_tokenizer = (pre_tokenizers.ByteLevel(add_prefix_space=True) if kind == "bytelevel"
                             else pre_tokenizers.Metaspace())
        text, want = None, None
    enc = TextEncoder(tok, 16)
    if text is not None:
        ids = tok.encode(text).ids
        assert enc.word_starts(np.array(ids)).tolist() == want
    else:
        ids = [8, 4, 5, 6, 7]  # "un" + "believ" + "able" (one word), " film", ","
        assert enc.word_starts(np.array(ids)).tolist() == [True, False, False, True, False]
