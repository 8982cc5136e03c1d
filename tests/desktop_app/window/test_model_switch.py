"""Regression tests for issue 26 (bugs 1, 2, 3, 6, 7, 8): switching models, attention steps, the neuron view's
softmax axis, sessions of the bundled model, importing the Hugging Face backend ahead. One test per bug or two."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gui_helpers import loaded_window
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetricsF

pytestmark = pytest.mark.gui

ROOT = Path(__file__).resolve().parents[3]
BUNDLED = ROOT / "resources" / "model"
TIMEOUT_MS = 120_000
REVIEW = "A wonderful film with a great cast, a moving story and a score I still hum. Loved it."



@pytest.fixture(scope="module")
def hf_6x12_dir(tmp_path_factory) -> Path:
    """A tiny random BERT classifier of all-MiniLM-L6-v2's shape: 6 layers x 12 heads."""
    pytest.importorskip("transformers")
    from tests.fixtures.tiny_hf import make_tiny_hf_dir

    return make_tiny_hf_dir(tmp_path_factory.mktemp("hf6x12") / "bert6x12", "bert", layers=6, heads=12)


def _analyze(qtbot, win, text):
    """Analyse ``text`` and wait for its prediction and internals."""
    with qtbot.waitSignal(win.state.events.internals, timeout=TIMEOUT_MS, check_params_cb=lambda x, *_: x is not None):
        win.open_review(text)
    return win.state.prediction


def _grid_labels(n_layers, n_heads):
    return sorted([f"head {h + 1}" for h in range(n_heads)] + [f"layer {i + 1}" for i in range(n_layers)])


def _shown_labels(model_view):
    """The "layer N" / "head N" labels in the model view's scroll area (what is on screen, however it is built)."""
    from PySide6.QtWidgets import QLabel, QScrollArea

    from desktop_app.views.model_view import Thumbnail

    host = model_view.findChild(QScrollArea).widget()
    return sorted(w.text() for w in host.findChildren(QLabel) if not isinstance(w, Thumbnail))


# -- bug 1: the model view's grid follows the model: no labels or width left from a bigger one ----------------
def test_model_view_grid_follows_a_switch_back_to_a_smaller_model(qtbot, tiny_model_dir, hf_6x12_dir):
    from PySide6.QtWidgets import QScrollArea

    win = loaded_window(qtbot, tiny_model_dir)  # 2 layers x 2 heads
    win.docks.raise_view("Model view")
    _analyze(qtbot, win, REVIEW)
    for folder, shape in ((hf_6x12_dir, (6, 12)), (tiny_model_dir, (2, 2))):
        with qtbot.waitSignal(win.predictor_loaded, timeout=TIMEOUT_MS):
            win.model_menu.open_model(folder)
        qtbot.waitUntil(lambda: win.state.prediction is not None, timeout=TIMEOUT_MS)
        win.model_view.flush()
        qtbot.wait(50)  # layout
        assert win.state.prediction.attention.shape[:2] == shape
        # back at 2 x 2: no "layer 3".."layer 6", no "head 3".."head 12"
        assert _shown_labels(win.model_view) == _grid_labels(*shape)
    assert win.model_view.findChild(QScrollArea).horizontalScrollBar().maximum() == 0  # nothing 12 heads wide left
    win.close()


# -- bugs 2 and 8: while another model loads nothing old is shown, and the status bar says what is under way ----
def test_nothing_old_is_shown_while_another_model_loads(qtbot, tiny_model_dir, hf_6x12_dir):
    win = loaded_window(qtbot, tiny_model_dir)
    win.docks.raise_view("Model view")
    _analyze(qtbot, win, REVIEW)
    for view in (win.neuron_view, win.steps_view, win.model_view):
        view.flush()
    assert win.neuron_view.key_image.image is not None and win.steps_view.table.rowCount() > 0
    panel = win.prediction_panel
    assert any(bar.probability is not None for bar in panel.bars.values())
    messages = []
    win.statusBar().messageChanged.connect(messages.append)

    win.model_menu.open_model(hf_6x12_dir)  # loads on the inference thread: what follows runs while it loads
    assert panel.prediction is None and panel.details.text() == "" and panel.label.text().startswith("Loading")
    assert all(bar.probability is None and bar.text() == "\u2014" for bar in panel.bars.values())
    st = win.state
    assert (st.prediction, st.internals, st.embedding_norms, st.explanations) == (None, None, None, {})
    for view in (win.neuron_view, win.steps_view, win.model_view):
        view.flush()
    assert win.neuron_view.key_image.image is None and len(win.neuron_view.weight_bars.opts["width"]) == 0
    assert win.steps_view.table.rowCount() == 0
    assert all(t.pixmap().isNull() for t in win.model_view.thumbs.values())
    assert not win.pe_view.pe_norm_curve.getData()[0]

    with qtbot.waitSignal(st.events.prediction, timeout=TIMEOUT_MS, check_params_cb=lambda p, *_: p is not None):
        pass  # the editor's review is analysed again by the new model
    assert st.info.n_layers == 6 and st.prediction.attention.shape[:2] == (6, 12)
    assert "Loading weights\u2026" in messages and any("first analysis" in m for m in messages)
    win.close()


# -- bug 3: the highlight in Attention steps follows the selected key, not a row number ----------------------
def _highlighted_rows(view) -> set[int]:
    """Rows that look highlighted: selected by Qt, or painted in the highlight colour."""
    table = view.table
    rows = {i.row() for i in table.selectedIndexes()}
    colour = view.palette().highlight().color()
    for r in range(table.rowCount()):
        item = table.item(r, 0)
        if item is not None and item.background().style() != Qt.NoBrush and item.background().color() == colour:
            rows.add(r)
    return rows


def test_steps_view_highlights_the_selected_keys_row(qtbot, tiny_model_dir):
    from desktop_app.views.steps_view import TOP_K

    win = loaded_window(qtbot, tiny_model_dir)
    win.docks.raise_view("Attention steps")
    _analyze(qtbot, win, "An utterly dull, slow and predictable film; the cast tries hard but the script is thin.")
    view, table = win.steps_view, win.steps_view.table
    view.flush()
    x, head = win.state.current_internals(), max(win.state.head, 0)

    def keys_for(query):  # the keys the table lists for ``query``
        return [int(k) for k in x.steps(head, query, None if x.num_tokens <= TOP_K else TOP_K).keys]

    # a row whose key, once selected as the query, is listed on another row (or not at all)
    row = next(r for r, k in enumerate(keys_for(0)) if k not in keys_for(k) or keys_for(k).index(k) != r)
    key = keys_for(0)[row]
    pos = table.visualItemRect(table.item(row, 1)).center()
    qtbot.mouseClick(table.viewport(), Qt.LeftButton, pos=pos)  # a double-click as the user makes it
    qtbot.mouseDClick(table.viewport(), Qt.LeftButton, pos=pos)
    assert win.state.selection == (key,)
    view.flush()
    keys = [int(k) for k in view.steps.keys]
    assert _highlighted_rows(view) == ({keys.index(key)} if key in keys else set())
    assert view.highlighted_row == (keys.index(key) if key in keys else None)

    _analyze(qtbot, win, "A wonderful, moving film with a great cast and a score I still hum.")
    view.flush()
    assert win.state.selection == () and _highlighted_rows(view) == set() and view.highlighted_row is None
    win.close()


# -- bug 6: the neuron view's softmax axis at 512 tokens: the tick labels shown do not overlap ----------------
def _label_spans(axis) -> list[tuple[float, float, str]]:
    """(left, right, text) in axis pixels of every tick label pyqtgraph can draw on a bottom axis, measured with
    QFontMetricsF of the tick font over the axis width (labels that would stick out of the axis are not drawn)."""
    width = axis.geometry().width()
    lo, hi = axis.range
    metrics = QFontMetricsF(axis.style.get("tickFont") or axis.font())
    spans = []
    for spacing, values in axis.tickValues(lo, hi, width):
        for v, text in zip(values, axis.tickStrings(values, axis.autoSIPrefixScale * axis.scale, spacing)):
            centre, half = (v - lo) / (hi - lo) * width, metrics.horizontalAdvance(text) / 2
            if 0 <= centre - half and centre + half <= width:
                spans.append((centre - half, centre + half, text))
    return sorted(spans)


def test_neuron_view_softmax_ticks_do_not_overlap_at_512_tokens(qtbot):
    from PySide6.QtGui import QImage, QPainter

    from desktop_app.state import ExplorerState
    from desktop_app.views.neuron_view import NeuronView
    from model.records.internals import AttentionInternals

    view = NeuronView(ExplorerState())
    qtbot.addWidget(view)
    for width in (420, 620, 900):  # the right-hand dock at 1400 x 860 is about 620 px wide
        view.resize(width, 700)
        view.show()
        view.set_data(AttentionInternals.synthetic(n_heads=2, num_tokens=512, d_head=16), 0, 3)
        qtbot.wait(20)
        for plot in (view.weight_plot, view.score_plot):
            axis = plot.getAxis("bottom")
            spans = _label_spans(axis)
            assert spans, f"no tick label at {width} px"
            for (_, right, a), (left, _, b) in zip(spans, spans[1:]):
                assert left >= right, f"{a!r} overlaps {b!r} on a {axis.geometry().width():.0f} px axis"
            # and what pyqtgraph actually draws
            image = QImage(8, 8, QImage.Format_ARGB32)
            painter = QPainter(image)
            painter.setFont(axis.style.get("tickFont") or axis.font())
            drawn = sorted((r.left(), r.right()) for r, _, _ in axis.generateDrawSpecs(painter)[2])
            painter.end()
            assert all(a[1] <= b[0] for a, b in zip(drawn, drawn[1:])), drawn


# -- bug 7: a session of the bundled model says "" and opens with the bundled model ---------------------------
@pytest.mark.skipif(not (BUNDLED / "model.safetensors").is_file(), reason="the bundled model is not present")
def test_session_of_the_bundled_model_stores_an_empty_model_dir(qtbot, tmp_path, tiny_model_dir):
    from desktop_app.window.session import save_open as session

    win = loaded_window(qtbot, None)
    _analyze(qtbot, win, REVIEW)
    path = tmp_path / "bundled.aesession.json"
    session.write_session(session.capture(win), path)
    assert json.loads(path.read_text(encoding="utf-8"))["model_dir"] == ""
    from desktop_app.window.model_menu import folder_key
    assert session.read_session(path).model_dir == "" and folder_key(BUNDLED) == "" and folder_key(None) == ""

    done = []
    other = loaded_window(qtbot, str(BUNDLED))  # the bundled folder named by its path is the bundled model
    other.statusBar().messageChanged.connect(lambda m: done.append(m) if "saved with" in m else None)
    assert session.open_session(other, path, done.append)
    qtbot.waitUntil(lambda: any(isinstance(d, session.Session) for d in done), timeout=TIMEOUT_MS)
    assert folder_key(other.model_info.model_dir) == "" and not [d for d in done if isinstance(d, str)]

    tiny = loaded_window(qtbot, tiny_model_dir)
    messages = []
    tiny.statusBar().messageChanged.connect(messages.append)
    assert session.open_session(tiny, path)
    qtbot.waitUntil(lambda: getattr(tiny, "session_model_box", None) is not None, timeout=TIMEOUT_MS)
    tiny.session_model_box.reject()  # keep the model in use (issue 33 offers to switch)
    assert any("saved with the bundled model" in m for m in messages)
    for w in (win, other, tiny):
        w.close()


# -- bug 8: the Hugging Face backend is imported ahead while the folder dialog is open ---------------------
def test_folder_dialog_imports_the_hf_backend_ahead(qtbot, tiny_model_dir, monkeypatch):
    pytest.importorskip("transformers")
    from PySide6.QtWidgets import QFileDialog

    from model.hf import loading

    win = loaded_window(qtbot, tiny_model_dir)
    asked = []
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(lambda *a, **k: asked.append(a) or ""))
    assert win.model_menu.open_model_folder() is None  # cancelled: the import goes on in the background
    assert asked
    qtbot.waitUntil(lambda: win.model_menu.preloader.warm, timeout=TIMEOUT_MS)
    assert loading.is_warm()
    assert not win.model_menu.preloader.start()  # nothing left to do
    win.close()


def test_pointing_at_open_model_folder_imports_the_hf_backend_once(qtbot, tiny_model_dir):
    """Issue 46: the import starts as the pointer reaches File > Open model folder..., before the dialog opens;
    more hovers ask for nothing more."""
    pytest.importorskip("transformers")
    win = loaded_window(qtbot, tiny_model_dir)
    preloader = win.model_menu.preloader
    assert not preloader.warm
    win.model_menu.open_action.hovered.emit()
    assert not preloader.start()  # asked once already
    qtbot.waitUntil(lambda: preloader.warm, timeout=TIMEOUT_MS)
    win.close()


def test_the_collector_is_paused_during_the_import_and_restored_after():
    """Issue 46: warm_up imports with the cyclic collector off (a fifth of the import's time), and leaves it as it
    found it, also after an error."""
    import gc

    from model.hf.loading import gc_paused

    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), gc_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # off before: stays off
    finally:
        gc.enable()


def test_warm_up_lets_one_thread_import_at_a_time():
    pytest.importorskip("transformers")
    import sys
    import threading

    from model.hf import loading

    results = []
    threads = [threading.Thread(target=lambda: results.append(loading.warm_up())) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [True, True, True] and loading.is_warm()
    assert all(m in sys.modules for m in ("transformers", "transformers.modeling_utils"))


def test_start_up_imports_the_hf_backend_ahead_only_for_a_recent_hf_folder(qtbot, tiny_model_dir, hf_6x12_dir):
    pytest.importorskip("transformers")
    from desktop_app.window.model_menu import RECENT_KEY
    from desktop_app.window.settings import app_settings

    app_settings().setValue(RECENT_KEY, [str(tiny_model_dir)])  # our own folders only: nothing to import
    win = loaded_window(qtbot, tiny_model_dir)
    qtbot.wait(300)
    assert not win.model_menu.preloader.warm
    app_settings().setValue(RECENT_KEY, [str(tiny_model_dir), str(hf_6x12_dir)])
    other = loaded_window(qtbot, tiny_model_dir)
    qtbot.waitUntil(lambda: other.model_menu.preloader.warm, timeout=TIMEOUT_MS)
    for w in (win, other):
        w.close()


def test_precision_setting_reloads_the_model_and_shows_in_the_status_bar(qtbot, tmp_path, monkeypatch):
    """Model > Precision (issues 34, 45): choosing bfloat16 reloads the model in bf16, the status bar says so; auto
    follows the CPU's reported features: on an Intel CPU float32 without AMX, bf16 with it (simulated here)."""
    from gui_helpers import loaded_window

    from model.predictor import precision

    w = loaded_window(qtbot, None)
    assert w.controller.precision == "auto"  # the default
    assert w.model_info.precision == "fp32" and w.model_label.text().endswith("fp32")  # tests/conftest.py: no AMX
    with qtbot.waitSignal(w.predictor_loaded, timeout=60_000):
        w.model_menu.set_precision("bf16")
    assert w.predictor.precision == "bf16" and w.model_info.precision == "bf16"
    assert w.model_label.text().endswith("bf16")
    monkeypatch.setattr(precision, "cpu_vendor", lambda: "GenuineIntel")
    monkeypatch.setattr(precision, "cpu_flags", lambda: frozenset({"avx512_bf16"}))  # Intel without AMX
    with qtbot.waitSignal(w.predictor_loaded, timeout=60_000):
        w.model_menu.set_precision("auto")
    assert w.predictor.precision == "fp32" and w.model_label.text().endswith("fp32")
    monkeypatch.setattr(precision, "cpu_flags", lambda: frozenset({"avx512_bf16", "amx_bf16"}))
    monkeypatch.setattr(precision, "BF16_END_TO_END", {"amx": 2.0})  # a CPU class where bf16 would pay end to end
    with qtbot.waitSignal(w.predictor_loaded, timeout=60_000):
        w.model_menu.set_precision("auto")
    assert w.predictor.precision == "bf16" and w.model_label.text().endswith("bf16")
    probs = w.predictor.predict("A wonderful film.").probabilities
    assert abs(float(probs.sum()) - 1.0) < 1e-6  # read out in float32: the class bars add up to 100 %
