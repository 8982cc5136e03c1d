"""Explanations, flows, faithfulness, the prediction by layer and the internals with a target class of any task
and on sentence pairs (issue 30): the segment ids reach every forward pass."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("transformers")

import torch

from model import Predictor
from model.explain.erasure import erasure_keeps, erasure_scores
from model.records.flow import class_scores
from model.records.prediction import PairNotSupported
from model.tasks.task import MULTI_LABEL, REGRESSION
from tests.fixtures.tiny_hf import make_tiny_hf_dir

TEXT, PAIR = "A man is playing a guitar on the stage.", "Someone plays music loudly."


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("pair_explain")
    return {
        "pair": make_tiny_hf_dir(root / "pair", "bert", seed=7, num_labels=3, init_std=0.2),
        "roberta": make_tiny_hf_dir(root / "roberta", "roberta", seed=7, num_labels=3, init_std=0.2),
        "multi_label": make_tiny_hf_dir(root / "ml", "bert", seed=7, num_labels=4, task=MULTI_LABEL, init_std=0.2),
        "regression": make_tiny_hf_dir(root / "reg", "bert", seed=7, task=REGRESSION, init_std=0.2),
    }


@pytest.fixture(scope="module")
def predictors(folders) -> dict[str, Predictor]:
    return {k: Predictor.from_pretrained(d, device="cpu") for k, d in folders.items()}


def _grad_x_input(p: Predictor, target: int, typed: bool, pair: str | None = PAIR) -> np.ndarray:
    """Gradient x input of output ``target``'s logit, computed by hand on the transformers model."""
    enc = p.encode(TEXT, pair)
    ids = torch.from_numpy(enc.ids)[None]
    x = p.model.hf.get_input_embeddings()(ids).detach().requires_grad_(True)
    types = {"token_type_ids": torch.from_numpy(enc.segment_ids.astype(np.int64))[None]} if typed else {}
    logit = p.model.hf(inputs_embeds=x, **types).logits[0, target]
    (g,) = torch.autograd.grad(logit, x)
    return (g * x).sum(-1)[0].detach().numpy()


def test_gradients_see_the_token_types_of_a_pair(predictors):
    p = predictors["pair"]
    pred = p.predict(TEXT, text_pair=PAIR)
    e = p.explain(TEXT, "grad_x_input", text_pair=PAIR)
    assert e.target == pred.label_index and len(e.scores) == pred.num_tokens == len(e.tokens)
    assert e.tokens == list(pred.tokens)
    ml = predictors["multi_label"]  # a label's logit (the log-odds of its sigmoid) is the explained scalar
    for k in range(len(ml.labels)):
        got = ml.explain(TEXT, "grad_x_input", target=k, text_pair=PAIR).scores
        np.testing.assert_allclose(got, _grad_x_input(ml, k, typed=True), atol=1e-5)
        assert np.abs(got - _grad_x_input(ml, k, typed=False)).max() > 1e-4  # the token types matter


def test_regression_explains_the_value(predictors):
    p = predictors["regression"]
    for pair in (None, PAIR):
        e = p.explain(TEXT, "grad_x_input", text_pair=pair)
        assert e.target == 0
        np.testing.assert_allclose(e.scores, _grad_x_input(p, 0, typed=True, pair=pair) if pair else
                                   _grad_x_input_single(p), atol=1e-5)
    ig = p.explain(TEXT, "integrated_gradients", text_pair=PAIR, n_steps=64)
    value = p.predict(TEXT, text_pair=PAIR).value
    assert abs(ig.convergence_delta) < 0.05 * max(abs(value), 1e-3) + 1e-3


def _grad_x_input_single(p: Predictor) -> np.ndarray:
    ids = torch.from_numpy(p.encode(TEXT).ids)[None]
    x = p.model.hf.get_input_embeddings()(ids).detach().requires_grad_(True)
    (g,) = torch.autograd.grad(p.model.hf(inputs_embeds=x).logits[0, 0], x)
    return (g * x).sum(-1)[0].detach().numpy()


@pytest.mark.parametrize("method", ["attention", "rollout", "grad_attention", "integrated_gradients", "value_norm",
                                    "alti", "decompx", "random"])
@pytest.mark.parametrize("name", ["pair", "roberta"])
def test_every_method_explains_a_pair(predictors, method, name):
    p = predictors[name]
    pred = p.predict(TEXT, text_pair=PAIR)
    e = p.explain(TEXT, method, target=1, text_pair=PAIR, n_steps=8)
    assert e.target == 1 and e.scores.shape == (pred.num_tokens,) and np.isfinite(e.scores).all()
    f = p.faithfulness(TEXT, e, text_pair=PAIR)
    assert f.target == 1 and f.p_full == pytest.approx(float(pred.probabilities[1]), abs=1e-5)


@pytest.mark.parametrize("name", ["pair", "multi_label", "regression"])
def test_decompx_per_class_on_a_pair(folders, predictors, name):
    p = predictors[name]
    pred = p.predict(TEXT, text_pair=PAIR)
    flow = p.attention_flow(TEXT, "decompx", text_pair=PAIR)
    np.testing.assert_allclose(flow.contributions.sum(0), _reference_logits(folders[name]), atol=1e-3)
    assert flow.target == pred.label_index and flow.task == pred.task
    np.testing.assert_array_equal(flow.segment_ids, pred.segment_ids)
    last = len(p.labels) - 1
    chosen = p.attention_flow(TEXT, "decompx", text_pair=PAIR, target=last)
    assert chosen.target == last
    np.testing.assert_allclose(chosen.importance, class_scores(chosen.contributions, last, pred.task), atol=1e-6)
    if pred.task != "single_label":  # a label's logit / the value: its own contributions
        np.testing.assert_allclose(chosen.target_scores(last), chosen.contributions[:, last], atol=1e-6)
    with pytest.raises(ValueError, match="target"):
        p.attention_flow(TEXT, "decompx", text_pair=PAIR, target=len(p.labels))


def _reference_logits(folder: Path) -> np.ndarray:
    """transformers' own logits of the pair (its tokenizer's input_ids and token_type_ids)."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    inputs = AutoTokenizer.from_pretrained(folder)(TEXT, PAIR, return_tensors="pt")
    model = AutoModelForSequenceClassification.from_pretrained(folder, use_safetensors=True).eval()
    with torch.no_grad():
        return model(**inputs).logits[0].numpy()


@pytest.mark.parametrize("name", ["pair", "multi_label", "regression"])
def test_layer_predictions_read_as_the_task(folders, predictors, name):
    p = predictors[name]
    pred = p.predict(TEXT, text_pair=PAIR)
    np.testing.assert_allclose(pred.logits, _reference_logits(folders[name]), atol=1e-5)
    rows = p.layer_predictions(TEXT, text_pair=PAIR, target=0)
    assert rows.shape == (p.config.n_layers + 1, len(p.labels))
    np.testing.assert_allclose(rows[-1], pred.logits if pred.task == REGRESSION else pred.probabilities, atol=1e-5)
    if pred.task == MULTI_LABEL:
        assert (rows > 0).all() and (rows < 1).all() and not np.allclose(rows.sum(-1), 1.0)


def test_internals_of_a_pair_equal_its_attention(predictors):
    p = predictors["pair"]
    pred = p.predict(TEXT, text_pair=PAIR)
    parts = p.attention_internals(TEXT, 1, text_pair=PAIR)
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    inputs = AutoTokenizer.from_pretrained(p.model_dir)(TEXT, PAIR, return_tensors="pt")
    model = AutoModelForSequenceClassification.from_pretrained(p.model_dir, attn_implementation="eager").eval()
    with torch.no_grad():
        np.testing.assert_allclose(pred.attention[1], model(**inputs, output_attentions=True).attentions[1][0],
                                   atol=1e-5)
    np.testing.assert_allclose(torch.from_numpy(np.array(parts.scores)).softmax(-1).numpy(), pred.attention[1], atol=1e-5)
    assert parts.tokens == tuple(pred.tokens)
    assert p.embedding_norms(TEXT, text_pair=PAIR).tokens == tuple(pred.tokens)


def test_erasure_keeps_each_tokens_segment(predictors):
    p = predictors["pair"]
    enc = p.encode(TEXT, PAIR)
    scores = np.linspace(1.0, 0.0, len(enc.ids)).astype(np.float32)
    seen = []

    def prob_fn(ids, mask, segments):
        seen.append((ids, mask, segments))
        return np.ones((len(ids), 3))

    erasure_scores(enc.ids, scores, 0, prob_fn, special=enc.special, segment_ids=enc.segment_ids)
    ids, mask, segments = seen[0]
    for row, keep in enumerate(erasure_keeps(scores, special=enc.special)[0]):
        n = int(keep.sum())
        np.testing.assert_array_equal(ids[row, :n], enc.ids[keep])
        np.testing.assert_array_equal(segments[row, :n], enc.segment_ids[keep])
        assert mask[row, :n].all() and not mask[row, n:].any()


def test_faithfulness_reads_the_task(predictors):
    ml, reg = predictors["multi_label"], predictors["regression"]
    e = ml.explain(TEXT, "grad_x_input", target=2, text_pair=PAIR)
    assert ml.faithfulness(TEXT, e, text_pair=PAIR).p_full == pytest.approx(
        float(ml.predict(TEXT, text_pair=PAIR).probabilities[2]), abs=1e-5)
    e = reg.explain(TEXT, "grad_x_input")
    assert reg.faithfulness(TEXT, e).p_full == pytest.approx(reg.predict(TEXT).value, abs=1e-5)


def test_single_text_model_refuses_a_pair_everywhere(tiny_predictor):
    p = tiny_predictor
    e = p.explain(TEXT, "grad_x_input")
    calls = [lambda: p.explain(TEXT, "grad_x_input", text_pair=PAIR), lambda: p.faithfulness(TEXT, e, text_pair=PAIR),
             lambda: p.attention_flow(TEXT, "alti", text_pair=PAIR), lambda: p.layer_predictions(TEXT, text_pair=PAIR),
             lambda: p.attention_internals(TEXT, 0, text_pair=PAIR), lambda: p.embedding_norms(TEXT, text_pair=PAIR)]
    for call in calls:
        with pytest.raises(PairNotSupported, match="reads single texts"):
            call()
