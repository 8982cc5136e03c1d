"""ERASER comprehensiveness/sufficiency on constructed models where the answer is known."""

from __future__ import annotations

import gzip
import json
from types import SimpleNamespace
from typing import ClassVar

import numpy as np
import pytest
import torch
from torch import nn

from model.core.tokenizer import Encoded
from model.evaluation.faithfulness import bootstrap_ci, main
from model.explain import Explanation, random_importance
from model.explain.erasure import (
    AOPC_PERCENTS,
    erasure_inputs,
    erasure_scores,
    faithfulness,
    tokens_for_percent,
    top_token_positions,
)

CLS, PAD = 2, 0
KEY = 7  # the stub's only decisive token id


def presence_prob_fn(ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """p(positive) = 0.9 when token KEY is present among the real tokens, else 0.1."""
    present = ((ids == KEY) & mask).any(axis=1)
    p1 = np.where(present, 0.9, 0.1)
    return np.stack([1 - p1, p1], axis=1)


def make_explanation(scores, method="stub", target=1, signed=False):
    scores = np.asarray(scores, dtype=np.float32)
    return Explanation(method, scores, signed, target, 0.0, None, ["t"] * len(scores))


def test_tokens_for_percent_rounds_and_keeps_at_least_one():
    assert [tokens_for_percent(10, k) for k in AOPC_PERCENTS] == [1, 1, 1, 2, 5]
    assert [tokens_for_percent(200, k) for k in AOPC_PERCENTS] == [2, 10, 20, 40, 100]
    assert tokens_for_percent(1, 50) == 1 and tokens_for_percent(3, 100) == 3
    with pytest.raises(ValueError, match="no tokens"):
        tokens_for_percent(0, 10)


def test_erasure_inputs_delete_top_tokens_and_never_cls():
    ids = np.array([CLS, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19])
    scores = np.array([100.0, 0.1, 0.9, 0.5, 0.9, 0.0, 0.2, 0.3, 0.4, 0.6, 0.7])  # [CLS] scored highest
    seqs, ms = erasure_inputs(ids, scores, (20, 50))
    assert ms == [2, 5]
    full, comp20, comp50, suff20, suff50 = seqs
    np.testing.assert_array_equal(full, ids)
    # the top-2 real tokens are positions 2 and 4 (tie at 0.9: the earlier first); order is kept
    np.testing.assert_array_equal(comp20, [CLS, 10, 12, 14, 15, 16, 17, 18, 19])
    np.testing.assert_array_equal(suff20, [CLS, 11, 13])
    np.testing.assert_array_equal(suff50, [CLS, 11, 12, 13, 18, 19])
    assert len(comp50) == 1 + 10 - 5 and comp50[0] == CLS
    np.testing.assert_array_equal(top_token_positions(scores, 3), [2, 4, 10])


def test_signed_scores_rank_by_signed_value_not_magnitude():
    ids = np.array([CLS, 5, KEY, 6, 8])
    scores = np.array([0.0, -5.0, 1.0, 0.5, -0.1])  # strongest evidence *against* is token 5; top-1 is KEY
    seqs, _ = erasure_inputs(ids, scores, (1,))
    np.testing.assert_array_equal(seqs[1], [CLS, 5, 6, 8])
    np.testing.assert_array_equal(seqs[2], [CLS, KEY])


def test_comprehensiveness_and_sufficiency_on_presence_model():
    ids = np.array([CLS, 4, 5, 6, KEY, 8, 9, 10, 11, 12, 13])  # n = 10 real tokens
    # a perfect explanation: KEY ranked first -> removing it always flips 0.9 to 0.1; keeping it is sufficient
    good = np.where(ids == KEY, 1.0, 0.0) + np.linspace(0, 0.01, len(ids))
    p_full, comp, suff, ms = erasure_scores(ids, good, 1, presence_prob_fn)
    assert p_full == pytest.approx(0.9)
    np.testing.assert_allclose(comp, 0.8)
    np.testing.assert_allclose(suff, 0.0)
    # the worst explanation: KEY ranked last -> never removed (at most 5 of 10), never kept
    bad = -good
    _, comp, suff, _ = erasure_scores(ids, bad, 1, presence_prob_fn)
    np.testing.assert_allclose(comp, 0.0)
    np.testing.assert_allclose(suff, 0.8)
    # KEY ranked 2nd of 10: removed/kept only from k = 20% (m = 2) on -> 2 of the 5 bins
    second = np.array([0, 0.5, 0.1, 0.1, 0.9, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0])
    _, comp, suff, ms = erasure_scores(ids, second, 1, presence_prob_fn)
    assert ms == [1, 1, 1, 2, 5]
    np.testing.assert_allclose(comp, [0, 0, 0, 0.8, 0.8])
    np.testing.assert_allclose(suff, [0.8, 0.8, 0.8, 0, 0])
    # measuring the other class flips the signs
    _, comp0, _, _ = erasure_scores(ids, good, 0, presence_prob_fn)
    np.testing.assert_allclose(comp0, -0.8)


class PresenceModel(nn.Module):
    """A stand-in TransformerClassifier: logits depend only on whether token KEY is present."""

    def forward(self, ids, mask=None, need_weights=False):
        p1 = torch.from_numpy(presence_prob_fn(ids.numpy(), mask.numpy())[:, 1])
        return torch.stack([torch.log(1 - p1), torch.log(p1)], dim=1).float(), None


class WordEncoder:
    """Whitespace 'tokenizer' with a fixed vocabulary ("key" -> KEY)."""

    vocab: ClassVar[dict[str, int]] = {"key": KEY, "a": 4, "b": 5, "c": 6, "d": 8}

    def encode(self, text):
        ids = np.array([CLS] + [self.vocab[w] for w in text.split()], dtype=np.int64)
        return Encoded(ids, ["[CLS]", *text.split()], np.zeros((len(ids), 2), np.int64), False, len(ids) - 1)


def stub_predictor():
    return SimpleNamespace(
        model=PresenceModel(),
        encode=WordEncoder().encode,
        device=torch.device("cpu"),
        config=SimpleNamespace(pad_id=PAD),
    )


def test_faithfulness_on_stub_predictor():
    text = "a b key c d a b c d a"
    f = faithfulness(stub_predictor(), text, make_explanation([0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0], "oracle"))
    assert f.method == "oracle" and f.target == 1 and f.p_full == pytest.approx(0.9)
    assert f.comprehensiveness_aopc == pytest.approx(0.8, abs=1e-6)
    assert f.sufficiency_aopc == pytest.approx(0.0, abs=1e-6)
    assert sorted(f.per_k) == sorted(AOPC_PERCENTS)
    assert f.per_k[50] == {"comprehensiveness": pytest.approx(0.8), "sufficiency": pytest.approx(0.0), "tokens": 5}
    with pytest.raises(ValueError, match="3 scores but the text has 11 tokens"):
        faithfulness(stub_predictor(), text, make_explanation([0, 1, 2]))


def test_random_baseline_has_near_zero_comprehensiveness_on_an_additive_model():
    # log-odds = mean over real tokens of w[id]: deleting random tokens leaves the mean unchanged in expectation,
    # while deleting the tokens with the largest w (the oracle) lowers it.
    rng = np.random.default_rng(0)
    w = rng.normal(0.3, 1.0, size=50)
    w[:4] = 0.0

    def additive_prob_fn(ids, mask):
        real = mask.copy()
        real[:, 0] = False
        z = (w[ids] * real).sum(1) / np.maximum(real.sum(1), 1)
        p1 = 1 / (1 + np.exp(-z))
        return np.stack([1 - p1, p1], axis=1)

    rand, oracle = [], []
    for i in range(1000):
        ids = np.concatenate([[CLS], rng.integers(4, 50, size=int(rng.integers(20, 60)))])
        p_full = additive_prob_fn(ids[None], np.ones((1, len(ids)), bool))[0]
        target = int(p_full.argmax())
        toward = w[ids] if target == 1 else -w[ids]
        rand.append(
            erasure_scores(ids, random_importance(len(ids), str(i), seed=i), target, additive_prob_fn)[1].mean()
        )
        oracle.append(erasure_scores(ids, toward, target, additive_prob_fn)[1].mean())
    rand, oracle = np.asarray(rand), np.asarray(oracle)
    se = rand.std(ddof=1) / np.sqrt(len(rand))
    assert abs(rand.mean()) < 4 * se + 0.002  # zero up to sampling noise (and a tiny Jensen term)
    assert oracle.mean() > 10 * max(abs(rand.mean()), se)


def test_bootstrap_ci_brackets_the_mean_and_narrows():
    rng = np.random.default_rng(1)
    small, large = rng.normal(1.0, 1.0, 30), rng.normal(1.0, 1.0, 3000)
    lo, hi = bootstrap_ci(small)
    assert lo < small.mean() < hi
    lo2, hi2 = bootstrap_ci(large)
    assert lo2 < large.mean() < hi2 and (hi2 - lo2) < (hi - lo)
    assert bootstrap_ci(np.full(5, 0.25)) == (pytest.approx(0.25), pytest.approx(0.25))
    with pytest.raises(ValueError):
        bootstrap_ci(np.array([]))


def test_predictor_wrapper_on_tiny_model(tiny_predictor):
    text = "A terrible film. Boring, badly acted and far too long."
    e = tiny_predictor.explain(text, "grad_x_input")
    f = tiny_predictor.faithfulness(text, e)
    assert -1 <= f.comprehensiveness_aopc <= 1 and -1 <= f.sufficiency_aopc <= 1
    assert f.p_full == pytest.approx(float(tiny_predictor.predict(text).probabilities[e.target]), abs=1e-5)
    assert json.loads(json.dumps(f.to_json_dict()))["method"] == "grad_x_input"


def test_cli_on_tiny_model(tiny_model_dir, tmp_path, capsys):
    data = tmp_path / "reviews.jsonl.gz"
    rows = [{"text": t, "label": i % 2} for i, t in enumerate(["good fun", "awful", "   ", "great acting", "dull"])]
    with gzip.open(data, "wt", encoding="utf-8") as fh:
        fh.write("\n".join(json.dumps(r) for r in rows) + "\n")
    out = tmp_path / "result.json"
    argv = ["--data", str(data), "--n", "5", "--model", str(tiny_model_dir), "--methods", "attention", "random"]
    assert main([*argv, "--no-progress", "--json-out", str(out)]) == 0
    printed = capsys.readouterr().out.strip().splitlines()
    result = json.loads(printed[-1])
    assert result["n"] == 4 and result["skipped"] == 1  # the whitespace-only review is skipped
    assert set(result["methods"]) == {"attention", "random"}
    for entry in result["methods"].values():
        lo, hi = entry["comprehensiveness_ci"]
        assert lo <= entry["comprehensiveness_aopc"] <= hi
    assert any(line.startswith("| Random baseline |") for line in printed)
    assert json.loads(out.read_text())["n"] == 4
    assert result["best_method"] == "attention" and isinstance(result["best_at_least_2x_random"], bool)


def test_cli_reads_a_long_imdb_review_window_by_window_as_the_app(tiny_model_dir, tiny_predictor, tmp_path, capsys):
    """Issue 46: the evaluation of a review longer than the model's maximum length (the tiny model reads 64 tokens:
    a real IMDB review of 5,700 characters takes many windows) gives the app's numbers, ``Predictor.explain`` and
    ``Predictor.faithfulness`` window by window, where it used to stop with "the explanation has N scores"."""
    from imdb_data import imdb_sample

    text = max((r["text"] for r in imdb_sample("first80")), key=len)
    assert tiny_predictor.predict(text).num_windows > 1
    data = tmp_path / "long.jsonl.gz"
    with gzip.open(data, "wt", encoding="utf-8") as fh:
        fh.write(json.dumps({"text": text, "label": 0}) + "\n")
    methods = ["attention", "grad_x_input", "random"]
    argv = ["--data", str(data), "--n", "1", "--model", str(tiny_model_dir), "--methods", *methods, "--no-progress"]
    assert main(argv) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["n"] == 1 and result["skipped"] == 0 and set(result["methods"]) == set(methods)
    for m in methods:
        e = tiny_predictor.explain(text, m, seed=0)
        assert len(e.scores) == tiny_predictor.encode(text).num_source_tokens + sum(tiny_predictor.encoder.specials)
        f = tiny_predictor.faithfulness(text, e)
        got = result["methods"][m]
        assert got["comprehensiveness_aopc"] == pytest.approx(f.comprehensiveness_aopc, abs=1e-6), m
        assert got["sufficiency_aopc"] == pytest.approx(f.sufficiency_aopc, abs=1e-6), m


def test_cli_reports_missing_file(tmp_path, capsys):
    assert main(["--data", str(tmp_path / "nope.jsonl.gz"), "--model", str(tmp_path)]) == 2
    assert "error:" in capsys.readouterr().err
