"""The Predictor API on a tiny random model: shapes, bad inputs, batch scoring."""

from __future__ import annotations

import dataclasses
import itertools
import threading

import numpy as np
import pytest

from model import Prediction, Predictor, Score


def test_prediction_shapes_and_invariants(tiny_predictor):
    text = "This movie was wonderful <br /> and great!"
    p = tiny_predictor.predict(text)
    assert isinstance(p, Prediction)
    cfg = tiny_predictor.config
    T = p.num_tokens
    assert p.attention.shape == (cfg.n_layers, cfg.n_heads, T, T) and p.attention.dtype == np.float32
    np.testing.assert_allclose(p.attention.sum(-1), 1.0, atol=1e-5)
    assert p.offsets.shape == (T, 2) and len(p.tokens) == T
    assert p.probabilities.dtype == np.float32 and p.probabilities.sum() == pytest.approx(1.0, abs=1e-6)
    assert p.label == p.labels[int(np.argmax(p.probabilities))]
    assert p.elapsed_s > 0 and not p.truncated
    for tok, (s, e) in zip(p.tokens[1:], p.offsets[1:]):
        assert text[s:e].lower() == tok.removeprefix("##")
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.label = "x"  # type: ignore[misc]
    ca = p.classification_attention(0)
    assert ca.shape == (T,) and ca.sum() == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize("bad", ["", "   \n\t ", None, 5])
def test_empty_or_non_text_is_a_clear_value_error(tiny_predictor, bad):
    with pytest.raises(ValueError, match="empty|expected text"):
        tiny_predictor.predict(bad)


@pytest.mark.parametrize(
    "text",
    [
        "x" * 1_000_000,  # 1 MB of text
        "ctrl \x00\x01\x07\x1b chars \u200b here",
        "😀🎬🍿 great 👍",
        "\u0645\u0631\u062d\u0628\u0627 Ω ñ café",
        "<br /><br />",
    ],
)
def test_odd_inputs_give_a_valid_prediction(tiny_predictor, text):
    p = tiny_predictor.predict(text)
    assert p.label in p.labels
    assert p.num_tokens <= tiny_predictor.config.max_len
    assert np.isfinite(p.attention).all() and np.isfinite(p.probabilities).all()


def test_long_text_is_truncated_and_flagged(tiny_predictor):
    p = tiny_predictor.predict("the plot was great and the acting superb. " * 100, long_text="head_tail")
    assert p.truncated and p.num_tokens == tiny_predictor.config.max_len
    assert p.num_source_tokens > p.num_tokens


def test_score_many_matches_predict_and_keeps_order(tiny_predictor):
    texts = ["good movie", "", "terrible plot and acting " * 3, "wonderful", "dull " * 100]
    calls = []
    scores = tiny_predictor.score_many(texts, batch_size=2, progress=lambda d, t: calls.append((d, t)))
    assert len(scores) == len(texts) and all(isinstance(s, Score) for s in scores)
    assert not scores[1].ok and "empty" in scores[1].error
    for t, s in zip(texts, scores):
        if s.ok:
            p = tiny_predictor.predict(t)
            np.testing.assert_allclose(s.probabilities, p.probabilities, atol=1e-5)
            assert s.label == p.label and s.num_tokens == p.document.num_tokens and s.truncated == p.truncated
    assert calls[-1] == (5, 5) and all(a <= b for (a, _), (b, _) in itertools.pairwise(calls))


def test_score_many_stops_early_with_a_scored_prefix(tiny_predictor):
    texts = [f"review number {i} was good" for i in range(40)]
    state = {"n": 0}

    def should_stop():
        state["n"] += 1
        return state["n"] > 3

    scores = tiny_predictor.score_many(texts, batch_size=4, window=8, should_stop=should_stop)
    assert 0 < len(scores) < len(texts)
    assert all(s is not None and s.ok for s in scores)
    with pytest.raises(ValueError):
        tiny_predictor.score_many(texts, batch_size=0)


def test_positional_encoding_is_what_the_model_adds(tiny_predictor):
    P = 10
    pe = tiny_predictor.positional_encoding(P)
    assert pe.shape == (P, tiny_predictor.config.d_model) and pe.dtype == np.float32
    np.testing.assert_array_equal(pe, tiny_predictor.model.positional_encoding[:P].numpy())
    longer = tiny_predictor.positional_encoding(tiny_predictor.config.max_len + 5)
    np.testing.assert_allclose(longer[:P], pe, atol=1e-7)


def test_from_pretrained_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="model folder"):
        Predictor.from_pretrained(tmp_path / "nope")
    with pytest.raises(FileNotFoundError, match="config.json"):
        Predictor.from_pretrained(tmp_path)


def _held_elsewhere(lock) -> bool:
    """True if another thread holds ``lock`` (probed from a helper thread, so an RLock's owner is not fooled)."""
    got = []

    def probe():
        ok = lock.acquire(blocking=False)
        got.append(ok)
        if ok:
            lock.release()

    t = threading.Thread(target=probe)
    t.start()
    t.join()
    return not got[0]


def test_explanation_passes_hold_the_forward_lock(tiny_predictor, monkeypatch):
    """The concurrency policy (:mod:`model.predictor`): every forward pass of the explanation methods and of the
    faithfulness erasure runs under ``forward_lock``."""
    from model.explain import EXPLANATION_METHODS

    model = tiny_predictor.model
    real = model.encode_with_maps
    seen: list[bool] = []

    def checked(*args, **kwargs):
        seen.append(_held_elsewhere(tiny_predictor.forward_lock))
        return real(*args, **kwargs)

    text = "A fine film with a dull ending."
    pred = tiny_predictor.predict(text)
    monkeypatch.setattr(model, "encode_with_maps", checked)
    for method in EXPLANATION_METHODS:
        e = tiny_predictor.explain(text, method, n_steps=4, prediction=pred)
        tiny_predictor.faithfulness(text, e)
    assert len(seen) > 10 and all(seen)


def test_a_prediction_never_waits_for_the_forward_lock(tiny_predictor):
    """Issue 41: a pass of the bundled encoder changes no shared state (the head mask is per thread, capture hooks
    record their own thread only), so ``predict``, ``score_many``, the flows and the internals run while another
    thread holds ``forward_lock`` (an explanation's pass): a head switched off shows its prediction at once."""
    lock, held, release = tiny_predictor.forward_lock, threading.Event(), threading.Event()

    def hold():
        with lock:
            held.set()
            release.wait(60)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait()
    try:
        mask = np.ones((tiny_predictor.config.n_layers, tiny_predictor.config.n_heads))
        mask[0, 0] = 0
        text = "A fine film with a dull ending."
        tiny_predictor.predict(text, head_mask=mask)
        tiny_predictor.score_many([text, "bad"], head_mask=mask)
        tiny_predictor.layer_predictions(text, head_mask=mask)
        tiny_predictor.attention_flow(text, "alti", head_mask=mask)
        tiny_predictor.attention_internals(text, 0, head_mask=mask)
        assert holder.is_alive()  # all of it ran while the other thread still held the lock
    finally:
        release.set()
        holder.join()


def test_one_predictor_shared_by_threads_gives_the_sequential_results(tiny_predictor):
    """Threads sharing one Predictor (as the GUI's inference, explanation and batch threads do) get the same
    answers as one thread."""
    texts = [f"review number {i}: {'great ' * (i % 7)}acting, {'awful ' * (i % 5)}plot" for i in range(24)]
    expected = [tiny_predictor.predict(t).probabilities for t in texts]
    expected_many = [s.probabilities for s in tiny_predictor.score_many(texts, batch_size=4)]
    results: dict[str, list] = {}
    errors: list[BaseException] = []

    def run(name, fn):
        try:
            results[name] = fn()
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(f"predict{k}", lambda: [tiny_predictor.predict(t).probabilities
                                                                         for t in texts])) for k in range(3)]
    threads += [threading.Thread(target=run, args=(f"many{k}", lambda: [s.probabilities for s in
                                                                      tiny_predictor.score_many(texts, batch_size=4)]))
                for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for name, got in results.items():
        want = expected if name.startswith("predict") else expected_many
        np.testing.assert_allclose(np.stack(got), np.stack(want), rtol=1e-5, atol=1e-6)


def test_prediction_arrays_are_read_only(tiny_predictor):
    pred = tiny_predictor.predict("An immutable result.")
    for arr in (pred.attention, pred.probabilities, pred.logits, pred.offsets):
        assert not arr.flags.writeable
    assert not tiny_predictor.score_many(["fine"])[0].probabilities.flags.writeable
    assert not tiny_predictor.explain("An immutable result.", "rollout").scores.flags.writeable


def test_one_predictor_shared_by_two_threads_gives_the_sequential_numbers(tiny_predictor):
    """Issue 41, item 5: every thread uses the one loaded model (no replica, no second copy of the weights). Two
    threads running at once on it, one with a head mask and one without, get exactly what sequential calls give: the
    mask of one never reaches the other's forward passes."""
    from tests.fixtures.threads import run_together

    p = tiny_predictor
    assert not hasattr(p, "replica")
    L, H = p.config.n_layers, p.config.n_heads
    mask = np.ones((L, H))
    mask[0, 0] = mask[L - 1, H - 1] = 0
    texts = ["The replica must agree with its source.", "A second review, longer than the first one by far."]

    def masked():
        return [(p.predict(t, head_mask=mask).probabilities, p.explain(t, "grad_x_input", head_mask=mask).scores,
                 p.attention_flow(t, "value_norm", head_mask=mask).importance) for t in texts * 3]

    def plain():
        return [(p.predict(t).probabilities, p.explain(t, "grad_x_input").scores,
                 p.attention_flow(t, "value_norm").importance) for t in texts * 3]

    expected = {"masked": masked(), "plain": plain()}
    assert not np.array_equal(expected["masked"][0][0], expected["plain"][0][0])  # the mask changes the numbers
    got, models = run_together({"masked": masked, "plain": plain}, lambda: p.model)
    assert len({id(m) for m in models}) == 1 and models[0] is p.model  # one model object for every thread
    for name, rows in expected.items():
        for want, have in zip(rows, got[name], strict=True):
            for w, h in zip(want, have, strict=True):
                np.testing.assert_array_equal(h, w)


def test_model_info_is_an_immutable_numpy_summary(tiny_predictor):
    """``Predictor.model_info()`` (what the GUI shows of the loaded model): plain types, read-only arrays, frozen."""
    from model import ModelInfo

    info = tiny_predictor.model_info(load_s=1.5)
    cfg = tiny_predictor.config
    assert isinstance(info, ModelInfo)
    assert (info.n_layers, info.n_heads, info.d_model, info.max_len) == (cfg.n_layers, cfg.n_heads, cfg.d_model,
                                                                          cfg.max_len)
    assert info.labels == tuple(cfg.labels) and info.has_head and info.load_s == 1.5
    assert info.model_dir == str(tiny_predictor.model_dir) and info.device_name == "CPU"
    np.testing.assert_array_equal(info.positional_encoding, tiny_predictor.positional_encoding(cfg.max_len))
    assert info.positional_encoding.dtype == np.float32 and info.pe_worked_example.shape == (4, 4)
    assert not info.positional_encoding.flags.writeable and not info.pe_worked_example.flags.writeable
    with pytest.raises(dataclasses.FrozenInstanceError):
        info.n_layers = 1  # type: ignore[misc]
    info.metrics["changed"] = True
    assert "changed" not in tiny_predictor.metrics
    assert f"{cfg.n_layers} layers" in info.summary()


def test_score_many_takes_a_token_budget_by_device(tiny_predictor, monkeypatch):
    """Padded tokens per pass: 4,096 on a CPU by default, 32,768 on a GPU (tests/model/predictor/test_cuda.py runs it there), or
    what the caller asks for; the scores are the same whatever the passes."""
    import model.predictor._scoring as predictor_module
    from tests.fixtures.tiny_models import SAMPLE_TEXTS

    seen = []
    real = predictor_module.token_budget_batches
    monkeypatch.setattr(predictor_module, "token_budget_batches",
                        lambda lengths, order, batch_size, max_tokens: seen.append(max_tokens) or real(
                            lengths, order, batch_size, max_tokens))
    a = tiny_predictor.score_many(SAMPLE_TEXTS)
    b = tiny_predictor.score_many(SAMPLE_TEXTS, max_tokens=64)
    assert seen == [predictor_module.MAX_TOKENS_CPU, 64]
    assert [s.label for s in a] == [s.label for s in b]
    np.testing.assert_allclose(np.stack([s.probabilities for s in a]), np.stack([s.probabilities for s in b]),
                               atol=1e-6)
