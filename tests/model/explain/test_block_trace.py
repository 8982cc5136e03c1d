"""The Block view's trace (issue 53, section 4): every step of one token through one layer equals the activation the
model's own forward pass computed there (forward hooks: :func:`model.explain.taps.capture`), within 1e-5 x max(1,
max |captured|) (absolute for vectors of entries up to 1, relative to the largest entry above), for the bundled model,
our encoder post- and pre-LN, a tiny model of every Hugging Face family, every task and a pair; the read-out's last
numbers equal ``predict(text)``'s; a family whose layer does not fit is refused with BlockNotSupported."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from model import Predictor
from model.core.config import EncoderConfig
from model.explain.taps import capture, taps_of
from model.records.block import BlockNotSupported, BlockStep, BlockTrace
from model.text.segments import one_text_inputs

TEXT = "This movie was not good at all; the acting was superb but the story dull."
TOL = 1e-5

_POST_LN = {"input": "x", "v": "values", "attention": "context", "w_o": "attn_out", "add1": "ln1_in",
            "ln1": "ln1_out", "w1": "fc1_out", "act": "fc2_in", "w2": "fc2_out", "add2": "ln2_in", "ln2": "ln2_out",
            "output": "out"}
_PRE_LN = {**_POST_LN, "add1": "ln2_in", "add2": "out"}
"""Which captured activation (a :class:`model.explain.taps.LayerCapture` field) each step must equal."""


def _close(ours: np.ndarray, theirs, what: str) -> None:
    theirs = np.asarray(theirs, dtype=np.float32)
    assert ours.shape == theirs.shape, what
    tol = TOL * max(1.0, float(np.abs(theirs).max()))
    assert float(np.abs(ours - theirs).max()) <= tol, f"{what}: {np.abs(ours - theirs).max()} > {tol}"


def _captured(p: Predictor, text: str, pair: str | None = None, head_mask=None):
    """The forward pass's own activations of every layer (hooks on the model's modules)."""
    from model.explain.heads import head_mask_hooks

    ids, mask, types = one_text_inputs(p._parts(), p.encode(text, pair))
    with torch.inference_mode(), p.forward_lock, head_mask_hooks(p.model, head_mask, p.config.n_heads):
        caps, _ = capture(p.model, ids, mask, taps_of(p.model), types=types)
    return caps


def _check_trace(p: Predictor, text: str, position: int, pair: str | None = None, head_mask=None) -> BlockTrace:
    """Every layer's trace of token ``position`` against the captured activations and ``predict``; the last trace."""
    caps = _captured(p, text, pair, head_mask)
    pred = p.predict(text, text_pair=pair, head_mask=head_mask)
    L = p.config.n_layers
    for layer in range(L):
        tr = p.block_trace(text, layer, position, text_pair=pair, head_mask=head_mask)
        assert tr.tokens == tuple(pred.tokens) and tr.layer == layer and tr.position == position
        where = _POST_LN if tr.post_ln else _PRE_LN
        cap = caps[layer]
        for key, field in where.items():
            _close(tr.step(key).output, getattr(cap, field)[position].cpu().numpy(), f"layer {layer} step {key}")
        if not tr.post_ln:
            _close(tr.step("ln1").output, cap.ln1_out[position].cpu().numpy(), "pre-LN LayerNorm 1")
            _close(tr.step("ln2").output, cap.ln2_out[position].cpu().numpy(), "pre-LN LayerNorm 2")
        if layer + 1 < L:  # the layer's output is the next layer's input
            _close(tr.step("output").output, caps[layer + 1].x[position].cpu().numpy(), "output = next input")
        weights = tr.step("attention").weights
        _close(weights, pred.attention[layer][:, position], f"layer {layer} attention weights")
        assert [s.key for s in tr.steps][:1] == ["input"] and tr.steps[-1].key == "output"
        assert bool(tr.readout) == (layer == L - 1 and p.has_head)
    if p.has_head:
        _close(tr.logits, pred.logits, "read-out logits")
        shown = pred.probabilities if p.task.kind != "regression" else pred.logits
        _close(tr.readout[-1].output, shown, "read-out output")
    return tr


def _readout_hooks(p: Predictor, text: str, pair: str | None = None) -> list[np.ndarray]:
    """The outputs of the read-out's own modules (its Linears, in order) in the model's forward pass."""
    got: list[np.ndarray] = []
    mods = [op for step, op in taps_of(p.model).head if step == "linear"]
    hooks = [m.register_forward_hook(lambda _m, _a, out: got.append(out[0].detach().float().numpy())) for m in mods]
    try:
        p.predict(text, text_pair=pair)
    finally:
        for h in hooks:
            h.remove()
    return got


def test_bundled_model_every_step_equals_the_forward_pass(bundled_predictor):
    tr = _check_trace(bundled_predictor, TEXT, 4)
    assert tr.post_ln and tr.pooling == "mean" and [s.key for s in tr.readout] == ["pool", "linear1",
                                                                                   "probabilities"]
    ln = tr.step("ln1").layer_norm
    assert ln.gamma.shape == (bundled_predictor.config.d_model,) and ln.variance > 0
    top = tr.step("w2").neurons
    assert np.all(np.diff(top.score) <= 0) and np.allclose(top.score, np.abs(top.activation) * top.w2_norm)
    _close(top.activation, tr.step("act").output[top.index], "top neurons' activations")
    assert tr.step("w1").output.shape == (bundled_predictor.config.d_ff,)


@pytest.mark.parametrize("norm_first, pooling", [(True, "cls"), (True, "mean"), (False, "cls")])
def test_our_encoder_post_and_pre_ln(tmp_path, norm_first, pooling):
    from tests.fixtures.tiny_models import make_random_model_dir

    cfg = EncoderConfig(max_len=64, d_model=16, n_heads=2, n_layers=3, d_ff=32, norm_first=norm_first, pooling=pooling)
    p = Predictor.from_pretrained(make_random_model_dir(tmp_path, cfg), device="cpu")
    tr = _check_trace(p, TEXT, 2)
    assert tr.post_ln != norm_first
    keys = [s.key for s in tr.steps]
    if norm_first:  # pre-LN: the LayerNorms open the sublayers; a final LayerNorm before the read-out
        assert keys.index("ln1") < keys.index("q") and keys.index("ln2") < keys.index("w1")
        assert tr.readout[0].key == "final_ln"
    else:
        assert keys.index("add1") < keys.index("ln1") < keys.index("w1")


@pytest.mark.parametrize("family", ["bert", "distilbert", "roberta", "xlm-roberta", "deberta-v2", "albert", "electra"])
def test_every_hf_family(hf_predictor, family):
    p = hf_predictor(family)
    tr = _check_trace(p, TEXT, 3)
    linears = [s for s in tr.readout if s.key.startswith("linear")]
    for step, hooked in zip(linears, _readout_hooks(p, TEXT), strict=True):  # the pooler and the classifier
        _close(step.output, hooked, f"{family} read-out {step.title}")
    assert tr.readout[0].key == "pool" and tr.pooling == "cls"


@pytest.mark.parametrize("task, labels", [("multi_label", ("joy", "anger", "fear")), ("regression", ("score",))])
def test_every_task(predictor_for, task, labels):
    p = predictor_for(labels, task)
    tr = _check_trace(p, TEXT, 1)
    assert tr.task == task and tr.readout[-1].title == ("Sigmoid" if task == "multi_label" else "Regression value")


def test_pair_and_head_mask(hf_predictor, bundled_predictor):
    _check_trace(hf_predictor("bert"), TEXT, 5, pair="the film was dull")
    p = bundled_predictor
    mask = np.ones((p.config.n_layers, p.config.n_heads), dtype=np.float32)
    mask[0, 1] = 0.0
    tr = _check_trace(p, TEXT, 0, head_mask=mask)
    d = p.config.d_model // p.config.n_heads
    assert np.all(p.block_trace(TEXT, 0, 0, head_mask=mask).step("attention").output[d:2 * d] == 0)
    assert tr.logits is not None


def test_no_head_has_no_read_out_and_ranges_are_checked(hf_predictor, bundled_predictor):
    p = hf_predictor("bert", head=False)
    tr = p.block_trace(TEXT, -1, 0)
    assert tr.layer == p.config.n_layers - 1 and tr.readout == () and tr.logits is None
    with pytest.raises(IndexError):
        bundled_predictor.block_trace(TEXT, 2, 0)
    with pytest.raises(IndexError):
        bundled_predictor.block_trace(TEXT, 0, 500)


def test_deberta_v1_is_refused(deberta_v1_predictor):
    with pytest.raises(BlockNotSupported, match="DeBERTa"):
        deberta_v1_predictor.block_trace(TEXT, 0, 0)


def test_a_layer_that_does_not_fit_is_refused(bundled_predictor, monkeypatch):
    """A layer whose forward pass is not the steps (here: the FFN's activation is not the one the steps apply)."""
    from model.explain import taps

    real = taps.classifier_taps

    def wrong_activation(model):
        return real(model).__class__(**{**real(model).__dict__, "ffn_act": ("tanh", torch.tanh)})

    monkeypatch.setattr(taps, "classifier_taps", wrong_activation)
    with pytest.raises(BlockNotSupported, match="'act'"):
        bundled_predictor.block_trace(TEXT, 0, 0)


def test_record_checks_its_fields():
    out = np.zeros(4, np.float32)
    with pytest.raises(ValueError, match="branch"):
        BlockStep("x", "x", "x", out, branch="sideways")
    step = BlockStep("input", "x", "x", np.array([3.0, 4.0], np.float32))
    assert step.norm == pytest.approx(5.0) and not step.output.flags.writeable
    with pytest.raises(ValueError, match="repeat"):
        BlockTrace(("a",), 0, 0, 1, 1, "f", True, (step, step))
    with pytest.raises(KeyError):
        BlockTrace(("a",), 0, 0, 1, 1, "f", True, (step,)).step("w1")
