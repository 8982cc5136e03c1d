"""Shared by the training tests: the tiny synthetic IMDB folder and the pipeline run as a user runs it."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from model.datasets.splits import VAL_SIZE

ROOT = Path(__file__).resolve().parents[3]
POS = ["a", "wonderful", "moving", "film", "with", "great", "acting", "and", "a", "superb", "story"]
NEG = ["a", "boring", "awful", "film", "with", "terrible", "acting", "and", "a", "dull", "stupid", "story"]
NOUNS = ["plot", "ending", "score", "script", "pacing"]
ADJ = {1: ["riveting", "sublime", "gorgeous", "masterful"], 0: ["abysmal", "laughable", "insipid", "clunky"]}


def run_pipeline(*args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    """``python -m model.training.pipeline ARGS`` in a subprocess from the repository root."""
    return subprocess.run([sys.executable, "-m", "model.training.pipeline", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout, check=False)


def tiny_bert_base(folder: Path) -> Path:
    """A tiny random BERT encoder folder (no head, 512 positions) to fine-tune as a teacher; skips without
    transformers."""
    pytest.importorskip("transformers")
    from tests.fixtures.tiny_hf import make_tiny_hf_dir

    return make_tiny_hf_dir(folder, "bert", head=False, positions=512)


def run_recipe_text(folder: Path, name: str, text: str, data: Path) -> subprocess.CompletedProcess:
    """Write the recipe ``text`` to ``folder/NAME.toml`` and run it on the CPU on ``data`` into ``folder/NAME``."""
    (folder / f"{name}.toml").write_text(text)
    return run_pipeline(folder / f"{name}.toml", "--data", data, "--work", folder / name, "--device", "cpu")


def _write(path: Path, rows: list[dict]) -> None:
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory) -> Path:
    """1,400 train reviews (1,250 of them the validation split), 60 test and 80 unlabeled ones: bags of polar words,
    60% of them followed by a sentence such as "The plot was riveting." (what the negation stage negates)."""
    rng = np.random.default_rng(0)

    def review(label: int) -> str:
        text = " ".join(rng.choice(POS if label else NEG, size=int(rng.integers(8, 30)))) + "."
        if rng.random() < 0.6:
            text += f" The {rng.choice(NOUNS)} was {rng.choice(ADJ[label])}."
        return text

    d = tmp_path_factory.mktemp("imdb")
    train_labels = rng.integers(0, 2, VAL_SIZE + 150)
    _write(d / "train.jsonl.gz", [{"text": review(int(y)), "label": int(y)} for y in train_labels])
    _write(d / "test.jsonl.gz", [{"text": review(int(y)), "label": int(y)} for y in rng.integers(0, 2, 60)])
    _write(d / "unsup.jsonl.gz", [{"text": review(int(y)), "label": -1} for y in rng.integers(0, 2, 80)])
    return d
