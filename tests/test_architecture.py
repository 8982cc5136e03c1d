"""Layering rules, checked on every run.

* ``model`` never imports PySide6, pyqtgraph or ``desktop_app`` (import-linter contract + a real import);
* the GUI never imports training code (``model.train``, ``model.data``, gensim, scikit-learn);
* the views never import torch (they get immutable NumPy result objects).

The contracts live in ``pyproject.toml`` (``[tool.importlinter]``); ``lint-imports`` checks them,
including indirect import chains.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _lint_imports_cmd() -> list[str]:
    exe = Path(sys.executable).with_name("lint-imports")
    if exe.is_file():
        return [str(exe)]
    found = shutil.which("lint-imports")
    if found:
        return [found]
    pytest.skip("import-linter is not installed (pip install -e '.[test]')")


def _contracts() -> dict[str, dict]:
    with open(ROOT / "pyproject.toml", "rb") as fh:
        config = tomllib.load(fh)
    return {c["name"]: c for c in config["tool"]["importlinter"]["contracts"]}


def test_contracts_cover_the_layering_rules():
    """The contracts exist and name what they must forbid (an empty config would pass lint-imports)."""
    forbidden = {}
    for contract in _contracts().values():
        assert contract["type"] == "forbidden"
        for src in contract["source_modules"]:
            forbidden.setdefault(src.rstrip(".*"), set()).update(contract["forbidden_modules"])
    assert {"PySide6", "pyqtgraph", "desktop_app"} <= forbidden["model"]
    assert {"model.train", "model.data"} <= forbidden["desktop_app"]
    assert "torch" in forbidden["desktop_app.views"]


def test_lint_imports_passes():
    """``lint-imports`` keeps every contract in pyproject.toml."""
    proc = subprocess.run(
        _lint_imports_cmd(), check=False, cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    report = proc.stdout + proc.stderr
    assert proc.returncode == 0, report
    assert "BROKEN" not in report
    assert f"{len(_contracts())} kept" in report, report


@pytest.mark.parametrize("forbidden", ["PySide6", "pyqtgraph", "desktop_app"])
def test_importing_model_does_not_import_gui(forbidden):
    """A real import of ``model`` and all its submodules (not just the static graph) loads no GUI module."""
    code = (
        "import importlib, pkgutil, sys, model\n"
        "for m in pkgutil.iter_modules(model.__path__):\n"
        "    importlib.import_module('model.' + m.name)\n"
        f"bad = sorted(k for k in sys.modules if k == {forbidden!r} or k.startswith({forbidden!r} + '.'))\n"
        "assert not bad, bad\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], check=False, cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg"})
    assert proc.returncode == 0, proc.stderr[-3000:]


def _imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_views_do_not_import_torch_directly():
    """No file under desktop_app/views imports torch or captum, at any nesting level (even inside functions)."""
    views = sorted((ROOT / "desktop_app" / "views").rglob("*.py"))
    if not views:
        pytest.skip("desktop_app/views has no modules yet")
    offenders = {str(p.relative_to(ROOT)): sorted(_imported_roots(p) & {"torch", "captum"}) for p in views}
    assert not {k: v for k, v in offenders.items() if v}
