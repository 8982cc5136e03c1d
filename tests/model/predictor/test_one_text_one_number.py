"""One text, one number (issue 55): the same text, model, task and precision give the same probabilities (or value)
within 1e-5 whether it is predicted alone (the explorer), scored alone, among short texts, among long texts, one per
pass, or through the Ray engine, in every precision the app offers (fp32 and bf16).

bf16 passes pad each text to its own bucket (:func:`model.predictor.precision.bucket_of`) and never mix buckets, and
``predict`` reads its bf16 logits from such a pass; before that, ``predict`` and ``score_many`` differed by up to
5e-3 on IMDB reviews in bf16, and a text's batch mates moved its probabilities by up to 7e-4.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from imdb_data import imdb_sample

from model.predictor.precision import BF16_BUCKET, bucket_of

PRECISIONS = ("fp32", "bf16")
TOL = 1e-5


def _texts() -> tuple[list[str], list[str], list[str]]:
    """(texts checked, short batch mates, long batch mates) from the committed IMDB test reviews."""
    texts = sorted((r["text"] for r in imdb_sample("first80")), key=len)
    return texts[10:70:6], texts[:16], texts[-16:]


def _probs(scores) -> np.ndarray:
    """[n, C] probabilities of Scores ([n, 1] values for regression)."""
    return np.stack([s.probabilities if s.value is None else np.array([s.value], np.float32) for s in scores])


def _every_way(p, checked: list[str], short: list[str], long: list[str], pairs: list[str] | None = None):
    """The probabilities (or values) [n, C] of ``checked`` (with their second texts ``pairs``) got in six ways."""
    pr = pairs or [None] * len(checked)
    out = {"predict": np.stack([
        (q.probabilities if q.probabilities.size else q.logits[:1])
        for q in (p.predict(t, text_pair=s) for t, s in zip(checked, pr, strict=True))]),
        "alone": np.concatenate([_probs(p.score_many([t], text_pairs=None if pairs is None else [s]))
                                 for t, s in zip(checked, pr, strict=True)]),
        "one_per_pass": _probs(p.score_many(checked, batch_size=1, text_pairs=pairs))}
    n = len(checked)
    for name, mates in (("with_short", short), ("with_long", long)):
        mate_pairs = None if pairs is None else [pairs[0]] * len(mates)
        both = p.score_many([*mates, *checked], text_pairs=None if pairs is None else [*mate_pairs, *pairs])
        out[name] = _probs(both[-n:])
    return out


@pytest.mark.parametrize("precision", PRECISIONS)
def test_a_review_gives_one_number_alone_among_short_and_long_texts(bundled_predictor, precision):
    p = bundled_predictor
    checked, short, long = _texts()
    assert p.use_precision(precision) == precision
    try:
        got = _every_way(p, checked, short, long)
    finally:
        p.use_precision("fp32")
    for name, probs in got.items():
        np.testing.assert_allclose(probs, got["predict"], atol=TOL, rtol=0, err_msg=f"{precision}: {name}")


@pytest.mark.parametrize("precision", PRECISIONS)
def test_a_long_review_read_in_windows_gives_one_number(bundled_predictor, precision):
    """A review longer than the model's 512 tokens (its windows batched among other texts' passes) and predicted
    window by window: the document's probabilities agree."""
    p = bundled_predictor
    checked, short, long = _texts()
    doc = " ".join(long[-4:])  # several windows, the last one shorter
    assert p.encode(doc).truncated
    assert p.use_precision(precision) == precision
    try:
        got = _every_way(p, [doc], short, long)
        second = p.predict(doc, window=1).probabilities
    finally:
        p.use_precision("fp32")
    for name, probs in got.items():
        np.testing.assert_allclose(probs, got["predict"], atol=TOL, rtol=0, err_msg=f"{precision}: {name}")
    np.testing.assert_allclose(second, got["predict"][0], atol=TOL, rtol=0)


@pytest.mark.parametrize("precision", PRECISIONS)
def test_a_regression_pair_model_gives_one_value(tmp_path, precision):
    """A tiny Hugging Face regression model reading pairs (token types): the value of a pair alone, among others,
    one per pass and predicted."""
    pytest.importorskip("transformers")
    from model import Predictor
    from tests.fixtures.tiny_hf import make_tiny_hf_dir

    p = Predictor.from_pretrained(make_tiny_hf_dir(tmp_path / "sts", task="regression", init_std=0.2), device="cpu")
    words = "a man plays the guitar while a dog runs in the park and someone sleeps".split()
    checked = [" ".join(words[: 3 + i]) for i in range(8)]
    pairs = [" ".join(words[i : i + 4]) for i in range(8)]
    short, long = words[:6], [" ".join(words * 2)] * 4
    assert p.use_precision(precision) == precision
    got = _every_way(p, checked, short, long, pairs)
    for name, values in got.items():
        np.testing.assert_allclose(values, got["predict"], atol=TOL, rtol=0, err_msg=f"{precision}: {name}")


def test_bf16_pads_to_buckets_and_a_pass_never_mixes_them(bundled_predictor):
    """The rule the bf16 numbers rest on: a text's padded length is its own bucket, at most the model's maximum."""
    max_len = bundled_predictor.encoder.max_len
    assert bucket_of(1, "bf16", max_len) == BF16_BUCKET and bucket_of(BF16_BUCKET + 1, "bf16", max_len) == 2 * BF16_BUCKET
    assert bucket_of(max_len - 3, "bf16", max_len) == max_len and bucket_of(37, "fp32", max_len) is None
    from model.predictor._scoring import pass_batches

    p = bundled_predictor
    opts = p.options(precision="bf16")
    parts = p._parts("fp32")  # the batches only: no pass runs
    lengths = [5, 40, 33, 31, 64, 65, 512, 200, 32, 1]
    for idx in pass_batches(parts, lengths, opts, 64, 4096):
        assert len({bucket_of(lengths[i], "bf16", max_len) for i in idx}) == 1
    assert sorted(int(i) for b in pass_batches(parts, lengths, opts, 64, 4096) for i in b) == list(range(10))
    assert len(list(pass_batches(parts, lengths, p.options(precision="fp32"), 64, 8192))) == 1  # fp32: one pass


@pytest.mark.slow
@pytest.mark.parametrize("precision", PRECISIONS)
def test_ray_gives_the_local_numbers_and_the_explorers(tmp_path, capsys, bundled_predictor, precision):
    """The scorer, local and ``--engine ray`` (two actors, other processes), on the same reviews in one precision:
    every row's probabilities within 1e-5 of each other and of ``predict``."""
    pytest.importorskip("ray.data", reason="ray is not installed: pip install 'attention-explorer[cluster]'")
    import ray

    from model.scorer.main import main
    from model.batch.export import read_results

    checked, short, long = _texts()
    texts = [*short, *checked, *long]
    src = tmp_path / "reviews.jsonl"
    src.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), encoding="utf-8")
    common = [str(src), "--no-progress", "--precision", precision, "--batch-size", "8"]
    assert main([*common, "-o", str(tmp_path / "local.jsonl")]) == 0
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        code = main([*common, "-o", str(tmp_path / "ray.jsonl"), "--engine", "ray", "--num-workers", "2"])
    finally:
        ray.shutdown()
    assert code == 0, capsys.readouterr().err
    local, far = read_results(tmp_path / "local.jsonl"), read_results(tmp_path / "ray.jsonl")
    assert [r.text for r in far] == [r.text for r in local] == texts
    assert {r.precision for r in local} == {r.precision for r in far} == {precision}
    a, b = np.array([r.probabilities for r in local]), np.array([r.probabilities for r in far])
    np.testing.assert_allclose(b, a, atol=TOL, rtol=0)
    p = bundled_predictor
    p.use_precision(precision)
    try:
        alone = np.stack([p.predict(t).probabilities for t in texts])
    finally:
        p.use_precision("fp32")
    np.testing.assert_allclose(a, alone, atol=TOL, rtol=0)
