"""The encoder: attention, masking, SDPA fast path, positional encoding, safetensors round-trip."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from model.core.config import EncoderConfig
from model.core.encoder import TransformerClassifier
from model.core.layers import attention
from model.core.positional import sinusoidal_positional_encoding
from model.core.weights import CONFIG_FILE, WEIGHTS_FILE, load_model, save_model

CFG = EncoderConfig(vocab_size=50, max_len=32, d_model=16, n_heads=4, n_layers=2, d_ff=32, dropout=0.0)


def make_model(seed: int = 0, **overrides) -> TransformerClassifier:
    torch.manual_seed(seed)
    cfg = EncoderConfig.from_dict({**CFG.__dict__, **overrides})
    return TransformerClassifier(cfg).eval()


def random_batch(lengths, vocab=50, seed=0):
    g = torch.Generator().manual_seed(seed)
    T = max(lengths)
    ids = torch.zeros(len(lengths), T, dtype=torch.long)
    for i, n in enumerate(lengths):
        ids[i, 0] = 2
        ids[i, 1:n] = torch.randint(4, vocab, (n - 1,), generator=g)
    return ids, ids != 0


@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_attention_rows_sum_to_one_and_padded_keys_get_zero(pooling):
    model = make_model(pooling=pooling)
    ids, mask = random_batch([7, 12, 3])
    with torch.no_grad():
        _, attn = model(ids, mask, need_weights=True)
    assert attn.shape == (3, CFG.n_layers, CFG.n_heads, 12, 12)
    torch.testing.assert_close(attn.sum(-1), torch.ones(3, CFG.n_layers, CFG.n_heads, 12), atol=1e-6, rtol=0)
    for b, n in enumerate([7, 12, 3]):
        assert torch.all(attn[b, :, :, :, n:] == 0.0), "padded keys must get exactly zero weight"
        assert torch.all(attn[b, :, :, :, :n] > 0.0)


def test_attention_function_matches_formula():
    torch.manual_seed(1)
    q, k, v = (torch.randn(2, 3, 5, 4) for _ in range(3))
    out, p = attention(q, k, v)
    expected_p = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(4), dim=-1)
    torch.testing.assert_close(p, expected_p)
    torch.testing.assert_close(out, expected_p @ v)


@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_padded_batch_equals_unpadded_single_inputs(pooling):
    model = make_model(seed=3, pooling=pooling)
    lengths = [9, 4, 16, 1]
    ids, mask = random_batch(lengths, seed=5)
    with torch.no_grad():
        batched, _ = model(ids, mask)
        for b, n in enumerate(lengths):
            single, _ = model(ids[b : b + 1, :n])
            torch.testing.assert_close(batched[b : b + 1], single, atol=1e-5, rtol=1e-5)


def test_sdpa_path_equals_explicit_path():
    model = make_model(seed=7)
    ids, mask = random_batch([20, 11, 32, 5], seed=2)
    with torch.no_grad():
        fast, none = model(ids, mask, need_weights=False)
        slow, attn = model(ids, mask, need_weights=True)
    assert none is None and attn is not None
    assert torch.max(torch.abs(fast - slow)).item() < 1e-5


def test_positional_encoding_closed_form():
    P, D = 50, 8
    pe = sinusoidal_positional_encoding(P, D).double().numpy()
    for pos in (0, 1, 17, 49):
        for i in range(D // 2):
            angle = pos / 10000 ** (2 * i / D)
            assert pe[pos, 2 * i] == pytest.approx(math.sin(angle), abs=1e-6)
            assert pe[pos, 2 * i + 1] == pytest.approx(math.cos(angle), abs=1e-6)


def test_positional_encoding_worked_table_d4_base100():
    """The worked example PE for d_model=4, n=100 (base as a parameter)."""
    pe = sinusoidal_positional_encoding(4, 4, base=100.0).numpy()
    np.testing.assert_allclose(pe[0], [0.0, 1.0, 0.0, 1.0], atol=1e-6)
    np.testing.assert_allclose(pe[1], [0.8415, 0.5403, 0.0998, 0.9950], atol=1e-4)
    np.testing.assert_allclose(pe[2], [0.9093, -0.4161, 0.1987, 0.9801], atol=1e-4)


def test_model_adds_exactly_its_positional_encoding():
    model = make_model()
    ids = torch.tensor([[2, 5, 6, 7]])
    x = model.embed(ids)
    tok = model.token_embedding(ids) * math.sqrt(CFG.d_model)
    torch.testing.assert_close(x - tok, sinusoidal_positional_encoding(4, CFG.d_model).unsqueeze(0))


def test_too_long_input_is_a_clear_error():
    model = make_model()
    with pytest.raises(ValueError, match="at most 32"):
        model(torch.full((1, 33), 5))


def test_config_rejects_bad_values():
    with pytest.raises(ValueError, match="divisible"):
        EncoderConfig(d_model=10, n_heads=3)
    with pytest.raises(ValueError, match="pooling"):
        EncoderConfig(pooling="max")


def test_safetensors_round_trip(tmp_path):
    model = make_model(seed=11)
    save_model(model, tmp_path)
    loaded = load_model(tmp_path)
    assert loaded.config == model.config
    for (k1, v1), (k2, v2) in zip(model.state_dict().items(), loaded.state_dict().items()):
        assert k1 == k2
        assert torch.equal(v1, v2)
    ids, mask = random_batch([6, 9])
    with torch.no_grad():
        torch.testing.assert_close(model(ids, mask)[0], loaded(ids, mask)[0], atol=0, rtol=0)


def test_missing_corrupt_and_mismatched_files_are_named(tmp_path):
    model = make_model()
    save_model(model, tmp_path)
    (tmp_path / WEIGHTS_FILE).write_bytes(b"not a safetensors file")
    with pytest.raises(ValueError, match=WEIGHTS_FILE):
        load_model(tmp_path)
    (tmp_path / WEIGHTS_FILE).unlink()
    with pytest.raises(FileNotFoundError, match=WEIGHTS_FILE):
        load_model(tmp_path)
    save_model(model, tmp_path)
    other = make_model(d_ff=64)
    other.config.to_json(tmp_path / CONFIG_FILE)
    with pytest.raises(ValueError, match="do not match"):
        load_model(tmp_path)
    (tmp_path / CONFIG_FILE).write_text("{not json")
    with pytest.raises(ValueError, match=CONFIG_FILE):
        load_model(tmp_path)
