"""The training pipeline (``model.training``): the bundled recipe end to end on tiny synthetic data (CPU, about a
minute), its stages against direct calls, the shipped weights re-made from git history, bad input, side-by-side
stages, and the parts the stages are made of."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from model.datasets.splits import VAL_SIZE, UsageError, validation_split
from model.datasets.task_data import read_table
from model.training.common import write_rows
from tests.model.training.conftest import ROOT, run_pipeline as _pipeline, run_recipe_text, tiny_bert_base

CPU = torch.device("cpu")
# The bundled recipe with a tiny option set: a tiny BERT teacher (BASE; 4 epochs at lr 3e-3 learn the synthetic
# reviews whatever WordPiece vocabulary make_tiny_hf_dir trained), a 2-layer d_model 32 student, 64 tokens.
TINY = """
[recipe]
extends = "bundled"
[stages.teacher]
base = "BASE"
lr = 3e-3
epochs = 4
max_len = 64
batch_size = 16
[stages.augmented]
max_len = 64
[stages.mlm]
max_len = 64
d_model = 32
n_heads = 2
d_ff = 64
steps = 4
batch_size = 8
[stages.step4]
epochs = 2
batch_size = 16
limit = 64
[stages.teacher256]
base = "BASE"
lr = 3e-3
epochs = 4
max_len = 64
batch_size = 16
[stages.step5]
limit = 64
[stages.negations]
min_count = 5
min_margin = 0.0
[stages.step7]
limit = 64
augmented = ["negations:6", "sentences%40"]
[stages.wise]
alphas = [0.85]
"""


@pytest.fixture(scope="module")
def bundled(tmp_path_factory, data_dir) -> SimpleNamespace:
    """``python -m model.training.pipeline`` run once on the tiny bundled recipe (a subprocess, as a user runs it)."""
    d = tmp_path_factory.mktemp("bundled")
    done = run_recipe_text(d, "work", TINY.replace("BASE", str(tiny_bert_base(d / "bert"))), data_dir)
    assert done.returncode == 0, done.stderr[-4000:]
    return SimpleNamespace(work=d / "work", recipe=d / "work.toml",
                           summary=json.loads(done.stdout.strip().splitlines()[-1]))


def test_validation_split_is_seeded_and_disjoint():
    val, fit = validation_split(25000)
    assert len(val) == VAL_SIZE and len(fit) == 25000 - VAL_SIZE and not set(val) & set(fit)
    assert (val == np.random.default_rng(0).permutation(25000)[:VAL_SIZE]).all()


def test_bundled_recipe_runs_end_to_end_into_a_model_folder(bundled):
    from model import Predictor
    from model.training.pipeline import load_recipe

    work = bundled.work
    assert bundled.summary == {"result": str(work / "model"), "ran": list(load_recipe("bundled").stages)}
    assert sorted(p.name for p in (work / "model").iterdir()) == ["config.json", "metrics.json", "model.safetensors",
                                                                 "tokenizer.json"]
    assert not list(work.glob("*.part*")) and not (work / "teacher" / ".checkpoint").exists()
    logged = [json.loads(line)["stage"] for line in (work / "stages.jsonl").read_text().splitlines()]
    assert logged == bundled.summary["ran"]
    z = np.load(work / "teacher" / "logits.npz")
    assert z["train"].shape == (VAL_SIZE + 150, 2) and z["unsup"].shape == (80, 2) and z["test"].shape == (60, 2)
    assert len(read_table(work / "augmented.jsonl.gz")) == 2 * (150 + 80)
    negations = read_table(work / "negations.jsonl.gz")
    assert negations and all(" was not " in r["text"] for r in negations)
    flips = [r["logits"][1] > r["logits"][0] for r in negations]
    assert sum(flips) == len(flips) // 2  # as many negated negatives as negated positives
    metrics = json.loads((work / "model" / "metrics.json").read_text())
    rows = metrics["selection"]["rows"]
    assert [Path(r["model"]).name for r in rows] == ["step4", "step7", "alpha0.85"]
    chosen = Path(metrics["selection"]["chosen"])
    assert (work / "model" / "model.safetensors").read_bytes() == (chosen / "model.safetensors").read_bytes()
    assert metrics["test_count"] == 60 and 0.0 <= metrics["test_accuracy"] <= 1.0
    p = Predictor.from_pretrained(work / "model", device="cpu").predict("a wonderful film")
    assert p.probabilities.shape == (2,) and abs(float(p.probabilities.sum()) - 1.0) < 1e-5


def test_rerun_skips_every_finished_stage(bundled, data_dir, capsys):
    from model.training import pipeline

    before = {p: p.stat().st_mtime_ns for p in bundled.work.rglob("*") if p.is_file()}
    args = [str(bundled.recipe), "--data", str(data_dir), "--work", str(bundled.work)]
    assert pipeline.main(args) == 0
    assert json.loads(capsys.readouterr().out)["ran"] == []
    assert {p: p.stat().st_mtime_ns for p in bundled.work.rglob("*") if p.is_file()} == before
    assert pipeline.main([*args, "--plan"]) == 0
    assert [line.split()[2] for line in capsys.readouterr().out.splitlines()] == ["done"] * 11


def test_stages_write_what_direct_calls_write(bundled, data_dir, tmp_path):
    """Each stage in the pipeline (a subprocess) and the stage function called here with the same options give the
    same bytes: the gzip-ed transfer sets and the safetensors weights."""
    from model.core.weights import load_state
    from model.training import counterfactual, distill, interpolate, transfer

    w = bundled.work
    augment = transfer.AugmentOptions(str(w / "teacher"), max_len=64)
    transfer.write_augmented(data_dir, tmp_path / "aug.jsonl.gz", augment, CPU)
    assert (tmp_path / "aug.jsonl.gz").read_bytes() == (w / "augmented.jsonl.gz").read_bytes()
    opts = counterfactual.NegationOptions(str(w / "sentences.jsonl.gz"), min_count=5, min_margin=0.0, flip_scale=1.0)
    counterfactual.write_negations(data_dir, tmp_path / "neg.jsonl.gz", opts)
    assert (tmp_path / "neg.jsonl.gz").read_bytes() == (w / "negations.jsonl.gz").read_bytes()
    mlm = distill.MLMOptions(max_len=64, d_model=32, n_heads=2, d_ff=64, steps=4, batch_size=8)
    distill.pretrain(data_dir, tmp_path / "mlm", mlm, CPU)
    assert (tmp_path / "mlm" / "model.safetensors").read_bytes() == (w / "mlm" / "model.safetensors").read_bytes()
    step7 = distill.DistillOptions(init=str(w / "step5"), teacher=str(w / "teacher"), no_unsup=True, limit=64,
                                   augmented=(f"{w}/negations.jsonl.gz:6", f"{w}/sentences.jsonl.gz%40"),
                                   epochs=1, batch_size=128, lr=5e-5)
    distill.distill(data_dir, tmp_path / "step7", step7, CPU)
    assert (tmp_path / "step7" / "model.safetensors").read_bytes() == (w / "step7" / "model.safetensors").read_bytes()
    mix = interpolate.interpolate(w / "step4", w / "step7", tmp_path / "wise", 0.85) / "model.safetensors"
    assert mix.read_bytes() == (w / "wise" / "alpha0.85" / "model.safetensors").read_bytes()
    a, b, m = (load_state(p) for p in (w / "step4" / "model.safetensors", w / "step7" / "model.safetensors", mix))
    assert all(torch.allclose(m[k], 0.15 * a[k] + 0.85 * b[k], atol=1e-6) for k in m)


def test_the_shipped_weights_are_wise_085_of_step4_and_step7_from_git(tmp_path, data_dir, capsys):
    """The git stages take step 4 (f06b43b) and step 7 (b8f39ea) out of history; the interpolation stage at alpha
    0.85 makes resources/model/model.safetensors byte for byte (seconds; skipped without the git history)."""
    if subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", "f06b43b^{commit}"], capture_output=True,
                      check=False).returncode or subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e",
                                                                 "b8f39ea^{commit}"], capture_output=True,
                                                                check=False).returncode:
        pytest.skip("no git history with commits f06b43b and b8f39ea")
    from model.training import pipeline

    recipe = tmp_path / "shipped.toml"
    recipe.write_text('[recipe]\nresult = "wise"\n[stages.step4]\nkind = "git"\ncommit = "f06b43b"\n'
                      '[stages.step7]\nkind = "git"\ncommit = "b8f39ea"\n[stages.wise]\nkind = "interpolate"\n'
                      'base = "step4"\nfinetuned = "step7"\nalphas = [0.85]\n')
    assert pipeline.main([str(recipe), "--data", str(data_dir), "--work", str(tmp_path / "w")]) == 0
    for name in ("model.safetensors", "config.json", "tokenizer.json"):
        made = tmp_path / "w" / "wise" / "alpha0.85" / name
        assert made.read_bytes() == (ROOT / "resources" / "model" / name).read_bytes(), name


@pytest.mark.parametrize("case", ["no data", "no recipe", "toml syntax", "unknown kind", "unknown option",
                                  "wrong type", "dangling input", "later input", "unknown stage", "bad set",
                                  "bad device", "no result", "not a table", "bad sample"])
def test_bad_input_is_one_line_and_exit_code_2(case, data_dir, tmp_path, capsys):
    from model.training import pipeline

    ok = '[recipe]\nresult = "b"\n[stages.a]\nkind = "git"\ncommit = "x"\n'
    recipes = {"toml syntax": "[recipe\n", "unknown kind": ok + '[stages.b]\nkind = "soup"\n',
               "unknown option": ok + '[stages.b]\nkind = "interpolate"\nbase = "a"\nbeta = 1\n',
               "wrong type": '[recipe]\nresult = "a"\n[stages.a]\nkind = "git"\ncommit = 3\n',
               "dangling input": ok + '[stages.b]\nkind = "interpolate"\nbase = "a"\nfinetuned = "nowhere"\n',
               "later input": '[recipe]\nresult = "b"\n[stages.b]\nkind = "negations"\nsentences = "a"\n'
                              '[stages.a]\nkind = "negations"\nsentences = "b"\n',
               "no result": '[recipe]\nresult = "z"\n[stages.a]\nkind = "git"\n',
               "not a table": 'stages = 3\n[recipe]\nresult = "a"\n',
               "bad sample": ok + '[stages.b]\nkind = "negations"\nsentences = "a%x"\n'}
    recipe = tmp_path / "r.toml"
    recipe.write_text(recipes.get(case, ok + '[stages.b]\nkind = "interpolate"\nbase = "a"\nfinetuned = "a"\n'))
    args = {"no data": [str(recipe), "--data", str(tmp_path / "missing")], "no recipe": ["no_such_recipe"],
            "unknown stage": [str(recipe), "--stage", "c"], "bad set": [str(recipe), "--set", "c.x=1"],
            "bad device": [str(recipe), "--device", "tpu"]}.get(case, [str(recipe)])
    if "--data" not in args:
        args += ["--data", str(data_dir)]
    assert pipeline.main([*args, "--work", str(tmp_path / "w"), "--plan"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert not (tmp_path / "w").exists()


def test_stages_run_side_by_side_and_a_failed_stage_stops_its_dependents(data_dir, tmp_path):
    from tests.fixtures.tiny_models import make_random_model_dir

    m1, m2 = make_random_model_dir(tmp_path / "m1", seed=1), make_random_model_dir(tmp_path / "m2", seed=2)
    recipe = tmp_path / "r.toml"
    recipe.write_text(f'[recipe]\nresult = "c"\njobs = 2\n[stages.a]\nkind = "interpolate"\nbase = "{m1}"\n'
                      f'finetuned = "{m2}"\nalphas = [0.5]\n[stages.b]\nkind = "interpolate"\nbase = "{m1}"\n'
                      f'finetuned = "{m2}"\nalphas = [0.25]\n[stages.c]\nkind = "select"\ncandidates = ["a", "b"]\n')
    done = _pipeline(recipe, "--data", data_dir, "--work", tmp_path / "w", timeout=300)
    assert done.returncode == 0, done.stderr
    events = [line.split()[1:3] for line in done.stderr.splitlines() if line.startswith("[pipeline]")]
    assert events[:2] == [["a", "started"], ["b", "started"]] and events[-1] == ["c", "finished"]  # a and b at once
    chosen = Path(json.loads((tmp_path / "w" / "c" / "metrics.json").read_text())["selection"]["chosen"])
    assert chosen.name in ("alpha0.50", "alpha0.25") and all((tmp_path / "w" / f"{n}.log").is_file() for n in "abc")
    (tmp_path / "broken.jsonl.gz").write_bytes(b"not gzip")
    recipe.write_text(f'[recipe]\nresult = "c"\njobs = 2\n[stages.a]\nkind = "negations"\n'
                      f'sentences = "{tmp_path}/broken.jsonl.gz"\n[stages.c]\nkind = "negations"\nsentences = "a"\n')
    done = _pipeline(recipe, "--data", data_dir, "--work", tmp_path / "v", timeout=120)
    assert done.returncode == 1 and "a, c failed or not run" in done.stderr, done.stderr
    assert not list((tmp_path / "v").glob("*.jsonl.gz")) and "Traceback" in (tmp_path / "v" / "a.log").read_text()


def test_augment_keeps_words_and_masks():
    from model.training.transfer import augment

    rng = np.random.default_rng(0)
    words = ["the", "film", "was", "not", "good", "but", "the", "cast", "was", "great"]
    texts = [augment(words, ["x"], rng, p_window=0.0, p_mask=0.5, p_replace=0.0) for _ in range(20)]
    assert all(len(t.split()) == len(words) for t in texts) and any("[MASK]" in t for t in texts)
    assert augment(words, ["x"], rng, p_window=0.0, p_mask=0.0, p_replace=0.0) == " ".join(words)


def test_review_sentences_split_and_length_filter():
    from model.training.transfer import review_sentences

    text = "Great cast.<br /><br />The plot was not good at all. But the music, oh the music, was lovely! Ok?"
    assert review_sentences(text) == ["The plot was not good at all.", "But the music, oh the music, was lovely!"]


def test_read_augmented_repeats_and_samples(tmp_path):
    from model.training.transfer import read_augmented

    path = tmp_path / "aug.jsonl.gz"
    write_rows([{"text": f"t{i}", "logits": [float(i), -float(i)]} for i in range(10)], path)
    texts, z, used = read_augmented(f"{path}:3")
    assert len(texts) == 30 and used == 10 and z[10] == [0.0, -0.0]
    texts, z, used = read_augmented(f"{path}%4", seed=1)
    assert len(texts) == 4 == used and len(set(texts)) == 4 and read_augmented(f"{path}%4", seed=1)[0] == texts
    with pytest.raises(UsageError, match="whole number"):
        read_augmented(f"{path}%x")
    write_rows(read_table(path), tmp_path / "again.jsonl.gz")  # no name, no time in the gzip header: the same bytes
    assert (tmp_path / "again.jsonl.gz").read_bytes() == path.read_bytes()


def test_counterfactual_negation_inserts_not_after_the_copula_and_flips_the_label():
    from model.training.counterfactual import counterfactuals, negate

    lexicon = {"abysmal": -1, "gripping": 1, "awesome": 1}
    assert negate("The writing is abysmal.", lexicon) == ("The writing is not abysmal.", -1, "abysmal")
    assert negate("The chase was really awesome!", lexicon) == ("The chase was not really awesome!", 1, "awesome")
    assert negate("The writing is not abysmal.", lexicon) is None  # already negated
    assert negate("The cast was awesome but the plot is abysmal.", lexicon) is None  # contrast
    assert negate("The plot is abysmal and the acting boring.", lexicon) is None  # a second polar word (a test word)
    assert negate("The score was loud.", lexicon) is None  # no polar word
    rows = [{"text": "The writing is abysmal.", "logits": [3.0, -2.0]},
            {"text": "The chase was awesome!", "logits": [-1.0, 4.0]},
            {"text": "The sets are awesome.", "logits": [2.0, -1.0]},  # teacher disagrees with the word: skipped
            {"text": "The pacing is awesome.", "logits": [-0.5, 0.5]}]  # teacher unsure: skipped
    out, info = counterfactuals(rows, lexicon, flip_scale=0.5)
    assert info["candidates_negated_positive"] == 1 and info["candidates_negated_negative"] == 1
    assert {r["text"]: r["logits"] for r in out} == {"The writing is not abysmal.": [-1.5, 1.0],
                                                     "The chase was not awesome!": [0.5, -2.0]}


def test_counterfactual_lexicon_is_measured_and_keeps_the_test_words_out():
    from model.training.counterfactual import polarity_lexicon

    texts = ["a gripping tale"] * 50 + ["a tedious mess"] * 50 + ["a story"] * 50
    labels = np.array([1] * 50 + [0] * 50 + [1] * 25 + [0] * 25)
    assert polarity_lexicon(texts, labels, min_count=10, exclude={"tedious"}) == {"gripping": 1, "tale": 1, "mess": -1}


def test_select_rules_bars_first_then_validation_or_tolerance():
    from model.training.select import choose

    def row(name, val, neg_neg):
        dev = {"plain_positive": 1.0, "plain_negative": 1.0, "negated_positive": 0.9, "negated_negative": neg_neg,
               "contrast": 0.85}
        return {"model": name, "validation_accuracy": val, "dev_behaviour": dev,
                "dev_target_mean": (1.75 + neg_neg) / 3}

    rows = [row("accurate", 0.927, 0.0), row("close", 0.924, 0.1), row("negation", 0.919, 0.99)]
    assert choose(rows)["chosen"] == "close"  # within 0.5 points of the best, then behaviour
    assert choose(rows, bars=0.8)["chosen"] == "negation"  # the only one meeting every bar
    assert choose(rows[:2], bars=0.8)["chosen"] == "close"  # none meets the bars: the tolerance rule


def test_interpolation_weights_and_errors(tmp_path):
    from model.core.config import EncoderConfig
    from model.core.weights import load_state
    from model.training.interpolate import interpolate
    from tests.fixtures.tiny_models import make_random_model_dir

    a = make_random_model_dir(tmp_path / "a", seed=1)
    b = make_random_model_dir(tmp_path / "b", seed=2)
    wa, wb = load_state(a / "model.safetensors"), load_state(b / "model.safetensors")
    for alpha in (0.0, 0.25, 1.0):
        mix = load_state(interpolate(a, b, tmp_path / f"w{alpha}", alpha) / "model.safetensors")
        assert all(torch.allclose(v, (1 - alpha) * wa[k] + alpha * wb[k], atol=1e-6) for k, v in mix.items()), alpha
    with pytest.raises(ValueError, match="alpha"):
        interpolate(a, b, tmp_path / "bad", 1.5)
    other = make_random_model_dir(tmp_path / "c", EncoderConfig(max_len=64, d_model=16, n_heads=2, n_layers=1, d_ff=32))
    with pytest.raises(KeyError, match="different parameters"):
        interpolate(a, other, tmp_path / "bad2", 0.5)


def test_precision_auto_is_fp32_on_a_cpu_without_bf16(monkeypatch):
    from model.training import common

    monkeypatch.setattr(common, "cpu_has_native_bf16", lambda: False)
    assert common.resolve_precision("auto", CPU) == "fp32"
    assert common.resolve_precision("auto", torch.device("cuda")) == "bf16"
    monkeypatch.setattr(common, "cpu_has_native_bf16", lambda: True)
    assert common.resolve_precision("auto", CPU) == "bf16"
    assert common.resolve_precision("fp32", torch.device("cuda")) == "fp32"
    with pytest.raises(ValueError, match="precision"):
        common.resolve_precision("fp16", CPU)
    with common.autocast(CPU, "fp32"):
        assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.float32
    with common.autocast(CPU, "bf16"):
        assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.bfloat16
