"""The bundle build refuses, with a clear message, to build without the Hugging Face backend (issue 33).

Quick checks of ``build_scripts/build.py`` and ``build_scripts/attention_explorer.spec`` that stop before
PyInstaller analyses anything; the build itself is ``tests/test_packaging.py`` (marker ``packaging``).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _build_module():
    spec = importlib.util.spec_from_file_location("ae_build_checks", ROOT / "build_scripts" / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_build_script_stops_without_transformers(monkeypatch, tmp_path, capsys):
    build = _build_module()
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "transformers" else real_find_spec(name, *a))
    monkeypatch.delenv("ATTENTION_EXPLORER_BUNDLE_HF", raising=False)
    ran = []
    monkeypatch.setattr(build, "build", lambda *a, **k: ran.append(a))
    assert build.main(["--dist", str(tmp_path / "dist"), "--work", str(tmp_path / "work"), "--no-check"]) == 2
    assert not ran  # PyInstaller never started
    err = capsys.readouterr().err
    assert "transformers is not installed" in err and '.[build]' in err
    monkeypatch.setenv("ATTENTION_EXPLORER_BUNDLE_HF", "0")  # an explicit bundle without it is still possible
    assert build.hf_backend_missing() is None


def test_build_extra_pulls_transformers():
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert any(dep.startswith("transformers") for dep in extras["build"])
    assert any(dep.startswith("pyinstaller") for dep in extras["build"])


def test_spec_stops_without_transformers(tmp_path):
    """PyInstaller run on the spec with ``transformers`` unimportable exits with the message, before analysis."""
    pytest.importorskip("PyInstaller", reason="the build extra (PyInstaller) is not installed")
    code = ("import sys; sys.modules['transformers'] = None; import PyInstaller.__main__ as m; "
            f"m.run(['--noconfirm', '--distpath', {str(tmp_path / 'dist')!r}, '--workpath', {str(tmp_path / 'w')!r}, "
            f"{str(ROOT / 'build_scripts' / 'attention_explorer.spec')!r}])")
    env = {k: v for k, v in os.environ.items() if k != "ATTENTION_EXPLORER_BUNDLE_HF"}
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode != 0
    assert "transformers is not installed" in proc.stderr + proc.stdout
    assert not (tmp_path / "dist" / "AttentionExplorer").exists()
