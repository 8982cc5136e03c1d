"""The recipe split at the teacher (issue 57): ``teacher_gpu`` writes the teacher's logits keyed by text, and
``cpu_distill`` trains from them with no teacher model; both run here on the CPU on tiny synthetic data."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from model.datasets.splits import UsageError, read_split
from model.datasets.task_data import read_table
from model.training.pipeline import ARTIFACTS
from model.training.teacher_artifact import MissingTextsError, TeacherArtifact, text_keys, write_artifact
from tests.model.training.conftest import run_pipeline, run_recipe_text, tiny_bert_base

# teacher_gpu with a tiny BERT teacher (BASE) at 64 tokens; cpu_distill with the artifact ARTIFACT as its teacher
# and 64 fitting reviews, one WiSE-FT mix, today's model among the candidates.
TINY_GPU = """
[recipe]
extends = "teacher_gpu"
[stages.teacher]
base = "BASE"
lr = 3e-3
epochs = 2
max_len = 64
batch_size = 16
[stages.augmented]
max_len = 64
[stages.negations]
min_count = 5
min_margin = 0.0
"""
TINY_CPU = """
[recipe]
extends = "cpu_distill"
[stages.augmented]
teacher = "ARTIFACT"
[stages.sentences]
teacher = "ARTIFACT"
[stages.negations]
min_count = 5
min_margin = 0.0
[stages.student]
teacher = "ARTIFACT"
augmented = ["augmented%100", "sentences%100", "negations:2"]
limit = 64
[stages.wise]
alphas = [0.5]
"""


@pytest.fixture(scope="module")
def split_run(tmp_path_factory, data_dir) -> SimpleNamespace:
    """The tiny teacher_gpu recipe run once (a subprocess, as on the GPU machine), then cpu_distill from its artifact."""
    d = tmp_path_factory.mktemp("split")
    gpu = run_recipe_text(d, "gpu", TINY_GPU.replace("BASE", str(tiny_bert_base(d / "bert"))), data_dir)
    assert gpu.returncode == 0, gpu.stderr[-4000:]
    artifact = d / "gpu" / "artifact.npz"
    cpu = run_recipe_text(d, "cpu", TINY_CPU.replace("ARTIFACT", str(artifact)), data_dir)
    return SimpleNamespace(dir=d, gpu=d / "gpu", cpu=d / "cpu", artifact=artifact, cpu_run=cpu)


def test_the_gpu_recipe_writes_one_artifact_keyed_by_the_hashes_of_every_text(split_run, data_dir):
    gpu = split_run.gpu
    art = TeacherArtifact.load(split_run.artifact)
    texts = [t for s in ("train", "unsup", "test") for t in read_split(data_dir, s)[0]]
    for name in ("augmented", "sentences", "negations"):
        texts += [r["text"] for r in read_table(gpu / f"{name}.jsonl.gz")]
    texts += [r["text"] for r in read_table(ARTIFACTS / "negations.jsonl.gz")]  # scored by the teacher too
    assert (art.keys == np.unique(text_keys(texts))).all()  # sorted, distinct, nothing else
    z = np.load(gpu / "teacher" / "logits.npz")
    train = read_split(data_dir, "train")[0]
    assert np.allclose(art.lookup(train), z["train"], atol=2e-3 * np.abs(z["train"]).max() + 1e-3)
    rows = read_table(gpu / "augmented.jsonl.gz")
    assert np.allclose(art.lookup([r["text"] for r in rows[:50]]), [r["logits"] for r in rows[:50]], atol=1e-2)
    prov = art.provenance
    assert prov["teacher"]["hyperparameters"]["lr"] == 3e-3 and prov["teacher"]["hyperparameters"]["max_len"] == 64
    assert prov["recipe"]["file"].endswith("gpu.toml") and prov["recipe"]["stages"]["augmented"]["copies"] == 1
    assert set(prov["data_sha256"]) == {"train", "unsup", "test"} and prov["date_utc"].endswith("Z")
    assert [s["stage"] for s in prov["stages"]] == ["teacher", "augmented", "sentences", "negations"]
    assert prov["texts"]["augmented.jsonl.gz"] == 150 + 80 and prov["hardware"]["cuda"] is None
    assert art.logits.dtype == np.float16 and art.logits.shape == (len(art.keys), 2)


def test_the_cpu_recipe_reads_the_artifact_and_trains_without_a_teacher_model(split_run):
    done, cpu = split_run.cpu_run, split_run.cpu
    assert done.returncode == 0, done.stderr[-4000:]
    assert json.loads(done.stdout.splitlines()[-1])["ran"] == ["augmented", "sentences", "negations", "student",
                                                               "wise", "model"]
    # the regenerated texts are the GPU run's, and their looked-up logits its logits (float16)
    for name in ("augmented", "sentences"):
        here, there = read_table(cpu / f"{name}.jsonl.gz"), read_table(split_run.gpu / f"{name}.jsonl.gz")
        assert [r["text"] for r in here] == [r["text"] for r in there]
        assert np.allclose([r["logits"] for r in here], [r["logits"] for r in there], atol=1e-2)
    metrics = json.loads((cpu / "student" / "metrics.json").read_text())
    assert metrics["teacher"]["file"] == str(split_run.artifact) and metrics["epochs"]
    assert metrics["teacher"]["augmented"]["texts"] == 100 + 100 + 2 * len(read_table(cpu / "negations.jsonl.gz"))
    rows = json.loads((cpu / "model" / "metrics.json").read_text())["selection"]["rows"]
    assert [Path(r["model"]).name for r in rows] == ["model", "student", "alpha0.50"]  # today's model is a candidate


def test_a_text_missing_from_the_artifact_is_one_clear_error(split_run, data_dir, tmp_path):
    art = TeacherArtifact.load(split_run.artifact)
    with pytest.raises(MissingTextsError, match=r"artifact\.npz: 1 of 3 texts have no logits \(first: 'never"):
        art.lookup(read_split(data_dir, "test")[0][:2] + ["never written on the GPU"])
    # augmented texts made with another seed are not in it: the stage stops with one line naming the artifact
    recipe = split_run.dir / "cpu.toml"
    done = run_pipeline(recipe, "--data", data_dir, "--work", tmp_path / "w", "--stage", "augmented",
                        "--set", "augmented.seed=1")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-3000:]
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith(f"error: teacher artifact {split_run.artifact}: ") and "texts have no logits" in line


def test_augmentation_is_deterministic(data_dir):
    from model.training.transfer import AugmentOptions, augmented_texts

    first = augmented_texts(data_dir, AugmentOptions(copies=2))
    assert first == augmented_texts(data_dir, AugmentOptions(copies=2)) and len(first) == 2 * (150 + 80)
    assert first[:230] == augmented_texts(data_dir, AugmentOptions(copies=1))  # copy-major: copy 1 comes first
    assert first != augmented_texts(data_dir, AugmentOptions(copies=2, seed=1))


def test_write_and_read_back_an_artifact(tmp_path, capsys):
    from model.training.teacher_artifact import main

    texts = ["a fine film", "a dull film", "a fine film", "émouvant"]
    logits = np.array([[-1.0, 1.0], [2.0, -2.0], [9.0, 9.0], [0.123456, -0.5]], np.float32)
    info = write_artifact(tmp_path / "a.npz", texts, logits, {"note": "test"})
    assert info["texts"] == 4 and info["distinct"] == 3
    art = TeacherArtifact.load(tmp_path / "a.npz")
    assert (np.diff(art.keys.astype(np.float64)) > 0).all() and art.provenance["note"] == "test"
    got = art.lookup(["émouvant", "a fine film", "a dull film"])
    assert got.dtype == np.float32 and np.allclose(got, [[0.123456, -0.5], [-1.0, 1.0], [2.0, -2.0]], atol=1e-3)
    assert text_keys(["a fine film"])[0] == int.from_bytes(__import__("hashlib").blake2b(
        b"a fine film", digest_size=8).digest(), "little")
    assert main([str(tmp_path / "a.npz")]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["texts"] == 3 and shown["bytes"] == info["bytes"] and shown["provenance"]["note"] == "test"
    (tmp_path / "bad.npz").write_bytes(b"not an npz")
    with pytest.raises(UsageError, match=r"bad\.npz: not a teacher-logits-by-text/1 file \(not an \.npz archive\)"):
        TeacherArtifact.load(tmp_path / "bad.npz")
    assert main([str(tmp_path / "bad.npz")]) == 2 and capsys.readouterr().err.count("\n") == 1
    with pytest.raises(ValueError, match="logits"):
        write_artifact(tmp_path / "c.npz", texts, logits[:2], {})
