"""The distillation pipeline's scripts run end to end on a small synthetic IMDB-like folder (CPU, seconds)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from model.training.common import VAL_SIZE, read_split, validation_split

ROOT = Path(__file__).resolve().parent.parent
POS = ["a", "wonderful", "moving", "film", "with", "great", "acting", "and", "a", "superb", "story"]
NEG = ["a", "boring", "awful", "film", "with", "terrible", "acting", "and", "a", "dull", "stupid", "story"]


def _write(path: Path, rows: list[dict]) -> None:
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    rng = np.random.default_rng(0)

    def review(label: int) -> str:
        words = POS if label else NEG
        return " ".join(rng.choice(words, size=int(rng.integers(8, 30))))

    d = tmp_path_factory.mktemp("imdb")
    n_train = VAL_SIZE + 150
    labels = rng.integers(0, 2, n_train)
    _write(d / "train.jsonl.gz", [{"text": review(int(y)), "label": int(y)} for y in labels])
    _write(d / "test.jsonl.gz", [{"text": review(int(y)), "label": int(y)} for y in rng.integers(0, 2, 60)])
    _write(d / "unsup.jsonl.gz", [{"text": review(int(y)), "label": -1} for y in rng.integers(0, 2, 80)])
    return d


def test_validation_split_is_the_train_scripts_split():
    val, fit = validation_split(25000)
    assert len(val) == VAL_SIZE and len(fit) == 25000 - VAL_SIZE
    assert not set(val) & set(fit)
    perm = np.random.default_rng(0).permutation(25000)  # what python -m model.train draws with seed 0
    assert (val == perm[:VAL_SIZE]).all()


def test_nbsvm_then_distill_writes_a_loadable_model(data_dir, tmp_path):
    pytest.importorskip("sklearn")
    from model import Predictor
    from model.training import distill, nbsvm

    teacher = tmp_path / "nbsvm.npz"
    assert nbsvm.main(["--data", str(data_dir), "--soft-labels", str(teacher), "--folds", "2"]) == 0
    z = np.load(teacher)
    n_train = len(read_split(data_dir, "train")[0])
    assert z["train"].shape == (n_train, 2) and z["unsup"].shape == (80, 2) and z["test"].shape == (60, 2)
    out = tmp_path / "student"
    args = ["--data", str(data_dir), "--out", str(out), "--work", str(tmp_path / "work"), "--teacher", str(teacher),
            "--tokenizer", str(ROOT / "resources" / "model" / "tokenizer.json"), "--max-len", "64", "--d-model", "32",
            "--n-heads", "2", "--d-ff", "64", "--mlm-steps", "4", "--mlm-batch-size", "8", "--epochs", "2",
            "--batch-size", "16", "--limit", "64", "--device", "cpu"]
    assert distill.main(args) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["mlm"]["steps"] == 4 and len(metrics["epochs"]) == 2
    assert 0.0 <= metrics["test_accuracy"] <= 1.0
    predictor = Predictor.from_pretrained(out, device="cpu")
    p = predictor.predict("a wonderful film")
    assert p.probabilities.shape == (2,) and abs(float(p.probabilities.sum()) - 1.0) < 1e-5
    # rerunning resumes: both stages are done, so nothing is retrained and the same weights are written
    before = (out / "model.safetensors").read_bytes()
    assert distill.main(args) == 0
    assert (out / "model.safetensors").read_bytes() == before


def test_augment_keeps_words_and_masks():
    from model.training.augment import augment

    rng = np.random.default_rng(0)
    words = ["the", "film", "was", "not", "good", "but", "the", "cast", "was", "great"]
    texts = [augment(words, ["x"], rng, p_window=0.0, p_mask=0.5, p_replace=0.0) for _ in range(20)]
    assert all(len(t.split()) == len(words) for t in texts)
    assert any("[MASK]" in t for t in texts)
    whole = augment(words, ["x"], rng, p_window=0.0, p_mask=0.0, p_replace=0.0)
    assert whole == " ".join(words)


def test_review_sentences_split_and_length_filter():
    from model.training.sentences import review_sentences

    text = "Great cast.<br /><br />The plot was not good at all. But the music, oh the music, was lovely! Ok?"
    assert review_sentences(text) == ["The plot was not good at all.", "But the music, oh the music, was lovely!"]


def test_model_soup_averages_weights(tmp_path):
    from model.core.weights import load_state
    from model.testing import make_random_model_dir
    from model.training.select import make_soup

    a = make_random_model_dir(tmp_path / "a", seed=1)
    b = make_random_model_dir(tmp_path / "b", seed=2)
    soup = load_state(make_soup(a, b, tmp_path / "soup") / "model.safetensors")
    wa, wb = load_state(a / "model.safetensors"), load_state(b / "model.safetensors")
    for k, v in soup.items():
        assert np.allclose(v.numpy(), (wa[k].numpy() + wb[k].numpy()) / 2, atol=1e-6)


def test_wise_interpolation_weights_and_errors(tmp_path):
    from model.core.weights import load_state
    from model.testing import make_random_model_dir
    from model.training.select import make_soup

    a = make_random_model_dir(tmp_path / "a", seed=1)
    b = make_random_model_dir(tmp_path / "b", seed=2)
    wa, wb = load_state(a / "model.safetensors"), load_state(b / "model.safetensors")
    for alpha in (0.0, 0.25, 1.0):
        mix = load_state(make_soup(a, b, tmp_path / f"w{alpha}", alpha) / "model.safetensors")
        for k, v in mix.items():
            assert np.allclose(v.numpy(), (1 - alpha) * wa[k].numpy() + alpha * wb[k].numpy(), atol=1e-6), (alpha, k)
    with pytest.raises(ValueError, match="alpha"):
        make_soup(a, b, tmp_path / "bad", 1.5)
    from model.core.config import EncoderConfig

    other = make_random_model_dir(tmp_path / "c", EncoderConfig(max_len=64, d_model=16, n_heads=2, n_layers=1, d_ff=32))
    with pytest.raises(KeyError, match="different parameters"):
        make_soup(a, other, tmp_path / "bad2")


def test_path_point_scales_each_stage_and_equal_coefficients_are_wise(tmp_path):
    from model.core.weights import load_state
    from model.testing import make_random_model_dir
    from model.training.select import make_path_point, make_soup

    dirs = [make_random_model_dir(tmp_path / n, seed=i) for i, n in enumerate("abc")]
    w = [load_state(d / "model.safetensors") for d in dirs]
    point = load_state(make_path_point(dirs, [0.5, 2.0], tmp_path / "p") / "model.safetensors")
    for k, v in point.items():
        want = w[0][k].numpy() + 0.5 * (w[1][k].numpy() - w[0][k].numpy()) + 2.0 * (w[2][k].numpy() - w[1][k].numpy())
        assert np.allclose(v.numpy(), want, atol=1e-5), k
    same = load_state(make_path_point(dirs, [0.7, 0.7], tmp_path / "q") / "model.safetensors")
    wise = load_state(make_soup(dirs[0], dirs[2], tmp_path / "r", 0.7) / "model.safetensors")
    assert all(np.allclose(same[k].numpy(), wise[k].numpy(), atol=1e-5) for k in same)
    with pytest.raises(ValueError, match="coefficients"):
        make_path_point(dirs, [1.0], tmp_path / "bad")


def test_precision_auto_is_fp32_on_a_cpu_without_bf16(monkeypatch):
    import torch

    from model.training import common

    monkeypatch.setattr(common, "cpu_has_native_bf16", lambda: False)
    assert common.resolve_precision("auto", torch.device("cpu")) == "fp32"
    assert common.resolve_precision("auto", torch.device("cuda")) == "bf16"
    monkeypatch.setattr(common, "cpu_has_native_bf16", lambda: True)
    assert common.resolve_precision("auto", torch.device("cpu")) == "bf16"
    assert common.resolve_precision("fp32", torch.device("cuda")) == "fp32"
    with pytest.raises(ValueError, match="precision"):
        common.resolve_precision("fp16", torch.device("cpu"))
    with common.autocast(torch.device("cpu"), "fp32"):
        assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.float32
    with common.autocast(torch.device("cpu"), "bf16"):
        assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.bfloat16


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
    by_text = {r["text"]: r["logits"] for r in out}
    assert by_text == {"The writing is not abysmal.": [-1.5, 1.0], "The chase was not awesome!": [0.5, -2.0]}


def test_contrast_pairs_join_opposite_sentences_and_take_the_second_label():
    from model.training.counterfactual import contrast_pairs

    rows = [{"text": "The plot was dreadful.", "logits": [2.0, -2.0]}, {"text": "The cast is superb!", "logits": [-1.0, 1.5]},
            {"text": "Its score was lovely.", "logits": [-2.5, 2.5]}, {"text": "Lee was wooden.", "logits": [1.0, -1.0]}]
    out = contrast_pairs(rows, 40, seed=3)
    assert len(out) == 40 and sum(r["logits"][1] > r["logits"][0] for r in out) == 20  # balanced
    by_text = {r["text"]: r["logits"] for r in rows}
    for r in out:
        assert r["logits"] == by_text[r["second"]]  # the second clause decides
        assert (by_text[r["first"]][1] > by_text[r["first"]][0]) != (r["logits"][1] > r["logits"][0])
        assert r["text"].endswith(".") and ("but" in r["text"] or "however" in r["text"] or r["text"].startswith("Although"))
        assert "Lee" in r["text"] or "Lee" not in r["first"] + r["second"]  # names keep their capital
    assert any(", but the cast is superb." in r["text"] for r in out)  # "The" lower-cased mid-sentence
    assert contrast_pairs(rows[:1], 10) == []  # no sentence of the other polarity: nothing to pair


def test_counterfactual_lexicon_is_measured_and_keeps_the_test_words_out():
    from model.training.counterfactual import polarity_lexicon

    texts = ["a gripping tale"] * 50 + ["a tedious mess"] * 50 + ["a story"] * 50
    labels = np.array([1] * 50 + [0] * 50 + [1] * 25 + [0] * 25)
    lex = polarity_lexicon(texts, labels, min_count=10, min_ratio=1.0, exclude={"tedious"})
    assert lex == {"gripping": 1, "tale": 1, "mess": -1}


def test_read_augmented_repeats_and_samples(tmp_path):
    from model.training.transfer import read_augmented

    path = tmp_path / "aug.jsonl.gz"
    _write(path, [{"text": f"t{i}", "logits": [float(i), -float(i)]} for i in range(10)])
    texts, z, used = read_augmented(f"{path}:3")
    assert len(texts) == 30 and used == 10 and z[10] == [0.0, -0.0]
    texts, z, used = read_augmented(f"{path}%4", seed=1)
    assert len(texts) == 4 == used and len(set(texts)) == 4
    assert read_augmented(f"{path}%4", seed=1)[0] == texts
    with pytest.raises(ValueError):
        read_augmented(f"{path}%x")


def test_select_rules_tolerance_then_behaviour_or_bars_first():
    from model.training.select import choose

    def row(name, val, neg_neg):
        dev = {"plain_positive": 1.0, "plain_negative": 1.0, "negated_positive": 0.9, "negated_negative": neg_neg,
               "contrast": 0.85}
        return {"model": name, "validation_accuracy": val, "dev_behaviour": dev,
                "dev_target_mean": (0.9 + neg_neg + 0.85) / 3}

    rows = [row("accurate", 0.927, 0.0), row("close", 0.924, 0.1), row("negation", 0.919, 0.99)]
    assert choose(rows)["chosen"] == "close"  # within 0.5 points of the best, then behaviour
    assert choose(rows, bars=0.8)["chosen"] == "negation"  # the only one meeting every bar
    assert choose(rows[:2], bars=0.8)["chosen"] == "close"  # none meets the bars: the tolerance rule


def test_relabel_writes_student_logits_on_the_teacher_scale(data_dir, tmp_path):
    from model import Predictor
    from model.training import relabel
    from model.training.transfer import read_augmented

    model_dir = ROOT / "resources" / "model"
    n_train = len(read_split(data_dir, "train")[0])
    teacher = tmp_path / "teacher.npz"
    rng = np.random.default_rng(1)
    np.savez(teacher, train=rng.normal(0, 3, (n_train, 2)).astype(np.float32), unsup=np.zeros((80, 2), np.float32))
    reviews, sentences = tmp_path / "self.npz", tmp_path / "sentences.jsonl.gz"
    assert relabel.main(["--data", str(data_dir), "--model", str(model_dir), "--reviews", str(reviews),
                         "--unsup-limit", "30", "--sentences", str(sentences), "--max-sentences", "20",
                         "--scale-to", str(teacher), "--device", "cpu"]) == 0
    z = np.load(reviews)
    assert z["train"].shape == (n_train, 2) and z["unsup"].shape == (30, 2)
    # the written logits have the teacher's (row-centred) spread, so distill sharpens them like the teacher's
    assert relabel.centred_std(z["train"]) == pytest.approx(relabel.centred_std(np.load(teacher)["train"]), rel=1e-4)
    # and they are the model's own predictions, rescaled: same labels as the product's predictor
    texts = read_split(data_dir, "train")[0][:40]
    predictor = Predictor.from_pretrained(model_dir, device="cpu")
    labels = np.array([predictor.predict(t).label_index for t in texts])
    assert (z["train"][:40].argmax(1) == labels).all()
    rows, logits, used = read_augmented(str(sentences))
    assert used == len(rows) == 20 and all(len(r.split()) >= 4 for r in rows)
    assert np.asarray(logits).shape == (20, 2)
    with pytest.raises(SystemExit):
        relabel.main(["--data", str(data_dir), "--model", str(model_dir)])  # nothing asked for
    missing = ["--data", str(data_dir), "--reviews", str(tmp_path / "x.npz"), "--device", "cpu"]
    assert relabel.main([*missing, "--model", str(tmp_path / "no_such_model")]) == 2
    assert relabel.main(["--model", str(model_dir), *missing[2:], "--data", str(tmp_path / "no_data")]) == 2
    assert not (tmp_path / "x.npz").exists()


def test_diagonal_fisher_equals_the_sum_over_both_labels(tmp_path):
    """The one-backward-pass Fisher (p0 p1 (dm)^2) equals sum_y p(y) (d log p(y))^2 computed label by label."""
    import torch

    from model.core.weights import load_model
    from model.testing import make_random_model_dir
    from model.training.fisher import diagonal_fisher

    model = load_model(make_random_model_dir(tmp_path / "a", seed=3), "cpu")
    for m in model.modules():  # make the margin far from zero so that p0 p1 is not a constant
        if isinstance(m, torch.nn.Linear) and m.out_features == 2:
            torch.nn.init.normal_(m.weight, std=2.0)
    seqs = [np.array([1, 7, 9, 12, 5, 2]), np.array([1, 30, 31, 2]), np.array([1, 44, 2])]
    fisher = diagonal_fisher(model, seqs)
    params = dict(model.named_parameters())
    want = {n: torch.zeros_like(p) for n, p in params.items()}
    for ids in seqs:
        x = torch.as_tensor(ids)[None]
        for y in (0, 1):
            logp = torch.log_softmax(model(x, torch.ones_like(x, dtype=torch.bool))[0][0], -1)
            grads = torch.autograd.grad(logp[y], list(params.values()), allow_unused=True)
            for (n, _), g in zip(params.items(), grads):
                if g is not None:
                    want[n] += logp[y].exp().detach() * g.pow(2) / len(seqs)
    assert set(fisher) == set(want)
    assert sum(float(f.sum()) for f in fisher.values()) > 0
    for n, expected in want.items():
        assert torch.allclose(fisher[n], expected, rtol=1e-4, atol=1e-9), n
    with pytest.raises(ValueError, match="at least one"):
        diagonal_fisher(model, [])


def test_fisher_merge_follows_the_fisher_and_falls_back_to_wise(tmp_path):
    import torch

    from model.core.weights import load_state
    from model.testing import make_random_model_dir
    from model.training.fisher import fisher_merge, normalised

    a = make_random_model_dir(tmp_path / "a", seed=1)
    b = make_random_model_dir(tmp_path / "b", seed=2)
    wa, wb = load_state(a / "model.safetensors"), load_state(b / "model.safetensors")
    names = [k for k, v in wa.items() if v.is_floating_point()]
    first, rest = names[0], names[1:]
    # model A's predictions depend on the first weight only, model B's on all the others
    fa = {n: torch.full_like(wa[n], 1.0 if n == first else 0.0) for n in names}
    fb = {n: torch.full_like(wa[n], 0.0 if n == first else 1.0) for n in names}
    merged = load_state(fisher_merge(a, b, fa, fb, 0.5, tmp_path / "m", eps=1e-9) / "model.safetensors")
    assert torch.allclose(merged[first], wa[first], atol=1e-6)
    assert all(torch.allclose(merged[n], wb[n], atol=1e-6) for n in rest)
    # no information on either side: the WiSE-FT interpolation with alpha = lambda
    zero = {n: torch.zeros_like(wa[n]) for n in names}
    wise = load_state(fisher_merge(a, b, zero, zero, 0.25, tmp_path / "w") / "model.safetensors")
    assert all(torch.allclose(wise[n], 0.75 * wa[n] + 0.25 * wb[n], atol=1e-6) for n in names)
    norm = normalised(fb)
    assert abs(sum(float(f.sum()) for f in norm.values()) / sum(f.numel() for f in norm.values()) - 1.0) < 1e-5
    with pytest.raises(ValueError, match="lambda"):
        fisher_merge(a, b, fa, fb, 1.5, tmp_path / "bad")


def test_grow_stacks_a_trained_layer_on_the_frozen_base(data_dir, tmp_path):
    import torch

    from model import Predictor
    from model.core.weights import load_model
    from model.testing import make_random_model_dir
    from model.training import grow
    from model.training.common import pad_batch

    base_dir = make_random_model_dir(tmp_path / "base")
    base = load_model(base_dir)
    # the two initialisations: a copy of the top layer, with its residual branches zeroed for "identity"
    ident, stack = grow.grown_model(base, "identity"), grow.grown_model(base, "stack")
    assert ident.config.n_layers == stack.config.n_layers == base.config.n_layers + 1
    assert not ident.layers[2].attn.out.weight.any() and not ident.layers[2].ff.fc2.weight.any()
    assert torch.equal(stack.layers[2].attn.out.weight, base.layers[1].attn.out.weight)
    with pytest.raises(ValueError):
        grow.grown_model(base, "random")
    # the training path (cached base states + top layer + head) computes what the whole model computes
    seqs = [np.array([2, 5, 9, 11, 7]), np.array([2, 8, 6]), np.arange(2, 40)]
    states = grow.base_states(base, seqs, torch.device("cpu"))
    assert states.data.dtype == torch.float16 and states.data.shape == (5 + 3 + 38, 16)
    stack.eval()
    ids, mask = pad_batch(seqs, 0)
    with torch.no_grad():
        full = stack(ids, mask)[0].numpy()
    assert np.abs(grow.top_predict(stack, states, torch.device("cpu")) - full).max() < 1e-2  # float16 states

    teacher = tmp_path / "teacher.npz"
    labels = read_split(data_dir, "train")[1]
    np.savez(teacher, train=np.stack([-labels, labels], 1).astype(np.float32) * 3, unsup=np.zeros((80, 2), np.float32))
    extra = tmp_path / "extra.jsonl.gz"
    _write(extra, [{"text": "not a wonderful film", "logits": [2.0, -2.0]}, {"text": "a superb story", "logits": [-2.0, 2.0]}])
    out, work = tmp_path / "grown", tmp_path / "work"
    args = ["--data", str(data_dir), "--base", str(base_dir), "--out", str(out), "--work", str(work),
            "--teacher", str(teacher), "--augmented", f"{extra}:3", "--unsup-limit", "30", "--limit", "64",
            "--epochs", "2", "--batch-size", "16", "--device", "cpu"]
    assert grow.main(args) == 0
    grown = load_model(out)
    assert grown.config.n_layers == 3
    trained = grown.state_dict()
    for name, value in base.state_dict().items():  # the base's weights are frozen: exactly as they were
        if not name.startswith("head."):
            assert torch.equal(trained[name], value), name
    assert not torch.equal(trained["layers.2.attn.out.weight"], ident.layers[2].attn.out.weight)  # trained
    metrics = json.loads((out / "metrics.json").read_text())
    assert len(metrics["grow"]["epochs"]) == 2 and metrics["grow"]["texts"] == 64 + 30 + 6
    assert metrics["validation"]["size"] == VAL_SIZE and "test_accuracy" not in metrics
    assert Predictor.from_pretrained(out, device="cpu").predict("a wonderful film").probabilities.shape == (2,)
    before = (out / "model.safetensors").read_bytes()
    assert grow.main(args) == 0  # the trained top is in --work: nothing retrained, the same weights written
    assert (out / "model.safetensors").read_bytes() == before
    assert grow.main([*args[:2], "--base", str(tmp_path / "missing"), *args[4:]]) == 2


@pytest.mark.slow
def test_gpu_retraining_script_runs_every_stage_on_tiny_data(data_dir, tmp_path):
    """build_scripts/retrain_gpu.sh (the prepared GPU run) end to end on the CPU: a tiny BERT teacher, 2 MLM steps,
    one tiny distillation variant; the 2-copy augmented set is the first half of the 4-copy one."""
    import os
    import subprocess
    import sys

    pytest.importorskip("transformers")
    from model import Predictor
    from model.testing_hf import make_tiny_hf_dir

    base = make_tiny_hf_dir(tmp_path / "bert", "bert", head=False, positions=512)
    runs = tmp_path / "runs"
    small = "--d-model 16 --n-heads 2 --d-ff 32 --max-len 64"
    env = {**os.environ, "PYTHON": sys.executable, "TEACHER_ARGS": "--epochs 1 --max-len 64 --batch-size 16",
           "MLM_ARGS": f"--mlm-steps 2 {small}", "DISTILL_ARGS": f"--epochs 1 {small}"}
    cmd = ["bash", str(ROOT / "build_scripts" / "retrain_gpu.sh"), str(data_dir), str(base), str(runs), "unused", "v1"]
    done = subprocess.run(cmd, check=False, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    logs = {p.name: p.read_text(errors="replace")[-2000:] for p in runs.glob("*.log")}
    assert done.returncode == 0, (done.stderr[-2000:], logs)
    stages = [line.split()[1] for line in (runs / "done.txt").read_text().splitlines()]
    assert stages == ["teacher", "transfer", "mlm", "v1", "all"], stages
    with gzip.open(runs / "aug4.jsonl.gz", "rt") as a4, gzip.open(runs / "aug2.jsonl.gz", "rt") as a2:
        four, two = a4.readlines(), a2.readlines()
    assert len(four) == 4 * (len(read_split(data_dir, "train")[0]) - VAL_SIZE + 80) and two == four[: len(four) // 2]
    assert np.load(runs / "teacher_logits.npz")["unsup"].shape == (80, 2)
    metrics = json.loads((runs / "v1_model" / "metrics.json").read_text())
    assert metrics["teachers"]["augmented"]["texts"] > len(four) // 2  # aug2 + sentences + negations x 12
    assert Predictor.from_pretrained(runs / "v1_model", device="cpu").predict("a wonderful film").label in (
        "negative", "positive")
