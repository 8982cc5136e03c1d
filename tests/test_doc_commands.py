"""Every command, path and name the docs show exists, and every relative link points to a file (each failure is
listed with its file, line and the reference); what counts for things that left the product:
tests/reference_scan.py.

* **The docs** (README.md, docs/*.md and the model card, resources/model/README.md):

  - each command: ``python -m X`` names an installed module (``pytest``, ``pip``, ``venv``) or a module of the
    repository that runs as a program (an ``if __name__ == "__main__":`` block; a package: a ``__main__.py``;
    ``python -m model.training.distill`` imports a module and silently does nothing); ``python path.py`` and
    ``bash path.sh`` name a file of the repository; ``attention-explorer`` and ``attention-explorer-score`` are
    scripts pyproject.toml declares, whose ``module:function`` exists;
  - (each ``--option`` of those commands: tests/test_doc_options.py);
  - each repository path (as in the code, tests/test_references.py) exists, and so does a file a backticked bare name names (```grow.py```,
    ```bundled.toml```: some file of that name); each backticked dotted name ```model.x.y``` of three parts or more
    resolves;
  - each relative link ``[text](path)``, ``![alt](path)`` or ``<img src="path">`` (not a URL, not a bare
    ``#anchor``; outside code) points to a file or folder that exists relative to the Markdown file.
"""

from __future__ import annotations

import re
import subprocess
from functools import cache

import pytest

from tests.reference_scan import (
    DOCS, PATH_RE, ROOT, Unit, Where, blank_fences, history, is_commit, line_of, module_file,
    module_problem, path_exists, rel, resolve, resolve_at, scripts, top_level_names, unit_at, units_of,
)

_DOC_NAME = re.compile(r"(?<!`)`((?:model|desktop_app|benchmarks)(?:\.\w+){2,})(?:\(\))?`")
_FILE_NAME = re.compile(r"(?<!`)`([\w-]+\.(?:py|sh|toml))`")
_FILE_SUFFIXES = (".safetensors", ".json", ".py", ".toml", ".npz", ".gz", ".md", ".txt", ".csv")

_COMMANDS = (
    ("module", re.compile(r"\bpython3?\s+-m\s+([A-Za-z_][\w.]*\w)")),
    ("file", re.compile(r"\bpython3?\s+((?:\./)?[\w./-]+\.py)\b")),
    ("file", re.compile(r"\b(?:bash|sh)\s+((?:\./)?[\w./-]+\.sh)\b")),
    ("script", re.compile(r"(?:^|[`$;|&(]\s*|^\s*)(attention-explorer(?:-[a-z]+)?)(?=[\s`]|$)", re.M)),
)


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
        return module_problem(name)
    if kind in ("file", "path"):
        return None if path_exists(name) else f"no {name} in the repository"
    if kind == "name":
        return resolve(name)
    if kind == "filename":
        return None if name in _file_names() else f"no file {name} in the repository"
    entry = scripts().get(name)
    if entry is None:
        return "pyproject.toml declares no such script"
    module, _, function = entry.partition(":")
    found = module_file(module)
    if found is None or function not in top_level_names(found):
        return f"its entry point {entry} does not exist"
    return None


def _problem_at(kind: str, name: str, sha: str) -> str | None:
    """As :func:`_problem_today`, at commit ``sha``; None also where the commit is not in the local history."""
    if not is_commit(sha):
        return None
    if kind == "module":
        return module_problem(name, sha)
    if kind == "name":
        return None if resolve_at(name, sha) else f"no module of {name} at git {sha}"
    if kind in ("file", "path"):
        return None if path_exists(name, sha) else f"no {name} at git {sha}"
    if kind == "filename":
        return None if name in _file_names(sha) else f"no file {name} at git {sha}"
    return _problem_today(kind, name)  # a console script: today's pyproject.toml is all there is to ask


@cache
def _doc_items() -> tuple[tuple[Where, str, str, Unit], ...]:
    """(where, kind, name, unit) of every command, path and dotted name in the docs."""
    found = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        lines, units = text.splitlines(), units_of(text)
        patterns = [*_COMMANDS, ("path", PATH_RE), ("name", _DOC_NAME), ("filename", _FILE_NAME)]
        for kind, pattern in patterns:
            for m in pattern.finditer(text):
                if kind == "name" and m.group(1).endswith(_FILE_SUFFIXES):
                    continue
                line = line_of(text, m.start(1))
                found.append((Where(rel(doc), line, lines[line - 1].strip()[:160]), kind, m.group(1),
                              unit_at(units, line)))
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
    if history() != "full":
        pytest.skip("no whole git history here")
    blocks = [(doc, unit) for doc in DOCS for unit in units_of(doc.read_text(encoding="utf-8"))
              if unit.block and unit.commits]
    assert blocks, "docs/model.md's deleted routes have no '# at git <sha>' block: the scan is broken"
    for doc, unit in blocks:
        assert is_commit(unit.commits[0]), f"{rel(doc)}:{unit.first}: no commit {unit.commits[0]} in the history"


_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)|<img\s[^>]*\bsrc=\"([^\"]+)\"")
_CODE_SPAN = re.compile(r"(`+).+?\1", re.S)


def _without_code(text: str) -> str:
    """``text`` with fenced blocks and code spans blanked (newlines kept, so that line numbers hold)."""
    return _CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), blank_fences(text))


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
                line = line_of(prose, m.start())
                failures.append(f"{rel(doc)}:{line}: {target}  ->  no such file ({lines[line - 1].strip()[:100]})")
    assert count > 50, "the scan found almost no links: it is broken"
    assert not failures, f"{len(failures)} of {count} links point nowhere:\n" + "\n".join(failures)
