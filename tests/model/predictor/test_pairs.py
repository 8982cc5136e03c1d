"""Sentence pairs (issue 30): encoded exactly as the model's tokenizer encodes a pair (ids, token_type_ids,
separators, longest-first truncation), their logits equal transformers' own, the bundled-style model refuses one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("transformers")

import torch

from model import Predictor
from model.records.prediction import PairNotSupported
from tests.fixtures.tiny_hf import make_tiny_hf_dir

PAIRS = [("A man is playing a guitar on the stage.", "Someone plays music."),
         ("The film was good.", "The movie was not good at all, a dull and boring story with bad acting.")]
FAMILIES = ("bert", "roberta", "distilbert")


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("pairs")
    return {f: make_tiny_hf_dir(root / f, f, seed=5, num_labels=3, init_std=0.2) for f in FAMILIES}


@pytest.fixture(scope="module")
def predictors(folders) -> dict[str, Predictor]:
    return {f: Predictor.from_pretrained(d, device="cpu") for f, d in folders.items()}


def _reference(folder: Path, text: str, pair: str | None, max_length: int = 64):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSequenceClassification.from_pretrained(folder, use_safetensors=True).eval()
    inputs = tok(text, pair, truncation="longest_first", max_length=max_length, return_tensors="pt")
    with torch.no_grad():
        return inputs, model(**inputs).logits[0].numpy()


@pytest.mark.parametrize("family", FAMILIES)
def test_pair_encoding_and_logits_equal_transformers(folders, predictors, family):
    p = predictors[family]
    assert p.reads_pairs
    for text, pair in PAIRS:
        pred = p.predict(text, text_pair=pair)
        inputs, z = _reference(folders[family], text, pair)
        np.testing.assert_array_equal(p.encode(text, pair).ids, inputs["input_ids"][0].numpy())
        if "token_type_ids" in inputs:  # BERT: the tokenizer's own token types are the segment ids
            np.testing.assert_array_equal(pred.segment_ids, inputs["token_type_ids"][0].numpy())
        np.testing.assert_allclose(pred.logits, z, atol=1e-5)
        assert pred.is_pair and pred.text_pair == pair and pred.pair_truncated == "" and not pred.truncated
        start = pred.pair_start
        assert 0 < start < pred.num_tokens and set(pred.segment_ids[:start]) == {0} and set(pred.segment_ids[start:]) == {1}
        special = p.encode(text, pair).special
        for i, (tok, (s, e)) in enumerate(zip(pred.tokens, pred.offsets, strict=True)):
            source = (pair if pred.segment_ids[i] else text)[s:e]  # offsets index the token's own text
            if special[i]:
                assert s == e == 0
            elif family != "roberta" and tok != "[UNK]":
                assert source.lower() == tok.replace("##", "")
            else:  # byte-level BPE: the piece without its space marker (a lone marker spans nothing)
                assert source == tok.replace("\u0120", "")
        assert pred.attention.shape[-1] == pred.num_tokens == len(pred.segment_ids)


def test_token_types_reach_the_model(folders, predictors):
    """BERT's logits with the pair's token_type_ids differ from the logits with none: the types are used."""
    p = predictors["bert"]
    text, pair = PAIRS[0]
    inputs, z = _reference(folders["bert"], text, pair)
    from transformers import AutoModelForSequenceClassification

    model = AutoModelForSequenceClassification.from_pretrained(folders["bert"], use_safetensors=True).eval()
    with torch.no_grad():
        untyped = model(input_ids=inputs["input_ids"]).logits[0].numpy()
    assert np.abs(untyped - z).max() > 1e-2
    np.testing.assert_allclose(p.predict(text, text_pair=pair).logits, z, atol=1e-5)


@pytest.mark.parametrize("family", FAMILIES)
def test_score_many_pairs_equal_predict(predictors, family):
    p = predictors[family]
    texts = [t for t, _ in PAIRS] + ["Only one text here.", "An empty second text."]
    pairs = [q for _, q in PAIRS] + [None, "   "]
    scores = p.score_many(texts, text_pairs=pairs, batch_size=2)
    for s, t, q in zip(scores[:3], texts, pairs, strict=False):
        pred = p.predict(t, text_pair=q)
        assert s.ok and s.label == pred.label and s.num_tokens == pred.num_tokens
        np.testing.assert_allclose(s.probabilities, pred.probabilities, atol=1e-5)
    assert not scores[3].ok and "second text" in scores[3].error
    with pytest.raises(ValueError, match="second text"):
        p.predict(texts[3], text_pair="")
    with pytest.raises(ValueError, match="text_pairs"):
        p.score_many(texts, text_pairs=pairs[:2])


def test_pair_truncation_cuts_the_longer_side_and_says_which(folders, tmp_path):
    p = Predictor.from_pretrained(make_tiny_hf_dir(tmp_path / "short", "bert", positions=24), device="cpu")
    short, long = "a good film", "the movie was not good at all, a dull and boring story with bad acting " * 2
    for text, pair, cut in ((short, long, "second"), (long, short, "first"), (long, long, "both")):
        pred = p.predict(text, text_pair=pair)
        inputs, _ = _reference(tmp_path / "short", text, pair, max_length=24)
        np.testing.assert_array_equal(p.encode(text, pair).ids, inputs["input_ids"][0].numpy())
        assert pred.truncated and pred.pair_truncated == cut and pred.num_tokens == 24
        score = p.score_many([text], text_pairs=[pair])[0]
        assert score.truncated and score.pair_truncated == cut


def test_model_without_pair_template_refuses_a_pair(tiny_predictor):
    assert not tiny_predictor.reads_pairs
    with pytest.raises(PairNotSupported, match="reads single texts") as err:
        tiny_predictor.predict("a good film", text_pair="a bad film")
    assert str(tiny_predictor.model_dir) in str(err.value)
    with pytest.raises(PairNotSupported):
        tiny_predictor.score_many(["a good film"], text_pairs=["a bad film"])
    assert tiny_predictor.score_many(["a good film"], text_pairs=[None])[0].ok
