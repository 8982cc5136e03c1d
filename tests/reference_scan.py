"""What the reference tests share (tests/test_references.py, tests/test_doc_commands.py,
tests/test_doc_options.py): the repository's dotted names, paths and commits, and the pieces of a Markdown file.

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
    the clone, so that the block's data paths, relative to the clone, read the same data); every command of such a
    block is looked up at that commit, not today;
  - in prose, its paragraph, list item or table row (or the row's table header) names the commit (``at git
    `ba0b6d3```, ``commit f53b778``).

Where the commit is not in the local history (a tarball, a shallow clone) a gone name cannot be checked and is let
through. No command runs to its end here: a module runs only up to reading its command line (above).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import re
import shutil
import subprocess
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CODE_DIRS = ("model", "desktop_app", "benchmarks", "build_scripts")
PACKAGES = ("model", "desktop_app", "benchmarks")
DOCS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "resources" / "model" / "README.md")

PATH_RE = re.compile(r"(?<![\w./:~-])((?:model|desktop_app|benchmarks|build_scripts|tests|resources|docs)/[\w./-]*\w)"
                   r"(?![\w*{])")
COMMIT_RE = re.compile(r"(?<![\w./:-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![\w-])")
HISTORICAL_RE = re.compile(r"^\s*#\s*at git ([0-9a-f]{7,40})\b")
FENCE_RE = re.compile(r"^\s*(```|~~~)")



@dataclass(frozen=True)
class Where:
    """An occurrence: the file (relative to the repository), its 1-based line and what was found there."""

    path: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.text}"


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def is_placeholder(part: str) -> bool:
    stem = part.split(".")[0]
    return len(stem) > 1 and stem.replace("_", "").isalpha() and stem.isupper()


# --- git: what a commit holds ---------------------------------------------------------------------------------------


@cache
def history() -> str | None:
    """"full" or "shallow" for a git checkout with git installed, else None."""
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        return None
    shallow = subprocess.run([git, "-C", str(ROOT), "rev-parse", "--is-shallow-repository"], capture_output=True,
                             text=True).stdout.strip()
    return "shallow" if shallow == "true" else "full"


@cache
def is_commit(sha: str) -> bool | None:
    """Whether ``sha`` is a commit of the local history; None where that cannot be known (no git history here, or
    a shallow clone that lacks it)."""
    if history() is None:
        return None
    found = subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{sha}^{{commit}}"], capture_output=True)
    if found.returncode == 0:
        return True
    return None if history() == "shallow" else False


@cache
def commit_has(sha: str, path: str) -> bool | None:
    """Whether ``path`` exists at commit ``sha``; None when the commit is not in the local history."""
    if not is_commit(sha):
        return None
    found = subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{sha}:{path}"], capture_output=True)
    return found.returncode == 0


# --- dotted names ---------------------------------------------------------------------------------------------------


def module_file(dotted: str) -> Path | None:
    base = ROOT.joinpath(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def top_level_names(source: Path) -> set[str]:
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


def resolve(target: str, role: str = "") -> str | None:
    """None when the dotted name ``target`` resolves in today's tree, else why not."""
    parts = target.split(".")
    for cut in range(len(parts), 0, -1):
        found = module_file(".".join(parts[:cut]))
        if found is not None:
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
        if rest and rest[0] not in top_level_names(found):
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
            if last and inspect.ismodule(obj) and name in top_level_names(Path(obj.__file__)):
                return None
            return f"{owner} has no attribute {name!r}"
        owner = f"{owner}.{name}"
    return None


def resolve_at(target: str, sha: str) -> bool | None:
    """Whether the module part of ``target`` existed at commit ``sha`` (None: the commit is not here)."""
    parts = target.split(".")
    found = [commit_has(sha, "/".join(parts[:cut]) + suffix)
             for cut in range(len(parts), 1, -1) for suffix in (".py", "/__init__.py")]
    return None if None in found else any(found)


# --- paths ----------------------------------------------------------------------------------------------------------


def path_exists(path: str, sha: str | None = None) -> bool | None:
    """Whether the repository path exists today (``sha`` None) or at commit ``sha``; a placeholder part (``NAME``)
    stands for any name, so its parent must exist."""
    parts = path.removeprefix("./").rstrip("/").split("/")
    for i, part in enumerate(parts):
        if is_placeholder(part):
            parts = parts[:i]
            break
    if not parts:
        return True
    return ROOT.joinpath(*parts).exists() if sha is None else commit_has(sha, "/".join(parts))


# --- Markdown: the pieces a named commit covers ------------------------------------------------------------


@dataclass(frozen=True)
class Unit:
    """A piece of a Markdown file that a commit named in it covers: a fenced block (only its first line's
    ``# at git <sha>`` counts), a paragraph, a list item, a table row or a heading."""

    first: int
    last: int
    commits: tuple[str, ...]
    block: bool


def units_of(text: str) -> list[Unit]:
    lines = text.splitlines()
    units: list[Unit] = []
    start, in_block, table_header = None, False, ""

    def close(last: int) -> None:
        nonlocal start
        if start is not None:
            body = "\n".join(lines[start - 1:last])
            if body.lstrip().startswith("|"):  # a table row: its table's header row speaks for it too
                body += "\n" + table_header
            commits = tuple(sha for sha in COMMIT_RE.findall(body) if is_commit(sha) is not False)
            units.append(Unit(start, last, commits, False))
        start = None

    for number, line in enumerate(lines, 1):
        if in_block:
            if FENCE_RE.match(line):
                first_line = lines[start] if start < number - 1 else ""
                m = HISTORICAL_RE.match(first_line)
                units.append(Unit(start, number, (m.group(1),) if m else (), True))
                start, in_block = None, False
            continue
        if FENCE_RE.match(line):
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


def unit_at(units: list[Unit], line: int) -> Unit:
    return next(u for u in units if u.first <= line <= u.last)


@cache
def scripts() -> dict[str, str]:
    with open(ROOT / "pyproject.toml", "rb") as fh:
        project = tomllib.load(fh)["project"]
    return {**project.get("scripts", {}), **project.get("gui-scripts", {})}


MAIN_RE = re.compile(r"""__name__\s*==\s*["']__main__["']""")


def read_at(path: str, sha: str | None) -> str | None:
    """The text of the repository file ``path`` today (``sha`` None) or at commit ``sha``; None where it is not."""
    if sha is None:
        return (ROOT / path).read_text(encoding="utf-8") if (ROOT / path).is_file() else None
    shown = subprocess.run(["git", "-C", str(ROOT), "show", f"{sha}:{path}"], capture_output=True, text=True)
    return shown.stdout if shown.returncode == 0 else None


def module_problem(name: str, sha: str | None = None) -> str | None:
    """None when ``python -m name`` runs a program: an installed module (``pytest``, ``pip``, ``venv``), or one of
    the repository's, today or at commit ``sha``, with an ``if __name__ == "__main__":`` block (a package: a
    ``__main__.py``); else why not."""
    parts = name.split(".")
    if parts[0] not in (*PACKAGES, "build_scripts", "tests"):
        return None if importlib.util.find_spec(parts[0]) is not None else f"{parts[0]} is not installed"
    at = f" at git {sha}" if sha else ""
    if is_placeholder(parts[-1]) and len(parts) > 1:  # benchmarks.NAME: the package must exist
        found = read_at("/".join(parts[:-1]) + "/__init__.py", sha) is not None
        return None if found else f"no package {'.'.join(parts[:-1])}{at}"
    base = "/".join(parts)
    if read_at(base + "/__main__.py", sha) is not None:
        return None
    source = read_at(base + ".py", sha)
    if source is None:
        return f"no module {name}{at}"
    return None if MAIN_RE.search(source) else f"{name}{at} has no `if __name__ == \"__main__\":`, so it runs nothing"


def blank_fences(text: str) -> str:
    """``text`` with its fenced blocks blanked (newlines kept, so that line numbers hold)."""
    lines = text.splitlines(keepends=True)
    inside = False
    for i, line in enumerate(lines):
        fence = bool(FENCE_RE.match(line))
        if fence or inside:
            lines[i] = "\n" if line.endswith("\n") else ""
        if fence:
            inside = not inside
    return "".join(lines)
