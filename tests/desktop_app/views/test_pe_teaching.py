"""Positional encoding, taught (issue 11, item 4): the tutorial's worked table and PE vs token-embedding norms."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytestmark = pytest.mark.gui

ROW_1 = [0.8415, 0.5403, 0.0998, 0.9950]  # sin(1), cos(1), sin(1/10), cos(1/10)


def test_worked_table_matches_the_tutorial(tiny_predictor):
    info = tiny_predictor.model_info()
    t = info.pe_worked_example
    assert t.shape == (4, 4) and not t.flags.writeable
    np.testing.assert_allclose(t[0], [0, 1, 0, 1], atol=1e-6)
    np.testing.assert_allclose(t[1], ROW_1, atol=1e-4)
    np.testing.assert_allclose(t[2], [math.sin(2), math.cos(2), math.sin(0.2), math.cos(0.2)], atol=1e-6)


def test_embedding_norms(tiny_predictor):
    text = "a fine film"
    norms = tiny_predictor.embedding_norms(text)
    pred = tiny_predictor.predict(text)
    assert norms.tokens == tuple(pred.tokens)
    d = tiny_predictor.config.d_model
    # every sinusoidal row has d/2 (sin, cos) pairs: ||PE|| = sqrt(d / 2)
    np.testing.assert_allclose(norms.pe_norm, math.sqrt(d / 2), rtol=1e-5)
    emb = tiny_predictor.model.token_embedding.weight.detach().numpy()
    ids = tiny_predictor.encode(text).ids
    np.testing.assert_allclose(norms.token_norm, np.linalg.norm(emb[ids], axis=1) * math.sqrt(d), rtol=1e-5)
    assert not norms.pe_norm.flags.writeable


def test_pe_view_shows_the_worked_table_and_norms(qtbot, tiny_predictor):
    from desktop_app.state import ExplorerState
    from desktop_app.views.pe_view import PositionalEncodingView

    state = ExplorerState()
    view = PositionalEncodingView(state)
    qtbot.addWidget(view)
    view.show()
    state.set_model(tiny_predictor.model_info())
    assert [float(view.worked.item(1, c).text()) for c in range(4)] == ROW_1
    state.set_embedding_norms(tiny_predictor.embedding_norms("a fine film"))
    x, y = view.pe_norm_curve.getData()
    assert len(x) == len(tiny_predictor.encode("a fine film").tokens) and np.allclose(y, math.sqrt(tiny_predictor.config.d_model / 2))
    assert "token embedding" in view.norm_label.text()
