"""Every reference in the code's docstrings and comments and in the docs resolves, and every command a doc shows
names a module, script or program that exists.

What is checked (each failure is listed with its file, line and the reference):

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

* **The docs** (README.md, docs/*.md and the model card, resources/model/README.md):

  - each command: ``python -m X`` names an installed module (``pytest``, ``pip``, ``venv``) or a module of the
    repository that runs as a program (an ``if __name__ == "__main__":`` block; a package: a ``__main__.py``;
    ``python -m model.training.distill`` imports a module and silently does nothing); ``python path.py`` and
    ``bash path.sh`` name a file of the repository; ``attention-explorer`` and ``attention-explorer-score`` are
    scripts pyproject.toml declares, whose ``module:function`` exists;
  - each ``--option`` of a ``python -m`` command or of ``attention-explorer`` / ``attention-explorer-score`` (in a
    code span or block) is one its parser takes: the module (of a script: its entry point's) is run
    as ``__main__`` in this process with argparse's ``parse_args`` replaced by a raise that hands back the parser
    (only a module that mentions ``ArgumentParser``, itself or in a repository module it imports; all of today's
    do, and stop at their parser in well under a second); a gone option is looked for, as ``"--option"``, in the module and its imports at the
    commit its context names (below);
  - each repository path (as in the code) exists, and so does a file a backticked bare name names (```grow.py```,
    ```bundled.toml```: some file of that name); each backticked dotted name ```model.x.y``` of three parts or more
    resolves;
  - each relative link ``[text](path)``, ``![alt](path)`` or ``<img src="path">`` (not a URL, not a bare
    ``#anchor``; outside code) points to a file or folder that exists relative to the Markdown file.

**How a dotted name resolves.** The longest dotted prefix that is a module of the repository (``X.py`` or
``X/__init__.py``) is imported and the rest is looked up with ``getattr``. A name ``getattr`` does not find on a
class counts when the class body, or that of a repository class it inherits from, annotates or assigns it
(``x: int``, ``x = ...``, ``self.x = ...``: a dataclass field without a default, an attribute set in
``__init__``); on a module, when the module defines or assigns it at its top level (read with ``ast``). A
``:mod:`` target must be a module. Names in ``desktop_app`` are checked only where PySide6 imports (a base
dependency, so everywhere the app runs).

**Placeholders.** A part in capitals (``benchmarks.NAME``, ``model/training/recipes/NAME.toml``) stands for any
name: its parent must exist.

**Things that left the product.** Code of a route that lost leaves the product and lives on in git (docs/model.md
logs those routes with the commit that has them, ba0b6d3). A module, script, path or name that is gone is accepted
only where its context names a commit that has it, and it must exist at that commit (``git cat-file -e
<commit>:<path>``; for a dotted name, its module; for ``python -m``, a module that runs there):

  - in a fenced code block, its first line is a comment naming the commit and how to get that tree,
    ``# at git ba0b6d3 (deleted from the product): git worktree add ../ba0b6d3 ba0b6d3 && cd ../ba0b6d3`` (beside
    the clone, so that the block's ``../shared/data/imdb`` reads the same data); every command of such a block is
    looked up at that commit, not today;
  - in prose, its paragraph, list item or table row (or the row's table header) names the commit (``at git
    `ba0b6d3```, ``commit f53b778``).

Where the commit is not in the local history (a tarball, a shallow clone) a gone name cannot be checked and is let
through. No command runs to its end here: a module runs only up to reading its command line (above).
"""

from __future__ import annotations

import argparse
import ast
import builtins
import importlib
import importlib.util
import inspect
import re
import runpy
import shutil
import subprocess
import sys
import tomllib
import warnings
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CODE_DIRS = ("model", "desktop_app", "benchmarks", "build_scripts")
PACKAGES = ("model", "desktop_app", "benchmarks")
DOCS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "resources" / "model" / "README.md")

_ROLE = re.compile(r":(func|class|meth|mod|attr|data|exc):`([^`]*)`")
_LITERAL = re.compile(r"``((?:model|desktop_app|benchmarks)\.[\w.]*\w)(?:\(\))?``")
_DOC_NAME = re.compile(r"(?<!`)`((?:model|desktop_app|benchmarks)(?:\.\w+){2,})(?:\(\))?`")
_FILE_NAME = re.compile(r"(?<!`)`([\w-]+\.(?:py|sh|toml))`")
_PATH = re.compile(r"(?<![\w./:~-])((?:model|desktop_app|benchmarks|build_scripts|tests|resources|docs)/[\w./-]*\w)"
                   r"(?![\w*{])")
_COMMIT = re.compile(r"(?<![\w./:-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![\w-])")
_HISTORICAL = re.compile(r"^\s*#\s*at git ([0-9a-f]{7,40})\b")
_FENCE = re.compile(r"^\s*(```|~~~)")
_FILE_SUFFIXES = (".safetensors", ".json", ".py", ".toml", ".npz", ".gz", ".md", ".txt", ".csv")


@dataclass(frozen=True)
class Where:
    """An occurrence: the file (relative to the repository), its 1-based line and what was found there."""

    path: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.text}"


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _is_placeholder(part: str) -> bool:
    stem = part.split(".")[0]
    return len(stem) > 1 and stem.replace("_", "").isalpha() and stem.isupper()


# --- git: what a commit holds ---------------------------------------------------------------------------------------


@cache
def _history() -> str | None:
    """"full" or "shallow" for a git checkout with git installed, else None."""
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        return None
    shallow = subprocess.run([git, "-C", str(ROOT), "rev-parse", "--is-shallow-repository"], capture_output=True,
                             text=True).stdout.strip()
    return "shallow" if shallow == "true" else "full"


@cache
def _is_commit(sha: str) -> bool | None:
    """Whether ``sha`` is a commit of the local history; None where that cannot be known (no git history here, or
    a shallow clone that lacks it)."""
    if _history() is None:
        return None
    found = subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{sha}^{{commit}}"], capture_output=True)
    if found.returncode == 0:
        return True
    return None if _history() == "shallow" else False


@cache
def _commit_has(sha: str, path: str) -> bool | None:
    """Whether ``path`` exists at commit ``sha``; None when the commit is not in the local history."""
    if not _is_commit(sha):
        return None
    found = subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{sha}:{path}"], capture_output=True)
    return found.returncode == 0


# --- dotted names ---------------------------------------------------------------------------------------------------


def _module_file(dotted: str) -> Path | None:
    base = ROOT.joinpath(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _top_level_names(source: Path) -> set[str]:
    """The names a module defines or assigns at its top level (inside if/try/with too; imports not counted)."""
    names: set[str] = set()

    def visit(body):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
            elif isinstance(node, (ast.If, ast.Try, ast.With)):
                visit(node.body)
                visit(getattr(node, "orelse", []))
                visit(getattr(node, "finalbody", []))
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)

    visit(ast.parse(source.read_text(encoding="utf-8")).body)
    return names


def _class_assigns(cls: type, name: str) -> bool:
    """Whether ``cls`` or a repository class it inherits from annotates or assigns ``name`` in its body, or sets
    ``self.name`` in one of its methods."""
    for klass in cls.__mro__:
        try:
            source = inspect.getsourcefile(klass)
        except TypeError:  # a built-in class
            continue
        if source is None or not Path(source).resolve().is_relative_to(ROOT):
            continue
        for node in ast.walk(ast.parse(Path(source).read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ClassDef) and node.name == klass.__name__):
                continue
            for item in node.body:
                targets = item.targets if isinstance(item, ast.Assign) else [getattr(item, "target", None)]
                if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                    return True
            for sub in ast.walk(node):
                if (isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Store) and sub.attr == name
                        and isinstance(sub.value, ast.Name) and sub.value.id == "self"):
                    return True
    return False


def _resolve(target: str, role: str = "") -> str | None:
    """None when the dotted name ``target`` resolves in today's tree, else why not."""
    parts = target.split(".")
    for cut in range(len(parts), 0, -1):
        module_file = _module_file(".".join(parts[:cut]))
        if module_file is not None:
            break
    else:
        return "no such module in the repository"
    module_name, rest = ".".join(parts[:cut]), parts[cut:]
    if role == "mod":
        return None if not rest else f"{module_name} has no module {rest[0]!r}"
    try:
        obj = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] in PACKAGES:
            return f"importing {module_name}: {exc}"
        # an optional dependency is not installed here: the first name, with ast only
        if rest and rest[0] not in _top_level_names(module_file):
            return f"{module_name} defines no {rest[0]!r} ({exc.name} is not installed here)"
        return None
    owner = module_name
    for i, name in enumerate(rest):
        try:
            obj = getattr(obj, name)
        except AttributeError:
            last = i == len(rest) - 1
            if last and inspect.isclass(obj) and _class_assigns(obj, name):
                return None
            if last and inspect.ismodule(obj) and name in _top_level_names(Path(obj.__file__)):
                return None
            return f"{owner} has no attribute {name!r}"
        owner = f"{owner}.{name}"
    return None


def _resolve_at(target: str, sha: str) -> bool | None:
    """Whether the module part of ``target`` existed at commit ``sha`` (None: the commit is not here)."""
    parts = target.split(".")
    found = [_commit_has(sha, "/".join(parts[:cut]) + suffix)
             for cut in range(len(parts), 1, -1) for suffix in (".py", "/__init__.py")]
    return None if None in found else any(found)


# --- paths ----------------------------------------------------------------------------------------------------------


def _path_exists(path: str, sha: str | None = None) -> bool | None:
    """Whether the repository path exists today (``sha`` None) or at commit ``sha``; a placeholder part (``NAME``)
    stands for any name, so its parent must exist."""
    parts = path.removeprefix("./").rstrip("/").split("/")
    for i, part in enumerate(parts):
        if _is_placeholder(part):
            parts = parts[:i]
            break
    if not parts:
        return True
    return ROOT.joinpath(*parts).exists() if sha is None else _commit_has(sha, "/".join(parts))


# --- the code -------------------------------------------------------------------------------------------------------


def _code_files() -> list[Path]:
    return [p for folder in CODE_DIRS for p in sorted((ROOT / folder).rglob("*.py"))]


def _is_other(name: str) -> bool:
    """Whether ``name`` (a target's first part) is a builtin, or a module of the standard library or of an installed
    package other than ours."""
    if name in PACKAGES or not name.isidentifier():
        return False
    return hasattr(builtins, name) or name in sys.stdlib_module_names or importlib.util.find_spec(name) is not None


def _resolve_other(target: str) -> str | None:
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
            line = _line_of(text, m.start())
            if target.startswith("."):  # the module holding it, then each package around it
                parts = module.split(".")
                candidates = tuple(".".join(parts[:cut]) + target for cut in range(len(parts), 0, -1))
            elif target.split(".")[0] in PACKAGES or _is_other(target.split(".")[0]):
                candidates = (target,)
            elif folder in PACKAGES:  # a name of the module that holds it, or of a class around it
                tree = tree or ast.parse(text)
                candidates = (f"{module}.{target}",
                              *(f"{module}.{cls}.{target}" for cls in reversed(_classes_around(tree, line))))
            else:
                continue  # build_scripts/: scripts, not modules to import
            found.append((Where(_rel(path), line, m.group(0).replace("\n", " ")), m.group(1), candidates, folder))
        for m in _LITERAL.finditer(text):
            target = m.group(1)
            if _module_file(".".join(target.split(".")[:2])) is not None:
                found.append((Where(_rel(path), _line_of(text, m.start()), m.group(0)), "", (target,), folder))
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
        whys = [_resolve(t, role) if t.split(".")[0] in PACKAGES else _resolve_other(t) for t in candidates]
        if all(whys):
            failures.append(f"{where}  ->  {whys[0]}")
    assert not failures, f"{len(failures)} of {len(names)} references do not resolve:\n" + "\n".join(failures)


def test_paths_in_the_code_exist():
    """Each repository path a docstring or comment names exists."""
    failures, count = [], 0
    for path in _code_files():
        text = path.read_text(encoding="utf-8")
        for m in _PATH.finditer(text):
            count += 1
            if not _path_exists(m.group(1)):
                failures.append(f"{_rel(path)}:{_line_of(text, m.start())}: {m.group(1)}  ->  no such file or folder")
    assert count > 100, "the scan found almost no paths: it is broken"
    assert not failures, f"{len(failures)} of {count} paths do not exist:\n" + "\n".join(failures)


# --- the docs -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Unit:
    """A piece of a Markdown file that a commit named in it covers: a fenced block (only its first line's
    ``# at git <sha>`` counts), a paragraph, a list item, a table row or a heading."""

    first: int
    last: int
    commits: tuple[str, ...]
    block: bool


def _units(text: str) -> list[Unit]:
    lines = text.splitlines()
    units: list[Unit] = []
    start, in_block, table_header = None, False, ""

    def close(last: int) -> None:
        nonlocal start
        if start is not None:
            body = "\n".join(lines[start - 1:last])
            if body.lstrip().startswith("|"):  # a table row: its table's header row speaks for it too
                body += "\n" + table_header
            commits = tuple(sha for sha in _COMMIT.findall(body) if _is_commit(sha) is not False)
            units.append(Unit(start, last, commits, False))
        start = None

    for number, line in enumerate(lines, 1):
        if in_block:
            if _FENCE.match(line):
                first_line = lines[start] if start < number - 1 else ""
                m = _HISTORICAL.match(first_line)
                units.append(Unit(start, number, (m.group(1),) if m else (), True))
                start, in_block = None, False
            continue
        if _FENCE.match(line):
            close(number - 1)
            start, in_block = number, True
        elif not line.strip():
            close(number - 1)
        elif line.lstrip().startswith(("|", "#")) or re.match(r"\s*(\d+\.|[-*+])\s", line):
            if line.lstrip().startswith("|") and not lines[number - 2].lstrip().startswith("|"):
                table_header = line
            close(number - 1)
            start = number
            if line.lstrip().startswith(("|", "#")):
                close(number)
        elif start is None:
            start = number
    close(len(lines))
    return units


def _unit_at(units: list[Unit], line: int) -> Unit:
    return next(u for u in units if u.first <= line <= u.last)


_COMMANDS = (
    ("module", re.compile(r"\bpython3?\s+-m\s+([A-Za-z_][\w.]*\w)")),
    ("file", re.compile(r"\bpython3?\s+((?:\./)?[\w./-]+\.py)\b")),
    ("file", re.compile(r"\b(?:bash|sh)\s+((?:\./)?[\w./-]+\.sh)\b")),
    ("script", re.compile(r"(?:^|[`$;|&(]\s*|^\s*)(attention-explorer(?:-[a-z]+)?)(?=[\s`]|$)", re.M)),
)


@cache
def _scripts() -> dict[str, str]:
    with open(ROOT / "pyproject.toml", "rb") as fh:
        project = tomllib.load(fh)["project"]
    return {**project.get("scripts", {}), **project.get("gui-scripts", {})}


_MAIN = re.compile(r"""__name__\s*==\s*["']__main__["']""")


def _read(path: str, sha: str | None) -> str | None:
    """The text of the repository file ``path`` today (``sha`` None) or at commit ``sha``; None where it is not."""
    if sha is None:
        return (ROOT / path).read_text(encoding="utf-8") if (ROOT / path).is_file() else None
    shown = subprocess.run(["git", "-C", str(ROOT), "show", f"{sha}:{path}"], capture_output=True, text=True)
    return shown.stdout if shown.returncode == 0 else None


def _module_problem(name: str, sha: str | None = None) -> str | None:
    """None when ``python -m name`` runs a program: an installed module (``pytest``, ``pip``, ``venv``), or one of
    the repository's, today or at commit ``sha``, with an ``if __name__ == "__main__":`` block (a package: a
    ``__main__.py``); else why not."""
    parts = name.split(".")
    if parts[0] not in (*PACKAGES, "build_scripts", "tests"):
        return None if importlib.util.find_spec(parts[0]) is not None else f"{parts[0]} is not installed"
    at = f" at git {sha}" if sha else ""
    if _is_placeholder(parts[-1]) and len(parts) > 1:  # benchmarks.NAME: the package must exist
        found = _read("/".join(parts[:-1]) + "/__init__.py", sha) is not None
        return None if found else f"no package {'.'.join(parts[:-1])}{at}"
    base = "/".join(parts)
    if _read(base + "/__main__.py", sha) is not None:
        return None
    source = _read(base + ".py", sha)
    if source is None:
        return f"no module {name}{at}"
    return None if _MAIN.search(source) else f"{name}{at} has no `if __name__ == \"__main__\":`, so it runs nothing"


@cache
def _file_names(sha: str | None = None) -> frozenset[str]:
    """The names (without folders) of the repository's files, today or at commit ``sha`` (a known commit)."""
    if sha is None:
        return frozenset(p.name for p in ROOT.rglob("*") if not {".git", ".venv"} & set(p.relative_to(ROOT).parts))
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-tree", "-r", "--name-only", sha], capture_output=True,
                            text=True).stdout
    return frozenset(line.rpartition("/")[2] for line in listed.splitlines())


def _problem_today(kind: str, name: str) -> str | None:
    """None when the command's module, file or script, or the path or dotted name, exists today, else why not."""
    if kind == "module":
        return _module_problem(name)
    if kind in ("file", "path"):
        return None if _path_exists(name) else f"no {name} in the repository"
    if kind == "name":
        return _resolve(name)
    if kind == "filename":
        return None if name in _file_names() else f"no file {name} in the repository"
    entry = _scripts().get(name)
    if entry is None:
        return "pyproject.toml declares no such script"
    module, _, function = entry.partition(":")
    module_file = _module_file(module)
    if module_file is None or function not in _top_level_names(module_file):
        return f"its entry point {entry} does not exist"
    return None


def _problem_at(kind: str, name: str, sha: str) -> str | None:
    """As :func:`_problem_today`, at commit ``sha``; None also where the commit is not in the local history."""
    if not _is_commit(sha):
        return None
    if kind == "module":
        return _module_problem(name, sha)
    if kind == "name":
        return None if _resolve_at(name, sha) else f"no module of {name} at git {sha}"
    if kind in ("file", "path"):
        return None if _path_exists(name, sha) else f"no {name} at git {sha}"
    if kind == "filename":
        return None if name in _file_names(sha) else f"no file {name} at git {sha}"
    return _problem_today(kind, name)  # a console script: today's pyproject.toml is all there is to ask


@cache
def _doc_items() -> tuple[tuple[Where, str, str, Unit], ...]:
    """(where, kind, name, unit) of every command, path and dotted name in the docs."""
    found = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        lines, units = text.splitlines(), _units(text)
        patterns = [*_COMMANDS, ("path", _PATH), ("name", _DOC_NAME), ("filename", _FILE_NAME)]
        for kind, pattern in patterns:
            for m in pattern.finditer(text):
                if kind == "name" and m.group(1).endswith(_FILE_SUFFIXES):
                    continue
                line = _line_of(text, m.start(1))
                found.append((Where(_rel(doc), line, lines[line - 1].strip()[:160]), kind, m.group(1),
                              _unit_at(units, line)))
    return tuple(found)


def _doc_problem(kind: str, name: str, unit: Unit) -> str | None:
    """None when the item exists today, or (gone) at a commit its unit names; else why not."""
    if unit.block and unit.commits:  # a historical block runs at its commit
        return _problem_at(kind, name, unit.commits[0])
    why = _problem_today(kind, name)
    if why is None or any(_problem_at(kind, name, sha) is None for sha in unit.commits):
        return None
    named = f"; nor at git {', '.join(unit.commits)}" if unit.commits else "; no commit that has it is named here"
    return why + named


@pytest.mark.parametrize("kind", ["command", "path", "name"])
def test_the_docs_name_what_exists(kind):
    """Commands (``python -m X``, ``python script.py``, ``bash script.sh``, the console scripts), repository paths and
    dotted names in README.md and docs/*.md exist today, or at the commit their context names."""
    if kind == "name":
        pytest.importorskip("PySide6", reason="desktop_app imports PySide6")
    kinds = {"command": ("module", "file", "script"), "path": ("path", "filename"), "name": ("name",)}[kind]
    items = [item for item in _doc_items() if item[1] in kinds]
    assert len(items) > 50, f"the scan found only {len(items)}: it is broken"
    failures = [f"{where}  ->  {why}" for where, k, name, unit in items if (why := _doc_problem(k, name, unit))]
    assert not failures, f"{len(failures)} of {len(items)} do not exist:\n" + "\n".join(failures)


def test_historical_blocks_name_a_commit_of_the_history():
    """A ``# at git <sha>`` block names a commit of this repository's history (checked where the whole history is)."""
    if _history() != "full":
        pytest.skip("no whole git history here")
    blocks = [(doc, unit) for doc in DOCS for unit in _units(doc.read_text(encoding="utf-8"))
              if unit.block and unit.commits]
    assert blocks, "docs/model.md's deleted routes have no '# at git <sha>' block: the scan is broken"
    for doc, unit in blocks:
        assert _is_commit(unit.commits[0]), f"{_rel(doc)}:{unit.first}: no commit {unit.commits[0]} in the history"


# --- the options of documented commands ----------------------------------------------------------------------------


class _Parsed(Exception):
    """Raised in place of argparse's parsing: carries the parser a module built."""

    def __init__(self, parser: argparse.ArgumentParser):
        super().__init__()
        self.parser = parser


def _module_text(module: str, sha: str | None = None) -> tuple[str, str] | None:
    """(path, text) of what ``python -m module`` runs (a package: its ``__main__.py``), today or at ``sha``."""
    base = module.replace(".", "/")
    for path in (base + "/__main__.py", base + ".py"):
        text = _read(path, sha)
        if text is not None:
            return path, text
    return None


@cache
def _sources(module: str, sha: str | None = None) -> tuple[str, ...]:
    """The text of what ``python -m module`` runs and of every repository module it imports (anywhere in it),
    today or at commit ``sha``; empty where the module is not there."""
    found = _module_text(module, sha)
    if found is None:
        return ()
    path, text = found
    texts = [text]
    package = path.rpartition("/")[0].replace("/", ".")
    for node in ast.walk(ast.parse(text)):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join([*parts[:len(parts) - node.level + 1], *filter(None, [base])])
            names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        for name in names:
            if name.split(".")[0] in PACKAGES:
                for candidate in (name.replace(".", "/") + ".py", name.replace(".", "/") + "/__init__.py"):
                    imported = _read(candidate, sha)
                    if imported is not None:
                        texts.append(imported)
    return tuple(texts)


@cache
def _options(module: str) -> frozenset[str] | None:
    """The options of the argparse parser (and its subparsers) that ``python -m module`` builds; None where they
    cannot be known here (neither the module nor a repository module it imports mentions ``ArgumentParser``, so
    that nothing is run that would not stop at its parser; or an optional dependency is not installed).

    The module runs as ``__main__`` with ``parse_args`` and ``parse_known_args`` raising :class:`_Parsed`, so it
    stops where it would read its command line."""
    if not any("ArgumentParser" in text for text in _sources(module)):
        return None

    def parsed(self, *args, **kwargs):
        raise _Parsed(self)

    saved = argparse.ArgumentParser.parse_args, argparse.ArgumentParser.parse_known_args, sys.argv
    argparse.ArgumentParser.parse_args = argparse.ArgumentParser.parse_known_args = parsed
    sys.argv = [module]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # runpy: the module was imported before
            runpy.run_module(module, run_name="__main__", alter_sys=False)
    except _Parsed as stop:
        return frozenset(_option_strings(stop.parser))
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] not in PACKAGES:
            return None
        raise
    finally:
        argparse.ArgumentParser.parse_args, argparse.ArgumentParser.parse_known_args, sys.argv = saved
    raise AssertionError(f"python -m {module} read no command line with argparse")


def _option_strings(parser: argparse.ArgumentParser) -> set[str]:
    found = set()
    for action in parser._actions:
        found.update(action.option_strings)
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found |= _option_strings(sub)
    return found


def _option_at(sha: str, module: str, option: str) -> bool | None:
    """Whether ``"--option"`` is written in what ``python -m module`` ran at commit ``sha`` or in a repository
    module it imported (None: the commit is not in the local history)."""
    if not _is_commit(sha):
        return None
    return any(f'"{option}"' in text for text in _sources(module, sha))


def _blank_fences(text: str) -> str:
    """``text`` with its fenced blocks blanked (newlines kept, so that line numbers hold)."""
    lines = text.splitlines(keepends=True)
    inside = False
    for i, line in enumerate(lines):
        fence = bool(_FENCE.match(line))
        if fence or inside:
            lines[i] = "\n" if line.endswith("\n") else ""
        if fence:
            inside = not inside
    return "".join(lines)


_RUN = re.compile(r"\bpython3?\s+-m\s+([A-Za-z_][\w.]*\w)([^`]*)|(?<![\w./-])(attention-explorer(?:-score)?)(\s[^`]*|$)")


@cache
def _doc_option_uses() -> tuple[tuple[Where, str, str, Unit], ...]:
    """(where, module, option, unit) of every ``--option`` a ``python -m`` command of the docs gives, in a code
    span or a code block (continued lines joined; comments, and what follows ``&&``, ``;`` or ``|``, left out)."""
    found = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        lines, units = text.splitlines(), _units(text)
        prose = _blank_fences(text)  # as many lines as text
        commands = [(_line_of(prose, m.start()), m.group(1)) for m in re.finditer(r"(?<!`)`([^`]+)`(?!`)", prose)]
        for unit in (u for u in units if u.block):
            start, command = None, ""
            for number in range(unit.first + 1, unit.last):  # the block's lines, fences left out
                start = start or number
                command += re.sub(r"(^|\s)#.*", "", lines[number - 1])
                if not command.endswith("\\"):  # a command continued with a backslash
                    commands.append((start, command))
                    start, command = None, ""
                command = command.removesuffix("\\")
        for line, command in commands:
            for m in _RUN.finditer(command):
                # python -m X, or a console script: the module its entry point names
                module = m.group(1) or _scripts().get(m.group(3), "").partition(":")[0]
                rest = re.split(r"&&|;|\|", (m.group(2) if m.group(1) else m.group(4)) or "")[0]
                for option in re.findall(r"(?<![\w-])(--[a-z][\w-]*)", rest):
                    found.append((Where(_rel(doc), line, lines[line - 1].strip()[:160]), module, option,
                                  _unit_at(units, line)))
    return tuple(found)


def test_the_docs_give_options_their_commands_take():
    """Each ``--option`` of a documented ``python -m`` command is one its parser takes today, or (gone) one the
    module's folder has at the commit its block or paragraph names."""
    uses = _doc_option_uses()
    assert len(uses) > 100, f"the scan found only {len(uses)} options: it is broken"
    failures = []
    for where, module, option, unit in uses:
        if not (unit.block and unit.commits) and _module_problem(module) is None:
            options = _options(module)
            if options is None or option in options:
                continue
        if any(_option_at(sha, module, option) is not False for sha in unit.commits):
            continue
        named = f" nor at git {', '.join(unit.commits)}" if unit.commits else ", and no commit is named here"
        failures.append(f"{where}  ->  python -m {module} takes no {option}{named}")
    assert not failures, f"{len(failures)} of {len(uses)} options are not taken:\n" + "\n".join(failures)


_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)|<img\s[^>]*\bsrc=\"([^\"]+)\"")
_CODE_SPAN = re.compile(r"(`+).+?\1", re.S)


def _without_code(text: str) -> str:
    """``text`` with fenced blocks and code spans blanked (newlines kept, so that line numbers hold)."""
    return _CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), _blank_fences(text))


def test_relative_links_in_the_docs_point_to_files_that_exist():
    """Every relative link and image of README.md and docs/*.md points to an existing file or folder."""
    failures, count = [], 0
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        lines = text.splitlines()
        prose = _without_code(text)  # as many lines as text, so that line numbers hold
        for m in _LINK.finditer(prose):
            target = m.group(1) or m.group(2)
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            count += 1
            if not (doc.parent / target.split("#")[0]).exists():
                line = _line_of(prose, m.start())
                failures.append(f"{_rel(doc)}:{line}: {target}  ->  no such file ({lines[line - 1].strip()[:100]})")
    assert count > 50, "the scan found almost no links: it is broken"
    assert not failures, f"{len(failures)} of {count} links point nowhere:\n" + "\n".join(failures)
