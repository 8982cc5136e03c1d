"""Each ``--option`` of a ``python -m`` command or of ``attention-explorer`` / ``attention-explorer-score`` that the
docs show (README.md, docs/*.md, the model card; in a code span or block) is one its parser takes (of a script: its
entry point module's parser); a gone option is looked for, as ``"--option"``, in the module and its imports at the
commit its context names. Only a module that mentions ``ArgumentParser``, itself or in a repository module it
imports, is run (all of today's do, and stop at their parser in well under a second).

The parsers are read in a child process (``python -m tests.test_doc_options MODULE ...``), so that what a module does
before reading its command line stays out of the test process; there each module runs as ``__main__`` with
argparse's ``parse_args`` replaced by a raise that hands back the parser. What counts for options that left the
product: tests/reference_scan.py.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import runpy
import subprocess
import sys
import warnings
from functools import cache

from tests.reference_scan import (
    DOCS, PACKAGES, ROOT, Unit, Where, blank_fences, is_commit, line_of, module_problem, read_at, rel, scripts,
    unit_at, units_of,
)

class _Parsed(Exception):
    """Raised in place of argparse's parsing: carries the parser a module built."""

    def __init__(self, parser: argparse.ArgumentParser):
        super().__init__()
        self.parser = parser


def _module_text(module: str, sha: str | None = None) -> tuple[str, str] | None:
    """(path, text) of what ``python -m module`` runs (a package: its ``__main__.py``), today or at ``sha``."""
    base = module.replace(".", "/")
    for path in (base + "/__main__.py", base + ".py"):
        text = read_at(path, sha)
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
                    imported = read_at(candidate, sha)
                    if imported is not None:
                        texts.append(imported)
    return tuple(texts)


def _parser_options(module: str) -> list[str] | None:
    """The options of the argparse parser (and its subparsers) that ``python -m module`` builds, read in this process
    (the child's side of :func:`_options`); None where they cannot be known here (neither the module nor a
    repository module it imports mentions ``ArgumentParser``, so that nothing is run that would not stop at its
    parser; or an optional dependency is not installed).

    The module runs as ``__main__`` with ``parse_args`` and ``parse_known_args`` raising :class:`_Parsed`, so it
    stops where it would read its command line. Raises AssertionError when it reads none."""
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
        return sorted(_option_strings(stop.parser))
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] not in PACKAGES:
            return None
        raise
    finally:
        argparse.ArgumentParser.parse_args, argparse.ArgumentParser.parse_known_args, sys.argv = saved
    raise AssertionError(f"python -m {module} read no command line with argparse")


@cache
def _all_options(modules: tuple[str, ...]) -> dict[str, frozenset[str] | None]:
    """:func:`_parser_options` of each module, read in one child process (``python -m tests.test_doc_options``)."""
    child = subprocess.run([sys.executable, "-m", "tests.test_doc_options", *modules], cwd=ROOT, capture_output=True,
                           text=True, timeout=600)
    assert child.returncode == 0, f"reading the parsers failed:\n{child.stdout[-2000:]}\n{child.stderr[-4000:]}"
    found = json.loads(child.stdout.strip().splitlines()[-1])
    return {m: (frozenset(o) if isinstance(o, list) else None) for m, o in found.items()}


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
    if not is_commit(sha):
        return None
    return any(f'"{option}"' in text for text in _sources(module, sha))


_RUN = re.compile(r"\bpython3?\s+-m\s+([A-Za-z_][\w.]*\w)([^`]*)|(?<![\w./-])(attention-explorer(?:-score)?)(\s[^`]*|$)")


@cache
def _doc_option_uses() -> tuple[tuple[Where, str, str, Unit], ...]:
    """(where, module, option, unit) of every ``--option`` a ``python -m`` command of the docs gives, in a code
    span or a code block (continued lines joined; comments, and what follows ``&&``, ``;`` or ``|``, left out)."""
    found = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        lines, units = text.splitlines(), units_of(text)
        prose = blank_fences(text)  # as many lines as text
        commands = [(line_of(prose, m.start()), m.group(1)) for m in re.finditer(r"(?<!`)`([^`]+)`(?!`)", prose)]
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
                module = m.group(1) or scripts().get(m.group(3), "").partition(":")[0]
                rest = re.split(r"&&|;|\|", (m.group(2) if m.group(1) else m.group(4)) or "")[0]
                for option in re.findall(r"(?<![\w-])(--[a-z][\w-]*)", rest):
                    found.append((Where(rel(doc), line, lines[line - 1].strip()[:160]), module, option,
                                  unit_at(units, line)))
    return tuple(found)


def test_the_docs_give_options_their_commands_take():
    """Each ``--option`` of a documented ``python -m`` command is one its parser takes today, or (gone) one the
    module's folder has at the commit its block or paragraph names."""
    uses = _doc_option_uses()
    assert len(uses) > 100, f"the scan found only {len(uses)} options: it is broken"
    options_of = _all_options(tuple(sorted({module for where, module, option, unit in uses
                                            if not (unit.block and unit.commits) and module_problem(module) is None})))
    failures = []
    for where, module, option, unit in uses:
        if not (unit.block and unit.commits) and module_problem(module) is None:
            options = options_of[module]
            if options is None or option in options:
                continue
        if any(_option_at(sha, module, option) is not False for sha in unit.commits):
            continue
        named = f" nor at git {', '.join(unit.commits)}" if unit.commits else ", and no commit is named here"
        failures.append(f"{where}  ->  python -m {module} takes no {option}{named}")
    assert not failures, f"{len(failures)} of {len(uses)} options are not taken:\n" + "\n".join(failures)


if __name__ == "__main__":  # the child of _all_options: the options of each module named, as one JSON line
    print(json.dumps({m: _parser_options(m) for m in sys.argv[1:]}))
