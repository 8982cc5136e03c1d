"""Precision of predict and score_many (issue 34): bf16 autocast gives float32's labels, auto decides per device and
model, the scorer's --precision option."""

from __future__ import annotations

import numpy as np
import pytest

from model import precision
from model.precision import PROBE_TEXTS, check_precision, probe_agreement


def test_unknown_precision_is_refused(tiny_predictor):
    with pytest.raises(ValueError, match="auto, fp32, bf16"):
        check_precision("fp16")
    with pytest.raises(ValueError, match="auto, fp32, bf16"):
        tiny_predictor.use_precision("half")


def test_bf16_and_fp32_give_the_same_labels_on_a_fixed_set(bundled_predictor):
    """The bundled model on the probe texts and the 80 committed IMDB test reviews: same labels, probabilities
    within 0.02; the predictor's precision is restored, and predict follows it."""
    p = bundled_predictor
    texts = list(PROBE_TEXTS)
    from imdb_data import imdb_sample

    texts += [r["text"] for r in imdb_sample("first80")]
    same, diff = probe_agreement(p, tuple(texts))
    assert same and diff <= 0.02, diff
    assert p.precision == "fp32"
    assert p.use_precision("bf16") == "bf16"
    try:
        a = p.predict(texts[0])
        assert a.logits.dtype == np.float32 and a.attention.dtype == np.float32
        assert p.replica().precision == "bf16"
    finally:
        p.use_precision("fp32")
    b = p.predict(texts[0])
    assert a.label == b.label and not np.array_equal(a.logits, b.logits)  # bf16 really ran


def test_auto_uses_bf16_only_where_the_device_is_faster_and_the_labels_agree(monkeypatch, tiny_predictor):
    p = tiny_predictor
    monkeypatch.setattr(precision, "cpu_reports_bf16", lambda: False)
    assert p.use_precision("auto") == "fp32"
    monkeypatch.setattr(precision, "cpu_reports_bf16", lambda: True)
    monkeypatch.setattr(precision, "cpu_bf16_speedup", lambda: 1.0)  # reports BF16, computes it no faster
    assert p.use_precision("auto") == "fp32"
    monkeypatch.setattr(precision, "cpu_bf16_speedup", lambda: 2.0)
    monkeypatch.setattr(precision, "probe_agreement", lambda _p: (True, 0.001))
    monkeypatch.setattr(precision, "model_bf16_speedup", lambda _p: 0.8)  # the model itself runs slower in bf16
    assert p.use_precision("auto") == "fp32"
    monkeypatch.setattr(precision, "model_bf16_speedup", lambda _p: 1.9)
    assert p.use_precision("auto") == "bf16"
    monkeypatch.setattr(precision, "probe_agreement", lambda _p: (False, 0.3))  # a model that disagrees: fp32
    assert p.use_precision("auto") == "fp32"
    assert p.use_precision("bf16") == "bf16"  # asked for explicitly: used
    p.use_precision("fp32")


def test_the_model_speed_probe_measures_both_precisions_and_leaves_the_predictor_as_it_was(tiny_predictor):
    p = tiny_predictor
    p.use_precision("fp32")
    ratio = precision.model_bf16_speedup(p, batch=4, repeats=1)
    assert np.isfinite(ratio) and ratio > 0
    assert p.precision == "fp32"


def test_scorer_takes_precision(tmp_path, capsys):
    from model.batch.cli import main

    src = tmp_path / "r.txt"
    src.write_text("A wonderful film.\n", encoding="utf-8")
    assert main([str(src), "--precision", "bf16", "--no-progress", "-o", str(tmp_path / "o.csv")]) == 0
    assert "precision bf16" in capsys.readouterr().err
    assert main([str(src), "--precision", "half"]) == 2
    assert "invalid choice: 'half'" in capsys.readouterr().err
