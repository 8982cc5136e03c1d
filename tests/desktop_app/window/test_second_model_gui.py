"""Model > Compare with a second model... (issue 44) in the window, offscreen: model B loads on its own thread, the
prediction panel shows B's verdict and whether A and B agree, batch rows gain B's columns (equal to a run of B
alone) and "Agree?" (disagreements sortable first), the Corpus dock's "A vs B" tab shows both models' metrics, their
confusion and McNemar; a model with other labels is refused with one message naming both folders."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from gui_helpers import loaded_window
from PySide6.QtCore import Qt

from desktop_app.workers.batch import DEFAULT_BATCH_SIZE, DEFAULT_CHUNK
from model import Predictor
from model.batch import iter_records, score_records

pytestmark = [pytest.mark.gui, pytest.mark.timeout(300)]
TIMEOUT_MS = 120_000


def _folder(root: Path) -> Path:
    for label in ("pos", "neg"):
        (root / label).mkdir(parents=True)
        for i in range(8):
            words = "great fun loved it" if label == "pos" else "dull awful boring"
            (root / label / f"{i}_5.txt").write_text(f"Review {i}: {words} " * (1 + i % 4))
    return root


def _load_b(qtbot, win, folder):
    second = win.model_menu.second
    with qtbot.waitSignal(second.changed, timeout=TIMEOUT_MS):
        second.load(folder)
    return second


def test_two_models_in_the_window(qtbot, tiny_model_dir, model_b, tmp_path):
    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    with qtbot.waitSignal(win.state.events.prediction, timeout=TIMEOUT_MS):
        win.open_review("A wonderful film, loved it.")
    second = _load_b(qtbot, win, model_b)
    box = second.box
    assert not box.isHidden() and box.title.text() == f"Model B: {model_b.name}"
    qtbot.waitUntil(lambda: box.verdict.text() != "", timeout=TIMEOUT_MS)
    b_score = Predictor.from_pretrained(model_b, device="cpu").score_many(["A wonderful film, loved it."])[0]
    assert box.verdict.text().startswith(b_score.label)
    a_label = win.state.prediction.label
    expected = "A and B agree" if a_label == b_score.label else f"A and B disagree: A says {a_label}"
    assert box.agreement.text().startswith(expected)

    batch, corpus = win.panels["batch"], win.panels["corpus"]
    folder = _folder(tmp_path / "reviews")
    with qtbot.waitSignal(batch.scoring_finished, timeout=TIMEOUT_MS):
        batch.add_paths([str(folder)])
    model = batch.table_model
    headers = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]
    assert headers[-4:] == ["B: predicted", "B: P(negative)", "B: P(positive)", "Agree?"]
    alone = {r.source: r for c in score_records(Predictor.from_pretrained(model_b, device="cpu"),
                                                iter_records([str(folder)]), batch_size=DEFAULT_BATCH_SIZE,
                                                chunk=DEFAULT_CHUNK) for r in c}  # the panel's batches
    rows = model.rows()
    diffs = {f: (getattr(r.b, f), getattr(alone[r.source], f)) for r in rows for f in r.b.__dataclass_fields__
             if getattr(r.b, f) != getattr(alone[r.source], f)}
    assert len(rows) == 16 and not diffs
    col_b = headers.index("B: P(positive)")
    assert model.index(0, col_b).data() == f"{alone[rows[0].source].probability('positive'):.3f}"

    next(a for a in win.menus.analysis_menu.actions() if "disagreements first" in a.text()).trigger()
    agree_col = headers.index("Agree?")
    shown = [batch.proxy.index(i, agree_col).data() for i in range(batch.proxy.rowCount())]
    n_no = sum(not r.agree for r in rows)
    assert shown == ["NO"] * n_no + ["yes"] * (16 - n_no)

    tab = corpus.comparison
    qtbot.waitUntil(lambda: tab.result is not None, timeout=TIMEOUT_MS)
    _a, _b, m = tab.result
    assert m.n_compared == 16 and m.agreement == pytest.approx((16 - n_no) / 16)
    b01 = sum(r.correct and not r.b.correct for r in rows)
    assert m.mcnemar.b01 == b01 and f"b01 = {b01}" in tab.test_label.text()
    assert tab.confusion.rowCount() == 2 and tab.a_label.text().startswith("<b>A</b>")
    assert tab.slices.rowCount() == len(m.by_length) >= 1 and tab.slices.item(0, 5).text() == str(m.by_length[0][1].mcnemar.b01)

    assert batch.export_to(str(tmp_path / "rows.csv"))
    with open(tmp_path / "rows.csv", encoding="utf-8", newline="") as fh:
        first = next(csv.DictReader(fh))
    assert {"b_label", "b_p_positive", "agree"} <= set(first)

    second.stop()
    assert box.isHidden() and batch._second is None
    win.close()


def test_a_model_with_other_labels_is_refused(qtbot, tiny_model_dir, other_labels):
    win = loaded_window(qtbot, tiny_model_dir)
    second = win.model_menu.second
    second.load(other_labels)
    qtbot.waitUntil(lambda: second.error_box is not None, timeout=TIMEOUT_MS)
    text = second.error_box.text()
    assert "different labels" in text and str(other_labels) in text and str(Path(tiny_model_dir)) in text
    assert second.predictor is None and second.box.isHidden()
    win.close()


def test_a_new_model_a_that_cannot_be_compared_drops_model_b(qtbot, tiny_model_dir, model_b, other_labels):
    win = loaded_window(qtbot, tiny_model_dir)
    second = _load_b(qtbot, win, model_b)
    with qtbot.waitSignal(second.changed, timeout=TIMEOUT_MS, check_params_cb=lambda b: b is None):
        win.model_menu.open_model(other_labels)
    assert second.predictor is None and second.box.isHidden()
    assert "Stopped comparing with model B" in second.error_box.text() and "only A: bad, good" in second.error_box.text()
    win.close()


def test_compare_a_and_b_on_one_text_shows_both_importances_side_by_side(qtbot, tiny_model_dir, model_b):
    """Model > Compare A and B on this text: a pin of model B, so the Compare view shows B's word importances beside
    A's (the current analysis), each side's verdict its own model's; a session keeps model B's folder and its pin."""
    from desktop_app.window.session import save_open as session

    text = "A wonderful film, loved it, though the ending dragged."
    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    with qtbot.waitSignal(win.state.events.prediction, timeout=TIMEOUT_MS):
        win.open_review(text)
    second = _load_b(qtbot, win, model_b)
    win.compare.set_method("grad_x_input")
    with qtbot.waitSignal(win.compare.result, timeout=TIMEOUT_MS,
                          check_params_cb=lambda r: r is not None and r.names == ("model B", "model A")) as blocker:
        second.pin_text()
    r = blocker.args[0]
    pin = win.state.pins[-1]
    assert pin.of_model_b and pin.prediction is None and pin.text == text
    b = Predictor.from_pretrained(model_b, device="cpu")
    assert r.pinned.text == r.current.text == text
    assert r.pinned.probabilities.tolist() == pytest.approx(b.predict(text).probabilities.tolist(), abs=1e-5)
    assert r.current.probabilities.tolist() == pytest.approx(win.state.prediction.probabilities.tolist(), abs=1e-5)
    assert r.pinned.words.words == r.current.words.words and len(r.pinned.importance) == len(r.current.words.words)
    assert not (r.pinned.importance == r.current.importance).all()  # two models: two explanations
    b_importance = b.explain(text, "grad_x_input", target=r.target).scores
    assert float(r.pinned.importance.sum()) == pytest.approx(float(b_importance[1:].sum()), abs=1e-4)
    saved = session.capture(win)  # model B and its pin are part of a session (version 5)
    assert saved.model_b_dir == str(model_b.resolve())
    assert saved.pins == ({"text": text, "head_mask": None, "text_pair": None, "model": "B"},)
    second.stop()
    qtbot.waitUntil(lambda: "model B, which is not open" in win.compare.message, timeout=TIMEOUT_MS)


def test_model_b_keeps_the_default_window_height(qtbot, tiny_model_dir, model_b):
    """Loading model B adds its section to the prediction panel: the window (1400 x 860, the default) grew to 910
    pixels, past the bottom of an 860-pixel screen, because the Prediction dock's content set the left column's
    minimum height. The dock scrolls instead."""
    win = loaded_window(qtbot, tiny_model_dir, size=(1400, 860), panels=True)
    with qtbot.waitSignal(win.state.events.prediction, timeout=TIMEOUT_MS):
        win.open_review("A wonderful film, loved it.")
    qtbot.wait(50)
    before = win.prediction_dock.minimumSizeHint().height()
    second = _load_b(qtbot, win, model_b)
    qtbot.waitUntil(lambda: second.box.verdict.text() != "", timeout=TIMEOUT_MS)
    qtbot.wait(50)
    assert win.prediction_dock.minimumSizeHint().height() <= before  # a pair model's window: 851 px before B
    assert win.minimumSizeHint().height() <= 860 and win.height() == 860
    assert second.box.isVisible()
