"""Which model scored the batch rows (issue 33, item 10): rows, exports, the summary lines and a re-score."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from gui_helpers import LOAD_TIMEOUT_MS, loaded_window

pytestmark = pytest.mark.gui


def _folder(root: Path, n: int = 4) -> Path:
    for label in ("pos", "neg"):
        (root / label).mkdir(parents=True, exist_ok=True)
        for i in range(n // 2):
            (root / label / f"{i}.txt").write_text(f"a {label} film, review {i}, great acting", encoding="utf-8")
    return root


def test_rows_and_exports_name_the_model_that_scored_them(tiny_predictor, tmp_path):
    from model.batch import EXPORT_COLUMNS, iter_records, read_results, score_records, write_rows

    rows = [r for chunk in score_records(tiny_predictor, iter_records([str(_folder(tmp_path / "r"))])) for r in chunk]
    model = str(Path(tiny_predictor.model_dir).resolve())
    assert rows and all(r.model == model for r in rows)
    assert "model" in EXPORT_COLUMNS
    out = tmp_path / "rows.csv"
    write_rows(out, rows)
    with out.open(encoding="utf-8") as fh:
        assert {d["model"] for d in csv.DictReader(fh)} == {model}
    write_rows(tmp_path / "rows.jsonl", rows)
    first = json.loads((tmp_path / "rows.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert first["model"] == model
    assert read_results(out) == rows
    # an export written before the model column still reads back
    old = tmp_path / "old.csv"
    old.write_text("source,text,label,p_positive,num_tokens,truncated,gold,correct,status\n"
                   "a.txt,Good.,positive,0.9,3,false,,,ok\n", encoding="utf-8")
    assert read_results(old)[0].model == ""


@pytest.fixture
def other_model_dir(tmp_path):
    from tests.fixtures.tiny_models import make_random_model_dir

    return make_random_model_dir(tmp_path / "second-model", seed=3)


def test_after_a_model_switch_the_rows_say_whose_they_are_and_rescore(qtbot, tiny_model_dir, other_model_dir,
                                                                       tmp_path):
    win = loaded_window(qtbot, tiny_model_dir, panels=True)
    batch, corpus = win.panels["batch"], win.panels["corpus"]
    with qtbot.waitSignal(batch.scoring_finished, timeout=LOAD_TIMEOUT_MS):
        win.paths_dropped.emit([str(_folder(tmp_path / "reviews"))])
    tiny_name = Path(tiny_model_dir).name
    assert f"scored by {tiny_name}" in batch.ui.summary_label.text()
    assert "not the model in use" not in batch.ui.summary_label.text()
    assert batch.ui.rescore_button.isHidden()

    with qtbot.waitSignal(win.predictor_loaded, timeout=LOAD_TIMEOUT_MS):
        win.switch_model(str(other_model_dir))
    summary = batch.ui.summary_label.text()
    assert summary.startswith(f"Scored by {tiny_name}, not the model in use"), summary  # first: never elided
    assert not batch.ui.rescore_button.isHidden() and "second-model" in batch.ui.rescore_button.text()
    qtbot.waitUntil(lambda: "not the model in use" in corpus.scope_label.text(), timeout=LOAD_TIMEOUT_MS)
    out = tmp_path / "export.csv"
    assert batch.export_to(str(out))
    with out.open(encoding="utf-8") as fh:
        assert {Path(d["model"]).name for d in csv.DictReader(fh)} == {tiny_name}

    with qtbot.waitSignal(batch.scoring_finished, timeout=LOAD_TIMEOUT_MS):
        batch.ui.rescore_button.click()
    assert len(batch.rows()) == 4
    assert {Path(r.model) for r in batch.rows()} == {Path(other_model_dir).resolve()}
    assert "scored by second-model" in batch.ui.summary_label.text()
    assert "not the model in use" not in batch.ui.summary_label.text()
    assert batch.ui.rescore_button.isHidden()
    qtbot.waitUntil(lambda: "scored by second-model" in corpus.scope_label.text(), timeout=LOAD_TIMEOUT_MS)
