"""The PyInstaller bundle builds, starts without a Python installation and classifies with the bundled weights.

Builds ``dist/AttentionExplorer/`` with ``build_scripts/build.py`` (PyInstaller reuses its cache in
``build/pyinstaller``), then runs ``AttentionExplorer --self-test`` offscreen in a scrubbed environment
(``PATH=/usr/bin:/bin`` only: no venv, no PYTHONPATH) and checks its one-line JSON report, with the bundled
model and with a tiny Hugging Face folder (the word scores of the corpus dock's child process included). Takes minutes:
marker ``packaging`` (deselect with ``-m "not packaging"``).
"""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WEIGHTS = ROOT / "resources" / "model" / "model.safetensors"

pytestmark = [pytest.mark.packaging, pytest.mark.slow]


def _build_module():
    spec = importlib.util.spec_from_file_location("ae_build", ROOT / "build_scripts" / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bundle_exe() -> Path:
    """Build the bundle once for this module; returns the executable's path."""
    if not WEIGHTS.is_file():
        pytest.skip(f"bundled weights {WEIGHTS.relative_to(ROOT)} are absent (train the model first); "
                    "the packaging test only runs against the real bundled model")
    if not sys.platform.startswith("linux"):
        pytest.skip("the packaging test runs on Linux (build on Windows/macOS by hand, see README)")
    proc = subprocess.run([sys.executable, str(ROOT / "build_scripts" / "build.py"), "--no-check"],
                          check=False, cwd=ROOT, capture_output=True, text=True, timeout=2400)
    assert proc.returncode == 0, f"build failed\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    exe = _build_module().executable_path(ROOT / "dist")
    assert exe.is_file(), exe
    return exe


@pytest.mark.timeout(3000)
def test_bundle_contains_resources_and_skips_unused_parts(bundle_exe):
    """The weights, tokenizer and icons are inside; unused Qt modules, torch test binaries and headers are not."""
    internal = bundle_exe.parent / "_internal"
    for rel in ("resources/model/model.safetensors", "resources/model/tokenizer.json",
                "resources/model/config.json", "resources/icons/attention-explorer.png"):
        assert (internal / rel).is_file(), rel
    assert (internal / "resources/model/model.safetensors").read_bytes() == WEIGHTS.read_bytes()
    present = {p.name for p in internal.rglob("*") if p.is_file()}
    for unwanted in ("libQt6WebEngineCore.so.6", "libQt6Quick.so.6", "libQt6Qml.so.6", "libQt6Network.so.6",
                     "libtorchbind_test.so", "test_jit", "protoc", "libqgtk3.so"):
        assert unwanted not in present, unwanted
    assert not (internal / "torch" / "include").exists()
    assert not (internal / "gensim").exists()
    assert (internal / "sklearn").exists() and (internal / "numba").exists()  # the corpus map's PCA and UMAP
    assert not (internal / "ray").exists()  # the 'cluster' extra is command-line only


@pytest.mark.timeout(3000)
def test_bundle_self_test_without_python(bundle_exe):
    """``--self-test`` exits 0 and reports a real prediction from the bundled weights."""
    report = _build_module().run_self_test(bundle_exe, timeout_s=600)
    assert report["ok"] is True, report
    assert report["label"] in ("negative", "positive"), report
    probs = report["probabilities"]
    if isinstance(probs, dict):
        probs = list(probs.values())
    assert len(probs) == 2 and all(0.0 <= p <= 1.0 for p in probs), report
    assert math.isclose(sum(probs), 1.0, abs_tol=1e-4), report
    json.dumps(report)  # the report is plain JSON
    # the bundled weights were used (not the source tree), and they give what the source gives
    model_dir = Path(report["model_dir"]).resolve()
    assert bundle_exe.parent.resolve() in model_dir.parents, report
    assert report["corpus_words"] > 0, report  # the corpus dock's word-scoring child process ran in the bundle
    # the corpus map's UMAP (numba, umap-learn) ran in the map's child process of the bundle (issue 42)
    assert report["corpus_map_umap"]["points"] == 60 and report["corpus_map_umap"]["seconds"] > 0, report


@pytest.mark.timeout(3000)
def test_bundle_opens_a_hugging_face_folder(bundle_exe, tmp_path):
    """The executable (not the source) opens a tiny Hugging Face folder, analyses the sample with it and runs the
    corpus words child process on it: the bundle carries ``transformers`` (issue 33)."""
    from tests.fixtures.tiny_hf import make_tiny_hf_dir

    hf_dir = make_tiny_hf_dir(tmp_path / "tiny-bert", family="bert")
    report = _build_module().run_self_test(bundle_exe, model_dir=hf_dir, timeout_s=600)
    assert report["ok"] is True, report
    assert Path(report["model_dir"]).resolve() == hf_dir.resolve(), report
    assert (report["layers"], report["heads"]) == (2, 4), report
    assert report["corpus_words"] > 0, report
    assert (bundle_exe.parent / "_internal" / "transformers").is_dir()


@pytest.mark.timeout(3000)
def test_bundle_matches_source_prediction(bundle_exe):
    """The bundle's self-test prediction equals the from-source prediction of the same sample (same weights), in the
    precision the bundle reports (its ``auto`` reads this machine's CPU flags: bf16 on an AMX or Zen 4 CPU)."""
    from desktop_app.app import first_sample_text
    from model import Predictor

    report = _build_module().run_self_test(bundle_exe, timeout_s=600)
    assert report["ok"] is True, report
    source = Predictor.from_pretrained(device="cpu")
    assert source.use_precision(report["precision"]) == report["precision"], report
    expected = source.predict(first_sample_text())
    assert report["label"] == expected.label
    assert report["num_tokens"] == expected.num_tokens
    got = report["probabilities"]
    for name, p in zip(expected.labels, expected.probabilities):
        assert math.isclose(got[name], float(p), abs_tol=1e-3), (report, expected.probabilities)
