"""Shared fixtures: a tiny random model folder, tiny real Predictors of any labels and task, and the bundled model
when it exists."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Every process the tests start (the scorer, Ray actors, pipeline stages) reads an empty CPU description, so auto
# precision is float32 there as in this process (the fixture cpu_without_amx below; model.predictor.precision.CPUINFO_ENV).
_NO_FLAGS = Path(tempfile.mkdtemp(prefix="ae-cpuinfo-")) / "cpuinfo"
_NO_FLAGS.write_text("processor\t: 0\n", encoding="ascii")
os.environ["ATTENTION_EXPLORER_CPUINFO"] = str(_NO_FLAGS)
atexit.register(shutil.rmtree, _NO_FLAGS.parent, True)

ROOT = Path(__file__).resolve().parent.parent
BUNDLED_MODEL = ROOT / "resources" / "model"


@pytest.fixture(autouse=True)
def isolated_settings(tmp_path, monkeypatch) -> Path:
    """Every test gets its own QSettings .ini file (never the user's settings); returns its path."""
    path = tmp_path / "settings.ini"
    monkeypatch.setenv("ATTENTION_EXPLORER_SETTINGS", str(path))
    return path


@pytest.fixture(autouse=True)
def cpu_without_amx(monkeypatch) -> None:
    """Every test sees a CPU that reports no feature flags (no AMX, no AVX512-BF16), so ``auto`` precision means
    float32 (issue 45: tests that compare values pin float32, and the suite passes the same on an AMX CPU, an AMD
    CPU with AVX512-BF16 and one without bf16). Tests of the bf16 route set the flags they need
    (tests/model/predictor/test_precision.py); ``model.predictor.precision`` imports no torch."""
    from model.predictor import precision

    monkeypatch.setattr(precision, "cpu_flags", lambda: frozenset())


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    """A randomly initialised, tiny model folder (max_len 64, d_model 16, 2 layers, 2 heads)."""
    from tests.fixtures.tiny_models import make_random_model_dir

    return make_random_model_dir(tmp_path_factory.mktemp("tiny_model"))


@pytest.fixture(scope="session")
def tiny_predictor(tiny_model_dir):
    """A Predictor over :func:`tiny_model_dir` on the CPU."""
    from model import Predictor

    return Predictor.from_pretrained(tiny_model_dir, device="cpu")


@pytest.fixture(scope="session")
def predictor_for(tmp_path_factory):
    """A factory of tiny real Predictors on the CPU, built offline once per session and cached (no stand-ins):
    ``predictor_for(labels, task="single_label", pairs=False)`` is a random encoder of ours with those class names
    (single-label, single texts), or for pairs, multi-label or regression a tiny random BERT with those labels
    (:func:`tests.fixtures.tiny_hf.make_tiny_hf_dir`, the ``hf`` extra; the test skips without it)."""
    made = {}

    def make(labels, task="single_label", pairs=False):
        key = (tuple(labels), task, pairs)
        if key not in made:
            from model import Predictor

            folder = tmp_path_factory.mktemp("predictor")
            if task == "single_label" and not pairs:
                from model.core.config import EncoderConfig
                from tests.fixtures.tiny_models import make_random_model_dir

                config = EncoderConfig(max_len=64, d_model=16, n_heads=2, n_layers=2, d_ff=32, labels=tuple(labels))
                make_random_model_dir(folder, config)
            else:
                pytest.importorskip("transformers")
                from tests.fixtures.tiny_hf import make_tiny_hf_dir

                folder = make_tiny_hf_dir(folder / "hf", task=task, labels=tuple(labels), init_std=0.5)
            made[key] = Predictor.from_pretrained(folder, device="cpu")
        return made[key]

    return make


@pytest.fixture(scope="session")
def bundled_predictor():
    """The trained model shipped in resources/model (skips when it is not there)."""
    if not (BUNDLED_MODEL / "model.safetensors").is_file():
        pytest.skip("the bundled model resources/model/model.safetensors is not present")
    from model import Predictor

    return Predictor.from_pretrained(device="cpu")
