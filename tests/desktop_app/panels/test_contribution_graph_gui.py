"""The Contribution graph dock (issue 53 section 2; desktop_app.panels.inside.contribution_graph) in the real window,
offscreen: the edges drawn are the API's at the slider's threshold, an edge click selects its head, a node's hover says
the record's read-out, a hidden dock computes nothing, a new text recomputes, and what cannot be drawn says why."""

from __future__ import annotations

import numpy as np
import pytest
from gui_helpers import loaded_window
from PySide6.QtCore import QPointF, Qt

from model import Predictor
from model.records.graph import RESIDUAL
from tests.fixtures.tiny_models import SAMPLE_TEXTS

pytestmark = [pytest.mark.gui, pytest.mark.timeout(300)]
TIMEOUT_MS = 60_000
TEXT = "This movie was not good at all, the acting was wooden and the plot was dull."
OTHER = "A wonderful film, loved it."


def _inside(qtbot, model_dir):
    win = loaded_window(qtbot, model_dir, panels=True)
    return win, win.inside_panels["graph"]


def _opened(qtbot, win, text) -> None:
    """``text`` analysed, then the Contribution graph dock shown in the Inside workspace."""
    with qtbot.waitSignal(win.state.events.prediction, timeout=TIMEOUT_MS):
        win.open_review(text)
    win.workspaces.switch("inside")
    win.docks.raise_view("Contribution graph")


def _shown(qtbot, win, panel, text):
    _opened(qtbot, win, text)
    qtbot.waitUntil(lambda: win.state.inside.graph is not None and panel.view.graph is not None
                    and win.state.inside.graph.tokens == tuple(win.state.prediction.tokens), timeout=TIMEOUT_MS)
    return panel.view


def _same_as_api(view, predictor, text) -> None:
    want = predictor.contribution_graph(text, view.threshold)
    g = view.graph
    for name in ("nodes", "edges", "heads", "weights", "node_outputs"):
        np.testing.assert_array_equal(getattr(g, name), getattr(want, name), err_msg=name)
    drawn = view.item.adjacency  # what GraphItem draws: the API's edges (in drawing order) at the node positions
    assert sorted(map(tuple, g.edges.tolist())) == sorted(map(tuple, drawn.tolist()))
    np.testing.assert_array_equal(view.item.pos, np.stack([want.nodes[:, 1] + 0.5, want.nodes[:, 0]], 1))


def _settled(qtbot, view) -> None:
    """Wait until the plot's view range and pixel size stop changing: pyqtgraph fits the range on a later turn of the
    event loop, and a click aimed before that (under load) lands where another edge is nearest."""
    box, last = view.plot.getViewBox(), None
    for _ in range(100):
        qtbot.wait(50)
        now = (box.viewRange(), box.viewPixelSize())
        if now == last:
            return
        last = now


def _view_to_widget(view, x: float, y: float):
    scene = view.plot.getViewBox().mapViewToScene(QPointF(x, y))
    return view.plot.mapFromScene(scene)


def test_the_graph_drawn_is_the_apis_at_the_sliders_threshold(qtbot, tiny_model_dir):
    win, panel = _inside(qtbot, tiny_model_dir)
    with qtbot.waitSignal(win.state.events.prediction, timeout=TIMEOUT_MS):
        win.open_review(OTHER)
    qtbot.wait(200)
    assert panel.dock.isHidden() and panel.computed == 0 and win.state.inside.graph is None  # hidden: no work
    view = _shown(qtbot, win, panel, TEXT)
    assert panel.computed == 1
    predictor = Predictor.from_pretrained(tiny_model_dir, device="cpu")
    sizes = []
    for t in (0.04, 0.01, 0.1, 0.3):
        view.set_threshold(t)
        assert view.threshold == t
        _same_as_api(view, predictor, TEXT)
        sizes.append(len(view.graph.edges))
    assert sizes[1] >= sizes[0] >= sizes[2] >= sizes[3] and sizes[1] > sizes[3]
    assert panel.computed == 1  # the slider prunes, never recomputes
    assert "text on display" in panel.caption.text()

    win.docks.raise_view("Model view")  # behind another tab: a new text computes nothing until the tab is chosen again
    with qtbot.waitSignal(win.state.events.prediction, timeout=TIMEOUT_MS):
        win.open_review(OTHER)
    qtbot.wait(200)
    assert not panel.on_screen() and panel.computed == 1 and win.state.inside.graph is None
    view2 = _shown(qtbot, win, panel, OTHER)  # a new text recomputes
    assert panel.computed == 2 and view2.graph.tokens == tuple(predictor.predict(OTHER).tokens)
    _same_as_api(view2, predictor, OTHER)
    assert panel.settings() == {"threshold": 0.3}
    panel.apply_settings({"threshold": 0.1, "unknown": 1})
    assert view.threshold == 0.1
    with pytest.raises(ValueError, match="'threshold'"):
        panel.apply_settings({"threshold": "high"})


def test_an_edge_click_selects_its_head_and_a_hover_says_the_read_out(qtbot, tiny_model_dir):
    win, panel = _inside(qtbot, tiny_model_dir)
    view = _shown(qtbot, win, panel, TEXT)
    clicked = None
    for t in (0.1, 0.04, 0.01):  # a head path whose middle is nearest to it (not crossed there by another)
        view.set_threshold(t)
        _settled(qtbot, view)
        g, pos = view.graph, view.item.pos
        ok = [int(e) for e in np.flatnonzero(g.heads != RESIDUAL) if view.edge_at(*pos[g.edges[e]].mean(0)) == e]
        if ok:
            clicked = ok[0]
            break
    assert clicked is not None
    mid = pos[g.edges[clicked]].mean(0)
    with qtbot.waitSignal(view.edge_clicked, timeout=5000) as sig:
        qtbot.mouseClick(view.plot.viewport(), Qt.LeftButton, pos=_view_to_widget(view, *mid))
    assert sig.args == [clicked]
    layer, head = int(g.nodes[g.edges[clicked, 1], 0]) - 1, int(g.heads[clicked])
    assert win.state.layer_head == (layer, head)  # the explorer (and the Model view) follow
    assert view.info.text().startswith(f"L{layer + 1}.H{head + 1}: {g.weights[clicked]:.3f}")

    n = int(np.flatnonzero(g.nodes[:, 0] == 1)[0])  # a node of layer 1's output
    qtbot.mouseMove(view.plot.viewport(), _view_to_widget(view, *pos[n]))
    qtbot.waitUntil(lambda: view.hover_text != "", timeout=5000)
    label, value = g.node_readout(n)
    assert label in g.labels and value == pytest.approx(float(g.node_outputs[n].max()))
    assert view.hover_text.endswith(f"says {label} {value:.3f}")
    assert view.hover_text.startswith(f"L1, token {int(g.nodes[n, 1])}")


def test_another_model_a_tiny_bert_and_a_long_text_in_windows(qtbot, tmp_path, tiny_model_dir):
    pytest.importorskip("transformers")
    from tests.fixtures.tiny_hf import make_tiny_hf_dir

    folder = make_tiny_hf_dir(tmp_path / "bert", "bert", num_labels=3, init_std=0.5)
    win, panel = _inside(qtbot, tiny_model_dir)
    view = _shown(qtbot, win, panel, TEXT)
    assert len(view.graph.readout) == len(view.graph.tokens)  # ours mean-pools: every token is read out
    with qtbot.waitSignal(win.predictor_loaded, timeout=TIMEOUT_MS):
        win.model_menu.open_model(folder)  # another model recomputes the graph of the text on display
    qtbot.waitUntil(lambda: win.state.inside.graph is not None and len(win.state.inside.graph.labels) == 3,
                    timeout=TIMEOUT_MS)
    predictor = Predictor.from_pretrained(folder, device="cpu")
    view.set_threshold(0.02)
    _same_as_api(view, predictor, TEXT)
    assert view.graph.readout.tolist() == [0]  # BERT's pooler reads [CLS]: the graph starts there
    long_text = " ".join(SAMPLE_TEXTS * 4)
    view = _shown(qtbot, win, panel, long_text)
    pred = win.state.prediction
    assert pred.num_windows > 1 and f"window 1 of {pred.num_windows}" in panel.caption.text()
    _same_as_api(view, predictor, pred.text)  # the window's own text, which fits


def test_what_cannot_be_drawn_says_why(qtbot, tmp_path):
    pytest.importorskip("transformers")
    from model.core.config import EncoderConfig
    from tests.fixtures.tiny_hf import make_tiny_hf_dir
    from tests.fixtures.tiny_models import make_random_model_dir

    bare = make_tiny_hf_dir(tmp_path / "bare", "bert", head=False)
    win, panel = _inside(qtbot, bare)
    _opened(qtbot, win, TEXT)
    qtbot.waitUntil(lambda: "classification head" in panel.view.note.text(), timeout=TIMEOUT_MS)
    assert panel.view.graph is None and panel.computed == 0 and not panel.view.note.isHidden()

    pre_ln = make_random_model_dir(tmp_path / "pre_ln", EncoderConfig(max_len=64, d_model=16, n_heads=2, n_layers=2,
                                                                      d_ff=32, norm_first=True))
    win, panel = _inside(qtbot, pre_ln)
    _opened(qtbot, win, TEXT)
    qtbot.waitUntil(lambda: "pre-LayerNorm" in panel.view.note.text(), timeout=TIMEOUT_MS)
    assert panel.view.graph is None and "cannot be shown" in panel.view.note.text() and not win.errors
