"""Every reference in the code's docstrings and comments resolves (each failure is listed with its file, line and
the reference); how names resolve, and what counts for things that left the product: tests/reference_scan.py.

* **The code** (every ``.py`` file of ``model/``, ``desktop_app/``, ``benchmarks/`` and ``build_scripts/``; the
  whole text, so docstrings, comments and the rare string that quotes one):

  - each Sphinx role ``:func:``, ``:class:``, ``:meth:``, ``:mod:``, ``:attr:``, ``:data:``, ``:exc:`` (a leading
    ``~`` stripped, a target wrapped over two lines joined, the target of ``title <target>``). A target that starts
    with ``model.``, ``desktop_app.`` or ``benchmarks.`` is looked up as it is; a relative ``.name`` in the module
    that holds it, then in each package around it; a builtin or another package's name (``int``,
    ``numpy.ndarray``) in that package, where it is installed; any other name (``Record``, ``Predictor.explain``)
    is one of the module that holds it (defined or imported there) or of a class around the line: an unqualified
    name the module does not have (a class of another module, or one that moved) is written in full
    (``~model.batch.walk.iter_records``). In build_scripts/, scripts rather than modules, such names are left out;
  - each literal ````model.x.name```` whose first two parts name a module (so that ````model.config.n_heads````,
    a variable, is not taken for one);
  - each repository path (``model/...``, ``desktop_app/...``, ``benchmarks/...``, ``build_scripts/...``,
    ``tests/...``, ``resources/...``, ``docs/...``) exists.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import importlib.util
import re
import sys
from functools import cache
from pathlib import Path

import pytest

from tests.reference_scan import (
    CODE_DIRS, PACKAGES, PATH_RE, ROOT, Where, line_of, module_file, path_exists, rel, resolve,
)

_ROLE = re.compile(r":(func|class|meth|mod|attr|data|exc):`([^`]*)`")
_LITERAL = re.compile(r"``((?:model|desktop_app|benchmarks)\.[\w.]*\w)(?:\(\))?``")


# --- the code -------------------------------------------------------------------------------------------------------


def _code_files() -> list[Path]:
    return [p for folder in CODE_DIRS for p in sorted((ROOT / folder).rglob("*.py"))]


def is_other(name: str) -> bool:
    """Whether ``name`` (a target's first part) is a builtin, or a module of the standard library or of an installed
    package other than ours."""
    if name in PACKAGES or not name.isidentifier():
        return False
    return hasattr(builtins, name) or name in sys.stdlib_module_names or importlib.util.find_spec(name) is not None


def resolve_other(target: str) -> str | None:
    """None when ``target`` (a builtin, ``numpy.ndarray``, ``PySide6.QtCore.QObject``) resolves, or its package is
    not installed here; else why not."""
    parts = target.split(".")
    obj, cut = builtins, 0
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
            break
        except ImportError:
            continue
    else:
        if not hasattr(builtins, parts[0]):
            return None  # not installed here
    for name in parts[cut:]:
        try:
            obj = getattr(obj, name)
        except AttributeError:
            return f"{'.'.join(parts[:cut]) or 'builtins'} has no {name!r} on the way to {target}"
    return None


def _classes_around(tree: ast.Module, line: int) -> list[str]:
    """The qualified names of the classes whose body holds ``line``, outermost first."""
    around = sorted((node.lineno, node.name) for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
                    and node.lineno <= line <= node.end_lineno)
    return [".".join(name for _, name in around[:i + 1]) for i in range(len(around))]


@cache
def _code_names() -> tuple[tuple[Where, str, tuple[str, ...], str], ...]:
    """(where, role, candidates, folder) of every role in the code, and of every literal ````model.x.name```` that
    starts with a module; the reference resolves when one of its candidate targets does; ``folder``: the top folder
    of the file that holds it."""
    found = []
    for path in _code_files():
        text = path.read_text(encoding="utf-8")
        folder = path.relative_to(ROOT).parts[0]
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        tree = None
        for m in _ROLE.finditer(text):
            target = re.sub(r"\s*\n\s*(#\s*)?", " ", m.group(2)).strip()
            if target.endswith(">") and "<" in target:  # an explicit title: title <target>
                target = target[target.rindex("<") + 1:-1]
            target = target.replace(" ", "").lstrip("~!").removesuffix("()")
            line = line_of(text, m.start())
            if target.startswith("."):  # the module holding it, then each package around it
                parts = module.split(".")
                candidates = tuple(".".join(parts[:cut]) + target for cut in range(len(parts), 0, -1))
            elif target.split(".")[0] in PACKAGES or is_other(target.split(".")[0]):
                candidates = (target,)
            elif folder in PACKAGES:  # a name of the module that holds it, or of a class around it
                tree = tree or ast.parse(text)
                candidates = (f"{module}.{target}",
                              *(f"{module}.{cls}.{target}" for cls in reversed(_classes_around(tree, line))))
            else:
                continue  # build_scripts/: scripts, not modules to import
            found.append((Where(rel(path), line, m.group(0).replace("\n", " ")), m.group(1), candidates, folder))
        for m in _LITERAL.finditer(text):
            target = m.group(1)
            if module_file(".".join(target.split(".")[:2])) is not None:
                found.append((Where(rel(path), line_of(text, m.start()), m.group(0)), "", (target,), folder))
    return tuple(found)


@pytest.mark.parametrize("folder", CODE_DIRS)
def test_names_in_the_code_resolve(folder):
    """Each role, and each module-rooted literal, in the code of ``folder`` names a module, class, function, method
    or attribute that exists."""
    qt = importlib.util.find_spec("PySide6") is not None
    names = [(where, role, c) for where, role, c, f in _code_names() if f == folder
             and (qt or not any(t.startswith("desktop_app") for t in c))]
    assert names, f"no reference in {folder}/ found: the scan is broken"
    failures = []
    for where, role, candidates in names:
        whys = [resolve(t, role) if t.split(".")[0] in PACKAGES else resolve_other(t) for t in candidates]
        if all(whys):
            failures.append(f"{where}  ->  {whys[0]}")
    assert not failures, f"{len(failures)} of {len(names)} references do not resolve:\n" + "\n".join(failures)


def test_paths_in_the_code_exist():
    """Each repository path a docstring or comment names exists."""
    failures, count = [], 0
    for path in _code_files():
        text = path.read_text(encoding="utf-8")
        for m in PATH_RE.finditer(text):
            count += 1
            if not path_exists(m.group(1)):
                failures.append(f"{rel(path)}:{line_of(text, m.start())}: {m.group(1)}  ->  no such file or folder")
    assert count > 100, "the scan found almost no paths: it is broken"
    assert not failures, f"{len(failures)} of {count} paths do not exist:\n" + "\n".join(failures)
