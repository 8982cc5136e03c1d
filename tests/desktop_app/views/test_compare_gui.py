"""Pin and compare two texts (issue 25, part 5): the word alignment, and the Compare view with the bundled model."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from gui_helpers import loaded_window
from PySide6.QtCore import Qt

from desktop_app.compare_records import (
    DELETE,
    EQUAL,
    INSERT,
    REPLACE,
    align_words,
    focus_class,
    text_words,
    word_sums,
)

ROOT = Path(__file__).resolve().parents[3]
BUNDLED = ROOT / "resources" / "model" / "model.safetensors"
TIMEOUT_MS = 60_000
GOOD, NOT_GOOD = "The acting was good.", "The acting was not good."
needs_bundled = pytest.mark.skipif(not BUNDLED.is_file(), reason="needs the trained model resources/model")


# ---------------------------------------------------------------------------------------------- the alignment alone
def test_align_marks_an_inserted_word():
    al = align_words("The acting was good .".split(), "The acting was not good .".split())
    assert al.ops == (EQUAL, EQUAL, EQUAL, INSERT, EQUAL, EQUAL)
    assert al.pinned.tolist() == [0, 1, 2, -1, 3, 4]
    assert al.current.tolist() == [0, 1, 2, 3, 4, 5]


def test_align_deleted_replaced_and_case_insensitive():
    al = align_words(["A", "very", "good", "film"], ["a", "bad", "film", "indeed"])
    assert al.ops == (EQUAL, DELETE, REPLACE, EQUAL, INSERT) or al.ops == (EQUAL, REPLACE, DELETE, EQUAL, INSERT)
    rows = list(zip(al.ops, al.pinned.tolist(), al.current.tolist()))
    assert (EQUAL, 0, 0) in rows and (EQUAL, 3, 2) in rows and (INSERT, -1, 3) in rows
    # every word of each side appears exactly once, in order
    assert [i for i in al.pinned.tolist() if i >= 0] == [0, 1, 2, 3]
    assert [j for j in al.current.tolist() if j >= 0] == [0, 1, 2, 3]


def test_align_unequal_replace_block_and_empty_sides():
    al = align_words(["x", "b", "c", "y"], ["x", "q", "y"])
    assert al.ops == (EQUAL, REPLACE, DELETE, EQUAL)
    assert al.pinned.tolist() == [0, 1, 2, 3] and al.current.tolist() == [0, 1, -1, 2]
    assert align_words([], ["a", "b"]).ops == (INSERT, INSERT)
    assert align_words(["a"], []).ops == (DELETE,)
    assert len(align_words([], [])) == 0


def test_alignment_values_and_deltas():
    al = align_words(["a", "b"], ["a", "new", "b"])
    vals = al.values(np.array([1.0, 2.0]), np.array([10.0, 5.0, 20.0]))
    assert np.isnan(vals[1, 0]) and vals[1, 1] == 5.0
    np.testing.assert_array_equal(al.deltas([1.0, 2.0], [10.0, 5.0, 20.0]), [9.0, 5.0, 18.0])


def test_text_words_maps_tokens_to_words_and_sums():
    text = "I don't like it!"
    # [CLS], i, don, ', t, like, it, !
    offsets = np.array([[0, 0], [0, 1], [2, 5], [5, 6], [6, 7], [8, 12], [13, 15], [15, 16]])
    w = text_words(text, offsets)
    assert w.words == ("I", "don't", "like", "it", "!")
    assert w.token_word.tolist() == [-1, 0, 1, 1, 1, 2, 3, 4]
    sums = word_sums(np.arange(8, dtype=np.float32), w.token_word, len(w.words))
    np.testing.assert_allclose(sums, [1.0, 2 + 3 + 4, 5.0, 6.0, 7.0])
    # a word no token covers (cut by truncation) is left out
    w2 = text_words("good and bad", np.array([[0, 0], [0, 4], [9, 12]]))
    assert w2.words == ("good", "bad") and w2.token_word.tolist() == [-1, 0, 1]
    with pytest.raises(ValueError):
        word_sums([1.0, 2.0], [0], 1)


def test_focus_class():
    assert focus_class(("negative", "positive"), [0.9, 0.1]) == 1
    assert focus_class(("a", "b", "c"), [0.1, 0.7, 0.2]) == 1
    assert focus_class((), None) == -1


# ---------------------------------------------------------------------------------------------- the GUI
def analyze(qtbot, win, text: str):
    """Analyse ``text`` and wait for its prediction."""
    with qtbot.waitSignal(win.state.events.prediction, timeout=TIMEOUT_MS,
                          check_params_cb=lambda p, *_: p is not None and p.text == text) as blocker:
        win.analyze_text(text)
    return blocker.args[0]


def wait_comparison(qtbot, win, pinned: str, current: str, method: str | None = None, mask=None):
    """Wait until the Compare view shows ``pinned`` vs ``current`` (by ``method``); returns the result (drawn)."""
    def ready():
        r = win.compare_view.result
        ok = r is not None and r.pinned.text == pinned and r.current.text == current
        ok = ok and (method is None or r.method == method)
        return ok and (mask is None or (r.current.head_mask is not None and np.array_equal(r.current.head_mask, mask)))

    qtbot.waitUntil(ready, timeout=TIMEOUT_MS)
    win.compare_view.flush()
    return win.compare_view.result


def independent_word_scores(text: str, offsets, scores) -> dict[str, float]:
    """Word -> the sum of the scores of the tokens inside it (regex words; tokens by character offsets)."""
    out = {}
    for m in re.finditer(r"\w+|[^\w\s]", text):
        inside = (offsets[:, 0] >= m.start()) & (offsets[:, 1] <= m.end()) & (offsets[:, 1] > offsets[:, 0])
        out[m.group().lower()] = float(np.asarray(scores, dtype=np.float64)[inside].sum())
    return out


def table_column(table, col: int) -> list[str]:
    return [table.item(r, col).text() if table.item(r, col) else "" for r in range(table.rowCount())]


@pytest.fixture
def win(qtbot):
    if not BUNDLED.is_file():
        pytest.skip("needs the trained model resources/model")
    return loaded_window(qtbot, None)


@needs_bundled
def test_pin_and_compare_two_texts(qtbot, win):
    predictor = win.predictor
    view = win.compare_view
    analyze(qtbot, win, GOOD)
    assert win.prediction_panel.pin_button.isEnabled()
    win.prediction_panel.pin_button.click()
    assert [p.text for p in win.state.pins] == [GOOD]
    qtbot.waitUntil(lambda: view.isVisible(), timeout=5000)  # the dock was raised
    assert view.pin_combo.count() == 1 and GOOD in view.pin_combo.itemText(0)
    analyze(qtbot, win, NOT_GOOD)
    r = wait_comparison(qtbot, win, GOOD, NOT_GOOD)
    assert r.method == "decompx"  # the bundled model is post-LN: DecompX covers it

    # both predictions and their difference, as the predictor says
    p_a, p_b = predictor.predict(GOOD).probabilities, predictor.predict(NOT_GOOD).probabilities
    pos = list(r.labels).index("positive")
    np.testing.assert_allclose(r.pinned.probabilities, p_a, atol=1e-6)
    np.testing.assert_allclose(r.current.probabilities, p_b, atol=1e-6)
    assert r.delta_points == pytest.approx((p_b[pos] - p_a[pos]) * 100, abs=1e-4)
    summary = view.summary_table
    header = [summary.horizontalHeaderItem(c).text() for c in range(summary.columnCount())]
    col = header.index("P(positive)")
    assert summary.item(0, col).text() == f"{p_a[pos] * 100:.1f} %"
    assert summary.item(1, col).text() == f"{p_b[pos] * 100:.1f} %"
    assert summary.item(2, col).text() == f"{(p_b[pos] - p_a[pos]) * 100:+.1f} pts"

    # the words aligned: "not" inserted, nothing else changed
    table = view.words_table
    changes = table_column(table, 2)
    assert changes.count("inserted") == 1 and set(changes) == {"", "inserted"}
    row = changes.index("inserted")
    assert table.item(row, 1).text() == "not" and table.item(row, 0).text() == ""
    assert table_column(table, 1) == ["The", "acting", "was", "not", "good", "."]

    # per-word importance = the explanation's token scores summed over each word (recomputed independently)
    for side, text in ((r.pinned, GOOD), (r.current, NOT_GOOD)):
        pred = predictor.predict(text)
        expl = independent_word_scores(text, pred.offsets, predictor.explain(text, "decompx", target=pos).scores)
        alti = independent_word_scores(text, pred.offsets, predictor.attention_flow(text, "alti").importance)
        words = [w.lower() for w in side.words.words]
        np.testing.assert_allclose(side.importance, [expl[w] for w in words], rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(side.flow, [alti[w] for w in words], rtol=1e-4, atol=1e-5)
    cur_expl = independent_word_scores(NOT_GOOD, predictor.predict(NOT_GOOD).offsets,
                                       predictor.explain(NOT_GOOD, "decompx", target=pos).scores)
    assert table.item(row, 4).text() == f"{cur_expl['not']:.3f}"
    assert table.item(row, 5).text() == f"{cur_expl['not']:+.3f}"  # an inserted word's delta is its importance
    assert view.plot_deltas()[row] == pytest.approx(cur_expl["not"], abs=1e-5)
    assert float(table.item(0, 5).text()) == pytest.approx(r.current.importance[0] - r.pinned.importance[0], abs=2e-3)


@needs_bundled
def test_method_choice_unpin_and_clear(qtbot, win):
    predictor = win.predictor
    view = win.compare_view
    analyze(qtbot, win, GOOD)
    assert any(s.toString() == "Ctrl+Shift+P" for s in win.prediction_panel.pin_action.shortcuts())
    win.activateWindow()
    win.editor.setFocus()
    qtbot.keyClick(win.editor, Qt.Key_P, Qt.ControlModifier | Qt.ShiftModifier)  # the shortcut pins
    assert [p.text for p in win.state.pins] == [GOOD]
    analyze(qtbot, win, NOT_GOOD)
    wait_comparison(qtbot, win, GOOD, NOT_GOOD)
    i = view.method_combo.findData("grad_x_input")
    assert i >= 0 and view.method_combo.currentData() == "decompx"
    view.method_combo.setCurrentIndex(i)
    view.method_combo.activated.emit(i)
    r = wait_comparison(qtbot, win, GOOD, NOT_GOOD, method="grad_x_input")
    pos = list(r.labels).index("positive")
    pred = predictor.predict(GOOD)
    expl = independent_word_scores(GOOD, pred.offsets, predictor.explain(GOOD, "grad_x_input", target=pos).scores)
    np.testing.assert_allclose(r.pinned.importance, [expl[w.lower()] for w in r.pinned.words.words],
                               rtol=1e-3, atol=1e-5)

    # a second pin: the combo lists both, newest first; choosing the older one compares with it
    win.prediction_panel.pin_action.trigger()
    assert [p.text for p in win.state.pins] == [GOOD, NOT_GOOD]
    assert view.pin_combo.count() == 2 and view.pin_combo.currentData() == 1
    wait_comparison(qtbot, win, NOT_GOOD, NOT_GOOD, method="grad_x_input")
    assert set(table_column(view.words_table, 2)) == {""}
    view.pin_combo.setCurrentIndex(1)
    view.pin_combo.activated.emit(1)
    wait_comparison(qtbot, win, GOOD, NOT_GOOD)

    # Unpin removes the chosen pin; Clear pins removes every pin and empties the view
    view.unpin_button.click()
    assert [p.text for p in win.state.pins] == [NOT_GOOD]
    wait_comparison(qtbot, win, NOT_GOOD, NOT_GOOD)
    view.clear_button.click()
    assert win.state.pins == ()
    qtbot.waitUntil(lambda: view.result is None, timeout=5000)
    view.flush()
    assert view.words_table.rowCount() == 0 and view.summary_table.rowCount() == 0
    assert "Pin" in view.status_label.text()
    assert not view.unpin_button.isEnabled()


@needs_bundled
def test_pins_set_from_outside_and_head_mask(qtbot, win):
    from desktop_app.records import Pin

    predictor = win.predictor
    analyze(qtbot, win, NOT_GOOD)
    win.state.set_pins([Pin(GOOD, predictor.predict(GOOD), None)])  # as a restored session does
    assert win.compare_view.pin_combo.count() == 1
    wait_comparison(qtbot, win, GOOD, NOT_GOOD)

    mask = np.ones((win.state.n_layers, win.state.n_heads), np.float32)
    mask[-1, :2] = 0.0
    win.state.set_head_mask(mask)
    r = wait_comparison(qtbot, win, GOOD, NOT_GOOD, mask=mask)
    np.testing.assert_allclose(r.current.probabilities, predictor.predict(NOT_GOOD, head_mask=mask).probabilities,
                               atol=1e-6)
    np.testing.assert_allclose(r.pinned.probabilities, predictor.predict(GOOD).probabilities, atol=1e-6)
    summary = win.compare_view.summary_table
    assert summary.item(1, 0).text() == "current (2 heads off)" and summary.item(0, 0).text() == "pinned"
    pos = list(r.labels).index("positive")
    scores = predictor.explain(NOT_GOOD, "decompx", target=pos, head_mask=mask).scores
    expl = independent_word_scores(NOT_GOOD, predictor.predict(NOT_GOOD).offsets, scores)
    np.testing.assert_allclose(r.current.importance, [expl[w.lower()] for w in r.current.words.words],
                               rtol=1e-4, atol=1e-5)


@needs_bundled
def test_a_failing_comparison_says_why(qtbot, win):
    analyze(qtbot, win, GOOD)
    win.state.pin_current()
    analyze(qtbot, win, NOT_GOOD)
    wait_comparison(qtbot, win, GOOD, NOT_GOOD)
    win.compare.set_method("no_such_method")
    qtbot.waitUntil(lambda: "failed" in win.compare_view.status_label.text(), timeout=TIMEOUT_MS)
    assert "no_such_method" in win.compare_view.status_label.text()
    assert win.compare_view.result is None


def test_decompx_falls_back_where_it_does_not_cover_the_model(qtbot, tmp_path):
    """A pre-LN encoder: DecompX and ALTI are not implemented; the view says so and shows gradient x input."""
    from model import EncoderConfig
    from tests.fixtures.tiny_models import make_random_model_dir

    folder = make_random_model_dir(tmp_path / "preln", config=EncoderConfig(max_len=64, d_model=16, n_heads=2,
                                                                            n_layers=2, d_ff=32, norm_first=True))
    w = loaded_window(qtbot, folder)
    analyze(qtbot, w, "a great film")
    w.state.pin_current()
    analyze(qtbot, w, "a dull film")
    r = wait_comparison(qtbot, w, "a great film", "a dull film")
    assert r.method == "grad_x_input" and r.pinned.flow is None
    text = w.compare_view.status_label.text()
    assert "does not cover" in text and "ALTI cannot be shown" in text
    assert table_column(w.compare_view.words_table, 2) == ["", "replaced", ""]


def test_compare_uses_decompx_only_where_it_is_estimated_quick(monkeypatch, tiny_predictor):
    """Issue 34: by default DecompX when both texts are estimated under COMPARE_DECOMPX_S, else gradient x input and a
    note saying so; a method the user chose is computed whatever the estimate, with progress for a slow one."""
    from desktop_app.workers.compare import Comparer, SideRequest
    from desktop_app.workers.jobs import InlineContext
    from model.explain import cost

    comparer = Comparer()
    progress = []
    ctx = InlineContext(report=progress.append)
    got = []
    a, b = SideRequest("a great film", None), SideRequest("a dull film", None)
    got.append(comparer.compare(ctx, tiny_predictor, a, b, "decompx", auto=True))
    assert got[-1].method == "decompx" and not got[-1].notes and not progress
    monkeypatch.setattr(cost, "COMPARE_DECOMPX_S", 0.0)  # every estimate is now too slow for the default
    monkeypatch.setattr(cost, "SLOW_S", 0.0)
    got.append(comparer.compare(ctx, tiny_predictor, a, b, "decompx", auto=True))
    assert got[-1].method == "grad_x_input"
    assert "would take about" in got[-1].notes[0] and "Gradient" in got[-1].notes[0]
    comparer.cache.clear()  # the first comparison's DecompX is cached
    got.append(comparer.compare(ctx, tiny_predictor, a, b, "decompx", auto=False))  # chosen by the user: progress
    assert got[-1].method == "decompx" and progress and "DecompX" in progress[-1]


def test_a_slow_comparison_can_be_cancelled_and_run_again(qtbot, tmp_path, monkeypatch):
    """Issue 34: while a slow comparison runs the dock shows Cancel (a new prediction still arrives meanwhile); a click
    stops the worker at its next check and leaves no result, a "cancelled" message and Compare again, which runs it."""
    import threading

    from model import Predictor
    from model.explain import ExplanationCancelled, cost
    from tests.fixtures.tiny_models import make_random_model_dir

    real_explain = Predictor.explain
    slow = {"on": True}
    entered, stopped = threading.Event(), threading.Event()

    def slow_explain(self, text, method, *args, **kwargs):
        """DecompX of a text with "slowly" in it: reports progress and waits until asked to stop (30 s at most)."""
        if method == "decompx" and "slowly" in text and slow["on"]:
            entered.set()
            for step in range(3000):
                if kwargs.get("progress") is not None:
                    kwargs["progress"](step % 2, 2)
                if kwargs["should_stop"]():
                    stopped.set()
                    raise ExplanationCancelled("stopped")
                threading.Event().wait(0.01)
        return real_explain(self, text, method, *args, **kwargs)

    monkeypatch.setattr(Predictor, "explain", slow_explain)
    monkeypatch.setattr(cost, "SLOW_S", 0.0)  # every method now counts as slow: its progress is shown
    w = loaded_window(qtbot, make_random_model_dir(tmp_path / "tiny"))
    view = w.compare_view
    assert view.cancel_button.isHidden() and view.retry_button.isHidden()
    analyze(qtbot, w, "a great film")
    w.state.pin_current()
    wait_comparison(qtbot, w, "a great film", "a great film")
    analyze(qtbot, w, "a film that moves slowly")
    qtbot.waitUntil(lambda: entered.is_set() and not view.cancel_button.isHidden(), timeout=TIMEOUT_MS)
    assert view.retry_button.isHidden()
    assert view.result is None  # the comparison of the text before is not shown as the current one meanwhile
    # the prediction of a new text arrives while the slow comparison runs; it stops that one and compares anew
    entered.clear()
    analyze(qtbot, w, "a story told slowly")
    qtbot.waitUntil(stopped.is_set, timeout=TIMEOUT_MS)
    stopped.clear()
    qtbot.waitUntil(entered.is_set, timeout=TIMEOUT_MS)
    assert not view.cancel_button.isHidden() and not stopped.is_set()
    qtbot.waitUntil(lambda: "Comparing: DecompX" in view.status_label.text(), timeout=TIMEOUT_MS)  # its progress
    qtbot.mouseClick(view.cancel_button, Qt.LeftButton)
    # at once, without waiting for the worker: no result, the dock says it was cancelled, Compare again offered
    assert view.result is None and "cancelled" in view.status_label.text()
    assert view.cancel_button.isHidden() and not view.retry_button.isHidden()
    qtbot.waitUntil(stopped.is_set, timeout=TIMEOUT_MS)  # the worker stopped between its steps
    qtbot.wait(50)
    assert view.result is None and "cancelled" in view.status_label.text()
    slow["on"] = False
    qtbot.mouseClick(view.retry_button, Qt.LeftButton)
    r = wait_comparison(qtbot, w, "a great film", "a story told slowly", method="decompx")
    assert r is view.result and view.cancel_button.isHidden() and view.retry_button.isHidden()
    assert "cancelled" not in view.status_label.text()
