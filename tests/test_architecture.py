"""Layering rules, checked on every run.

* ``model`` never imports PySide6, pyqtgraph or ``desktop_app`` (import-linter contract + a real import);
* the GUI never imports training code (``model.training``, gensim, scikit-learn) nor the dataset CLIs
  (``model.evaluation``), nor does the runtime;
* the views never import torch (they get immutable NumPy result objects), nor do those records' modules;
* in the GUI, the views (and the explorer state they draw) never import the window, the panels or the workers,
  and the workers import none of the others;
* layers: ``desktop_app`` > ``model.scorer`` (the scorer's command line) > ``model.report`` > ``model.corpus`` (a scored
  corpus's analysis) > ``model.batch`` (reading and scoring) > ``model.predictor`` > ``model.explain`` > ``model.core``;
* ``model.training`` and ``model.evaluation`` never import each other (what both read is ``model.datasets``);
* ``benchmarks`` is never imported by ``model`` or ``desktop_app``, and no ``bench*`` module lives in them;
* no module of ``model`` or ``desktop_app`` is longer than :data:`MAX_MODULE_LINES` lines, and no function in them
  longer than :data:`MAX_FUNCTION_LINES` lines;
* no folder of ``model`` or ``desktop_app`` keeps :data:`MAX_FAMILY` or more modules whose names share a prefix
  (``batch_panel``, ``batch_model``, ``batch_proxy``): such a family is a subpackage (issue 54).

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
        assert contract["type"] in ("forbidden", "layers", "independence")
        if contract["type"] != "forbidden":
            continue
        for src in contract["source_modules"]:
            forbidden.setdefault(src.rstrip(".*"), set()).update(contract["forbidden_modules"])
    assert {"PySide6", "pyqtgraph", "desktop_app"} <= forbidden["model"]
    assert {"model.training", "model.evaluation"} <= forbidden["desktop_app"]
    assert "torch" in forbidden["desktop_app.views"]
    assert {"desktop_app.window", "desktop_app.panels", "desktop_app.workers"} <= forbidden["desktop_app.views"]
    assert {"desktop_app.window", "desktop_app.panels", "desktop_app.views"} <= forbidden["desktop_app.workers"]
    assert "torch" in forbidden["model.records"]
    assert "benchmarks" in forbidden["model"] and "benchmarks" in forbidden["desktop_app"]
    runtime = ("model.core", "model.predictor", "model.records", "model.tasks", "model.text", "model.files", "model.hf",
               "model.explain", "model.batch", "model.corpus", "model.report", "model.scorer")
    assert all({"model.training", "model.evaluation"} <= forbidden[m] for m in runtime)
    independent = [set(c["modules"]) for c in _contracts().values() if c["type"] == "independence"]
    assert {"model.training", "model.evaluation"} in independent
    layers = [c["layers"] for c in _contracts().values() if c["type"] == "layers"]
    assert ["desktop_app", "model.scorer", "model.report", "model.corpus", "model.batch", "model.predictor",
            "model.explain", "model.core"] in layers


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
        "for m in pkgutil.walk_packages(model.__path__, 'model.'):\n"
        "    importlib.import_module(m.name)\n"
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


MAX_MODULE_LINES = 400
"""The longest module allowed in ``model`` and ``desktop_app``; split a longer one by concern."""

MAX_FUNCTION_LINES = 80
"""The longest function or method allowed in ``model`` and ``desktop_app`` (``def`` line to last line)."""


def _product_modules() -> list[Path]:
    return sorted(p for pkg in ("model", "desktop_app") for p in (ROOT / pkg).rglob("*.py"))


def test_no_module_is_too_long():
    """Every module of ``model`` and ``desktop_app`` has at most MAX_MODULE_LINES lines."""
    long = {str(p.relative_to(ROOT)): n for p in _product_modules()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"


def test_no_function_is_too_long():
    """No function or method of ``model`` or ``desktop_app`` is longer than MAX_FUNCTION_LINES lines."""
    long = {}
    for path in _product_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"] = n
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"


MAX_FAMILY = 3


def test_no_folder_keeps_a_family_of_prefixed_modules():
    """A concept with three or more modules is a subpackage (``panels/batch/``), not a family of prefixed modules in
    a flat folder (``panels/batch_*.py``); a package's ``_private`` helper modules are exempt."""
    families = {}
    for folder in {p.parent for p in _product_modules()}:
        stems = [p.stem for p in folder.glob("*.py") if not p.stem.startswith("_")]
        for prefix in {s.split("_")[0] for s in stems}:
            members = sorted(s for s in stems if s.split("_")[0] == prefix)
            if len(members) >= MAX_FAMILY:
                families[f"{folder.relative_to(ROOT)}/{prefix}_*"] = members
    assert not families, f"families of {MAX_FAMILY}+ prefixed modules (make each a subpackage): {families}"


def test_no_benchmark_inside_the_product():
    """Benchmarks live in ``benchmarks/``, never in ``model`` or ``desktop_app`` (so never in the wheel or bundle)."""
    assert not [str(p.relative_to(ROOT)) for p in _product_modules() if p.name.startswith("bench")]
    assert (ROOT / "benchmarks" / "__init__.py").is_file()


def test_no_import_cycles_inside_the_product():
    """No module of ``model`` or ``desktop_app`` imports itself back through a chain (lazy and TYPE_CHECKING imports
    included)."""
    grimp = pytest.importorskip("grimp")
    sys.path.insert(0, str(ROOT))
    try:
        graph = grimp.build_graph("model", "desktop_app")
    finally:
        sys.path.remove(str(ROOT))
    modules = sorted(m for m in graph.modules if m.split(".")[0] in ("model", "desktop_app"))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(m: str) -> None:  # Tarjan's strongly connected components
        index[m] = low[m] = len(index)
        stack.append(m)
        on_stack.add(m)
        for n in graph.find_modules_directly_imported_by(m):
            if n not in modules:
                continue
            if n not in index:
                visit(n)
                low[m] = min(low[m], low[n])
            elif n in on_stack:
                low[m] = min(low[m], index[n])
        if low[m] == index[m]:
            component = []
            while True:
                n = stack.pop()
                on_stack.discard(n)
                component.append(n)
                if n == m:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for m in modules:
        if m not in index:
            visit(m)
    assert not cycles


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _names_to_modules(tree: ast.Module, module: str, is_package: bool) -> dict[str, str]:
    """Name bound at the top of ``module`` -> the module it comes from (``from X import Y``, ``import X as Y``, the
    module's own classes); relative imports resolved against ``module``'s package."""
    package = module if is_package else module.rpartition(".")[0]
    names = {node.name: module for node in tree.body if isinstance(node, ast.ClassDef)}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)] if node.level else []
            source = ".".join([*base, *([node.module] if node.module else [])])
            for alias in node.names:
                names[alias.asname or alias.name] = source
        elif isinstance(node, ast.Import):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                names[bound] = alias.name if alias.asname else bound
    return names


def _project_bases(cls: ast.ClassDef, names: dict[str, str]) -> list[str]:
    """The bases of ``cls`` that are classes of this project (defined under ``model`` or ``desktop_app``)."""
    found = []
    for base in cls.bases:
        root = base
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name) and names.get(root.id, "").split(".")[0] in ("model", "desktop_app"):
            found.append(ast.unparse(base))
    return found


def test_no_class_mixes_in_project_classes():
    """Concerns are composed, never mixed in: no class of ``model`` or ``desktop_app`` inherits from two or more
    classes of this project, and none is named ``...Mixin`` (the window owns ``menus``, ``file_actions``, ...)."""
    offenders = {}
    for path in _product_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        names = _names_to_modules(tree, _module_name(path), path.name == "__init__.py")
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            bases = _project_bases(node, names)
            if len(bases) >= 2 or node.name.endswith("Mixin"):
                offenders[f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"] = bases
    assert not offenders, f"classes that mix in project classes (compose them instead): {offenders}"
